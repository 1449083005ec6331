/**
 * One note as the resolver sees it: its lines (raw text) plus what Obsidian's metadata says
 * about them. The metadata decides *where* things are: the frontmatter, which `![[embeds]]`
 * exist (none inside code), whether an embed sits in a heading or table, heading sections,
 * block ids and list-item trees. The raw text supplies what only the characters tell: the
 * lines themselves, the container prefix an embed line repeats (`> `, list indentation), the
 * indentation a list item is dedented by, and the column of the ` ^id` marker that is cut.
 */
import type { CachedMetadata, ListItemCache, Pos } from "obsidian";

import { type CommentSpans, commentSpans, cutComments, inComment } from "./comments";
import { normalizeNotePath } from "./links";
import type { BlockMatch, SubpathMatch, TFileLike } from "./types";

// A ` ^id` block marker at the end of a line (ids: Latin letters, digits, `-`).
const BLOCK_ID = /(?:^|\s)\^([A-Za-z0-9-]+)\s*$/;
// Quote markers, indentation and a list marker: what a continuation line must repeat.
const CONTAINER = /^(?:[ \t]*>)*[ \t]*(?:(?:[-*+]|\p{Nd}{1,9}[.)])[ \t]+)?/u;
// An ATX heading inside a quote or list item (top-level headings are `heading` sections).
const HEADING_START = /^#{1,6}(?:[ \t]|$)/;
// A markdown-style embed `![alt](dest)` (Obsidian lists those of notes in `embeds` too).
const MARKDOWN_EMBED = /^!\[[^\]\n]*\]\((<[^<>\n]*>|[^\s()<>]+)\)$/;
// Embeds in these sections stay verbatim: several lines would break a heading or a table row.
const VERBATIM_SECTIONS = new Set(["heading", "table"]);

export interface EmbedSite {
  line: number; // 0-based file line
  col: number; // UTF-16 column of `![[` (or of `![` of a markdown-style embed)
  raw: string; // `![[...]]` or `![alt](dest)` as written
  inner: string; // the text between `[[` and `]]`, or `dest` as written: the warning target
  link: string; // `EmbedCache.link`: the link without its alias (decoded for `![](dest)`)
  prefix: string; // container prefix for the embedded text's later lines
}

/** File lines [first, stop), each dedented by up to `dedent` columns, `cut` at a marker. */
export interface Region {
  first: number;
  stop: number;
  dedent: number;
  cut: { line: number; col: number } | null;
}

export interface NoteDoc<F extends TFileLike = TFileLike> {
  file: F;
  path: string; // NFC
  lines: string[];
  bodyStart: number; // first file line after the frontmatter
  cache: CachedMetadata;
  embeds: Map<number, EmbedSite[]>; // by line, in column order
  comments: CommentSpans; // `%%comments%%`: not shown, so not resolved
}

export function buildDoc<F extends TFileLike>(file: F, text: string, cache: CachedMetadata): NoteDoc<F> {
  // Obsidian's positions count `\r\n` as two characters on the same line; drop the `\r`.
  const lines = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  const doc: NoteDoc<F> = {
    file,
    path: normalizeNotePath(file.path),
    lines,
    bodyStart: bodyStart(cache),
    cache,
    embeds: new Map(),
    comments: new Map(),
  };
  // Code blocks (Obsidian's `code` sections) hold no comments.
  const code = new Set<number>();
  for (const s of cache.sections ?? []) {
    if (s.type === "code") for (let l = s.position.start.line; l <= s.position.end.line; l++) code.add(l);
  }
  doc.comments = commentSpans(lines, doc.bodyStart, code);
  for (const site of embedSites(doc)) {
    const list = doc.embeds.get(site.line) ?? [];
    list.push(site);
    doc.embeds.set(site.line, list);
  }
  for (const list of doc.embeds.values()) list.sort((a, b) => a.col - b.col);
  return doc;
}

/** The first file line after the frontmatter (0 when the note has none). */
export function bodyStart(cache: CachedMetadata): number {
  const yaml = cache.sections?.find((s) => s.type === "yaml" && s.position.start.line === 0);
  const position = cache.frontmatterPosition ?? yaml?.position;
  return position ? position.end.line + 1 : 0;
}

