/**
 * What the ask pane (`pane.ts`) needs from outside the DOM: the sidecar's requests, opening and
 * previewing notes, markdown rendering, the clipboard and the editor. The Obsidian view
 * (`askView.ts`) fills it from the workspace; vitest and the browser bundle fill it without
 * Obsidian.
 */
import type { AnswerMode, AskEvent, AskRequest, ThreadList, ThreadMessage } from "../client";
import type { Clock } from "../sync/timing";
import type { CollectionPickerDeps } from "./collectionPicker";
import type { StatusPanelDeps } from "./indexStatus";
import type { ModelPickerDeps } from "./modelPicker";
import type { NoteTarget } from "./noteTarget";
import type { RenderMarkdown } from "./turn";

export interface AskPaneDeps {
  ask(request: AskRequest, signal: AbortSignal): AsyncIterable<AskEvent>;
  feedback(answerId: string, rating: 1 | -1): Promise<unknown>;
  /** Save the answer as a note; the new note's vault-relative path. */
  promote(answerId: string): Promise<string>;
  /** Open a note at a citation or `[[link]]` (`workspace.openLinkText`, at the cited line when
   * known; Ctrl/Cmd-click in a new tab). */
  openNote(target: NoteTarget, event: MouseEvent | null): void;
  /** The pointer is over a citation or link: the workspace's page preview (`hover-link`). */
  hoverNote?(target: NoteTarget, event: MouseEvent, el: HTMLElement): void;
  /** Open a web citation's URL in the browser; absent: `window.open` (`webCitation.ts`). */
  openUrl?(url: string): void;
  /** Open a note the sidecar just wrote. */
  openSavedNote(path: string): Promise<void> | void;
  renderMarkdown: RenderMarkdown;
  defaultMode(): AnswerMode;
  /** Every failure of a request (for the connection notices and the status bar). */
  onError?(error: unknown): void;
  clock?: Clock;
  /** Minimum time between two markdown renders while streaming (default 100 ms). */
  renderIntervalMs?: number;
  newThreadId?(): string;
  /** The stored conversation (`GET /v1/threads/{id}`), to resume it. */
  loadThread?(threadId: string, signal: AbortSignal): Promise<ThreadMessage[]>;
  /** Whether the plugin is starting its own sidecar: a refused token is then waited out. */
  sidecarStarting?(): boolean;
  /** The thread id changed (new conversation, or the sidecar named it): save the view state. */
  onThreadChange?(threadId: string): void;
  /** `GET /v1/threads`: one page of past conversations, newest first. */
  listThreads?(before: string | undefined, signal: AbortSignal): Promise<ThreadList>;
  /** Put text on the clipboard. */
  copyText?(text: string): Promise<void>;
  /** Insert text at the cursor of the last active markdown editor; its note's path, or null. */
  insertAtCursor?(text: string): string | null;
  /** For the empty state: this vault's folder, the sidecar URL, "Try again". */
  statusPanel?: StatusPanelDeps;
  /** "Ask about this note": the last active editor's note now, with its selection and links. */
  noteContext?(): { path: string; selection: string; links: string[] } | null;
  /** The per-conversation model picker (`modelPicker.ts`); absent: no picker. */
  modelPicker?: ModelPickerDeps;
  /** The collection picker (`collectionPicker.ts`: the vault and the sources beside it); absent:
   * none, and questions search the sidecar's default. */
  collectionPicker?: CollectionPickerDeps;
}
