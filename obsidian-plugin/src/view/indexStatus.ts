/**
 * The ask pane's view of the index and the sidecar: a line with the notes indexed and the
 * passages still waiting for vectors (with the sidecar's ETA) plus whether the active note is
 * indexed (`GET /v1/status?path=`), and, while the conversation is empty, an empty state that
 * says what to do: start the sidecar when it cannot be reached (a button that starts it on the
 * desktop, `sidecar/supervisor.ts`, and the command for a terminal), fix the token when it
 * refuses it, or ask — with example questions from the vault's own headings (`examples.ts`).
 *
 * Stable `data-testid`s: index-status, note-status, empty-state, empty-title, empty-text,
 * empty-command, empty-copy, empty-start, empty-log, empty-retry, empty-examples, empty-example.
 */
import type { NoteIndexState, SidecarStatus } from "../client";
import { defaultServeCommand } from "../sidecar/command";
import type { SupervisorState } from "../sidecar/supervisor";
import type { StatusSnapshot } from "../status/poller";
import { ConnectForm, type RemoteConnect } from "./connectForm";
import { clear, h, show } from "./dom";
import type { ExampleQuestion } from "./examples";

/** The command that starts the sidecar on this vault (the folder quoted when it needs it). */
export function serveCommand(vaultPath: string | null): string {
  return defaultServeCommand(vaultPath);
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

/** Starting the sidecar from the pane (the plugin's supervisor). */
export interface SidecarLaunch {
  /** Whether this app can start programs (desktop). */
  canStart: boolean;
  state(): SupervisorState;
  /** Start it (or find the one running) and read its token. */
  start(): void;
  showLog(): void;
  /** The command it runs (the setting, or the default for this vault). */
  command(): string;
  onChange(listener: () => void): () => void;
}

export interface StatusPanelDeps {
  /** This vault's folder on disk (desktop), for the command to start the sidecar. */
  vaultPath(): string | null;
  url(): string;
  /** Ask the sidecar again now. */
  retry(): void;
  copy?(text: string): Promise<void>;
  /** The plugin's sidecar supervisor, where one exists. */
  launch?: SidecarLaunch;
  /** Example questions from the vault's headings (read when the empty state shows). */
  examples?(): ExampleQuestion[];
  /** An example question was clicked. */
  askExample?(question: string): void;
  /** A phone (or any device without its own sidecar): the desktop's remote listener, paired
   * with a code — the empty state then offers "Connect to your desktop" instead of a command. */
  remote?: RemoteConnect;
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
  private readonly startButton: HTMLButtonElement;
  private readonly logButton: HTMLButtonElement;
  private readonly examplesEl: HTMLElement;
  /** "Connect to your desktop" (remote mode only). */
  readonly connect: ConnectForm | null = null;
  /** The examples shown since the conversation last became empty (null: not read yet). */
  private examples: ExampleQuestion[] | null = null;
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
    this.textEl = h(this.emptyEl, "div", { cls: "vault-rag-empty-text", testid: "empty-text" });
    this.commandRow = h(this.emptyEl, "div", { cls: "vault-rag-empty-command" });
    this.commandEl = h(this.commandRow, "code", { testid: "empty-command" });
    const copy = h(this.commandRow, "button", { text: "Copy", testid: "empty-copy", attrs: { "aria-label": "Copy the command" } });
    copy.addEventListener("click", () => void deps.copy?.(this.commandEl.textContent ?? ""));
    show(copy, deps.copy !== undefined);
    const buttons = h(this.emptyEl, "div", { cls: "vault-rag-empty-buttons" });
    this.startButton = h(buttons, "button", { cls: "mod-cta", text: "Start the sidecar", testid: "empty-start" });
    this.startButton.addEventListener("click", () => deps.launch?.start());
    this.retryButton = h(buttons, "button", { text: "Try again", testid: "empty-retry" });
    this.retryButton.addEventListener("click", () => deps.retry());
    this.logButton = h(buttons, "button", { text: "Show log", testid: "empty-log" });
    this.logButton.addEventListener("click", () => deps.launch?.showLog());
    if (deps.remote !== undefined) this.connect = new ConnectForm(this.emptyEl, deps.remote, () => deps.retry());
    this.examplesEl = h(this.emptyEl, "ul", { cls: "vault-rag-empty-examples", testid: "empty-examples", attrs: { "aria-label": "Example questions" } });
    this.render();
  }

  /** The conversation is empty (show the empty state) or not. */
  setEmpty(empty: boolean): void {
    if (empty && !this.empty) this.examples = null; // read the headings again next time
    this.empty = empty;
    this.render();
  }

  /** Render again (the supervisor's state changed). */
  refresh(): void {
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
    if (this.deps.remote !== undefined) {
      this.renderRemote(this.deps.remote, connection, status, snapshot?.error ?? null);
      return;
    }
    const launch = this.deps.launch;
    const launched = launch?.state() ?? { kind: "idle" };
    const starting = launched.kind === "starting";
    const down = connection === "unreachable" || (starting && connection !== "ok");
    show(this.commandRow, down && !starting);
    show(this.retryButton, (down && !starting) || connection === "unauthorized" || connection === "unproven");
    show(this.startButton, down && !starting && launch?.canStart === true);
    show(this.logButton, launch !== undefined && (starting || launched.kind === "failed" || (launched.kind === "running" && launched.ours)) && connection !== "ok");
    this.renderExamples(connection === "ok" && status !== null && (status.notes ?? 0) > 0);
    const command = launch?.command() ?? serveCommand(this.deps.vaultPath());
    if (starting && connection !== "ok") {
      this.titleEl.textContent = "Starting the sidecar…";
      this.textEl.textContent = `Waiting for it to answer at ${this.deps.url()} (a first start loads the embedding model).`;
    } else if (down && launched.kind === "failed") {
      this.titleEl.textContent = "The sidecar could not be started";
      this.textEl.textContent = `${launched.message} Start it again, or in a terminal:`;
      this.commandEl.textContent = command;
    } else if (down) {
      this.titleEl.textContent = "The Vault RAG sidecar is not running";
      this.textEl.textContent = launch?.canStart
        ? `Nothing answers at ${this.deps.url()}. Start it here, or in a terminal:`
        : `Nothing answers at ${this.deps.url()}. Start it in a terminal, then try again:`;
      this.commandEl.textContent = command;
    } else if (connection === "unproven") {
      this.titleEl.textContent = "Something else answers at the sidecar's address";
      this.textEl.textContent =
        snapshot?.error ?? `What answers at ${this.deps.url()} cannot prove it holds this vault's token, so the token was not sent.`;
    } else if (connection === "unauthorized") {
      this.titleEl.textContent = "The sidecar refused the token";
      this.textEl.textContent =
        launched.kind === "running" && launched.tokenProblem ? launched.tokenProblem : 'Copy it from "vault-rag token" into Settings → Vault RAG.';
    } else {
      this.titleEl.textContent = "Ask your vault";
      this.textEl.textContent =
        status !== null && (status.notes ?? 0) === 0
          ? "The index is empty so far: the notes are sent as soon as the sidecar is reachable."
          : this.examples?.length
            ? "Answers come from your notes, with the passages they cite. For example:"
            : "Answers come from your notes, with the passages they cite.";
    }
  }

  /** The empty state of a device that asks a desktop: connect, the desktop asleep, revoked. */
  private renderRemote(remote: RemoteConnect, connection: string, status: SidecarStatus | null, error: string | null): void {
    const paired = remote.paired();
    const down = connection === "unreachable";
    const refused = connection === "unauthorized" || connection === "unproven";
    show(this.commandRow, false);
    show(this.startButton, false);
    show(this.logButton, false);
    show(this.retryButton, paired !== null && (down || refused));
    if (this.connect !== null) show(this.connect.el, paired === null || refused);
    this.renderExamples(paired !== null && connection === "ok" && status !== null && (status.notes ?? 0) > 0);
    if (paired === null) {
      this.titleEl.textContent = "Connect to your desktop";
      this.textEl.textContent =
        "Vault RAG answers from the index on your desktop. There: Settings → Vault RAG → Allow other devices, then Pair a device. " +
        "Scan its QR code with this device's camera, or type the address and code here.";
    } else if (down) {
      this.titleEl.textContent = "Your desktop does not answer";
      this.textEl.textContent =
        `Nothing answers at ${paired.url}. Is the desktop awake, with Obsidian (or vault-rag serve --remote-listen) running, ` +
        "and this device on the same network or tailnet? Then try again.";
    } else if (refused) {
      this.titleEl.textContent = "The desktop no longer accepts this device";
      this.textEl.textContent = error ?? "It was revoked, or paired again. Pair again with a new code from the desktop.";
    } else if (connection !== "ok") {
      this.titleEl.textContent = "Connecting to your desktop…";
      this.textEl.textContent = `Asking ${paired.url}.`;
    } else {
      this.titleEl.textContent = "Ask your vault";
      this.textEl.textContent = this.examples?.length
        ? `Answers come from your notes, through your desktop (${paired.url}). For example:`
        : `Answers come from your notes, through your desktop (${paired.url}).`;
    }
  }

  /** Example questions from the vault's headings, read once per empty conversation. */
  private renderExamples(visible: boolean): void {
    if (visible && this.examples === null && this.deps.examples) {
      this.examples = this.deps.examples();
      clear(this.examplesEl);
      for (const example of this.examples) {
        const item = h(this.examplesEl, "li");
        const button = h(item, "button", {
          cls: "vault-rag-empty-example",
          text: example.question,
          testid: "empty-example",
          attrs: { type: "button", title: `From ${example.path}`, "data-path": example.path },
        });
        button.addEventListener("click", () => this.deps.askExample?.(example.question));
      }
    }
    show(this.examplesEl, visible && (this.examples?.length ?? 0) > 0);
  }
}
