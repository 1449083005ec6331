/** An in-memory sidecar and vault for the sync engine's tests. */
import type { NotePayload } from "../../src/client";
import { SidecarAuthError, SidecarHttpError, SidecarUnreachableError } from "../../src/client";
import { sha256Hex } from "../../src/sync/content";
import type { NoteSource, SyncClient } from "../../src/sync/types";

export type Call =
  | { kind: "put"; at: number; notes: NotePayload[] }
  | { kind: "delete"; at: number; paths: string[] }
  | { kind: "rename"; at: number; renames: { oldPath: string; newPath: string }[] }
  | { kind: "hashes"; at: number };

/** The sidecar: records every call (also failed ones), fails while `down`/`unauthorized`. */
export class FakeSidecar implements SyncClient {
  readonly calls: Call[] = [];
  /** What the index holds: path → content. */
  readonly index = new Map<string, string>();
  hashes = new Map<string, string>();
  down = false;
  unauthorized = false;
  /** Notes the sidecar refuses with 400 (a bad path, say). */
  readonly refuse = new Set<string>();
  /** While set, `putNotes` waits for it (a post in flight). */
  gate: Promise<void> | null = null;

  private check(): void {
    if (this.down) throw new SidecarUnreachableError("http://127.0.0.1:8765", new TypeError("fetch failed"));
    if (this.unauthorized) throw new SidecarAuthError("http://127.0.0.1:8765");
  }

  async putNotes(notes: NotePayload[]): Promise<unknown> {
    this.calls.push({ kind: "put", at: Date.now(), notes: structuredClone(notes) });
    if (this.gate) await this.gate;
    this.check();
    const refused = notes.find((n) => this.refuse.has(n.path));
    if (refused) throw new SidecarHttpError(400, `bad path ${refused.path}`, null, "bad_request");
    for (const note of notes) this.index.set(note.path, note.content);
    return {};
  }

  async deleteNotes(paths: string[]): Promise<unknown> {
    this.calls.push({ kind: "delete", at: Date.now(), paths: [...paths] });
    this.check();
    for (const path of paths) this.index.delete(path);
    return {};
  }

  async renameNotes(renames: { oldPath: string; newPath: string }[]): Promise<unknown> {
    this.calls.push({ kind: "rename", at: Date.now(), renames: structuredClone(renames) });
    this.check();
    for (const { oldPath, newPath } of renames) {
      const content = this.index.get(oldPath);
      if (content === undefined) continue;
      this.index.delete(oldPath);
      this.index.set(newPath, content);
    }
    return {};
  }

  async noteHashes(): Promise<Map<string, string>> {
    this.calls.push({ kind: "hashes", at: Date.now() });
    this.check();
    return new Map(this.hashes);
  }

  /** The calls without their times, for order checks. */
  get summary(): string[] {
    return this.calls.map((call) => {
      switch (call.kind) {
        case "put":
          return `put ${call.notes.map((n) => n.path).join(",")}`;
        case "delete":
          return `delete ${call.paths.join(",")}`;
        case "rename":
          return `rename ${call.renames.map((r) => `${r.oldPath}->${r.newPath}`).join(",")}`;
        default:
          return "hashes";
      }
    });
  }
}

/** The vault: note path → content (posted as is), who embeds whom, raw file text. */
export class FakeVault implements NoteSource {
  readonly notes = new Map<string, string>();
  /** path → notes that embed it (transitively, as `findEmbedders` would answer). */
  readonly embeddersOf = new Map<string, string[]>();
  /** Raw file text where it differs from the posted content (notes with embeds). */
  readonly raw = new Map<string, string>();
  /** path → mtime (default 1_700_000_000_000); the size is the content's length. */
  readonly mtimes = new Map<string, number>();
  /** How many times each note was read (payload built). */
  readonly reads = new Map<string, number>();

  constructor(notes: Record<string, string> = {}) {
    for (const [path, content] of Object.entries(notes)) this.notes.set(path, content);
  }

  listNotes(): string[] {
    return [...this.notes.keys()];
  }

  stat(path: string): { mtime: number; size: number } | null {
    const content = this.notes.get(path);
    return content === undefined ? null : { mtime: this.mtimes.get(path) ?? 1_700_000_000_000, size: content.length };
  }

  async payload(path: string): Promise<NotePayload | null> {
    const content = this.notes.get(path);
    this.reads.set(path, (this.reads.get(path) ?? 0) + 1);
    return content === undefined ? null : { path, content, embeds: [], mtime: this.mtimes.get(path) ?? 1_700_000_000_000 };
  }

  async fileHash(path: string): Promise<string | null> {
    const raw = this.raw.get(path) ?? this.notes.get(path);
    return raw === undefined ? null : sha256Hex(raw);
  }

  embedders(path: string): string[] {
    return this.embeddersOf.get(path) ?? [];
  }
}
