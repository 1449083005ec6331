/**
 * Zero-setup start: make sure a sidecar answers at the configured URL and the plugin holds its
 * token, starting `vault-rag serve` itself when nothing answers. Pure logic over a small
 * `Launcher` interface (Node's child_process on the desktop app, `nodeLauncher.ts`; the test
 * runner's real processes in the Chromium harness), so every path is testable:
 *
 * - one already running (`GET /v1/health` answers): use it; when the token is missing or refused,
 *   read it with `vault-rag token` (same vault and data dir as the command);
 * - a sidecar this supervisor did not start gets no token (neither the stored one nor one read
 *   with `vault-rag token`) before it proves it holds that token (`GET /v1/health?challenge=`,
 *   `proof.ts`): whatever else holds the port (issue 31, defect 5) never receives it; a started
 *   one is waited for until it proves its handshake token, so a squatter answering first is not
 *   taken for it;
 * - else start the command (never through a shell) with `VAULT_RAG_HANDSHAKE=1`, keep its output
 *   (the log modal shows it, the token redacted), take the token from its handshake line and
 *   wait until `/v1/health` answers; a process that exits first, or takes longer than
 *   `startTimeoutMs`, is a failure with its log;
 * - `stop()` (the plugin unloads) ends only a process this supervisor started;
 * - a command with `--port 0` (the default: one sidecar per vault, side by side) binds a free
 *   port and says which in its handshake: the URL is taken from there (`useUrl`) before
 *   anything asks it; a server at the configured URL that cannot prove it holds this vault's
 *   token (another vault's sidecar, or another program) is left alone and this vault's own is
 *   started; without `--port 0` that is a problem to report (`tokenProblem`);
 * - a started sidecar that dies later is started again, after 1, 2, 4… s (at most
 *   `maxRestarts` in a row; a run of over a minute resets the count).
 */
import { type Clock, systemClock } from "../sync/timing";
import { CommandSyntaxError, HANDSHAKE_ENV, parseHandshake, quoteArg, splitCommand, tokenCommand, tokenFromOutput } from "./command";
import type { Located } from "./locate";

export interface ProcessExit {
  code: number | null;
  signal: string | null;
  /** Why it could not start at all (ENOENT: no such program…). */
  error?: string;
}

/** A process the launcher started. */
export interface ProcessHandle {
  /** Resolves once the process has ended. */
  readonly exited: Promise<ProcessExit>;
  /** End it (SIGTERM, then SIGKILL after a grace period); resolves once it has ended. */
  stop(): Promise<void>;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Launcher {
  /** Start `argv` (argv[0] the program) with these variables added to the environment. */
  spawn(
    argv: string[],
    options: { cwd: string | null; env: Record<string, string> },
    onOutput: (stream: "out" | "err", text: string) => void,
  ): ProcessHandle;
  /** Run `argv` to the end (e.g. `vault-rag token`). */
  run(argv: string[], options: { cwd: string | null; env: Record<string, string>; timeoutMs: number }): Promise<RunResult>;
}

export type TokenState = "ok" | "unauthorized" | "unreachable";

export type SupervisorState =
  | { kind: "idle" }
  | { kind: "starting" }
  /** `ours`: this supervisor started it; `tokenProblem`: something answers, but the token is still
   * refused, or it cannot prove it is this vault's sidecar (then the token was not sent). */
  | { kind: "running"; ours: boolean; tokenProblem: string | null }
  | { kind: "failed"; message: string }
  | { kind: "stopped" };

export interface SupervisorDeps {
  launcher: Launcher | null;
  /** `GET /v1/health` answers (it needs no token). */
  healthy(): Promise<boolean>;
  /** Whether the sidecar accepts the plugin's current token (this sends the token). */
  tokenState(): Promise<TokenState>;
  /** Whether what answers `GET /v1/health` with a fresh challenge proves it holds `token`
   * (the token itself is not sent); false when nothing answers. */
  proves(token: string): Promise<boolean>;
  /** The token the plugin holds now (empty: none). */
  storedToken(): string;
  /** The URL asked now (for messages). */
  url(): string;
  /** The command line to start it (the setting, or the default). */
  command(): string;
  /** Where to run it: this vault's folder. */
  cwd(): string | null;
  /** Keep the sidecar's token in the plugin's settings. */
  saveToken(token: string): Promise<void>;
  onChange?(state: SupervisorState): void;
  clock?: Clock;
  /** How long the started sidecar may take to answer `/v1/health` (default 3 min: a first
   * start loads the embedding model). */
  startTimeoutMs?: number;
  pollMs?: number;
  /** Where the started sidecar listens, from its handshake (null: back to the configured URL). */
  useUrl?(url: string | null): void;
  /** Restarts in a row before giving up (default 5). */
  maxRestarts?: number;
  /** The first restart's delay, doubled each time up to 30 s (default 1 s). */
  restartBaseMs?: number;
  /** Find the program (`locate.ts`: the path setting, PATH, the usual install folders);
   * `missing` says what is not installed and what to run. Absent: run as written. */
  locate?(argv: string[]): Promise<Located>;
}

const MAX_LOG_LINES = 2_000;
const TOKEN_COMMAND_TIMEOUT_MS = 60_000;

/** The sidecar's output, line by line, with the token blanked out. */
export class SidecarLog {
  private readonly lines: string[] = [];
  private partial: Record<"out" | "err", string> = { out: "", err: "" };
  private secrets: string[] = [];
  private readonly listeners = new Set<() => void>();

