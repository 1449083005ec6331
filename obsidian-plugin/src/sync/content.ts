/**
 * What the plugin posts for a note, and the hash reconcile compares (documented in README.md,
 * "Sync"):
 *
 *   content = the frontmatter lines exactly as in the file (`\r` dropped) + "\n" + resolved body
 *           = the resolved body alone when the note has no frontmatter
 *   hash    = lowercase hex SHA-256 of the UTF-8 bytes of `content`
 *
 * The body is `resolveNote(...).text`, which equals the Python resolver's text (the shared
 * fixtures), so the sidecar's `split_frontmatter(content)` gives back the note's properties
 * and the resolved body. The sidecar stores this hash for posted notes; for notes it read from
 * disk itself it reports the SHA-256 of the file's bytes, so a note also counts as in sync
 * when that matches.
 */
import type { CachedMetadata } from "obsidian";

import type { NotePayload } from "../client";
import { type ResolveSubpath, resolveNote, type TFileLike, type VaultAccess } from "../resolver";
import { bodyStart } from "../resolver/document";
import { normalizeNotePath } from "../resolver/links";

/** The frontmatter block of `raw` (as the cache locates it) followed by the resolved body. */
export function noteContent(raw: string, cache: CachedMetadata, resolvedBody: string): string {
  const start = bodyStart(cache);
  if (start === 0) return resolvedBody;
  const lines = raw.split("\n").slice(0, start);
  return `${lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line)).join("\n")}\n${resolvedBody}`;
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes, or of raw bytes. */
export async function sha256Hex(data: string | ArrayBuffer | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as BufferSource);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

export interface PayloadFile extends TFileLike {
  stat?: { mtime: number };
}

/**
 * The `PUT /v1/notes` entry for `file`, or null when it cannot be built now: no metadata yet
 * (Obsidian fires `changed` once it has parsed the note) or the note cannot be read.
 */
export async function buildNotePayload<F extends PayloadFile>(
  vault: VaultAccess<F>,
  file: F,
  options: { resolveSubpath?: ResolveSubpath; signal?: AbortSignal; isExcluded?: (path: string) => boolean } = {},
): Promise<NotePayload | null> {
  const cache = vault.getFileCache(file);
  if (cache === null) return null;
  let raw: string;
  try {
    raw = await vault.read(file);
  } catch {
    return null;
  }
  const resolved = await resolveNote(vault, file, options);
  if (resolved.warnings.some((w) => w.note === resolved.path && w.target === null && w.code === "unreadable")) {
    return null;
  }
  return {
    path: normalizeNotePath(file.path),
    content: noteContent(raw, cache, resolved.text),
    embeds: resolved.dependencies,
    mtime: file.stat?.mtime ?? Date.now(),
  };
}

/**
 * True when one of `folders` covers `path`: an entry is a vault-relative folder or note path that
 * covers itself and everything under it. Every character means itself (`[Secret]`, `#`, `?` are
 * parts of real folder names) except `*`, which matches any run of characters, across folders.
 * The sidecar gives entries the same meaning (shared-schemas/fixtures/exclude.json).
 */
export function isExcluded(path: string, folders: readonly string[]): boolean {
  const parts = normalizeNotePath(path).split("/");
  const prefixes = parts.map((_, n) => parts.slice(0, n + 1).join("/"));
  return folders.some((folder) => {
    const pattern = entryPattern(folder);
    return pattern !== null && prefixes.some((prefix) => pattern.test(prefix));
  });
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/g;
const entryPatterns = new Map<string, RegExp | null>();

/** An entry as a regex over whole vault paths (null: an empty entry), compiled once. */
function entryPattern(folder: string): RegExp | null {
  let pattern = entryPatterns.get(folder);
  if (pattern === undefined) {
    // As the sidecar's `normalize_pattern`: slashes either way, no empty or `.` parts.
    const parts = normalizeNotePath(folder.trim())
      .split("/")
      .filter((part) => part !== "" && part !== ".");
    const body = parts
      .join("/")
      .split("*")
      .map((piece) => piece.replace(REGEX_SPECIAL, "\\$&"))
      .join("[\\s\\S]*");
    pattern = parts.length === 0 ? null : new RegExp(`^${body}$`, "u");
    if (entryPatterns.size > 1000) entryPatterns.clear();
    entryPatterns.set(folder, pattern);
  }
  return pattern;
}

/**
 * Markdown notes are what the sidecar indexes, except names with no safe vault path, which it
 * skips with an `unsafe_name` warning (sidecar/vault_rag/vault/listing.py): a backslash (a
 * folder separator to Windows and to the sidecar's path rules) or a top-level name whose second
 * character is a colon (a Windows drive). Posting one would have the whole batch refused.
 */
export function isNotePath(path: string): boolean {
  if (!path.toLowerCase().endsWith(".md") || path.includes("\\")) return false;
  const top = path.split("/", 1)[0] ?? "";
  return !(top.length > 1 && top[1] === ":");
}
