/** The interfaces of save-time sync: what it needs from the sidecar and the vault. */
import { type NotePayload, SidecarAuthError, SidecarHttpError, SidecarUnreachableError } from "../client";
import type { YieldToUi } from "./slicer";
import type { Clock } from "./timing";

/** The sidecar calls sync makes (`SidecarClient` has them). */
export interface SyncClient {
  putNotes(notes: NotePayload[], options?: { signal?: AbortSignal }): Promise<unknown>;
  deleteNotes(paths: string[], options?: { signal?: AbortSignal }): Promise<unknown>;
  renameNotes(renames: { oldPath: string; newPath: string }[], options?: { signal?: AbortSignal }): Promise<unknown>;
  noteHashes(options?: { signal?: AbortSignal }): Promise<Map<string, string>>;
}

/** The vault as sync needs it (`obsidianNoteSource` in Obsidian, a fake in tests). */
export interface NoteSource {
  /** Every markdown note in the vault. */
  listNotes(): string[];
  /** The file's modification time and size (the reconcile's cheap "changed?" test); null if gone. */
  stat(path: string): { mtime: number; size: number } | null;
  /** What to post for `path`; null when it is gone or cannot be read yet. */
  payload(path: string, signal: AbortSignal): Promise<NotePayload | null>;
  /** SHA-256 (hex) of the file's bytes, for notes the sidecar indexed from disk; null if unknown. */
  fileHash(path: string): Promise<string | null>;
  /** Notes that embed `path`, directly or through other notes. */
  embedders(path: string): string[];
  /** Work before the first reconcile (building the embed index), yielding to the UI. */
  prepare?(yieldToUi: YieldToUi): Promise<void>;
}

/** What the engine keeps across reloads (in the plugin's data). */
export interface PersistedSync {
  /** Deletes and renames not sent yet, in order. */
  ops: StructuralOp[];
  /** Notes waiting to be posted. */
  upserts: string[];
  /** path → [mtime, size, first 16 hex digits of the hash the sidecar holds]: notes known in
   * sync at that mtime and size. */
  known: Record<string, [number, number, string]>;
}

export type StructuralOp = { kind: "delete"; path: string } | { kind: "rename"; from: string; to: string };

export interface SyncOptions {
  isExcluded: (path: string) => boolean;
  clock?: Clock;
  fileDebounceMs?: number;
  maxDelayMs?: number;
  batchWindowMs?: number;
  /** Notes per `PUT`, and bytes per `PUT` (UTF-8 of the notes' JSON entries). */
  batchNotes?: number;
  batchBytes?: number;
  /** A note whose JSON entry is larger is not sent (the sidecar's body limit is 16 MiB). */
  maxNoteBytes?: number;
  /** Notes per slice of the start-up reconcile, and how it yields to the UI between slices. */
  reconcileSlice?: number;
  /** Notes the start-up reconcile reads and hashes at once (their reads and digests overlap). */
  reconcileConcurrency?: number;
  yieldToUi?: YieldToUi;
  /** The queue and the in-sync map of the last session (plugin data). */
  persisted?: PersistedSync | null;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Every failed flush (for notices), and notes dropped for good. */
  onError?: (error: unknown) => void;
  onDropped?: (path: string, error: unknown) => void;
  /** A note too large to send: over `maxNoteBytes` (bytes) or refused with 413 (bytes too). */
  onTooLarge?: (path: string, bytes: number) => void;
  /** Called whenever `state` may have changed (status bar). */
  onState?: (state: SyncState) => void;
}

export interface SyncState {
  /** Notes waiting to be posted, deleted or renamed. */
  pending: number;
  syncing: boolean;
  /** The error of the last flush, null once a flush succeeded. */
  lastError: unknown;
  /** Milliseconds until the next retry, null when none is scheduled. */
  retryInMs: number | null;
  /** Notes not indexed because they are too large, until they are posted again. */
  tooLarge: string[];
}

/** A 4xx that retrying cannot fix (401 can: the user fixes the token; 408/429 are transient). */
export function isPermanent(error: unknown): boolean {
  if (error instanceof SidecarAuthError || error instanceof SidecarUnreachableError) return false;
  if (!(error instanceof SidecarHttpError)) return false;
  return error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
}
