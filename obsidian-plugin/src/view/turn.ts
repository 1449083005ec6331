/**
 * One question and its answer in the ask pane: the streamed answer (re-rendered as markdown at
 * most every `renderIntervalMs`), the progress line, the citations, the 👍 / 👎 /
 * "Save as note" actions once the answer has an id, and Copy / Insert at cursor / Regenerate /
 * Edit once there is an answer (a turn read back from a stored thread included).
 */
import type { AskEvent, Citation } from "../client";
import type { Clock } from "../sync/timing";
import { ActionRow } from "./actionRow";
import { isSourceCitation } from "./codeCitation";
import { pairLines, renderPairs } from "./pairLink";
import { CodeViews } from "./codeView";
import { clear, h, show } from "./dom";
import { linkTarget, type NoteTarget, noteTarget } from "./noteTarget";
import { type AskNote, describeAsking, describeFocus } from "./noteContext";
import { describeDone, describeProgress, type ProgressContext } from "./progress";
import { neutralizeRemoteImages } from "./safeMarkdown";
import { citedInline, sourcesLabel } from "./sources";
import { openExternal, webCitationLabel, webCitationTooltip } from "./webCitation";

/** Renders markdown into `el`; the returned function releases what the render holds. */
export type RenderMarkdown = (markdown: string, el: HTMLElement) => Promise<() => void>;

export interface TurnActions {
  /** Open a cited note (at the cited line when known); `event` tells a new tab (Ctrl/Cmd-click). */
  openNote(target: NoteTarget, event: MouseEvent | null): void;
  /** The pointer is over a link to `target`: Obsidian's page preview may show it. */
  hoverNote?(target: NoteTarget, event: MouseEvent, el: HTMLElement): void;
  /** Open a web citation's URL in the browser (default: `window.open`, `webCitation.ts`). */
  openUrl?(url: string): void;
  feedback(answerId: string, rating: 1 | -1): Promise<unknown>;
  promote(answerId: string): Promise<string>;
  openSavedNote(path: string): Promise<void> | void;
  describeError(error: unknown): string;
  /** Put the answer on the clipboard. */
  copy(text: string): Promise<void>;
  /** Insert the answer at the cursor of the last active editor; that note's path, or null. */
  insert(text: string): string | null;
  /** Ask the same question again on the conversation (about the same note, if it was). */
  regenerate(question: string, note: AskNote | null): void;
  /** Put the question into the question box to be edited and sent again. */
  edit(question: string): void;
}

export interface TurnOptions {
  render: RenderMarkdown;
  actions: TurnActions;
  clock: Clock;
  renderIntervalMs: number;
  /** The note the question is about ("Ask about this note"), or null. */
  note?: AskNote | null;
}

/** Where a vault citation points: `Folder/Note#Heading` (a heading with `#` made safe) and the
 * cited line. */
export function citationTarget(citation: Extract<Citation, { kind: "vault" }>): NoteTarget {
  return noteTarget(citation.note_path, citation.anchor, citation.line_start);
}

/** The link text `openLinkText` gets for a vault citation without a line: `Folder/Note#Heading`. */
export function citationLinktext(citation: Extract<Citation, { kind: "vault" }>): string {
  return citationTarget(citation).linktext;
}

export class TurnView {
  readonly el: HTMLElement;
  readonly progressEl: HTMLElement;
  /** "Using “Note”…", then what the answer took from it (only for a question about a note). */
  readonly focusEl: HTMLElement;
  readonly answerEl: HTMLElement;
  readonly errorEl: HTMLElement;
  readonly citationsEl: HTMLElement;
  readonly sourcesEl: HTMLDetailsElement;
  private readonly sourcesLabel: HTMLElement;
  readonly actionsEl: HTMLElement;
  readonly statusEl: HTMLElement;
  private readonly up: HTMLButtonElement;
  private readonly down: HTMLButtonElement;
  private readonly save: HTMLButtonElement;
  private readonly copyButton: HTMLButtonElement;
  private readonly insertButton: HTMLButtonElement;
  private readonly regenerateButton: HTMLButtonElement;
  private readonly editButton: HTMLButtonElement;
  private finished = false;
  private text = "";
  private answerId: string | null = null;
  private readonly context: ProgressContext = { aspects: null };
  private renderTimer: unknown = null;
  private lastRender = Number.NEGATIVE_INFINITY;
  private renderSeq = 0;
  private dispose: (() => void) | null = null;
  private rendering: Promise<void> = Promise.resolve();
  /** Citations of a code source: shown in the pane (`codeView.ts`), not opened. */
  private readonly codeViews: CodeViews;

