/**
 * The ask pane's DOM and behaviour, independent of Obsidian's view classes: a mode toggle,
 * "New chat", "History" (the past conversations, `history.ts`), the turns of the conversation
 * (see `turn.ts`, each with Copy / Insert / Regenerate / Edit) and the question box with
 * Ask / Stop. The thread id lives as long as the pane. Everything the pane does
 * outside the DOM goes through `AskPaneDeps` (`paneDeps.ts`), so vitest (happy-dom) and the browser bundle run
 * it without Obsidian.
 *
 * Above the turns, the index line and, while the conversation is empty, the empty state
 * (`indexStatus.ts`; the view feeds them the status poller's snapshots).
 *
 * Stable `data-testid`s: mode, model-picker (`modelPicker.ts`: the conversation's chat model),
 * new-conversation, history (and those of `history.ts` and
 * `indexStatus.ts`), turns,
 * turn, turn-question, progress, answer, error, citations, citation, copy, insert, regenerate,
 * edit-question, thumbs-up, thumbs-down, save-as-note, action-status, question, ask, stop,
 * resume-error.
 *
 * "Ask about this note" (`noteToggle.ts`, data-testid note-toggle): while on, each question
 * carries the last active editor's note and selection (`AskRequest.note`); the turn says what
 * the answer took from it.
 *
 * The thread id outlives the pane through the view's state: `resume(id)` reads the stored
 * conversation back (`GET /v1/threads/{id}`) and shows its questions and answers; Esc stops a
 * running answer. Picking a thread in the history resumes it the same way.
 */
import { type AnswerMode, type AskRequest, isAbortError } from "../client";
import { type Clock, systemClock } from "../sync/timing";
import { describeError, randomThreadId, threadTurns } from "./conversation";
import { h, show } from "./dom";
import { followBottom } from "./followBottom";
import { CollectionPicker } from "./collectionPicker";
import { HistoryPanel } from "./history";
import { StatusPanel } from "./indexStatus";
import { type AskNote, askNote } from "./noteContext";
import { NoteToggle } from "./noteToggle";
import type { AskPaneDeps } from "./paneDeps";
import { ModelPicker } from "./modelPicker";
import { loadPatiently } from "./resume";
import { type TurnActions, TurnView } from "./turn";

export type { AskPaneDeps } from "./paneDeps";
export { describeError, randomThreadId, threadTurns } from "./conversation";

export class AskPane {
  readonly root: HTMLElement;
  readonly modeEl: HTMLSelectElement;
  readonly turnsEl: HTMLElement;
  readonly questionEl: HTMLTextAreaElement;
  readonly askButton: HTMLButtonElement;
  readonly stopButton: HTMLButtonElement;
  readonly newButton: HTMLButtonElement;
  readonly historyButton: HTMLButtonElement;
  readonly history: HistoryPanel;
  readonly status: StatusPanel;
  readonly noteToggle: NoteToggle;
  readonly modelPicker: ModelPicker | null;
  readonly collectionPicker: CollectionPicker | null;
  threadId: string;
  private turns: TurnView[] = [];
  private running: { controller: AbortController; done: Promise<void> } | null = null;
  private resuming: AbortController | null = null;
  private resumeErrorEl: HTMLElement | null = null;
  /** The thread id last handed to `onThreadChange`. */
  private announced: string | null = null;
  private readonly clock: Clock;
  /** Jump to the newest turn (`followBottom.ts`). */
  private readonly scrollToEnd: () => void;