  /** Chunks of output; complete lines are kept (a line is sent to `onLine` first). */
  write(stream: "out" | "err", text: string, onLine?: (line: string) => void): void {
    const parts = (this.partial[stream] + text).split(/\r?\n/);
    this.partial[stream] = parts.pop() ?? "";
    for (const line of parts) {
      onLine?.(line);
      this.add(line);
    }
  }

  /** A line of the plugin's own (what it runs, how it ended). */
  note(text: string): void {
    this.add(`[vault-rag plugin] ${text}`);
  }

  /** Never show `secret` (the token) again, in the lines kept so far or later ones. */
  redact(secret: string): void {
    if (!secret || this.secrets.includes(secret)) return;
    this.secrets.push(secret);
    for (let i = 0; i < this.lines.length; i++) this.lines[i] = this.blank(this.lines[i] as string);
    this.changed();
  }

  get text(): string {
    return this.lines.join("\n");
  }

  get lineCount(): number {
    return this.lines.length;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private add(line: string): void {
    this.lines.push(this.blank(line));
    if (this.lines.length > MAX_LOG_LINES) this.lines.splice(0, this.lines.length - MAX_LOG_LINES);
    this.changed();
  }

  private blank(line: string): string {
    let out = line;
    for (const secret of this.secrets) out = out.split(secret).join("[token]");
    return out.startsWith("vault-rag-handshake ") ? "vault-rag-handshake [received]" : out;
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

export class SidecarSupervisor {
  readonly log = new SidecarLog();
  private current: SupervisorState = { kind: "idle" };
  private process: ProcessHandle | null = null;
  private ensuring: Promise<void> | null = null;
  private readonly clock: Clock;
  private restarts = 0;
  private restartTimer: unknown = null;
  private startedAt = 0;
  private stopped = false;

  constructor(private readonly deps: SupervisorDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  get state(): SupervisorState {
    return this.current;
  }

  /** Whether this supervisor can start a process at all (desktop app). */
  get canStart(): boolean {
    return this.deps.launcher !== null;
  }

  /** Whether it runs a sidecar it started. */
  get owns(): boolean {
    return this.process !== null;
  }

  /** Make sure a sidecar answers and the plugin has its token (see the module doc); calls made
   * while one is under way wait for it. */
  ensure(): Promise<void> {
    this.ensuring ??= this.run().finally(() => {
      this.ensuring = null;
    });
    return this.ensuring;
  }

  /** End the sidecar this supervisor started (none started: nothing happens). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer !== null) this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const process = this.process;
    this.process = null;
    if (process === null) return;
    this.log.note("stopping the sidecar this plugin started");
    await process.stop();
    this.set({ kind: "stopped" });
  }

  private async run(): Promise<void> {
    this.stopped = false;
    const command = this.deps.command();
    const ownPort = freePortCommand(command);
    if (await this.deps.healthy()) {
      if (this.current.kind !== "running") this.log.note("a sidecar already answers at the configured URL; using it");
      this.set({ kind: "running", ours: this.process !== null, tokenProblem: null });
      const foreign = await this.ensureToken(null, ownPort && this.process === null && this.deps.launcher !== null);
      if (!foreign) return;
      this.log.note("what answers at that URL cannot prove it is this vault's sidecar; starting this vault's own on a free port");
    }
    const launcher = this.deps.launcher;
    if (launcher === null) {
      this.fail(`Obsidian cannot start programs here (desktop only). Start the sidecar yourself: ${command}`);
      return;
    }
    let argv: string[];
    try {
      argv = splitCommand(command);
    } catch (error) {
      if (!(error instanceof CommandSyntaxError)) throw error;
      this.fail(`The sidecar command cannot be read: ${error.message}.`);
      return;
    }
    if (argv.length === 0) {
      this.fail("The sidecar command is empty.");
      return;
    }
    const located = this.deps.locate ? await this.deps.locate(argv) : { argv, found: null };
    if ("missing" in located) {
      this.fail(located.missing);
      return;
    }
    if (located.found !== null) this.log.note(`found vault-rag at ${located.found}`);
    await this.start(launcher, located.argv);
  }

  private async start(launcher: Launcher, argv: string[]): Promise<void> {
    this.set({ kind: "starting" });
    this.log.note(`starting: ${argv.join(" ")}`);
    let handshake: string | null = null;
    // With --port 0 nothing may be asked before the handshake names the port: the configured
    // URL may be another vault's sidecar.
    const ownPort = freePortCommand(argv.map(quoteArg).join(" "));
    let urlKnown = !ownPort;
    if (ownPort) this.deps.useUrl?.(null);
    const process = launcher.spawn(argv, { cwd: this.deps.cwd(), env: { [HANDSHAKE_ENV]: "1" } }, (stream, text) =>
      this.log.write(stream, text, (line) => {
        const found = stream === "out" ? parseHandshake(line) : null;
        if (found === null) return;
        handshake = found.token;
        this.log.redact(found.token);
        if (ownPort && found.url) {
          this.deps.useUrl?.(found.url);
          this.log.note(`it listens at ${found.url}`);
          urlKnown = true;
        }
      }),
    );
    this.startedAt = this.clock.now();
    this.process = process;
    const ended: { exit: ProcessExit | null } = { exit: null };
    void process.exited.then((result) => {
      ended.exit = result;
      this.exited(process, result);
    });
    const deadline = this.clock.now() + (this.deps.startTimeoutMs ?? 180_000);
    for (;;) {
      if (ended.exit !== null) return; // `exited` has said why
      // With the handshake's token: it proves it, or it is something else holding the port.
      if (urlKnown && (await (handshake === null ? this.deps.healthy() : this.deps.proves(handshake)))) break;
      if (ended.exit !== null) return;
      if (this.clock.now() > deadline) {
        this.fail(`The sidecar did not answer within ${Math.round((this.deps.startTimeoutMs ?? 180_000) / 1000)} s; stopped it (see its log).`);
        this.process = null;
        await process.stop();
        return;
      }
      await new Promise<void>((resolve) => this.clock.setTimeout(() => resolve(), this.deps.pollMs ?? 500));
    }
    this.log.note("the sidecar answers");
    // The token first: whoever the state change wakes (the status poller) asks with it.
    if (handshake !== null) await this.ensureToken(handshake);
    this.set({ kind: "running", ours: true, tokenProblem: null });
    if (handshake === null) await this.ensureToken(null);
  }

  /** The started process ended: say so (and how), unless we ended it on purpose. */
  private exited(process: ProcessHandle, result: ProcessExit): void {
    if (this.process !== process) return; // stopped by `stop()`, or replaced
    this.process = null;
    const how = result.error ?? (result.signal ? `was ended by ${result.signal}` : `exited with code ${result.code}`);
    this.log.note(`the sidecar ${how}`);
    const hint = result.code === 4 ? " (its port is in use: another program, or another sidecar, listens there)" : "";
    const wasRunning = this.current.kind === "running";
    this.fail(`The sidecar ${how}${hint}. See its log.`);
    if (wasRunning) this.scheduleRestart();
  }

  /** A sidecar that ran and died: start it again after a back-off (see the module doc). */
  private scheduleRestart(): void {
    if (this.stopped || this.deps.launcher === null) return;
    if (this.clock.now() - this.startedAt > 60_000) this.restarts = 0;
    const max = this.deps.maxRestarts ?? 5;
    if (this.restarts >= max) {
      this.log.note(`not restarting: it died ${max} times in a row`);
      return;
    }
    const delay = Math.min(30_000, (this.deps.restartBaseMs ?? 1_000) * 2 ** this.restarts);
    this.restarts++;
    this.log.note(`restarting in ${Math.round(delay / 100) / 10} s (attempt ${this.restarts} of ${max})`);
    this.restartTimer = this.clock.setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopped) void this.ensure();
    }, delay);
  }

  /** Keep the handshake's token, or read it with `vault-rag token` when the sidecar refuses
   * (or was never given) the plugin's token. No token is sent to a server that has not proven
   * it holds it (see the module doc). True when the server cannot prove it holds even this
   * vault's token and `canStartOwn`: the caller starts this vault's own instead of reporting it. */
  private async ensureToken(known: string | null, canStartOwn = false): Promise<boolean> {
    if (known !== null) {
      await this.deps.saveToken(known);
      this.log.note("took the token from the sidecar's handshake");
      return false;
    }
    const stored = this.deps.storedToken();
    if (stored !== "" && (await this.deps.proves(stored))) {
      if ((await this.deps.tokenState()) !== "unauthorized") return false;
    }
    const launcher = this.deps.launcher;
    const argv = tokenCommand(safeSplit(this.deps.command()));
    const unproven = `Something else answers at ${this.deps.url()} and cannot prove it is this vault's sidecar (another vault's, or another program); the token was not sent.`;
    let problem =
      stored === ""
        ? "The sidecar refused the token; paste the one `vault-rag token` prints into the settings."
        : `${this.deps.url()} cannot prove it holds the token in the settings, so the token was not sent: paste the one \`vault-rag token\` prints into the settings, or see what listens there.`;
    if (launcher !== null && argv !== null) {
      this.log.note(`reading the token: ${argv.join(" ")}`);
      try {
        const result = await launcher.run(argv, { cwd: this.deps.cwd(), env: {}, timeoutMs: TOKEN_COMMAND_TIMEOUT_MS });
        const token = result.code === 0 ? tokenFromOutput(result.stdout) : null;
        if (token !== null) {
          this.log.redact(token);
          if (!(await this.deps.proves(token))) {
            if (canStartOwn) return true;
            problem = unproven;
          } else {
            await this.deps.saveToken(token);
            if ((await this.deps.tokenState()) === "ok") {
              this.log.note("took the token from vault-rag token");
              this.update({ tokenProblem: null });
              return false;
            }
            problem = "The sidecar proves it holds this vault's token but refuses it; see its log.";
          }
        } else {
          problem = `\`${argv.join(" ")}\` gave no token (exit ${result.code}): ${result.stderr.trim().slice(0, 300)}`;
        }
      } catch (error) {
        problem = `Could not run \`${argv.join(" ")}\`: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    this.log.note(problem);
    this.update({ tokenProblem: problem });
    return false;
  }

  private update(change: { tokenProblem: string | null }): void {
    if (this.current.kind === "running") this.set({ ...this.current, ...change });
  }

  private fail(message: string): void {
    this.set({ kind: "failed", message });
  }

  private set(state: SupervisorState): void {
    this.current = state;
    this.deps.onChange?.(state);
  }
}

/** Whether the command asks for a free port (`--port 0`, `--port=0`). */
export function freePortCommand(command: string): boolean {
  const argv = safeSplit(command);
  return argv.some((arg, i) => arg === "--port=0" || (arg === "--port" && argv[i + 1] === "0"));
}

function safeSplit(command: string): string[] {
  try {
    return splitCommand(command);
  } catch {
    return [];
  }
}
