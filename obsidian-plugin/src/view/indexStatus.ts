/**
 * The ask pane's view of the index and the sidecar: a line with the notes indexed and the
 * passages still waiting for vectors (with the sidecar's ETA) plus whether the active note is
 * indexed (`GET /v1/status?path=`), and, while the conversation is empty, an empty state that
 * says what to do: start `vault-rag serve` (with the command for this vault) when the sidecar
 * cannot be reached, fix the token when it refuses it, or just ask.
 *
 * Stable `data-testid`s: index-status, note-status, empty-state, empty-title, empty-command,
 * empty-copy, empty-retry.
 */
import type { NoteIndexState, SidecarStatus } from "../client";
import type { StatusSnapshot } from "../status/poller";
import { h, show } from "./dom";

/** The command that starts the sidecar on this vault (the folder quoted when it needs it). */
export function serveCommand(vaultPath: string | null): string {
  if (!vaultPath) return "vault-rag serve --vault /path/to/your/vault";
  const quoted = /^[\w@%+=:,./-]+$/.test(vaultPath) ? vaultPath : `"${vaultPath.replace(/(["\\$`])/g, "\\$1")}"`;
  return `vault-rag serve --vault ${quoted}`;
}

/** "24 notes indexed · 40 passages waiting for vectors, about 2 min left". */
export function describeIndex(status: SidecarStatus): string {
  const notes = status.notes ?? 0;
  let text = `${notes} note${notes === 1 ? "" : "s"} indexed`;
  const pending = status.pending ?? 0;
  if (pending > 0) {
    text += ` · ${pending} passage${pending === 1 ? "" : "s"} waiting for vectors`;
    if (status.etaSeconds) text += `, about ${Math.max(1, Math.ceil(status.etaSeconds / 60))} min left`;
  }
  const writer = status.writer;
  if (writer && writer.queued > 0) text += ` · ${writer.queued} queued`;
  return text;
}

/** Whether the active note is in the index (and searchable by meaning yet). */
export function describeNote(note: NoteIndexState | null): string | null {
  if (note === null || !note.path) return null;
  const name = note.path.replace(/\.md$/i, "").split("/").pop() ?? note.path;
  if (!note.indexed) return `“${name}” is not indexed yet`;
  if (note.pending > 0) return `“${name}” is indexed; ${note.pending} of ${note.chunks} passages still waiting for vectors`;
  return `“${name}” is indexed`;
}

export interface StatusPanelDeps {
  /** This vault's folder on disk (desktop), for the command to start the sidecar. */
  vaultPath(): string | null;
  url(): string;
  /** Ask the sidecar again now. */
  retry(): void;
  copy?(text: string): Promise<void>;
}

export class StatusPanel {
  readonly lineEl: HTMLElement;
  readonly noteEl: HTMLElement;
  readonly emptyEl: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly textEl: HTMLElement;
  private readonly commandEl: HTMLElement;
  private readonly commandRow: HTMLElement;
  private readonly retryButton: HTMLButtonElement;
  private snapshot: StatusSnapshot | null = null;
  private empty = true;

  constructor(
    line: HTMLElement,
    empty: HTMLElement,
    private readonly deps: StatusPanelDeps,
  ) {
    this.lineEl = h(line, "div", { cls: "vault-rag-index-status", testid: "index-status", attrs: { "aria-live": "polite" } });
    this.noteEl = h(line, "div", { cls: "vault-rag-note-status", testid: "note-status" });
    this.emptyEl = h(empty, "div", { cls: "vault-rag-empty", testid: "empty-state" });
    this.titleEl = h(this.emptyEl, "div", { cls: "vault-rag-empty-title", testid: "empty-title" });
    this.textEl = h(this.emptyEl, "div", { cls: "vault-rag-empty-text" });
    this.commandRow = h(this.emptyEl, "div", { cls: "vault-rag-empty-command" });
    this.commandEl = h(this.commandRow, "code", { testid: "empty-command" });
    const copy = h(this.commandRow, "button", { text: "Copy", testid: "empty-copy", attrs: { "aria-label": "Copy the command" } });
    copy.addEventListener("click", () => void deps.copy?.(this.commandEl.textContent ?? ""));
    show(copy, deps.copy !== undefined);
    this.retryButton = h(this.emptyEl, "button", { text: "Try again", testid: "empty-retry" });
    this.retryButton.addEventListener("click", () => deps.retry());
    this.render();
  }

  /** The conversation is empty (show the empty state) or not. */
  setEmpty(empty: boolean): void {
    this.empty = empty;
    this.render();
  }

  /** What the status poller knows now (the active note's state is in `status.note`). */
  update(snapshot: StatusSnapshot): void {
    this.snapshot = snapshot;
    this.render();
  }

  private render(): void {
    const snapshot = this.snapshot;
    const connection = snapshot?.connection ?? "unknown";
    const status = connection === "ok" ? (snapshot?.status ?? null) : null;
    this.lineEl.textContent = status === null ? "" : describeIndex(status);
    show(this.lineEl, status !== null);
    const note = status === null ? null : describeNote(status.note);
    this.noteEl.textContent = note ?? "";
    show(this.noteEl, note !== null);

    show(this.emptyEl, this.empty);
    const down = connection === "unreachable";
    show(this.commandRow, down);
    show(this.retryButton, down || connection === "unauthorized");
    if (down) {
      this.titleEl.textContent = "The Vault RAG sidecar is not running";
      this.textEl.textContent = `Nothing answers at ${this.deps.url()}. Start it in a terminal, then try again:`;
      this.commandEl.textContent = serveCommand(this.deps.vaultPath());
    } else if (connection === "unauthorized") {
      this.titleEl.textContent = "The sidecar refused the token";
      this.textEl.textContent = 'Copy it from "vault-rag token" into Settings → Vault RAG.';
    } else {
      this.titleEl.textContent = "Ask your vault";
      this.textEl.textContent =
        status !== null && (status.notes ?? 0) === 0
          ? "The index is empty so far: the notes are sent as soon as the sidecar is reachable."
          : "Answers come from your notes, with the passages they cite.";
    }
  }
}
