/**
 * A generated vault on a stand-in `App` (shim `TFile`s, `CachedMetadata` shaped like Obsidian's)
 * for driving the real sync code — `obsidianNoteSource`, `ObsidianEmbedIndex`, `syncEvents` —
 * at scale. Every tenth note embeds the next one. Calls into the vault-wide tables
 * (`resolvedLinks`, `unresolvedLinks`, `getMarkdownFiles`) and reads are counted.
 */
import { createHash } from "node:crypto";

import type { App, CachedMetadata } from "obsidian";

import { TFile } from "../__mocks__/obsidian";

export interface Counters {
  resolvedLinks: number;
  unresolvedLinks: number;
  getMarkdownFiles: number;
  reads: number;
}

type Handler = (...args: unknown[]) => unknown;

export class GeneratedVault {
  readonly files = new Map<string, TFile>();
  readonly texts = new Map<string, string>();
  readonly caches = new Map<string, CachedMetadata>();
  readonly counters: Counters = { resolvedLinks: 0, unresolvedLinks: 0, getMarkdownFiles: 0, reads: 0 };
  readonly handlers = new Map<string, Handler[]>();
  readonly app: App;

  constructor(count: number) {
    for (let i = 0; i < count; i++) this.write(GeneratedVault.path(i), i % 10 === 0 && i + 1 < count ? `n${i + 1}` : null);
    const byName = (linkpath: string) => {
      const wanted = linkpath.toLowerCase().replace(/\.md$/, "");
      for (const file of this.files.values()) if (file.basename.toLowerCase() === wanted || file.path.toLowerCase() === `${wanted}.md`) return file;
      return null;
    };
    const index = new Map<string, TFile>();
    const lookup = (linkpath: string) => {
      if (index.size !== this.files.size) {
        index.clear();
        for (const file of this.files.values()) index.set(file.basename.toLowerCase(), file);
      }
      return index.get(linkpath.toLowerCase().replace(/\.md$/, "")) ?? byName(linkpath);
    };
    const on = (source: string) => (name: string, callback: Handler) => {
      const key = `${source}:${name}`;
      this.handlers.set(key, [...(this.handlers.get(key) ?? []), callback]);
      return { source, name };
    };
    const counters = this.counters;
    const app = {
      metadataCache: {
        getFileCache: (file: TFile) => this.caches.get(file.path) ?? null,
        getFirstLinkpathDest: (linkpath: string) => lookup(linkpath),
        get resolvedLinks() {
          counters.resolvedLinks += 1;
          return {};
        },
        get unresolvedLinks() {
          counters.unresolvedLinks += 1;
          return {};
        },
        on: on("metadataCache"),
      },
      vault: {
        getMarkdownFiles: () => {
          counters.getMarkdownFiles += 1;
          return [...this.files.values()];
        },
        getAbstractFileByPath: (path: string) => this.files.get(path) ?? null,
        cachedRead: async (file: TFile) => {
          counters.reads += 1;
          const text = this.texts.get(file.path);
          if (text === undefined) throw new Error(`no ${file.path}`);
          return text;
        },
        readBinary: async (file: TFile) => new TextEncoder().encode(this.texts.get(file.path) ?? "").buffer,
        on: on("vault"),
      },
    };
    this.app = app as unknown as App;
  }

  static path(i: number): string {
    return `Notes/n${i}.md`;
  }

  /** (Re)write a note: text, cache and stat, as Obsidian would after parsing it. */
  write(path: string, embed: string | null, body = `Body of ${path}.`, mtime = 1_700_000_000_000): void {
    const name = path.slice(path.lastIndexOf("/") + 1, -3);
    const lines = [`# ${name}`, "", body];
    if (embed !== null) lines.push("", `![[${embed}]]`);
    const text = `${lines.join("\n")}\n`;
    const at = (line: number, col: number) => ({
      line,
      col,
      offset: lines.slice(0, line).reduce((sum, l) => sum + l.length + 1, 0) + col,
    });
    const span = (line: number) => ({ start: at(line, 0), end: at(line, lines[line]?.length ?? 0) });
    const cache: CachedMetadata = {
      headings: [{ heading: name, level: 1, position: span(0) }],
      sections: [
        { type: "heading", position: span(0) },
        { type: "paragraph", position: span(2) },
        ...(embed === null ? [] : [{ type: "paragraph", position: span(4) }]),
      ],
      ...(embed === null ? {} : { embeds: [{ link: embed, original: `![[${embed}]]`, displayText: embed, position: span(4) }] }),
    };
    this.texts.set(path, text);
    this.caches.set(path, cache);
    this.files.set(path, new TFile(path, { mtime, size: new TextEncoder().encode(text).byteLength }));
  }

  delete(path: string): void {
    this.files.delete(path);
    this.texts.delete(path);
    this.caches.delete(path);
  }

  /** What the sidecar reports after indexing the files itself: SHA-256 of each file's bytes. */
  diskHashes(): Map<string, string> {
    const hashes = new Map<string, string>();
    for (const [path, text] of this.texts) hashes.set(path, createHash("sha256").update(text, "utf8").digest("hex"));
    return hashes;
  }

  /** Fire a registered event the way Obsidian would. */
  fire(key: string, ...args: unknown[]): void {
    for (const handler of this.handlers.get(key) ?? []) handler(...args);
  }
}