  constructor(
    parent: HTMLElement,
    readonly question: string,
    private readonly options: TurnOptions,
  ) {
    this.el = h(parent, "div", { cls: "vault-rag-turn", testid: "turn" });
    this.codeViews = new CodeViews({ render: options.render, copy: (text) => options.actions.copy(text), describeError: (e) => options.actions.describeError(e) });
    h(this.el, "div", { cls: "vault-rag-question", text: question, testid: "turn-question" });
    this.progressEl = h(this.el, "div", { cls: "vault-rag-progress", testid: "progress", attrs: { "aria-live": "polite" } });
    const note = options.note ?? null;
    this.focusEl = h(this.el, "div", { cls: "vault-rag-focus", testid: "turn-focus", text: note ? describeAsking(note) : "" });
    show(this.focusEl, note !== null);
    this.answerEl = h(this.el, "div", { cls: "vault-rag-answer markdown-rendered", testid: "answer" });
    this.errorEl = h(this.el, "div", { cls: "vault-rag-error", testid: "error", attrs: { role: "alert" } });
    // The sources, folded away when the answer already links each of them (`sources.ts`).
    this.sourcesEl = h(this.el, "details", { cls: "vault-rag-sources", testid: "sources" });
    this.sourcesLabel = h(this.sourcesEl, "summary", { cls: "vault-rag-sources-label", testid: "sources-label" });
    this.citationsEl = h(this.sourcesEl, "ol", { cls: "vault-rag-citations", testid: "citations" });
    const row = new ActionRow(this.el, {
      copy: () => void this.copy(),
      insert: () => this.insert(),
      regenerate: () => options.actions.regenerate(this.question, options.note ?? null),
      edit: () => options.actions.edit(this.question),
      up: () => void this.rate(1),
      down: () => void this.rate(-1),
      save: () => void this.saveAsNote(),
    });
    this.actionsEl = row.el;
    this.statusEl = row.statusEl;
    ({
      copy: this.copyButton,
      insert: this.insertButton,
      regenerate: this.regenerateButton,
      edit: this.editButton,
      up: this.up,
      down: this.down,
      save: this.save,
    } = row.buttons);
    show(this.errorEl, false);
    show(this.sourcesEl, false);
    this.setActionsEnabled(false);
    this.setAnswerActions();
    this.progressEl.textContent = "asking…";
    // [[links]] in the rendered answer open (and preview) like citations do.
    const answerLink = (event: Event): { el: HTMLElement; target: NoteTarget } | null => {
      const link = (event.target as Element | null)?.closest?.("a.internal-link");
      if (!link) return null;
      const linktext = link.getAttribute("data-href") ?? link.getAttribute("href") ?? link.textContent ?? "";
      return linktext ? { el: link as HTMLElement, target: linkTarget(linktext) } : null;
    };
    this.answerEl.addEventListener("click", (event) => {
      const link = answerLink(event);
      if (!link) return;
      event.preventDefault();
      options.actions.openNote(link.target, event);
    });
    this.answerEl.addEventListener("mouseover", (event) => {
      const link = answerLink(event);
      if (link) options.actions.hoverNote?.(link.target, event, link.el);
    });
  }

  get answerText(): string {
    return this.text;
  }

  /** Apply one stream event. */
  apply(event: AskEvent): void {
    switch (event.type) {
      case "progress":
        if (event.node === "plan" && typeof event.data.aspects === "number") this.context.aspects = event.data.aspects;
        if (event.reset) {
          this.text = "";
          this.scheduleRender(true);
        }
        this.progressEl.textContent = describeProgress(event, this.context);
        break;
      case "delta":
        this.text += event.text;
        this.scheduleRender(false);
        break;
      case "citations":
        this.showCitations(event.citations);
        break;
      case "final":
        this.text = event.answer || this.text;
        this.scheduleRender(true);
        this.showCitations(event.citations);
        this.foldSources(event.citations);
        this.progressEl.textContent = describeDone(event.citations.length, this.context.aspects, this.context.searched);
        this.answerId = event.answerId || null;
        if (this.options.note) this.focusEl.textContent = describeFocus(this.options.note, event.focus ?? null);
        this.setActionsEnabled(this.answerId !== null);
        this.finish();
        break;
      case "error":
        this.fail(event.message);
        break;
    }
  }

