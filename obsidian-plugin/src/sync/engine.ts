/**
 * Save-time sync: vault events in, `PUT`/`DELETE /v1/notes` and renames out.
 *
 * - A changed note (and every note that embeds it) waits `fileDebounceMs` after its last
 *   change (at most `maxDelayMs` after its first), then joins the next batch; a batch goes out
 *   `batchWindowMs` after the first note became ready, so a burst becomes one request.
 * - Deletes and renames are kept in order, and all of them are sent before the upserts of the
 *   same flush; upserts are resolved at send time, so the latest content always wins and a
 *   note changed while its post was in flight is posted again.
 * - A failed flush keeps everything and retries with exponential backoff (`retryBaseMs`,
 *   doubling up to `retryMaxMs`) for as long as the sidecar is down; `kick()` retries at once.
 *   Only what no retry can fix (a 4xx for one note) is dropped, and reported.
 * - `reconcile()`: ask the sidecar for its hashes, post the notes whose content differs, delete
 *   what the vault no longer has.
 *
 * Everything outside (the sidecar, the vault, time) is injected: tests use fakes and fake timers.
 */
import type { NotePayload } from "../client";
import { normalizeNotePath } from "../resolver/links";
import { sha256Hex } from "./content";
import { backoffDelay, type Clock, systemClock } from "./timing";
import { isPermanent, type NoteSource, type SyncClient, type SyncOptions, type SyncState } from "./types";

export type { NoteSource, SyncClient, SyncOptions, SyncState };

type StructuralOp = { kind: "delete"; path: string } | { kind: "rename"; from: string; to: string };

interface Waiting {
  first: number;
  last: number;
}

export class SyncEngine {
  private readonly clock: Clock;
  private readonly o: Required<Omit<SyncOptions, "onError" | "onDropped" | "onState" | "clock">>;
  private readonly waiting = new Map<string, Waiting>();
  /** Ready to post: path → generation (bumped on every change, so in-flight posts can tell). */
  private readonly dirty = new Map<string, number>();
  private ops: StructuralOp[] = [];
  private generation = 0;
  private reconcilePending = false;
  private debounceTimer: unknown = null;
  private flushTimer: unknown = null;
  private retryTimer: unknown = null;
  private retryAt: number | null = null;
  private attempt = 0;
  private flushing: Promise<void> | null = null;
  private flushAgain = false;
  private lastError: unknown = null;
  private readonly controller = new AbortController();

  constructor(
    private readonly client: SyncClient,
    private readonly source: NoteSource,
    private readonly options: SyncOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.o = {
      isExcluded: options.isExcluded,
      fileDebounceMs: options.fileDebounceMs ?? 2_000,
      maxDelayMs: options.maxDelayMs ?? 20_000,
      batchWindowMs: options.batchWindowMs ?? 500,
      batchNotes: options.batchNotes ?? 50,
      batchChars: options.batchChars ?? 2_000_000,
      retryBaseMs: options.retryBaseMs ?? 1_000,
      retryMaxMs: options.retryMaxMs ?? 60_000,
    };
  }

  // -- events ---------------------------------------------------------------------------------

  /** A note's metadata changed (after a save): post it and every note embedding it. */
  noteChanged(path: string): void {
    if (this.stopped) return;
    for (const p of [path, ...this.source.embedders(path)]) this.touch(p);
    this.armDebounce();
    this.emit();
  }

  noteDeleted(path: string): void {
    if (this.stopped) return;
    const embedders = this.source.embedders(path);
    if (!this.o.isExcluded(path)) {
      this.waiting.delete(path);
      this.dirty.delete(path);
      const last = this.ops[this.ops.length - 1];
      // Renamed, then deleted before the rename was sent: delete the old path instead.
      if (last?.kind === "rename" && last.to === path) this.ops[this.ops.length - 1] = { kind: "delete", path: last.from };
      else this.ops.push({ kind: "delete", path });
      this.scheduleFlush(this.o.batchWindowMs);
    }
    for (const p of embedders) this.touch(p);
    this.armDebounce();
    this.emit();
  }