function embedSites(doc: NoteDoc): EmbedSite[] {
  const verbatim = (doc.cache.sections ?? []).filter((s) => VERBATIM_SECTIONS.has(s.type));
  const sites: EmbedSite[] = [];
  for (const embed of doc.cache.embeds ?? []) {
    const { original, position } = embed;
    const wiki = original.startsWith("![[") && original.endsWith("]]");
    const markdown = MARKDOWN_EMBED.exec(original);
    if (!wiki && markdown === null) continue;
    const { line, col } = position.start;
    const source = doc.lines[line];
    // A stale cache (text changed since it was parsed) must not cut the wrong characters.
    if (line < doc.bodyStart || source === undefined || !source.startsWith(original, col)) continue;
    if (inComment(doc.comments.get(line), col)) continue;
    if (verbatim.some((s) => s.position.start.line <= line && line <= s.position.end.line)) continue;
    const container = CONTAINER.exec(source.slice(0, col))?.[0] ?? "";
    if (container && HEADING_START.test(source.slice(container.length))) continue;
    sites.push({
      line,
      col,
      raw: original,
      inner: wiki ? original.slice(3, -2) : unbracket(markdown?.[1] ?? ""),
      link: embed.link,
      prefix: container.replace(/[^>\t]/g, " "),
    });
  }
  return sites;
}

/** The destination of a markdown-style embed `![alt](dest)`, as written. */
function unbracket(dest: string): string {
  return dest.startsWith("<") && dest.endsWith(">") ? dest.slice(1, -1) : dest;
}

/** The whole body: every line after the frontmatter. */
export function bodyRegion(doc: NoteDoc): Region {
  return { first: doc.bodyStart, stop: doc.lines.length, dedent: 0, cut: null };
}

/** The lines a `resolveSubpath` result stands for, or null when it is not embeddable text. */
export function matchRegion(doc: NoteDoc, match: SubpathMatch): Region | null {
  if (match.type === "heading") {
    const stop = match.next ? match.next.position.start.line : doc.lines.length;
    return { first: match.current.position.start.line, stop, dedent: 0, cut: null };
  }
  if (match.type === "block") return blockRegion(doc, match);
  return null;
}

function blockRegion(doc: NoteDoc, match: BlockMatch): Region {
  const { block } = match;
  const markerLine = lastLine(block.position);
  const cut = markerCut(doc.lines[markerLine] ?? "", block.id, markerLine);
  const items = doc.cache.listItems ?? [];
  const item =
    match.list ??
    items.find(
      (li) => li.position.start.line === block.position.start.line && li.id?.toLowerCase() === block.id.toLowerCase(),
    );
  if (!item) return { first: block.position.start.line, stop: markerLine + 1, dedent: 0, cut };
  // A list item is embedded with all its nested items, dedented so it starts at column 0.
  const first = item.position.start.line;
  const stop = subtreeEnd(items, item) + 1;
  return { first, stop, dedent: indent(doc.lines[first] ?? "")[1], cut };
}

/** Last line of a position. Obsidian ends a list item followed by a blank line at column 0
 * of the next line; that line is not part of the item. */
function lastLine(position: Pos): number {
  const { start, end } = position;
  return end.col === 0 && end.line > start.line ? end.line - 1 : end.line;
}

/** Where the ` ^id` marker of block `id` starts on `line`, if it is there. */
function markerCut(line: string, id: string, index: number): Region["cut"] {
  const match = BLOCK_ID.exec(line);
  if (!match || match[1]?.toLowerCase() !== id.toLowerCase()) return null;
  return { line: index, col: match.index };
}

/** Last line of `item` and the items nested in it (`parent` is the parent item's line). */
function subtreeEnd(items: ListItemCache[], item: ListItemCache): number {
  const sorted = [...items].sort((a, b) => a.position.start.line - b.position.start.line);
  const index = sorted.findIndex((li) => li.position.start.line === item.position.start.line);
  const members = new Set([item.position.start.line]);
  let end = lastLine(item.position);
  for (const next of sorted.slice(index + 1)) {
    if (!members.has(next.parent)) break;
    members.add(next.position.start.line);
    end = Math.max(end, lastLine(next.position));
  }
  return end;
}

/** [characters, columns] of leading whitespace, stopping at `cols` columns; a tab counts four
 * columns, as in Obsidian's list-item dedent. */
export function indent(line: string, cols = Number.POSITIVE_INFINITY): [number, number] {
  let i = 0;
  let seen = 0;
  while (i < line.length && seen < cols && (line[i] === " " || line[i] === "\t")) {
    seen += line[i] === "\t" ? 4 : 1;
    i += 1;
  }
  return [i, seen];
}

/** Where line `index` of `region` ends: at the cut marker, or the end of the line. */
export function lineEnd(doc: NoteDoc, region: Region, index: number): number {
  const line = doc.lines[index] ?? "";
  return region.cut && region.cut.line === index ? region.cut.col : line.length;
}

/** Whether line `index` of `region` has text once a `^id` marker and comments are cut off. */
export function visible(doc: NoteDoc, region: Region, index: number): boolean {
  return cutComments(doc.lines[index] ?? "", doc.comments.get(index), 0, lineEnd(doc, region, index)).trim() !== "";
}
