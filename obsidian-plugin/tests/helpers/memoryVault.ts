/** A hand-written vault for unit tests: notes with the `CachedMetadata` a test spells out. */
import type { CachedMetadata, Loc, Pos } from "obsidian";

import type { TFileLike, VaultAccess } from "../../src/resolver";
import { basename } from "../../src/resolver/links";

export interface MemoryNote {
  text: string;
  cache: CachedMetadata | null;
}

export interface MemoryFile extends TFileLike {
  basename: string;
}

export class MemoryVault implements VaultAccess<MemoryFile> {
  /** Paths whose `read` throws. */
  readonly unreadable = new Set<string>();

  constructor(readonly notes: Record<string, MemoryNote>) {}

  file(path: string): MemoryFile {
    const name = basename(path);
    const dot = name.lastIndexOf(".");
    return { path, basename: name.slice(0, dot), extension: name.slice(dot + 1) };
  }

  /** By file name only: enough for these tests (fixtures use the full rules). */
  getFirstLinkpathDest(linkpath: string): MemoryFile | null {
    const wanted = linkpath.toLowerCase();
    const path = Object.keys(this.notes).find((p) => {
      const name = basename(p).toLowerCase();
      return name === wanted || name === `${wanted}.md`;
    });
    return path === undefined ? null : this.file(path);
  }

  getFileCache(file: MemoryFile): CachedMetadata | null {
    return this.notes[file.path]?.cache ?? null;
  }

  read(file: MemoryFile): string {
    const note = this.notes[file.path];
    if (note === undefined || this.unreadable.has(file.path)) throw new Error(`cannot read ${file.path}`);
    return note.text;
  }
}

/** Location of (line, col) in `text`, with its offset. */
export function loc(text: string, line: number, col: number): Loc {
  const before = text.split("\n").slice(0, line);
  const offset = before.reduce((sum, l) => sum + l.length + 1, 0) + col;
  return { line, col, offset };
}

export function pos(text: string, line: number, col: number, endLine: number, endCol: number): Pos {
  return { start: loc(text, line, col), end: loc(text, endLine, endCol) };
}

/** An `EmbedCache` for the `index`-th occurrence of `original` in `text`. */
export function embedAt(text: string, original: string, index = 0) {
  let offset = -1;
  for (let i = 0; i <= index; i++) offset = text.indexOf(original, offset + 1);
  if (offset < 0) throw new Error(`${original} not in text`);
  const line = text.slice(0, offset).split("\n").length - 1;
  const col = offset - (text.lastIndexOf("\n", offset - 1) + 1);
  const link = original.replace(/^!\[\[|\]\]$/g, "").split("|")[0] ?? "";
  return { link, original, position: pos(text, line, col, line, col + original.length) };
}

/** A one-paragraph note whose embeds are the given ones, in order of appearance. */
export function paragraphNote(text: string, embeds: string[]): MemoryNote {
  const lines = text.split("\n");
  const last = lines.length - 1;
  const counts = new Map<string, number>();
  return {
    text,
    cache: {
      sections: [{ type: "paragraph", position: pos(text, 0, 0, last, (lines[last] ?? "").length) }],
      embeds: embeds.map((original) => {
        const index = counts.get(original) ?? 0;
        counts.set(original, index + 1);
        return embedAt(text, original, index);
      }),
    },
  };
}
