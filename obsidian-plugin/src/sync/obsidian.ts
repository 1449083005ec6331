/**
 * Sync on a running Obsidian: the `NoteSource` over `app.vault` / `app.metadataCache`, the
 * embedder search over `resolvedLinks`, and the vault events that feed the engine.
 */
import { type App, type CachedMetadata, type EventRef, type TAbstractFile, TFile } from "obsidian";

import type { ResolveSubpath } from "../resolver";
import { parseLink } from "../resolver/links";
import { obsidianVault } from "../resolver/obsidian";
import { buildNotePayload, isNotePath, sha256Hex } from "./content";
import type { NoteSource, SyncEngine } from "./engine";

/** What the embedder search reads (the `MetadataCache` has all of it). */
export interface EmbedGraph {
  /** source path → destination path → count, for links and embeds that resolve. */
  resolvedLinks: Record<string, Record<string, number>>;
  /** source path → link text → count, for links whose note does not exist (yet). */
  unresolvedLinks: Record<string, Record<string, number>>;
  /** The `link` of each `![[embed]]` in `source`. */
  embedLinks(source: string): string[];
  /** The note a link path points to from `source`, or null. */
  resolve(linkpath: string, source: string): string | null;
}

/**
 * Notes whose resolved text contains `path`: those that embed it, and those that embed them,
 * and so on. Candidates come from the link tables (a note just created is still listed under
 * `unresolvedLinks` by its name); each is confirmed by resolving its embeds.
 */
export function findEmbedders(path: string, graph: EmbedGraph, maxDepth = 10): string[] {
  const found = new Set<string>();
  let frontier = [path];
  for (let depth = 0; depth < maxDepth && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const target of frontier) {
      for (const source of candidates(target, graph)) {
        if (source === path || found.has(source)) continue;
        const embeds = graph.embedLinks(source).some((link) => graph.resolve(parseLink(link).path, source) === target);
        if (!embeds) continue;
        found.add(source);
        next.push(source);
      }
    }
    frontier = next;
  }
  return [...found];
}

function candidates(target: string, graph: EmbedGraph): string[] {
  const out: string[] = [];
  const withoutExt = target.replace(/\.md$/i, "").toLowerCase();
  const name = withoutExt.slice(withoutExt.lastIndexOf("/") + 1);
  for (const [source, dests] of Object.entries(graph.resolvedLinks)) {
    if (dests[target] !== undefined) out.push(source);
  }
  for (const [source, links] of Object.entries(graph.unresolvedLinks)) {
    const named = Object.keys(links).some((link) => {
      const lower = link.replace(/\.md$/i, "").toLowerCase();
      return lower === name || lower === withoutExt;
    });
    if (named) out.push(source);
  }
  return out;
}

function noteFile(app: App, path: string): TFile | null {
  const file = app.vault.getAbstractFileByPath(path);
  return file instanceof TFile && isNotePath(file.path) ? file : null;
}

export function obsidianEmbedGraph(app: App): EmbedGraph {
  const cache = (path: string): CachedMetadata | null => {
    const file = noteFile(app, path);
    return file === null ? null : app.metadataCache.getFileCache(file);
  };
  return {
    get resolvedLinks() {
      return app.metadataCache.resolvedLinks;
    },
    get unresolvedLinks() {
      return app.metadataCache.unresolvedLinks;
    },
    embedLinks: (source) => (cache(source)?.embeds ?? []).map((embed) => embed.link),
    resolve: (linkpath, source) => app.metadataCache.getFirstLinkpathDest(linkpath, source)?.path ?? null,
  };
}

export function obsidianNoteSource(app: App, resolveSubpath: ResolveSubpath): NoteSource {
  const vault = obsidianVault(app);
  const graph = obsidianEmbedGraph(app);
  return {
    listNotes: () => app.vault.getMarkdownFiles().map((file) => file.path),
    payload: async (path, signal) => {
      const file = noteFile(app, path);
      return file === null ? null : buildNotePayload(vault, file, { resolveSubpath, signal });
    },
    fileHash: async (path) => {
      const file = noteFile(app, path);
      return file === null ? null : sha256Hex(await app.vault.readBinary(file));
    },
    embedders: (path) => findEmbedders(path, graph),
  };
}

/** The events sync follows; the returned refs go to `plugin.registerEvent`. */
export function syncEvents(app: App, engine: SyncEngine): EventRef[] {
  const isNote = (file: TAbstractFile) => "extension" in file && isNotePath(file.path);
  return [
    app.metadataCache.on("changed", (file) => {
      if (isNotePath(file.path)) engine.noteChanged(file.path);
    }),
    app.vault.on("delete", (file) => {
      if (isNote(file)) engine.noteDeleted(file.path);
    }),
    app.vault.on("rename", (file, oldPath) => {
      if (!("extension" in file)) return; // folders: Obsidian also renames each file inside
      const wasNote = isNotePath(oldPath);
      const isNow = isNotePath(file.path);
      if (wasNote && isNow) engine.noteRenamed(oldPath, file.path);
      else if (wasNote) engine.noteDeleted(oldPath);
      else if (isNow) engine.noteChanged(file.path);
    }),
  ];
}
