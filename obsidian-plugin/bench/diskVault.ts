/**
 * A vault folder on disk as the `App` the sync code talks to: shim `TFile`s with the files'
 * real mtime and size, reads from disk (`cachedRead`, `readBinary`), `CachedMetadata` written
 * by `scripts/gen_cached_metadata.py --vault DIR --out FILE` (Obsidian's shapes, from the
 * sidecar's own markdown parser), and Obsidian's link resolution (`tests/helpers/linkpathDest.ts`).
 * Reads are counted. Event registration is recorded and never fired (nothing changes).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

import type { App, CachedMetadata } from "obsidian";

import { TFile } from "../tests/__mocks__/obsidian";
import { LinkpathIndex } from "../tests/helpers/linkpathDest";

interface DiskFile extends TFile {
  diskPath: string;
}

/** Markdown files under `root` (hidden folders skipped, as Obsidian does), NFC paths. */
function listNotes(root: string, prefix = ""): [string, string][] {
  const found: [string, string][] = [];
  for (const entry of readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...listNotes(root, relative));
    else if (entry.isFile() && entry.name.toLowerCase().endsWith(".md")) {
      found.push([relative.normalize("NFC"), path.join(root, relative)]);
    }
  }
  return found;
}

export class DiskVault {
  readonly files = new Map<string, DiskFile>();
  readonly reads = { text: 0, binary: 0 };
  private readonly texts = new Map<string, string>();
  readonly app: App;
  private readonly metadata: Record<string, CachedMetadata>;
  private readonly index: LinkpathIndex;

  constructor(root: string, metadataFile: string) {
    for (const [vaultPath, diskPath] of listNotes(root)) {
      const stat = statSync(diskPath);
      const file = Object.assign(new TFile(vaultPath, { mtime: Math.floor(stat.mtimeMs), size: stat.size }), {
        diskPath,
      });
      this.files.set(vaultPath, file);
    }
    this.metadata = JSON.parse(readFileSync(metadataFile, "utf8")) as Record<string, CachedMetadata>;
    this.index = new LinkpathIndex(this.files.keys());
    const on = () => ({});
    const app = {
      metadataCache: {
        getFileCache: (file: DiskFile) => this.metadata[file.path] ?? null,
        getFirstLinkpathDest: (linkpath: string, source: string) => {
          const found = this.index.resolve(linkpath, source);
          return found === null ? null : (this.files.get(found) ?? null);
        },
        on,
      },
      vault: {
        getMarkdownFiles: () => [...this.files.values()],
        getAbstractFileByPath: (vaultPath: string) => this.files.get(vaultPath) ?? null,
        // Obsidian's `cachedRead` keeps what it read until the file changes: the resolver
        // reading a note the payload already read costs no second disk read there either.
        cachedRead: async (file: DiskFile) => {
          const cached = this.texts.get(file.path);
          if (cached !== undefined) return cached;
          this.reads.text += 1;
          const text = (await readFile(file.diskPath)).toString("utf8");
          this.texts.set(file.path, text);
          return text;
        },
        readBinary: async (file: DiskFile) => {
          this.reads.binary += 1;
          const data = await readFile(file.diskPath);
          return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
        },
        on,
      },
    };
    this.app = app as unknown as App;
  }
}
