/**
 * A conformance case folder (shared-schemas/fixtures/embeds/<case>/) as a `VaultAccess`: the
 * notes under `vault/`, their `CachedMetadata` from `cached-metadata.json` (written by
 * scripts/gen_cached_metadata.py), and Obsidian's link resolution from `linkpathDest.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import type { CachedMetadata } from "obsidian";

import type { TFileLike, VaultAccess } from "../../src/resolver";
import { LinkpathIndex } from "./linkpathDest";
import { TFile } from "../__mocks__/obsidian";

export const FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../shared-schemas/fixtures/embeds",
);
export const METADATA_FILE = "cached-metadata.json";

export interface FixtureFile extends TFileLike {
  diskPath: string;
}

/** Every case folder (one holding a case.json), sorted. */
export function caseNames(): string[] {
  return readdirSync(FIXTURES)
    .filter((name) => statSync(path.join(FIXTURES, name), { throwIfNoEntry: false })?.isDirectory())
    .filter((name) => existsSync(path.join(FIXTURES, name, "case.json")))
    .sort();
}

/** UTF-8 text, byte for byte (no newline translation may hide a difference). */
export function readText(file: string): string {
  return readFileSync(file).toString("utf8");
}

export function readJson<T>(file: string): T {
  return JSON.parse(readText(file)) as T;
}

/** Files under `root`, as [NFC vault-relative path, path on disk]; names may be NFD on disk. */
function listFiles(root: string, prefix = ""): [string, string][] {
  const found: [string, string][] = [];
  for (const entry of readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.name.startsWith(".")) continue;
    if (entry.isDirectory()) found.push(...listFiles(root, relative));
    else if (entry.isFile()) found.push([relative.normalize("NFC"), path.join(root, relative)]);
  }
  return found;
}

export class FixtureVault implements VaultAccess<FixtureFile> {
  readonly files = new Map<string, FixtureFile>();
  readonly metadata: Record<string, CachedMetadata>;
  private readonly index: LinkpathIndex;

  constructor(readonly caseDir: string) {
    const root = path.join(caseDir, "vault");
    for (const [vaultPath, diskPath] of listFiles(root)) {
      const extension = path.extname(vaultPath).slice(1);
      // A shim `TFile`, so the plugin's `instanceof TFile` checks hold as in Obsidian.
      const file = Object.assign(new TFile(vaultPath), { path: vaultPath, extension, diskPath });
      this.files.set(vaultPath, file);
    }
    this.index = new LinkpathIndex(this.files.keys());
    const metadataPath = path.join(caseDir, METADATA_FILE);
    this.metadata = existsSync(metadataPath)
      ? readJson<Record<string, CachedMetadata>>(metadataPath)
      : {};
  }

  file(vaultPath: string): FixtureFile {
    const file = this.files.get(vaultPath.normalize("NFC"));
    if (!file) throw new Error(`${vaultPath} is not in ${this.caseDir}`);
    return file;
  }

  notePaths(): string[] {
    return [...this.files.values()].filter((f) => f.extension === "md").map((f) => f.path);
  }

  getFirstLinkpathDest(linkpath: string, sourcePath: string): FixtureFile | null {
    const found = this.index.resolve(linkpath, sourcePath);
    return found === null ? null : (this.files.get(found) ?? null);
  }

  getFileCache(file: FixtureFile): CachedMetadata | null {
    return this.metadata[file.path] ?? null;
  }

  read(file: FixtureFile): string {
    return readText(file.diskPath);
  }
}
