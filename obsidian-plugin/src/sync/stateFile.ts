/**
 * The sync state out of `data.json` (issue 29): at 10k notes the in-sync map is ~0.85 MB, and
 * rewriting it with the settings after every synced save made `data.json` churn (Obsidian Sync,
 * iCloud and git copied it again and again). Now two files of their own in the plugin folder:
 *
 * - `sync-queue.json`: deletes, renames and notes still to post (small), written once the
 *   queue has been quiet for `queueDelayMs` (what must survive a crash);
 * - `sync-known.json`: the in-sync map (large, and only a cache: a lost entry costs one
 *   re-hash at the next start), written at most every `knownIntervalMs`, and on unload.
 *
 * Nothing is written when nothing changed. The adapter is Obsidian's `DataAdapter` (the files
 * are plain JSON in `.obsidian/plugins/vault-rag/`).
 */
import { type Clock, systemClock } from "./timing";
import type { PersistedSync } from "./types";

export const QUEUE_FILE = "sync-queue.json";
export const KNOWN_FILE = "sync-known.json";

export interface StateAdapter {
  read(path: string): Promise<string>;
  write(path: string, data: string): Promise<void>;
  exists(path: string): Promise<boolean>;
}

export interface StateFileOptions {
  /** The plugin's folder (`manifest.dir`). */
  dir: string;
  adapter: StateAdapter;
  clock?: Clock;
  queueDelayMs?: number;
  knownIntervalMs?: number;
  /** Every write, with its size (benchmarks, tests). */
  onWrite?: (file: string, bytes: number) => void;
}

export class SyncStateFile {
  private queueTimer: unknown = null;
  private knownTimer: unknown = null;
  private lastQueue = "";
  private lastKnown = "";
  private lastKnownWrite = Number.NEGATIVE_INFINITY;
  private readonly clock: Clock;

  constructor(
    private readonly state: () => PersistedSync,
    private readonly options: StateFileOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private path(file: string): string {
    return `${this.options.dir}/${file}`;
  }

  /** The saved state (null: none yet), with the entries of both files. */
  async load(): Promise<PersistedSync | null> {
    const read = async (file: string): Promise<unknown> => {
      try {
        if (!(await this.options.adapter.exists(this.path(file)))) return null;
        return JSON.parse(await this.options.adapter.read(this.path(file))) as unknown;
      } catch {
        return null; // damaged or unreadable: the next reconcile rebuilds it
      }
    };
    const [queue, known] = await Promise.all([read(QUEUE_FILE), read(KNOWN_FILE)]);
    if (queue === null && known === null) return null;
    const q = (queue ?? {}) as Record<string, unknown>;
    return { ops: q.ops, upserts: q.upserts, known: (known as Record<string, unknown> | null)?.known } as unknown as PersistedSync;
  }

  /** The sync state changed: write what changed, when its policy allows (see the module doc). */
  changed(): void {
    const delay = this.options.queueDelayMs ?? 2_000;
    if (this.queueTimer === null) {
      this.queueTimer = this.clock.setTimeout(() => {
        this.queueTimer = null;
        void this.writeQueue();
      }, delay);
    }
    if (this.knownTimer === null) {
      const interval = this.options.knownIntervalMs ?? 300_000;
      const wait = Math.max(delay, this.lastKnownWrite + interval - this.clock.now());
      this.knownTimer = this.clock.setTimeout(() => {
        this.knownTimer = null;
        void this.writeKnown();
      }, wait);
    }
  }

  /** Write both now if they changed (unload). */
  async flush(): Promise<void> {
    for (const timer of [this.queueTimer, this.knownTimer]) if (timer !== null) this.clock.clearTimeout(timer);
    this.queueTimer = this.knownTimer = null;
    await this.writeQueue();
    await this.writeKnown();
  }

  private async writeQueue(): Promise<void> {
    const { ops, upserts } = this.state();
    await this.write(QUEUE_FILE, JSON.stringify({ ops, upserts }), "queue");
  }

  private async writeKnown(): Promise<void> {
    this.lastKnownWrite = this.clock.now();
    await this.write(KNOWN_FILE, JSON.stringify({ known: this.state().known }), "known");
  }

  private async write(file: string, text: string, which: "queue" | "known"): Promise<void> {
    if (text === (which === "queue" ? this.lastQueue : this.lastKnown)) return;
    if (which === "queue") this.lastQueue = text;
    else this.lastKnown = text;
    await this.options.adapter.write(this.path(file), text);
    this.options.onWrite?.(file, new TextEncoder().encode(text).length);
  }
}