  noteRenamed(from: string, to: string): void {
    if (this.stopped) return;
    const fromOut = this.o.isExcluded(from);
    const toOut = this.o.isExcluded(to);
    if (fromOut && toOut) return;
    if (fromOut) return this.noteChanged(to); // moved into view: a new note for the sidecar
    if (toOut) return this.noteDeleted(from); // moved out of view
    const waiting = this.waiting.get(from);
    if (waiting !== undefined) {
      this.waiting.delete(from);
      this.waiting.set(to, waiting);
    }
    if (this.dirty.delete(from)) this.dirty.set(to, ++this.generation);
    const last = this.ops[this.ops.length - 1];
    if (last?.kind === "rename" && last.to === from) {
      // Renamed twice before the first was sent: one rename (none when it is back where it was).
      if (last.from === to) this.ops.pop();
      else this.ops[this.ops.length - 1] = { kind: "rename", from: last.from, to };
    } else {
      this.ops.push({ kind: "rename", from, to });
    }
    // Notes embedding it by name resolve differently now (Obsidian also fires `changed` for
    // the links it updates).
    for (const p of this.source.embedders(to)) this.touch(p);
    this.armDebounce();
    this.scheduleFlush(this.o.batchWindowMs);
    this.emit();
  }

  /** Compare the vault with the sidecar's hashes at the next flush (on layout-ready). */
  reconcile(): Promise<void> {
    this.reconcilePending = true;
    return this.flush();
  }

  /** Retry now (the sidecar is back): drop the backoff and flush. */
  kick(): void {
    if (this.stopped || (this.retryTimer === null && this.lastError === null)) return;
    this.clearRetry();
    this.attempt = 0;
    this.scheduleFlush(0);
  }

  /** Send what is ready now (tests, the reconcile). Resolves when this flush has finished. */
  flush(): Promise<void> {
    this.clearTimer("flushTimer");
    return this.runFlush();
  }

  /** Stop timers and abort the request in flight (plugin unload). */
  stop(): void {
    this.controller.abort();
    for (const timer of ["debounceTimer", "flushTimer", "retryTimer"] as const) this.clearTimer(timer);
  }

  get state(): SyncState {
    const paths = new Set([...this.waiting.keys(), ...this.dirty.keys()]);
    return {
      pending: paths.size + this.ops.length,
      syncing: this.flushing !== null,
      lastError: this.lastError,
      retryInMs: this.retryAt === null ? null : Math.max(0, this.retryAt - this.clock.now()),
    };
  }

  // -- debounce -------------------------------------------------------------------------------

  private get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  private touch(path: string): void {
    if (this.o.isExcluded(path)) return;
    const now = this.clock.now();
    const current = this.waiting.get(path);
    this.waiting.set(path, { first: current?.first ?? now, last: now });
  }

  private due(entry: Waiting): number {
    return Math.min(entry.last + this.o.fileDebounceMs, entry.first + this.o.maxDelayMs);
  }

  /** One timer, for the earliest note whose debounce ends. */
  private armDebounce(): void {
    this.clearTimer("debounceTimer");
    if (this.waiting.size === 0 || this.stopped) return;
    const next = Math.min(...[...this.waiting.values()].map((w) => this.due(w)));
    this.debounceTimer = this.clock.setTimeout(
      () => {
        this.debounceTimer = null;
        this.promoteDue();
      },
      Math.max(0, next - this.clock.now()),
    );
  }

  private promoteDue(): void {
    const now = this.clock.now();
    let any = false;
    for (const [path, entry] of this.waiting) {
      if (this.due(entry) > now) continue;
      this.waiting.delete(path);
      this.dirty.set(path, ++this.generation);
      any = true;
    }
    if (any) this.scheduleFlush(this.o.batchWindowMs);
    this.armDebounce();
    this.emit();
  }

  // -- flushing -------------------------------------------------------------------------------

  private scheduleFlush(delay: number): void {
    if (this.stopped || this.retryTimer !== null || this.flushTimer !== null) return;
    this.flushTimer = this.clock.setTimeout(() => {
      this.flushTimer = null;
      void this.runFlush();
    }, delay);
  }

