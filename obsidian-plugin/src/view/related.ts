/**
 * The related-notes list without DOM or Obsidian: what each row shows, the message for an empty
 * list, the link text a drag carries, and `RelatedTracker`, which follows the active note —
 * debounced (switching notes quickly asks once), latest wins (an older answer arriving late is
 * dropped), and the previous request aborted.
 */
import type { RelatedNotes } from "../client";
import { type Clock, systemClock } from "../sync/timing";
import { type NoteTarget, noteTarget } from "./noteTarget";

/** Quiet time after `active-leaf-change` before asking the sidecar. */
export const RELATED_DEBOUNCE_MS = 400;
export const RELATED_LIMIT = 10;
const HEADING_SEPARATOR = " > ";

export interface RelatedItem {
  path: string;
  /** The file name without `.md`. */
  name: string;
  /** The deepest heading of the best-matching passage ("" before the first heading). */
  heading: string;
  snippet: string;
  score: number;
  /** The active note already links to it. */
  linked: boolean;
  /** What `openLinkText` opens: the note at the matching heading. */
  linktext: string;
  /** The matching passage: its heading and first line (a click opens there, a hover previews it). */
  target: NoteTarget;
}

export function noteName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}

const SNIPPET_CHARS = 160;

/** A passage as one line of plain text, the way the note reads rendered: no `#` markers, table
 * rules or pipes, emphasis or code ticks; `[[target|alias]]` as its alias, `[text](url)` as its
 * text; cut at 160 characters. The headings already shown above it (`shown`, its heading path in
 * order) are not repeated at its start, whether the passage still has their `#` markers or (the
 * sidecar's snippet, already plain text) not; the note's `title` only when written as a heading
 * (as plain text it may be the first word of a sentence). */
export function plainSnippet(markdown: string, shown: string[] = [], title = ""): string {
  let text = markdown;
  const unmarked: string[] = [];
  for (const heading of [title, ...shown].map((h) => h.trim())) {
    if (!heading) continue;
    const marked = new RegExp(`(^|\\s)#{1,6}\\s+${escapeRegExp(heading)}(?=\\s|$)`, "g");
    if (marked.test(text)) text = text.replace(marked, "$1");
    else if (heading !== title.trim()) unmarked.push(heading);
  }
  text = dropLeading(flatten(text), unmarked.map(flatten));
  return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS - 1).trimEnd()}…` : text;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Markdown as one line of the words a reader sees. */
function flatten(markdown: string): string {
  return markdown
    .replace(/!\[\[[^\]]*\]\]/g, " ") // embeds
    .replace(/\[\[([^\]|]*)\|([^\]]*)\]\]/g, "$2")
    .replace(/\[\[([^\]#]*)(#[^\]]*)?\]\]/g, (_m, target: string, sub: string | undefined) =>
      (target.split("/").pop() ?? target) || (sub ?? "").replace(/^#\^?/, ""),
    )
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\|?(\s*:?-{3,}:?\s*\|)+\s*(:?-{3,}:?)?\s*/g, " ") // table rules
    .replace(/(^|\s)#{1,6}\s+/g, "$1") // heading markers
    .replace(/(^|\s)>\s+/g, "$1") // quotes
    .replace(/(^|\s)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/g, "$1") // list items, tasks
    .replace(/\s*\|\s*/g, " · ")
    .replace(/(\*\*|__|~~|==|`+)/g, "")
    .replace(/(^|\s)[*_]([^*_\s][^*_]*)[*_](?=\s|$|[.,;:!?])/g, "$1$2")
    .replace(/\s+/g, " ")
    .replace(/(\s*·\s*){2,}/g, " · ")
    .replace(/^(\s*·\s*)+|(\s*·\s*)+$/g, "")
    .trim();
}

/** `text` without the headings it starts with, in their order, each once (a passage opens with
 * its own heading, sometimes its parents' before it). */
function dropLeading(text: string, headings: string[]): string {
  for (const heading of headings) {
    if (heading && text.startsWith(heading) && (text.length === heading.length || /[\s·]/.test(text.charAt(heading.length)))) {
      text = text.slice(heading.length).replace(/^[\s·]+/, "");
    }
  }
  return text;
}

export function relatedItems(result: RelatedNotes): RelatedItem[] {
  return result.related.map((note) => {
    const parts = note.heading_path.split(HEADING_SEPARATOR);
    const target = noteTarget(note.note_path, note.anchor, note.line_start);
    const name = noteName(note.note_path);
    const deepest = parts[parts.length - 1] ?? "";
    return {
      path: note.note_path,
      name,
      // Once: not when it only repeats the note's name (a note's title heading).
      heading: deepest === name ? "" : deepest,
      snippet: plainSnippet(note.snippet, parts, name),
      score: note.score,
      linked: note.linked,
      linktext: target.linktext,
      target,
    };
  });
}

/** The line shown instead of (or above) the list; null when the list speaks for itself. */
export function statusMessage(result: RelatedNotes): string | null {
  if (result.status === "not_indexed") return "This note is not indexed yet.";
  if (result.status === "pending") return "This note is still being indexed; its related notes appear once it is.";
  return result.related.length === 0 ? "No related notes found." : null;
}

/** The wikilink a drag into an editor inserts; `linktext` as `fileToLinktext` gives it. */
export function wikilink(linktext: string): string {
  return `[[${linktext}]]`;
}

export type RelatedState =
  | { kind: "none" } // no markdown note is active
  | { kind: "loading"; path: string }
  | { kind: "loaded"; path: string; result: RelatedNotes }
  | { kind: "failed"; path: string; error: unknown };

export type FetchRelated = (path: string, signal: AbortSignal) => Promise<RelatedNotes>;

export class RelatedTracker {
  private timer: unknown = null;
  private controller: AbortController | null = null;
  private path: string | null = null;

  constructor(
    private readonly fetchRelated: FetchRelated,
    private readonly render: (state: RelatedState) => void,
    private readonly clock: Clock = systemClock,
    private readonly delayMs = RELATED_DEBOUNCE_MS,
  ) {}

  /** The active note changed (null: none, or not a markdown note). The same note again is a no-op. */
  setActive(path: string | null): void {
    if (path === this.path) return;
    this.path = path;
    this.cancel();
    if (path === null) {
      this.render({ kind: "none" });
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.load(path);
    }, this.delayMs);
  }

  /** Ask again for the current note now (a "refresh" click). */
  refresh(): void {
    this.cancel();
    if (this.path !== null) void this.load(this.path);
  }

  destroy(): void {
    this.cancel();
    this.path = null;
  }

  private cancel(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.controller?.abort();
    this.controller = null;
  }

  private async load(path: string): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    this.render({ kind: "loading", path });
    try {
      const result = await this.fetchRelated(path, controller.signal);
      if (controller.signal.aborted || this.path !== path) return;
      this.render({ kind: "loaded", path, result });
    } catch (error) {
      if (controller.signal.aborted || this.path !== path) return;
      this.render({ kind: "failed", path, error });
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }
}
