import type { App, TFile } from "obsidian";

import type { VaultAccess } from "./types";

/** The resolver's view of a running Obsidian: its metadata cache and (cached) file reads. */
export function obsidianVault(app: App): VaultAccess<TFile> {
  return {
    getFirstLinkpathDest: (linkpath, sourcePath) => app.metadataCache.getFirstLinkpathDest(linkpath, sourcePath),
    getFileCache: (file) => app.metadataCache.getFileCache(file),
    read: (file) => app.vault.cachedRead(file),
  };
}
