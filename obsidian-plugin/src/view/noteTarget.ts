/**
 * Where a citation (or a related note) points, as Obsidian opens it: the link text with the
 * heading (`Folder/Note#Heading`, what a `[[link]]` would say), and the cited line for the
 * ephemeral state (`eState: { line }`, 0-based) that scrolls the editor to it. No DOM, no
 * Obsidian classes: the views turn a target into `openLinkText` and `hover-link` calls.
 */

/** Characters a heading cannot keep in a link's subpath: `#` starts a nested heading, `|` the
 * alias, `^` a block id, `[` `]` end the link. Obsidian compares headings by `stripHeading`,
 * which reads each of them as a space, so `[[Note#C  basics]]` finds "C# basics". */
const SUBPATH_BREAKERS = /[#|^[\]]/g;
const SPACES = /\s+/g;

export interface NoteTarget {
  /** `Folder/Note#Heading` (the heading made safe for a link), or `Folder/Note`. */
  linktext: string;
  /** The note's link path without `.md`: `Folder/Note`. */
  notePath: string;
  /** The cited line, 0-based as the editor counts (the sidecar's `line_start` is 1-based); null if unknown. */
  line: number | null;
}

/** A heading as a link subpath: the characters that would break the link read as spaces. */
export function linkSubpath(heading: string): string {
  return heading.replace(SUBPATH_BREAKERS, " ").replace(SPACES, " ").trim();
}

export function noteLinkPath(notePath: string): string {
  return notePath.replace(/\.md$/i, "");
}

/** A PDF's anchor: `page=N`, which Obsidian's PDF viewer opens at page N (`[[a.pdf#page=N]]`). */
const PAGE_ANCHOR = /^page=\d+$/;

/** The target of a passage of `notePath` under `anchor` (a heading, `^block`, or a PDF's
 * `page=N`), starting at the 1-based `lineStart`. A PDF has no lines to scroll to: it opens at its
 * page (the link text keeps `#page=N`); a canvas opens as the board (a card has no line). */
export function noteTarget(notePath: string, anchor: string, lineStart?: number | null): NoteTarget {
  const target = noteLinkPath(notePath);
  const subpath = anchor.startsWith("^") || PAGE_ANCHOR.test(anchor) ? anchor : linkSubpath(anchor);
  const hasLines = !/\.(pdf|canvas)$/i.test(notePath);
  const line =
    hasLines && typeof lineStart === "number" && Number.isInteger(lineStart) && lineStart >= 1 ? lineStart - 1 : null;
  return { linktext: subpath ? `${target}#${subpath}` : target, notePath: target, line };
}

/** A `[[link]]` of the rendered answer: no line, the link text as written. */
export function linkTarget(linktext: string): NoteTarget {
  const hash = linktext.indexOf("#");
  return { linktext, notePath: hash < 0 ? linktext : linktext.slice(0, hash), line: null };
}

export interface OpenCall {
  linktext: string;
  eState?: { line: number };
}

/**
 * What `workspace.openLinkText` gets for a target: with a line, the note itself plus
 * `eState: { line }` (the editor scrolls there and puts the cursor on it); without one, the link
 * text with its heading (the editor scrolls to the heading).
 */
export function openCall(target: NoteTarget): OpenCall {
  return target.line === null ? { linktext: target.linktext } : { linktext: target.notePath, eState: { line: target.line } };
}

/** The `hover-link` event's `linktext` and `state` (Page preview scrolls the preview to `scroll`). */
export function hoverCall(target: NoteTarget): { linktext: string; state?: { scroll: number } } {
  return target.line === null ? { linktext: target.linktext } : { linktext: target.notePath, state: { scroll: target.line } };
}
