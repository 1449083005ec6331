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
 * - `reconcile()`: ask the sidecar for its hashes, post the notes whose content differs (and
 *   the notes embedding them), delete what the vault no longer has. A note whose mtime and size
 *   are those of the last time it was known in sync, with the same hash on the sidecar, is not
 *   read at all; the loop yields to the UI between slices of notes.
 * - Sizes are UTF-8 bytes of each note's JSON entry: at most `batchBytes` per request; a note
 *   over `maxNoteBytes`, or refused with 413, is reported (`onTooLarge`), not retried.
 * - `persisted` / `options.persisted`: the queue (deletes, renames, notes to post) and the
 *   in-sync map survive a reload through the plugin's data.
 *
 * Everything outside (the sidecar, the vault, time) is injected: tests use fakes and fake timers.
 */
import { type NotePayload, SidecarHttpError } from "../client";
import { normalizeNotePath } from "../resolver/links";
import { sha256Hex } from "./content";
import { macrotask, Slicer, type SliceStats } from "./slicer";
import { backoffDelay, type Clock, systemClock } from "./timing";
import {
  isPermanent,
  type NoteSource,
  type PersistedSync,
  type StructuralOp,
  type SyncClient,
  type SyncOptions,
  type SyncState,
} from "./types";

export type { NoteSource, PersistedSync, SyncClient, SyncOptions, SyncState };

interface Known {
  mtime: number;
  size: number;
  /** The first 16 hex digits of the sidecar's hash (64 bits tell a change; the map stays small). */
  hash: string;
}

const HASH_PREFIX = 16;

interface Outgoing {
  path: string;
  generation: number;
  payload: NotePayload;
  bytes: number;
}

const encoder = new TextEncoder();

interface Waiting {
  first: number;
  last: number;
}