  private runFlush(): Promise<void> {
    if (this.flushing !== null) {
      this.flushAgain = true;
      return this.flushing;
    }
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = null;
      if (this.flushAgain && this.retryTimer === null) {
        this.flushAgain = false;
        if (this.hasWork()) this.scheduleFlush(this.o.batchWindowMs);
      }
      this.emit();
    });
    this.emit();
    return this.flushing;
  }

  private hasWork(): boolean {
    return this.ops.length > 0 || this.dirty.size > 0 || this.reconcilePending;
  }

  private async flushOnce(): Promise<void> {
    const signal = this.controller.signal;
    try {
      if (this.reconcilePending) await this.runReconcile(signal);
      await this.sendOps(signal);
      await this.sendUpserts(signal);
      this.attempt = 0;
      this.lastError = null;
    } catch (error) {
      if (this.stopped) return;
      this.lastError = error;
      this.attempt += 1;
      this.options.onError?.(error);
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    this.clearRetry();
    const delay = backoffDelay(this.attempt, this.o.retryBaseMs, this.o.retryMaxMs);
    this.retryAt = this.clock.now() + delay;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      this.retryAt = null;
      void this.runFlush();
    }, delay);
  }

  private clearRetry(): void {
    this.clearTimer("retryTimer");
    this.retryAt = null;
  }

  private clearTimer(name: "debounceTimer" | "flushTimer" | "retryTimer"): void {
    if (this[name] !== null) this.clock.clearTimeout(this[name]);
    this[name] = null;
  }

  /** Deletes and renames in the order they happened; consecutive ones of a kind in one request. */
  private async sendOps(signal: AbortSignal): Promise<void> {
    while (this.ops.length > 0) {
      const kind = (this.ops[0] as StructuralOp).kind;
      let count = 0;
      while (count < this.ops.length && count < this.o.batchNotes && this.ops[count]?.kind === kind) count++;
      const run = this.ops.slice(0, count);
      try {
        if (kind === "delete") {
          const paths = run.map((op) => normalizeNotePath((op as { path: string }).path));
          await this.client.deleteNotes([...new Set(paths)], { signal });
        } else {
          const renames = run.map((op) => op as { from: string; to: string });
          await this.client.renameNotes(
            renames.map((r) => ({ oldPath: normalizeNotePath(r.from), newPath: normalizeNotePath(r.to) })),
            { signal },
          );
        }
      } catch (error) {
        if (!isPermanent(error)) throw error;
        for (const op of run) {
          if (op.kind === "rename") this.dirty.set(op.to, ++this.generation); // post it under its new name
          else this.options.onDropped?.(op.path, error);
        }
      }
      this.ops.splice(0, count);
      this.emit();
    }
  }

  /** The ready notes, resolved now, in batches by count and size. */
  private async sendUpserts(signal: AbortSignal): Promise<void> {
    const snapshot = [...this.dirty.entries()];
    let batch: { path: string; generation: number; payload: NotePayload }[] = [];
    let chars = 0;
    const send = async () => {
      if (batch.length === 0) return;
      await this.putBatch(batch, signal);
      batch = [];
      chars = 0;
    };
    for (const [path, generation] of snapshot) {
      if (this.o.isExcluded(path)) {
        this.dirty.delete(path);
        continue;
      }
      const payload = await this.source.payload(path, signal);
      signal.throwIfAborted();
      if (payload === null) {
        // Gone, or not parsed yet (its `changed` event will bring it back).
        if (this.dirty.get(path) === generation) this.dirty.delete(path);
        continue;
      }
      if (batch.length > 0 && (batch.length >= this.o.batchNotes || chars + payload.content.length > this.o.batchChars)) {
        await send();
      }
      batch.push({ path, generation, payload });
      chars += payload.content.length;
    }
    await send();
  }

  private async putBatch(batch: { path: string; generation: number; payload: NotePayload }[], signal: AbortSignal) {
    try {
      await this.client.putNotes(
        batch.map((b) => b.payload),
        { signal },
      );
    } catch (error) {
      if (!isPermanent(error)) throw error;
      if (batch.length > 1) {
        // One bad note (or too large a body) must not block the others: one by one.
        for (const item of batch) await this.putBatch([item], signal);
        return;
      }
      this.options.onDropped?.(batch[0]?.path ?? "", error);
    }
    for (const { path, generation } of batch) {
      if (this.dirty.get(path) === generation) this.dirty.delete(path);
    }
    this.emit();
  }

  private async runReconcile(signal: AbortSignal): Promise<void> {
    const remote = await this.client.noteHashes({ signal });
    const local = this.source.listNotes();
    const inVault = new Set(local.map(normalizeNotePath));
    for (const path of local) {
      if (this.o.isExcluded(path) || this.dirty.has(path) || this.waiting.has(path)) continue;
      const known = remote.get(normalizeNotePath(path));
      if (known !== undefined && (await this.inSync(path, known, signal))) continue;
      this.dirty.set(path, ++this.generation);
    }
    for (const path of remote.keys()) {
      // Excluded notes are left alone both ways: the sidecar's own ignore rules decide.
      if (!inVault.has(path) && !this.o.isExcluded(path)) this.ops.push({ kind: "delete", path });
    }
    this.reconcilePending = false;
    this.emit();
  }

  private async inSync(path: string, known: string, signal: AbortSignal): Promise<boolean> {
    const payload = await this.source.payload(path, signal);
    signal.throwIfAborted();
    if (payload === null) return true; // nothing to post now; a `changed` event will follow
    if ((await sha256Hex(payload.content)) === known) return true;
    return (await this.source.fileHash(path)) === known;
  }

  private emit(): void {
    this.options.onState?.(this.state);
  }
}
