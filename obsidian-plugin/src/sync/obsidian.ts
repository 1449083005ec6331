/**
 * Sync on a running Obsidian: the `NoteSource` over `app.vault` / `app.metadataCache`, the
 * reverse-embed index it keeps from metadata events, and the vault events that feed the engine.
 */
import { type App, type EventRef, type TAbstractFile, TFile } from "obsidian";

import type { ResolveSubpath } from "../resolver";
import { fileExtension, parseLink } from "../resolver/links";
import { obsidianVault } from "../resolver/obsidian";
import { buildNotePayload, isNotePath, sha256Hex } from "./content";
import { EmbedIndex, type EmbedEdges } from "./embedIndex";
import type { NoteSource, SyncEngine } from "./engine";
import { type FileChangeQueue, isSidecarReadPath } from "./files";
import { Slicer, type YieldToUi } from "./slicer";

function noteFile(app: App, path: string): TFile | null {
  const file = app.vault.getAbstractFileByPath(path);
  return file instanceof TFile && isNotePath(file.path) ? file : null;
}

/** The embeds of `file` as its cache lists them, resolved the way Obsidian resolves them now. */
export function embedEdges(app: App, file: TFile): EmbedEdges {
  const resolved: string[] = [];
  const unresolved: string[] = [];
  for (const embed of app.metadataCache.getFileCache(file)?.embeds ?? []) {
    const linkpath = parseLink(embed.link).path;
    if (linkpath === "") continue; // `![[#Heading]]`: the note itself
    const dest = app.metadataCache.getFirstLinkpathDest(linkpath, file.path);
    if (dest !== null) {
      if (isNotePath(dest.path)) resolved.push(dest.path);
    } else {
      const ext = fileExtension(linkpath);
      if (ext === null || ext === "md") unresolved.push(linkpath);
    }
  }
  return { resolved, unresolved };
}

/** The embed index over a running Obsidian: built once, then kept by `resolve`/`deleted`. */
export class ObsidianEmbedIndex {
  readonly index = new EmbedIndex();
  private built: Promise<void> | null = null;

  constructor(private readonly app: App) {}

  /** Index every note once (in slices that yield to the UI); later calls wait for the same. */
  build(yieldToUi?: YieldToUi): Promise<void> {
    this.built ??= (async () => {
      const slicer = new Slicer({ yieldToUi });
      for (const file of this.app.vault.getMarkdownFiles()) {
        await slicer.step();
        this.update(file);
      }
    })();
    return this.built;
  }

  update(file: TFile): void {
    if (isNotePath(file.path)) this.index.set(file.path, embedEdges(this.app, file));
  }

  /** The metadata events that keep the index current; refs go to `plugin.registerEvent`. */
  events(): EventRef[] {
    const cache = this.app.metadataCache;
    return [
      // After a note's links are resolved (every change, and links Obsidian re-resolves).
      cache.on("resolve", (file) => this.update(file)),
      cache.on("deleted", (file) => this.index.remove(file.path)),
    ];
  }
}

export function obsidianNoteSource(
  app: App,
  resolveSubpath: ResolveSubpath,
  embeds: ObsidianEmbedIndex = new ObsidianEmbedIndex(app),
  isExcluded: (path: string) => boolean = () => false,
): NoteSource {
  const vault = obsidianVault(app);
  return {
    listNotes: () => app.vault.getMarkdownFiles().map((file) => file.path),
    stat: (path) => {
      const file = noteFile(app, path);
      return file === null ? null : { mtime: file.stat.mtime, size: file.stat.size };
    },
    payload: async (path, signal) => {
      const file = noteFile(app, path);
      return file === null ? null : buildNotePayload(vault, file, { resolveSubpath, signal, isExcluded });
    },
    fileHash: async (path) => {
      const file = noteFile(app, path);
      return file === null ? null : sha256Hex(await app.vault.readBinary(file));
    },
    embedders: (path) => embeds.index.embedders(path),
    prepare: (yieldToUi) => embeds.build(yieldToUi),
  };
}

/** The events sync follows; the returned refs go to `plugin.registerEvent`. PDFs and canvases
 * go to `files` (their paths only: the sidecar reads them). */
export function syncEvents(app: App, engine: SyncEngine, embeds: ObsidianEmbedIndex, files?: FileChangeQueue): EventRef[] {
  const isNote = (file: TAbstractFile) => file instanceof TFile && isNotePath(file.path);
  return [
    ...embeds.events(),
    ...(files === undefined ? [] : fileEvents(app, files)),
    app.metadataCache.on("changed", (file) => {
      if (isNotePath(file.path)) engine.noteChanged(file.path);
    }),
    app.vault.on("delete", (file) => {
      // The index still lists the notes embedding it: they are re-posted without it.
      if (isNote(file)) engine.noteDeleted(file.path);
    }),
    app.vault.on("rename", (file, oldPath) => {
      if (!(file instanceof TFile)) return; // folders: Obsidian also renames each file inside
      const wasNote = isNotePath(oldPath);
      const isNow = isNotePath(file.path);
      if (wasNote) embeds.index.rename(oldPath, file.path);
      if (wasNote && isNow) engine.noteRenamed(oldPath, file.path);
      else if (wasNote) engine.noteDeleted(oldPath);
      else if (isNow) engine.noteChanged(file.path);
    }),
  ];
}

/** Created, modified, deleted and renamed PDFs and canvases (Obsidian's metadata cache has no
 * `changed` event for them); folders are skipped: Obsidian also reports each file inside. */
export function fileEvents(app: App, files: FileChangeQueue): EventRef[] {
  const isRead = (file: TAbstractFile) => file instanceof TFile && isSidecarReadPath(file.path);
  return [
    app.vault.on("create", (file) => {
      if (isRead(file)) files.changed(file.path);
    }),
    app.vault.on("modify", (file) => {
      if (isRead(file)) files.changed(file.path);
    }),
    app.vault.on("delete", (file) => {
      if (isRead(file)) files.deleted(file.path);
    }),
    app.vault.on("rename", (file, oldPath) => {
      if (file instanceof TFile) files.renamed(oldPath, file.path); // each side only if read by the sidecar
    }),
  ];
}