export class SyncEngine {
  private readonly clock: Clock;
  private readonly o: Required<
    Omit<SyncOptions, "onError" | "onDropped" | "onState" | "onTooLarge" | "clock" | "yieldToUi" | "persisted">
  >;
  /** Notes known in sync with the sidecar at this mtime and size (the reconcile's shortcut). */
  private readonly known = new Map<string, Known>();
  private readonly tooLarge = new Map<string, number>();
  /** Payloads the reconcile already built for notes it found changed: path → (generation, payload). */
  private readonly prepared = new Map<string, { generation: number; payload: NotePayload }>();
  /** How the last reconcile sliced its work (tests, diagnostics), the notes it read and the
   * notes it found different from the sidecar (posted or deleted after it). */
  lastReconcile: (SliceStats & { read: number; changed: number }) | null = null;
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
      batchBytes: options.batchBytes ?? 4_000_000,
      maxNoteBytes: options.maxNoteBytes ?? 8_000_000,
      reconcileSlice: options.reconcileSlice ?? 100,
      reconcileConcurrency: Math.max(1, options.reconcileConcurrency ?? 8),
      retryBaseMs: options.retryBaseMs ?? 1_000,
      retryMaxMs: options.retryMaxMs ?? 60_000,
    };
    this.restore(options.persisted ?? null);
  }

  /** The queue and the in-sync map, for the plugin's data. */
  get persisted(): PersistedSync {
    const known: PersistedSync["known"] = {};
    for (const [path, k] of this.known) known[path] = [k.mtime, k.size, k.hash];
    return {
      ops: this.ops.map((op) => ({ ...op })),
      upserts: [...new Set([...this.waiting.keys(), ...this.dirty.keys()])],
      known,
    };
  }

  private restore(data: PersistedSync | null): void {
    if (data === null) return;
    for (const op of data.ops) this.ops.push({ ...op });
    for (const path of data.upserts) this.dirty.set(path, ++this.generation);
    for (const [path, [mtime, size, hash]] of Object.entries(data.known)) this.known.set(path, { mtime, size, hash });
    // Sent by the first flush: the start-up reconcile, once Obsidian's metadata is ready.
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
    this.known.delete(path);
    this.tooLarge.delete(path);
    this.prepared.delete(path);
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
    const known = this.known.get(from);
    this.known.delete(from);
    if (known !== undefined) this.known.set(to, known);
    this.tooLarge.delete(from);
    this.prepared.delete(from);
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

  /**
   * "Re-index vault": forget which notes were known in sync, then reconcile, so every note is
   * read and compared with the sidecar's hash and whatever differs is sent (deleted notes are
   * deleted). Resolves once that flush is over: the reconcile's counts, or null when the
   * sidecar could not be reached (everything stays queued and is retried).
   */
  async reindex(): Promise<{ read: number; changed: number } | null> {
    this.known.clear();
    this.lastReconcile = null;
    await this.reconcile();
    // A flush already under way ran without the reconcile: run it now.
    while (this.reconcilePending && this.lastError === null && !this.stopped) await this.flush();
    const done = this.lastReconcile as (SliceStats & { read: number; changed: number }) | null;
    return done === null || this.lastError !== null ? null : { read: done.read, changed: done.changed };
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
      tooLarge: [...this.tooLarge.keys()],
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

  /** The ready notes, resolved now, in batches by count and bytes. */
  private async sendUpserts(signal: AbortSignal): Promise<void> {
    const snapshot = [...this.dirty.entries()];
    let batch: Outgoing[] = [];
    let bytes = 0;
    const send = async () => {
      if (batch.length === 0) return;
      await this.putBatch(batch, signal);
      batch = [];
      bytes = 0;
    };
    for (const [path, generation] of snapshot) {
      if (this.o.isExcluded(path)) {
        this.dirty.delete(path);
        continue;
      }
      const payload = this.takePrepared(path, generation) ?? (await this.source.payload(path, signal));
      signal.throwIfAborted();
      if (payload === null) {
        // Gone, or not parsed yet (its `changed` event will bring it back).
        if (this.dirty.get(path) === generation) this.dirty.delete(path);
        continue;
      }
      const size = encoder.encode(JSON.stringify(payload)).byteLength;
      if (size > this.o.maxNoteBytes) {
        if (this.dirty.get(path) === generation) this.dirty.delete(path);
        this.reportTooLarge(path, size);
        continue;
      }
      if (batch.length > 0 && (batch.length >= this.o.batchNotes || bytes + size > this.o.batchBytes)) await send();
      batch.push({ path, generation, payload, bytes: size });
      bytes += size;
    }
    await send();
  }

  private async putBatch(batch: Outgoing[], signal: AbortSignal): Promise<void> {
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
      const item = batch[0];
      if (item !== undefined) {
        if (error instanceof SidecarHttpError && error.status === 413) this.reportTooLarge(item.path, item.bytes);
        else this.options.onDropped?.(item.path, error);
        if (this.dirty.get(item.path) === item.generation) this.dirty.delete(item.path);
      }
      this.emit();
      return;
    }
    for (const { path, generation, payload } of batch) {
      if (this.dirty.get(path) === generation) this.dirty.delete(path);
      this.tooLarge.delete(path);
      this.rememberPosted(path, payload);
    }
    this.emit();
  }

  /** The sidecar now holds `payload`: remember its hash for this mtime and size (not awaited:
   * the flush does not wait for hashing). */
  private rememberPosted(path: string, payload: NotePayload): void {
    this.known.delete(path);
    const stat = this.source.stat(path);
    if (stat === null || stat.mtime !== payload.mtime) return;
    void sha256Hex(payload.content).then((hash) => {
      const now = this.source.stat(path);
      if (now !== null && now.mtime === stat.mtime && now.size === stat.size && !this.known.has(path)) {
        this.known.set(path, { ...stat, hash: hash.slice(0, HASH_PREFIX) });
      }
    });
  }

  /** The reconcile's payload for `path`, if nothing changed since (same generation and mtime):
   * a changed note is resolved once, not once to compare and once to send. */
  private takePrepared(path: string, generation: number): NotePayload | null {
    const prepared = this.prepared.get(path);
    this.prepared.delete(path);
    if (prepared === undefined || prepared.generation !== generation) return null;
    return this.source.stat(path)?.mtime === prepared.payload.mtime ? prepared.payload : null;
  }

  private reportTooLarge(path: string, bytes: number): void {
    this.tooLarge.set(path, bytes);
    this.options.onTooLarge?.(path, bytes);
  }

  private async runReconcile(signal: AbortSignal): Promise<void> {
    const yieldToUi = this.options.yieldToUi ?? macrotask;
    await this.source.prepare?.(yieldToUi);
    const remote = await this.client.noteHashes({ signal });
    const local = this.source.listNotes();
    const inVault = new Set(local.map(normalizeNotePath));
    const slicer = new Slicer({ maxSteps: this.o.reconcileSlice, yieldToUi, now: () => this.clock.now() });
    const changed: string[] = [];
    const verified = new Set<string>(); // resolved and hashed now: in sync as they are
    // Deletes and renames still queued (from before a reload) are not differences to repair:
    // a renamed note keeps the hash of its old path, whose delete would undo the rename.
    const renamedFrom = new Map<string, string>();
    const queued = new Set<string>();
    for (const op of this.ops) {
      if (op.kind === "rename") {
        renamedFrom.set(normalizeNotePath(op.to), normalizeNotePath(op.from));
        queued.add(normalizeNotePath(op.from));
      } else {
        queued.add(normalizeNotePath(op.path));
      }
    }
    let read = 0;
    // Up to `reconcileConcurrency` notes are read and hashed at once (their file reads and
    // digests overlap instead of queueing one after another); results apply in vault order.
    type Check = { path: string; stat: { mtime: number; size: number } | null; remoteHash: string | undefined };
    const window: { note: Check; check: Promise<{ inSync: boolean; payload: NotePayload | null }> | null }[] = [];
    const settle = async (): Promise<void> => {
      const results = await Promise.allSettled(window.map((w) => w.check ?? Promise.resolve(null)));
      const taken = window.splice(0);
      for (const [i, { note, check }] of taken.entries()) {
        const result = results[i] as PromiseSettledResult<{ inSync: boolean; payload: NotePayload | null } | null>;
        if (result.status === "rejected") throw result.reason;
        let payload: NotePayload | null = null;
        if (check !== null && result.value !== null) {
          read += 1;
          if (result.value.inSync) {
            if (note.stat !== null && note.remoteHash !== undefined) {
              this.known.set(note.path, { ...note.stat, hash: note.remoteHash.slice(0, HASH_PREFIX) });
            }
            verified.add(note.path);
            continue;
          }
          payload = result.value.payload;
        }
        this.dirty.set(note.path, ++this.generation);
        if (payload !== null) this.prepared.set(note.path, { generation: this.generation, payload });
        changed.push(note.path);
      }
    };
    for (const path of local) {
      await slicer.step();
      signal.throwIfAborted();
      if (this.o.isExcluded(path) || this.dirty.has(path) || this.waiting.has(path)) continue;
      const from = renamedFrom.get(normalizeNotePath(path));
      const remoteHash = remote.get(normalizeNotePath(path)) ?? (from === undefined ? undefined : remote.get(from));
      const stat = this.source.stat(path);
      const known = this.known.get(path);
      if (
        remoteHash !== undefined &&
        stat !== null &&
        known !== undefined &&
        remoteHash.startsWith(known.hash) &&
        known.mtime === stat.mtime &&
        known.size === stat.size
      ) {
        continue; // unchanged here since it was last in sync, and unchanged on the sidecar
      }
      this.known.delete(path);
      const check = remoteHash === undefined ? null : this.inSync(path, remoteHash, signal);
      window.push({ note: { path, stat, remoteHash }, check });
      if (window.length >= this.o.reconcileConcurrency) await settle();
    }
    await settle();
    for (const path of remote.keys()) {
      // Excluded notes are left alone both ways: the sidecar's own ignore rules decide.
      if (!inVault.has(path) && !queued.has(path) && !this.o.isExcluded(path)) {
        this.ops.push({ kind: "delete", path });
        changed.push(path);
      }
    }
    for (const path of this.known.keys()) if (!inVault.has(normalizeNotePath(path))) this.known.delete(path);
    // Notes embedding a changed (or deleted) note resolve differently now, though their own
    // file is unchanged.
    for (const path of changed) {
      for (const embedder of this.source.embedders(path)) {
        const skip = verified.has(embedder) || this.waiting.has(embedder) || this.dirty.has(embedder);
        if (!skip && !this.o.isExcluded(embedder)) {
          this.dirty.set(embedder, ++this.generation);
        }
      }
    }
    this.lastReconcile = { ...slicer.stats, read, changed: changed.length };
    this.reconcilePending = false;
    this.emit();
  }

  private async inSync(
    path: string,
    known: string,
    signal: AbortSignal,
  ): Promise<{ inSync: boolean; payload: NotePayload | null }> {
    const payload = await this.source.payload(path, signal);
    signal.throwIfAborted();
    if (payload === null) return { inSync: true, payload }; // nothing to post now; a `changed` event will follow
    if ((await sha256Hex(payload.content)) === known) return { inSync: true, payload };
    return { inSync: (await this.source.fileHash(path)) === known, payload };
  }

  private emit(): void {
    this.options.onState?.(this.state);
  }
}