  fail(message: string): void {
    this.progressEl.textContent = "failed";
    this.errorEl.textContent = message;
    show(this.errorEl, true);
    this.scheduleRender(true);
    this.finish();
  }

  /** A turn read back from a stored thread: its answer, and (from sidecars that keep them)
   * its citations and id, so its sources, 👍/👎 and "Save as note" work as they did. */
  restored(answer: string, answerId: string | null = null, citations: Citation[] = []): void {
    this.text = answer;
    this.progressEl.textContent = "";
    this.showCitations(citations);
    this.foldSources(citations);
    this.answerId = answerId;
    this.setActionsEnabled(answerId !== null);
    this.scheduleRender(true);
    this.finish();
  }

  stopped(): void {
    this.progressEl.textContent = "stopped";
    this.scheduleRender(true);
    this.finish();
  }

  /** Regenerate and Edit ask a new question: off while the pane is answering one. */
  setAsking(asking: boolean): void {
    this.regenerateButton.disabled = asking;
    this.editButton.disabled = asking;
  }

  /** Resolves once the latest text has been rendered (tests, and before a turn is removed). */
  settled(): Promise<void> {
    if (this.renderTimer !== null) this.scheduleRender(true);
    return this.rendering;
  }

  destroy(): void {
    if (this.renderTimer !== null) this.options.clock.clearTimeout(this.renderTimer);
    this.renderTimer = null;
    this.renderSeq++;
    this.dispose?.();
    this.dispose = null;
    this.codeViews.destroy();
    this.el.remove();
  }

  // -- rendering ------------------------------------------------------------------------------

  private scheduleRender(now: boolean): void {
    const { clock, renderIntervalMs } = this.options;
    const wait = this.lastRender + renderIntervalMs - clock.now();
    if (now || wait <= 0) {
      if (this.renderTimer !== null) clock.clearTimeout(this.renderTimer);
      this.renderTimer = null;
      this.renderNow();
    } else if (this.renderTimer === null) {
      this.renderTimer = clock.setTimeout(() => {
        this.renderTimer = null;
        this.renderNow();
      }, wait);
    }
  }

  private renderNow(): void {
    this.lastRender = this.options.clock.now();
    const seq = ++this.renderSeq;
    const markdown = neutralizeRemoteImages(this.text); // never fetch remote images
    const target = this.answerEl.ownerDocument.createElement("div");
    this.rendering = this.options
      .render(markdown, target)
      .then((dispose) => {
        if (seq !== this.renderSeq) {
          dispose(); // a newer render has started: this one is stale
          return;
        }
        clear(this.answerEl);
        while (target.firstChild) this.answerEl.appendChild(target.firstChild);
        this.dispose?.();
        this.dispose = dispose;
      })
      .catch(() => {
        if (seq === this.renderSeq) this.answerEl.textContent = markdown; // plain text, at least
      });
  }

  // -- citations and actions ------------------------------------------------------------------

  /** Fold the list away when the answer's text already links every source. */
  private foldSources(citations: Citation[]): void {
    this.sourcesEl.open = citations.length > 0 && !citedInline(this.text, citations);
  }