  constructor(
    container: HTMLElement,
    private readonly deps: AskPaneDeps,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.threadId = this.newThreadId();
    this.root = h(container, "div", { cls: "vault-rag-pane", testid: "ask-pane" });

    const toolbar = h(this.root, "div", { cls: "vault-rag-toolbar" });
    this.modeEl = h(toolbar, "select", { cls: "dropdown", testid: "mode", attrs: { "aria-label": "Answer from" } });
    h(this.modeEl, "option", { text: "Vault only", attrs: { value: "strict" } });
    h(this.modeEl, "option", { text: "Vault + web", attrs: { value: "hybrid" } });
    this.modeEl.value = deps.defaultMode();
    this.modelPicker = deps.modelPicker ? new ModelPicker(toolbar, deps.modelPicker) : null;
    this.modelPicker?.setThread(this.threadId);
    void this.modelPicker?.refresh();
    this.collectionPicker = deps.collectionPicker ? new CollectionPicker(toolbar, this.root, deps.collectionPicker) : null;
    void this.collectionPicker?.refresh();
    this.newButton = h(toolbar, "button", { text: "New chat", testid: "new-conversation" });
    this.historyButton = h(toolbar, "button", {
      text: "History",
      testid: "history",
      attrs: { "aria-expanded": "false", "aria-label": "Past conversations" },
    });
    this.history = new HistoryPanel(this.root, {
      list: (before, signal) => (deps.listThreads ? deps.listThreads(before, signal) : Promise.resolve({ threads: [], nextBefore: null })),
      pick: (threadId) => {
        this.historyButton.setAttribute("aria-expanded", "false");
        void this.openThread(threadId);
      },
      current: () => this.threadId,
      describeError: (error) => describeError(error),
    });
    show(this.historyButton, deps.listThreads !== undefined);

    const statusLine = h(this.root, "div", { cls: "vault-rag-status-line" });
    this.turnsEl = h(this.root, "div", { cls: "vault-rag-turns", testid: "turns" });
    this.scrollToEnd = followBottom(this.turnsEl);
    this.status = new StatusPanel(statusLine, this.turnsEl, {
      vaultPath: () => null,
      url: () => "the configured URL",
      retry: () => undefined,
      ...deps.statusPanel,
    });

    const form = h(this.root, "form", { cls: "vault-rag-ask" });
    this.noteToggle = new NoteToggle(form);
    show(this.noteToggle.el, deps.noteContext !== undefined);
    this.questionEl = h(form, "textarea", {
      cls: "vault-rag-question-input",
      testid: "question",
      attrs: {
        rows: "3",
        placeholder: "Ask your vault… (Enter to ask, Shift+Enter for a new line, Esc to stop)",
        "aria-label": "Question",
      },
    });
    const buttons = h(form, "div", { cls: "vault-rag-ask-buttons" });
    this.askButton = h(buttons, "button", { cls: "mod-cta", text: "Ask", testid: "ask", attrs: { type: "submit" } });
    this.stopButton = h(buttons, "button", { text: "Stop", testid: "stop", attrs: { type: "button" } });
    show(this.stopButton, false);

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.ask();
    });
    this.questionEl.addEventListener("keydown", (event) => {
      // Not while an input method is composing (Chinese, Japanese…): Enter picks a candidate.
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.ask();
      }
    });
    this.stopButton.addEventListener("click", () => this.stop());
    this.root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.running !== null) {
        event.preventDefault();
        this.stop();
      }
    });
    this.newButton.addEventListener("click", () => this.newConversation());
    this.historyButton.addEventListener("click", () => void this.toggleHistory());
  }

  get mode(): AnswerMode {
    return this.modeEl.value === "hybrid" ? "hybrid" : "strict";
  }

  get busy(): boolean {
    return this.running !== null;
  }

  get lastTurn(): TurnView | null {
    return this.turns[this.turns.length - 1] ?? null;
  }

  /** Ask `question` (default: the question box, which is then emptied) about `note` (default:
   * the active note while "Ask about this note" is on). Resolves when the answer is complete. */
  async ask(question?: string, note?: AskNote | null): Promise<void> {
    const text = (question ?? this.questionEl.value).trim();
    if (!text || this.running !== null) return;
    if (question === undefined) this.questionEl.value = "";
    const about = note === undefined ? this.aboutNote() : note;
    const turn = this.addTurn(text, about);
    const controller = new AbortController();
    const request: AskRequest = {
      question: text,
      thread_id: this.threadId,
      mode: this.mode,
      ...(about ? { note: about } : {}),
      ...this.modelPicker?.request(),
      ...this.collectionPicker?.request(),
    };
    const done = this.stream(turn, request, controller);
    this.running = { controller, done };
    this.setBusy(true);
    try {
      await done;
    } finally {
      if (this.running?.controller === controller) this.running = null;
      this.setBusy(this.running !== null);
    }
  }

  /** The command "Ask about this note": switch it on and put the cursor in the question box. */
  askAboutNote(): void {
    this.noteToggle.on = true;
    this.questionEl.focus();
  }

  /** The note the next question is about: the active one while the switch is on. */
  private aboutNote(): AskNote | null {
    if (!this.noteToggle.on) return null;
    const context = this.deps.noteContext?.() ?? null;
    return context === null ? null : askNote(context.path, context.selection, context.links);
  }

  /** Cancel the running question (closing the stream cancels the run on the sidecar). */
  stop(): void {
    this.running?.controller.abort();
  }

  /** Show or hide the past conversations (read afresh each time they open). */
  async toggleHistory(): Promise<void> {
    const opening = !this.history.isOpen;
    this.historyButton.setAttribute("aria-expanded", String(opening));
    await this.history.toggle();
  }

  /** Put `question` into the question box to be edited and sent again. */
  editQuestion(question: string): void {
    this.questionEl.value = question;
    this.questionEl.focus();
    this.questionEl.setSelectionRange(question.length, question.length);
  }

  /** Forget the conversation: a new thread id and an empty pane. */
  newConversation(): void {
    this.closeHistory();
    this.clearTurns();
    this.setThread(this.newThreadId());
    this.questionEl.focus();
  }

  /** Show the stored conversation `threadId` and continue it. A thread the sidecar does not
   * know (never asked, or its data dir was reset) just starts empty under that id.
   * Resolves once the thread is shown, failed, or the pane has started waiting for a sidecar
   * that is starting (the wait goes on without holding up the caller: Obsidian awaits a view's
   * `setState` while it loads the workspace). */
  async resume(threadId: string): Promise<void> {
    let waiting = () => undefined as void;
    const startedWaiting = new Promise<void>((resolve) => (waiting = resolve));
    await Promise.race([this.resumeThread(threadId, () => waiting()), startedWaiting]);
  }

  private async resumeThread(threadId: string, onWait: () => void): Promise<void> {
    if (threadId === this.threadId && (this.turns.length > 0 || this.resuming !== null)) return;
    this.clearTurns();
    this.threadId = threadId;
    this.modelPicker?.setThread(threadId);
    const deps = this.deps;
    if (deps.loadThread === undefined) return;
    const controller = new AbortController();
    this.resuming = controller;
    try {
      const messages = await loadPatiently(threadId, controller.signal, {
        load: (id, signal) => (deps.loadThread ? deps.loadThread(id, signal) : Promise.resolve([])),
        clock: this.clock,
        sidecarStarting: () => deps.sidecarStarting?.() === true,
        onError: (error) => this.deps.onError?.(error),
        note: (text, failed) => {
          this.setResumeNote(text, failed);
          if (text !== null && !failed) onWait();
        },
      });
      if (messages === null || controller.signal.aborted) return;
      // A question asked while it loaded stays last: the earlier turns go before it.
      const asked = this.turns.splice(0);
      for (const { question, answer, answerId, citations } of threadTurns(messages)) {
        const turn = this.addTurn(question);
        turn.restored(answer, answerId, citations);
      }
      for (const turn of asked) this.turnsEl.appendChild(turn.el);
      this.turns.push(...asked);
    } finally {
      if (this.resuming === controller) this.resuming = null;
    }
  }

  /** The line above the turns while a stored thread loads: a wait, or (`failed`) an alert. */
  private setResumeNote(text: string | null, failed = false): void {
    this.resumeErrorEl?.remove();
    this.resumeErrorEl = null;
    if (text === null) return;
    this.resumeErrorEl = h(this.turnsEl, "div", {
      cls: failed ? "vault-rag-error" : "vault-rag-resume-wait",
      testid: failed ? "resume-error" : "resume-wait",
      text,
      attrs: failed ? { role: "alert" } : { "aria-live": "polite" },
    });
  }

  /** Resume a past conversation the user picked, and keep it in the view state. */
  async openThread(threadId: string): Promise<void> {
    const resumed = this.resume(threadId);
    this.announceThread();
    await resumed;
  }

  destroy(): void {
    this.closeHistory();
    this.clearTurns();
    this.modelPicker?.destroy();
    this.collectionPicker?.destroy();
    this.root.remove();
  }

  /** Stop what runs and empty the pane (the thread id is the caller's business). */
  private clearTurns(): void {
    this.stop();
    this.running = null; // the stopped stream winds down on its own; the pane is free at once
    this.setBusy(false);
    this.resuming?.abort();
    this.resuming = null;
    this.resumeErrorEl?.remove();
    this.resumeErrorEl = null;
    for (const turn of this.turns) turn.destroy();
    this.turns = [];
    this.status.setEmpty(true);
  }

  private closeHistory(): void {
    this.history.close();
    this.historyButton.setAttribute("aria-expanded", "false");
  }

  private setThread(threadId: string): void {
    this.threadId = threadId;
    this.modelPicker?.setThread(threadId);
    this.announceThread();
  }

  /** Tell the view the thread to keep in its state, once per thread. The first answer of a
   * new pane counts too: the sidecar then echoes the id the pane made up itself. */
  private announceThread(): void {
    if (this.announced === this.threadId) return;
    this.announced = this.threadId;
    this.deps.onThreadChange?.(this.threadId);
  }

  private addTurn(question: string, note: AskNote | null = null): TurnView {
    const turn = new TurnView(this.turnsEl, question, {
      render: this.deps.renderMarkdown,
      actions: this.actions(),
      clock: this.clock,
      renderIntervalMs: this.deps.renderIntervalMs ?? 100,
      note,
    });
    this.turns.push(turn);
    this.status.setEmpty(false);
    this.scrollToEnd();
    return turn;
  }

  private async stream(turn: TurnView, request: AskRequest, controller: AbortController): Promise<void> {
    try {
      for await (const event of this.deps.ask(request, controller.signal)) {
        if (controller.signal.aborted) break;
        turn.apply(event);
        if (event.type === "final") this.setThread(event.threadId || this.threadId);
      }
      if (controller.signal.aborted) turn.stopped();
    } catch (error) {
      if (controller.signal.aborted || isAbortError(error)) {
        turn.stopped();
        return;
      }
      this.deps.onError?.(error);
      turn.fail(describeError(error));
    }
  }

  private actions(): TurnActions {
    const report = <T>(promise: Promise<T>): Promise<T> =>
      promise.catch((error: unknown) => {
        this.deps.onError?.(error);
        throw error;
      });
    return {
      openNote: (target, event) => this.deps.openNote(target, event),
      hoverNote: (target, event, el) => this.deps.hoverNote?.(target, event, el),
      openUrl: this.deps.openUrl ? (url) => this.deps.openUrl?.(url) : undefined,
      feedback: (answerId, rating) => report(this.deps.feedback(answerId, rating)),
      promote: (answerId) => report(this.deps.promote(answerId)),
      openSavedNote: (path) => this.deps.openSavedNote(path),
      describeError: (error) => describeError(error),
      copy: (text) => report(this.deps.copyText ? this.deps.copyText(text) : Promise.reject(new Error("no clipboard here"))),
      insert: (text) => this.deps.insertAtCursor?.(text) ?? null,
      regenerate: (question, note) => void this.ask(question, note),
      edit: (question) => this.editQuestion(question),
    };
  }

  private setBusy(busy: boolean): void {
    this.askButton.disabled = busy;
    show(this.stopButton, busy);
    this.root.classList.toggle("is-busy", busy);
    for (const turn of this.turns) turn.setAsking(busy);
  }

  private newThreadId(): string {
    return (this.deps.newThreadId ?? randomThreadId)();
  }
}
