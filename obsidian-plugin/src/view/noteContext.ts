/**
 * "Ask about this note" without DOM or Obsidian: what the pane sends with the question
 * (`AskRequest.note`: the note, the editor's selection, the notes it links to and that link to
 * it from Obsidian's `resolvedLinks`) and what the turn says about it ("Using …" while it
 * runs, then what the answer took from it, from `final.focus`).
 */
import type { FocusInfo, Schemas } from "../client";

export type AskNote = Schemas["AskNote"];

/** The sidecar refuses more than this (`AskNote.links`, `AskNote.selection`). */
export const MAX_LINKS = 1000;
export const MAX_SELECTION_CHARS = 20_000;

/** `metadataCache.resolvedLinks`: source path → destination path → link count. */
export type ResolvedLinks = Record<string, Record<string, number>>;

/** The notes `path` links to, then the notes that link to it (markdown notes only, each once,
 * never itself), at most `limit`. */
export function noteLinks(resolved: ResolvedLinks, path: string, limit = MAX_LINKS): string[] {
  const found = new Set<string>();
  const add = (other: string) => {
    if (other !== path && other.toLowerCase().endsWith(".md") && found.size < limit) found.add(other);
  };
  for (const target of Object.keys(resolved[path] ?? {})) add(target);
  for (const [source, targets] of Object.entries(resolved)) {
    if (found.size >= limit) break;
    if (Object.prototype.hasOwnProperty.call(targets, path)) add(source);
  }
  return [...found];
}

/** The request's `note`: the path, the selection (trimmed, at most the sidecar's limit; left out
 * when empty) and the links. */
export function askNote(path: string, selection: string, links: string[]): AskNote {
  const text = selection.trim().slice(0, MAX_SELECTION_CHARS);
  return { path, ...(text ? { selection: text } : {}), links: links.slice(0, MAX_LINKS) };
}

export function noteTitle(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}

/** The turn's line while the answer runs: "Using “Lumen” and the selection". */
export function describeAsking(note: AskNote): string {
  return `Using “${noteTitle(note.path)}”${note.selection ? " and the selection" : ""}`;
}

/** The turn's line once the answer is in: what it took from the note (`final.focus`). */
export function describeFocus(note: AskNote, focus: FocusInfo | null): string {
  const name = `“${noteTitle(note.path)}”`;
  if (focus === null) return `Asked about ${name}`;
  if (!focus.indexed) return `${name} is not indexed yet, so the answer comes from the whole vault`;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (focus.cited === 0 && focus.cited_linked === 0) return `Used ${name}, but no source came from it or its links`;
  const parts = [`${plural(focus.cited, "source")} from it`];
  if (focus.cited_linked > 0) parts.push(`${plural(focus.cited_linked, "source")} from notes it links with`);
  return `Used ${name}: ${parts.join(", ")}`;
}