  private showCitations(citations: Citation[]): void {
    if (citations.length === 0) return;
    clear(this.citationsEl);
    this.sourcesLabel.textContent = sourcesLabel(citations.length);
    this.sourcesEl.open = true;
    for (const citation of citations) {
      const item = h(this.citationsEl, "li");
      if (citation.kind === "web") {
        const link = h(item, "a", {
          cls: "external-link",
          text: webCitationLabel(citation),
          testid: "citation",
          attrs: {
            href: citation.url,
            target: "_blank",
            rel: "noopener noreferrer",
            "data-kind": "web",
            title: webCitationTooltip(citation),
            ...(citation.collection ? { "data-collection": citation.collection } : {}),
          },
        });
        // A page, not a note: the browser opens it (a middle click too), never openLinkText.
        const open = (event: MouseEvent): void => {
          event.preventDefault();
          const actions = this.options.actions;
          openExternal(citation.url, actions.openUrl ? (url) => actions.openUrl?.(url) : undefined);
        };
        link.addEventListener("click", open);
        link.addEventListener("auxclick", (event) => {
          if (event.button === 1) open(event);
        });
        continue;
      }
      if (isSourceCitation(citation)) {
        this.codeViews.add(item, citation);
        this.showPairs(item, citation, citations);
        continue;
      }
      const target = citationTarget(citation);
      const name = citation.note_path.replace(/\.md$/i, "").split("/").pop() ?? citation.note_path;
      const heading = citation.anchor || citation.heading.split(" > ").pop() || "";
      const where = target.line === null ? "" : `, line ${target.line + 1}`;
      const link = h(item, "a", {
        cls: "internal-link",
        text: heading ? `${name} › ${heading}` : name,
        testid: "citation",
        attrs: {
          href: "#",
          "data-href": target.linktext,
          "data-kind": "vault",
          ...(target.line === null ? {} : { "data-line": String(target.line + 1) }),
          title: `${target.linktext}${where}`,
        },
      });
      link.addEventListener("click", (event) => {
        event.preventDefault();
        this.options.actions.openNote(target, event);
      });
      // Middle-click opens a new tab too (Keymap.isModEvent says "tab" for it).
      link.addEventListener("auxclick", (event) => {
        if (event.button !== 1) return;
        event.preventDefault();
        this.options.actions.openNote(target, event);
      });
      link.addEventListener("mouseover", (event) => this.options.actions.hoverNote?.(target, event, link));
      this.showPairs(item, citation, citations);
    }
    show(this.sourcesEl, true);
  }

  /** A pair question's note ↔ code links, under the citation (`pairLink.ts`). */
  private showPairs(item: HTMLElement, citation: Citation, citations: Citation[]): void {
    renderPairs(item, pairLines(citation, citations), (target, event) => this.options.actions.openNote(target, event));
  }

  /** The turn is over (answered, failed, stopped or read back): its text is final. */
  private finish(): void {
    this.finished = true;
    this.setAnswerActions();
  }

  private setAnswerActions(): void {
    const hasText = this.finished && this.text.trim() !== "";
    this.copyButton.disabled = !hasText;
    this.insertButton.disabled = !hasText;
  }

  private async copy(): Promise<void> {
    try {
      await this.options.actions.copy(this.text);
      this.statusEl.textContent = "Copied.";
    } catch (error) {
      this.statusEl.textContent = `Could not copy: ${this.options.actions.describeError(error)}`;
    }
  }

  private insert(): void {
    const path = this.options.actions.insert(this.text);
    this.statusEl.textContent = path === null ? "Open a note to insert the answer into." : `Inserted into ${path}`;
  }

  private setActionsEnabled(enabled: boolean): void {
    for (const button of [this.up, this.down, this.save]) button.disabled = !enabled;
  }

  private async rate(rating: 1 | -1): Promise<void> {
    if (this.answerId === null) return;
    try {
      await this.options.actions.feedback(this.answerId, rating);
      this.up.classList.toggle("is-active", rating === 1);
      this.down.classList.toggle("is-active", rating === -1);
      this.up.setAttribute("aria-pressed", String(rating === 1));
      this.down.setAttribute("aria-pressed", String(rating === -1));
      this.statusEl.textContent = "Thanks: this changes what is retrieved next time.";
    } catch (error) {
      this.statusEl.textContent = this.options.actions.describeError(error);
    }
  }

  private async saveAsNote(): Promise<void> {
    if (this.answerId === null) return;
    this.save.disabled = true;
    this.statusEl.textContent = "Saving…";
    try {
      const path = await this.options.actions.promote(this.answerId);
      this.statusEl.textContent = `Saved as ${path}`;
      this.save.setAttribute("data-saved-path", path);
      await this.options.actions.openSavedNote(path);
    } catch (error) {
      this.statusEl.textContent = this.options.actions.describeError(error);
      this.save.disabled = false;
    }
  }
}
