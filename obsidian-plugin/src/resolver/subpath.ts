import type { BlockCache, CachedMetadata, HeadingCache } from "obsidian";

import { stripHeading } from "./links";
import type { BlockMatch, HeadingMatch, SubpathMatch } from "./types";

/**
 * The semantics of Obsidian's `resolveSubpath(cache, subpath)` on a `CachedMetadata`, for code
 * that cannot call Obsidian's (tests, the fixture suite). The plugin passes the real function.
 *
 * - `#^id` alone: the block with that id (case-insensitive), plus its list item when the block
 *   is one; when no block has the id, the text is tried as a heading.
 * - `#A#B`: heading A, then the first heading B after it at a deeper level than A, and so on;
 *   headings compare after `stripHeading`. The section ends at the next heading of the same or
 *   a higher level (`next`), or at the end of the note (`next` and `end` null).
 */
export function resolveSubpathLike(cache: CachedMetadata, subpath: string): SubpathMatch | null {
  const parts = subpath.split("#").filter((part) => part !== "");
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.startsWith("^")) {
    const block = findBlock(cache, only.slice(1));
    if (block) return blockMatch(cache, block);
  }
  return parts.length > 0 ? headingMatch(cache.headings ?? [], parts) : null;
}

function findBlock(cache: CachedMetadata, id: string): BlockCache | undefined {
  const blocks = cache.blocks ?? {};
  const wanted = id.toLowerCase();
  return blocks[wanted] ?? Object.values(blocks).find((b) => b.id.toLowerCase() === wanted);
}

function blockMatch(cache: CachedMetadata, block: BlockCache): BlockMatch {
  const match: BlockMatch = {
    type: "block",
    block,
    start: block.position.start,
    end: block.position.end,
  };
  const line = block.position.start.line;
  const list = (cache.listItems ?? []).find(
    (item) => item.position.start.line === line && item.id?.toLowerCase() === block.id.toLowerCase(),
  );
  if (list) match.list = list;
  return match;
}

function headingMatch(headings: HeadingCache[], parts: string[]): HeadingMatch | null {
  const wanted = parts.map(stripHeading);
  let found = 0;
  let level = 0;
  let current: HeadingCache | null = null;
  for (const heading of headings) {
    if (current !== null && heading.level <= level) {
      return { type: "heading", current, next: heading, start: current.position.start, end: heading.position.start };
    }
    if (current === null && heading.level > level && stripHeading(heading.heading) === wanted[found]) {
      found += 1;
      level = heading.level;
      if (found === wanted.length) current = heading;
    }
  }
  return current === null ? null : { type: "heading", current, next: null, start: current.position.start, end: null };
}
