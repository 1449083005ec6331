/**
 * "Related notes": for the active note, the notes whose passages are closest to it
 * (`GET /v1/related`, from vectors the sidecar already holds). Follows `active-leaf-change`
 * through `RelatedTracker` (debounced); a row shows the note's name, the matching heading, a
 * snippet and a mark when the note already links to it. Click opens the note at the matching
 * passage's line (Ctrl/Cmd-click in a new tab), hovering previews it (Page preview), dragging a
 * row into an editor inserts a `[[link]]`.
 *
 * Stable `data-testid`s: related, related-title, related-refresh, related-status, related-list,
 * related-item, related-name, related-linked, related-heading, related-score, related-snippet.
 */
import { type HoverParent, type HoverPopover, ItemView, Notice, TFile, type WorkspaceLeaf } from "obsidian";

import type { SidecarClient } from "../client";
import type { Clock } from "../sync/timing";
import { clear, h, show } from "./dom";
import { describeError } from "./pane";
import {
  noteName,
  RELATED_LIMIT,
  type RelatedItem,
  type RelatedState,
  RelatedTracker,
  relatedItems,
  statusMessage,
  wikilink,
} from "./related";
import { hoverNoteTarget, missingNoteMessage, openNoteTarget } from "./workspaceLinks";

export const VIEW_TYPE_RELATED = "vault-rag-related";

export interface RelatedViewHost {
  client: SidecarClient;
  /** Request failures, for the connection notices and the status bar. */
  reportError(error: unknown): void;
  /** Timers for the debounce (tests drive them). */
  clock?: Clock;
  /** A device asking a desktop: a note this vault does not hold is reported, not created. */
  remote?: unknown;
}

export class RelatedView extends ItemView implements HoverParent {
  tracker: RelatedTracker | null = null;
  /** Set by the Page preview plugin while it shows a row's preview. */
  hoverPopover: HoverPopover | null = null;
  private titleEl: HTMLElement | null = null;
  private statusEl: HTMLElement | null = null;
  private listEl: HTMLElement | null = null;
  private sourcePath = "";

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: RelatedViewHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return VIEW_TYPE_RELATED;
  }

  override getDisplayText(): string {
    return "Related notes";
  }

  override getIcon(): string {
    return "git-fork";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("vault-rag-view");
    const box = h(root, "div", { cls: "vault-rag-related", testid: "related" });
    const header = h(box, "div", { cls: "vault-rag-related-header" });
    this.titleEl = h(header, "div", { cls: "vault-rag-related-title", testid: "related-title" });
    const refresh = h(header, "button", {
      cls: "vault-rag-related-refresh",
      text: "Refresh",
      testid: "related-refresh",
      attrs: { "aria-label": "Find related notes again" },
    });
    refresh.addEventListener("click", () => this.tracker?.refresh());
    this.statusEl = h(box, "div", { cls: "vault-rag-related-status", testid: "related-status" });
    this.listEl = h(box, "ul", { cls: "vault-rag-related-list", testid: "related-list" });
    const { client } = this.host;
    this.tracker = new RelatedTracker(
      (path, signal) => client.related(path, RELATED_LIMIT, { signal }),
      (state) => this.render(state),
      this.host.clock,
    );
    this.registerEvent(this.app.workspace.on("active-leaf-change", () => this.followActiveNote()));
    this.followActiveNote();
  }

  override async onClose(): Promise<void> {
    this.tracker?.destroy();
    this.tracker = null;
  }

  private followActiveNote(): void {
    const file = this.app.workspace.getActiveFile();
    this.tracker?.setActive(file !== null && file.extension === "md" ? file.path : null);
  }

  private render(state: RelatedState): void {
    if (this.titleEl === null || this.statusEl === null || this.listEl === null) return;
    this.sourcePath = state.kind === "none" ? "" : state.path;
    this.titleEl.textContent = state.kind === "none" ? "Related notes" : `Related to ${noteName(state.path)}`;
    let message: string | null = null;
    if (state.kind === "none") message = "Open a note to see the notes related to it.";
    else if (state.kind === "loading") message = "Looking for related notes…";
    else if (state.kind === "failed") {
      message = describeError(state.error, this.host.client.url);
      this.host.reportError(state.error);
    } else message = statusMessage(state.result);
    this.statusEl.textContent = message ?? "";
    show(this.statusEl, message !== null);
    if (state.kind === "loading") return; // keep the previous list until the new one arrives
    clear(this.listEl);
    if (state.kind !== "loaded") return;
    for (const item of relatedItems(state.result)) this.renderItem(this.listEl, item);
  }

  private renderItem(list: HTMLElement, item: RelatedItem): void {
    const row = h(list, "li", {
      cls: "vault-rag-related-item",
      testid: "related-item",
      attrs: { draggable: "true", "data-path": item.path, title: item.path },
    });
    // One line: the note, its best heading once, the linked mark and the score; the passage below.
    const line = h(row, "div", { cls: "vault-rag-related-line" });
    h(line, "span", { cls: "vault-rag-related-name", testid: "related-name", text: item.name });
    if (item.heading) h(line, "span", { cls: "vault-rag-related-heading", testid: "related-heading", text: item.heading });
    if (item.linked) {
      h(line, "span", {
        cls: "vault-rag-related-linked",
        testid: "related-linked",
        text: "linked",
        attrs: { "aria-label": "This note already links to it", title: "This note already links to it" },
      });
    }
    h(line, "span", {
      cls: "vault-rag-related-score",
      testid: "related-score",
      text: item.score.toFixed(2),
      attrs: { title: "Similarity to this note (cosine, 1 = the same)" },
    });
    if (item.snippet) h(row, "div", { cls: "vault-rag-related-snippet", testid: "related-snippet", text: item.snippet });
    row.addEventListener("click", (event) => void openNoteTarget(this.app, item.target, event, this.sourcePath, this.host.remote ? (t) => new Notice(missingNoteMessage(t), 8_000) : undefined));
    row.addEventListener("mouseenter", (event) =>
      hoverNoteTarget(this.app, VIEW_TYPE_RELATED, this, event, row, item.target, this.sourcePath),
    );
    row.addEventListener("dragstart", (event) => {
      event.dataTransfer?.setData("text/plain", wikilink(this.linktextFor(item)));
    });
  }

  /** The shortest link text Obsidian would write for the note, from the active note. */
  private linktextFor(item: RelatedItem): string {
    const file = this.app.vault.getAbstractFileByPath(item.path);
    if (file instanceof TFile) return this.app.metadataCache.fileToLinktext(file, this.sourcePath, true);
    return item.path.replace(/\.md$/i, "");
  }
}
