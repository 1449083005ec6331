/**
 * Files the sidecar reads itself (PDFs, canvases): the plugin never posts their bytes. It names
 * the paths that were created, modified, renamed or deleted in `POST /v1/notes/changed`, and the
 * sidecar reads each one from the vault (a deleted one is dropped from its index; a rename is
 * the old path gone and the new one there: vectors are reused by content hash).
 *
 * - A burst of events becomes one request: each path waits `debounceMs` after its last event
 *   (a PDF is often written in several chunks), at most `maxDelayMs` after its first.
 * - A failed request keeps every path and retries with exponential backoff; `kick()` retries at
 *   once (the sidecar is back). Only a 4xx no retry can fix drops the batch, and says so.
 * - Excluded folders are left out (the sidecar's own exclusions decide there).
 * - No start-up pass: the sidecar's own start-up scan compares these files with its index
 *   (`GET /v1/notes/hashes` lists Markdown notes only, so the note reconcile leaves them alone).
 */
import { normalizeNotePath } from "../resolver/links";
import { backoffDelay, type Clock, systemClock } from "./timing";
import { isPermanent } from "./types";

/** The kinds the sidecar reads from disk (its `index_kinds` setting may turn some off: it then
 * answers `ignored`). */
export const SIDECAR_READ_EXTENSIONS = ["pdf", "canvas"] as const;

export function isSidecarReadPath(path: string): boolean {
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return false;
  return (SIDECAR_READ_EXTENSIONS as readonly string[]).includes(path.slice(dot + 1).toLowerCase());
}

export interface FilesChangedClient {
  filesChanged(paths: string[], options?: { signal?: AbortSignal }): Promise<unknown>;
}

export interface FileChangeOptions {
  isExcluded: (path: string) => boolean;
  clock?: Clock;
  debounceMs?: number;
  maxDelayMs?: number;
  /** Paths per request (the route takes at most 10,000). */
  batchPaths?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  onError?: (error: unknown) => void;
  onDropped?: (paths: string[], error: unknown) => void;
}

export class FileChangeQueue {
  private readonly clock: Clock;
  private readonly waiting = new Map<string, { first: number; last: number }>();
  /** Ready to send: path → generation (a path changed again while in flight is sent again). */
  private readonly ready = new Map<string, number>();
  private generation = 0;
  private timer: unknown = null;
  private retryTimer: unknown = null;
  private attempt = 0;
  private sending: Promise<void> | null = null;
  private readonly controller = new AbortController();

  constructor(
    private readonly client: FilesChangedClient,
    private readonly options: FileChangeOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** Created or modified. */
  changed(path: string): void {
    if (!isSidecarReadPath(path) || this.options.isExcluded(path) || this.controller.signal.aborted) return;
    const now = this.clock.now();
    const key = normalizeNotePath(path);
    this.waiting.set(key, { first: this.waiting.get(key)?.first ?? now, last: now });
    this.arm();
  }

  /** Deleted: the sidecar finds it gone and drops it. */
  deleted(path: string): void {
    this.changed(path);
  }

  /** Renamed or moved: the old path is gone, the new one is there. */
  renamed(oldPath: string, newPath: string): void {
    this.changed(oldPath);
    this.changed(newPath);
  }

  /** Paths not sent yet (the status bar's pending count may add them). */
  get pending(): number {
    return new Set([...this.waiting.keys(), ...this.ready.keys()]).size;
  }

  /** Retry now: drop the backoff. */
  kick(): void {
    if (this.retryTimer === null) return;
    this.clear("retryTimer");
    this.attempt = 0;
    void this.flush();
  }

  /** Send everything now, waiting or not (tests; unload does not wait). */
  flush(): Promise<void> {
    for (const path of this.waiting.keys()) this.ready.set(path, ++this.generation);
    this.waiting.clear();
    return this.send();
  }

  stop(): void {
    this.controller.abort();
    this.clear("timer");
    this.clear("retryTimer");
  }

  private due(entry: { first: number; last: number }): number {
    return Math.min(entry.last + (this.options.debounceMs ?? 2_000), entry.first + (this.options.maxDelayMs ?? 20_000));
  }

  private arm(): void {
    this.clear("timer");
    if (this.waiting.size === 0) return;
    const next = Math.min(...[...this.waiting.values()].map((w) => this.due(w)));
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        const now = this.clock.now();
        for (const [path, entry] of this.waiting) {
          if (this.due(entry) > now) continue;
          this.waiting.delete(path);
          this.ready.set(path, ++this.generation);
        }
        this.arm();
        if (this.retryTimer === null) void this.send();
      },
      Math.max(0, next - this.clock.now()),
    );
  }

  private send(): Promise<void> {
    this.sending ??= this.sendAll().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  private async sendAll(): Promise<void> {
    const size = Math.max(1, this.options.batchPaths ?? 1_000);
    while (this.ready.size > 0 && !this.controller.signal.aborted) {
      const sent = [...this.ready].slice(0, size);
      const batch = sent.map(([path]) => path);
      try {
        await this.client.filesChanged(batch, { signal: this.controller.signal });
      } catch (error) {
        if (this.controller.signal.aborted) return;
        if (isPermanent(error)) {
          this.forget(sent);
          this.options.onDropped?.(batch, error);
          continue;
        }
        this.options.onError?.(error);
        this.attempt += 1;
        const delay = backoffDelay(this.attempt, this.options.retryBaseMs ?? 1_000, this.options.retryMaxMs ?? 60_000);
        this.clear("retryTimer");
        this.retryTimer = this.clock.setTimeout(() => {
          this.retryTimer = null;
          void this.send();
        }, delay);
        return;
      }
      this.attempt = 0;
      this.forget(sent);
    }
  }

  private forget(sent: [string, number][]): void {
    for (const [path, generation] of sent) if (this.ready.get(path) === generation) this.ready.delete(path);
  }

  private clear(name: "timer" | "retryTimer"): void {
    if (this[name] !== null) this.clock.clearTimeout(this[name]);
    this[name] = null;
  }
}
