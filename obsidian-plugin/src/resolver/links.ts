/**
 * Link text helpers with the exact rules of the Python side (sidecar/vault_rag/vault/links.py);
 * the shared rules are in shared-schemas/fixtures/embeds/README.md.
 */

// An "extension" is a short alphanumeric tail with at least one letter: `png`, `mp3`, `canvas`.
// `Version 1.2` or `Dr. Who` are note names, not files with extensions.
const EXTENSION = /\.([0-9A-Za-z]*[A-Za-z][0-9A-Za-z]*)$/;
const MAX_EXTENSION_LENGTH = 8;
// Obsidian's `stripHeading`: these characters count as spaces when headings are compared.
const HEADING_STRIP = /[!"#$%&()*+,.:;<=>?@^`{|}~/[\]\\\r\n]/g;
const SPACES = /\s+/g;

export interface ParsedLink {
  /** The part before `#`, whitespace-trimmed; empty means the note the link is written in. */
  path: string;
  /** `#A#B` split on `#`, empty parts dropped: `["A", "B"]`. */
  parts: string[];
}

/**
 * Split a link (`Note#A#B`, the `link` of an `EmbedCache`, or link text with `|alias`) into the
 * path and the subpath parts, Obsidian's way: the alias starts at the first `|` (a `\|` in a
 * table is the same pipe), the subpath at the first `#`, empty subpath parts are dropped.
 */
export function parseLink(link: string): ParsedLink {
  const beforeAlias = (link.split("|", 1)[0] ?? "").replace(/\\+$/, "");
  const hash = beforeAlias.indexOf("#");
  const path = hash < 0 ? beforeAlias : beforeAlias.slice(0, hash);
  const subpath = hash < 0 ? "" : beforeAlias.slice(hash + 1);
  return { path: path.trim(), parts: subpath.split("#").filter((part) => part !== "") };
}

/** The lower-case extension of the last part of `linkpath`, or null (see `EXTENSION`). */
export function fileExtension(linkpath: string): string | null {
  const name = basename(linkpath.trim());
  const match = EXTENSION.exec(name);
  const ext = match?.[1];
  if (ext === undefined || ext.length > MAX_EXTENSION_LENGTH) return null;
  return ext.toLowerCase();
}

/** False for links that name a non-markdown file (`a.png`, `b.pdf`, `c.canvas`). */
export function isNoteLink(linkpath: string): boolean {
  const ext = fileExtension(linkpath);
  return ext === null || ext === "md";
}

/** Obsidian's `stripHeading`, lower-cased: the form in which headings are compared. */
export function stripHeading(text: string): string {
  return text.replace(HEADING_STRIP, " ").replace(SPACES, " ").trim().toLowerCase();
}

export function basename(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? path : path.slice(slash + 1);
}

export function dirname(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/** Vault paths are compared and reported in NFC with forward slashes. */
export function normalizeNotePath(path: string): string {
  return path.replace(/\\/g, "/").normalize("NFC");
}

/** Order strings by Unicode code point (JavaScript's `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx - cy;
  }
}
