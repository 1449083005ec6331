/**
 * The sidecar's health as the plugin shows it: a poller of `GET /v1/status` (every
 * `intervalMs` when idle, `busyIntervalMs` while it is indexing, backing off while it is down),
 * the status bar text, and notices that appear once per change of connection state.
 */
import { connectionStateOf, type SidecarStatus } from "../client";
import { backoffDelay, type Clock, systemClock } from "../sync/timing";

/** `unproven`: something answers at the URL but cannot prove it holds the token (not sent). */
export type Connection = "unknown" | "ok" | "unreachable" | "unauthorized" | "unproven";

export interface StatusSnapshot {
  connection: Connection;
  status: SidecarStatus | null;
  /** Notes the plugin still has to send. */
  syncPending: number;
  /** The last error's message, for the tooltip. */
  error: string | null;
}

export interface PollerOptions {
  clock?: Clock;
  intervalMs?: number;
  busyIntervalMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  onUpdate?: (snapshot: StatusSnapshot) => void;
  /** The connection went from something else to `ok` (sync retries at once). */
  onRecovered?: () => void;
}

export class StatusPoller {
  private readonly clock: Clock;
  private snapshot: StatusSnapshot = { connection: "unknown", status: null, syncPending: 0, error: null };
  private timer: unknown = null;
  private failures = 0;
  private running = false;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly client: { status(path?: string, options?: { signal?: AbortSignal }): Promise<SidecarStatus> },
    private readonly options: PollerOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  get current(): StatusSnapshot {
    return this.snapshot;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.poll();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Poll now (settings changed, or the user asked). */
  poll(): Promise<void> {
    if (this.polling !== null) return this.polling;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.polling = this.client
      .status()
      .then(
        (status) => this.succeeded(status),
        (error: unknown) => this.report(error),
      )
      .finally(() => {
        this.polling = null;
        this.scheduleNext();
      });
    return this.polling;
  }

  /** Another part of the plugin learned something about the connection (sync, the pane). */
  report(error: unknown): void {
    const state = connectionStateOf(error);
    if (state === null) return; // an HTTP error means the sidecar is there
    this.failures += 1;
    this.update({ connection: state, error: error instanceof Error ? error.message : String(error) });
  }

  setSyncPending(count: number): void {
    if (count !== this.snapshot.syncPending) this.update({ syncPending: count });
  }

  private succeeded(status: SidecarStatus): void {
    const recovered = this.snapshot.connection !== "ok" && this.snapshot.connection !== "unknown";
    this.failures = 0;
    this.update({ connection: "ok", status, error: status.lastError });
    if (recovered) this.options.onRecovered?.();
  }

  private scheduleNext(): void {
    if (!this.running) return;
    const o = this.options;
    const delay =
      this.snapshot.connection === "ok"
        ? (this.snapshot.status?.pending ?? 0) > 0 || (this.snapshot.status?.writer?.queued ?? 0) > 0
          ? (o.busyIntervalMs ?? 2_000)
          : (o.intervalMs ?? 15_000)
        : backoffDelay(Math.max(1, this.failures), o.retryBaseMs ?? 2_000, o.retryMaxMs ?? 60_000);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.poll();
    }, delay);
  }

  private update(change: Partial<StatusSnapshot>): void {
    this.snapshot = { ...this.snapshot, ...change };
    this.options.onUpdate?.(this.snapshot);
  }
}

/** Words for the index writer's `phase` (`GET /v1/status` → `writer.phase`); a phase this
 * plugin does not know yet is shown as sent, rather than hidden. */
export function describePhase(phase: string | null): string {
  switch (phase) {
    case null:
    case "":
      return "indexing";
    case "chunking":
      return "reading notes";
    case "embedding":
      return "embedding";
    case "sections": // the sections of merged units, embedded for precise citations
      return "sections for citations";
    default:
      return phase;
  }
}

/** The status bar's text and tooltip. */
export function describeStatus(snapshot: StatusSnapshot, url: string): { text: string; title: string } {
  const sync = snapshot.syncPending > 0 ? ` · ${snapshot.syncPending} to sync` : "";
  switch (snapshot.connection) {
    case "unknown":
      return { text: `RAG: connecting…${sync}`, title: `Vault RAG: looking for the sidecar at ${url}` };
    case "unreachable":
      return {
        text: `RAG: offline${sync}`,
        title: `Vault RAG: the sidecar at ${url} is not reachable (is "vault-rag serve" running?). Changes are kept and sent when it is back.`,
      };
    case "unauthorized":
      return { text: `RAG: token rejected${sync}`, title: "Vault RAG: the sidecar refused the token; check Settings → Vault RAG." };
    case "unproven":
      return {
        text: `RAG: token not sent${sync}`,
        title: `Vault RAG: ${snapshot.error ?? `what answers at ${url} cannot prove it holds this vault's token; the token was not sent.`}`,
      };
    default: {
      const status = snapshot.status;
      const notes = status?.notes ?? null;
      let indexing = "";
      const writer = status?.writer;
      if (status?.pending && status.pending > 0) {
        const total = status.chunks ?? 0;
        const done = status.embedded ?? Math.max(0, total - status.pending);
        indexing = total > 0 ? ` · indexing ${Math.floor((done / total) * 100)}%` : ` · indexing ${status.pending} left`;
      } else if (writer && writer.total > 0 && writer.state !== "idle" && writer.done < writer.total) {
        indexing = ` · ${describePhase(writer.phase)} ${writer.done}/${writer.total}`;
      }
      const lines = [`Vault RAG: connected to ${url}`];
      if (status?.chunks != null) lines.push(`${status.chunks} chunks, ${status.pending ?? 0} waiting for vectors`);
      if (status?.etaSeconds) lines.push(`about ${Math.ceil(status.etaSeconds / 60)} min left`);
      if (snapshot.error) lines.push(`last error: ${snapshot.error}`);
      return { text: `RAG: ${notes === null ? "ready" : `${notes} notes`}${indexing}${sync}`, title: lines.join("\n") };
    }
  }
}

/** Notices on connection changes: once when it breaks (per kind), once when it is back. */
export class ConnectionNotices {
  private last: Connection = "unknown";

  constructor(
    private readonly show: (message: string) => void,
    private readonly url: () => string,
  ) {}

  update(connection: Connection): void {
    if (connection === this.last) return;
    const previous = this.last;
    this.last = connection;
    if (connection === "unreachable") {
      this.show(`Vault RAG: cannot reach the sidecar at ${this.url()}. Is "vault-rag serve" running? Changes are kept until it is back.`);
    } else if (connection === "unauthorized") {
      this.show("Vault RAG: the sidecar refused the token. Copy it from \"vault-rag token\" into Settings → Vault RAG.");
    } else if (connection === "unproven") {
      this.show(`Vault RAG: what answers at ${this.url()} cannot prove it holds this vault's token, so the token was not sent. See the status bar.`);
    } else if (connection === "ok" && previous !== "unknown") {
      this.show("Vault RAG: connected to the sidecar again.");
    }
  }
}
