import type { BlockCache, CachedMetadata, HeadingCache, ListItemCache, Loc } from "obsidian";

/** What the resolver needs of a file: Obsidian's `TFile` has both fields. */
export interface TFileLike {
  /** Vault-relative path with forward slashes. */
  path: string;
  /** Extension without the dot (`md`, `png`, `canvas`). */
  extension: string;
}

/**
 * The slice of Obsidian the resolver runs on. In the plugin it is `app.metadataCache` and
 * `app.vault` (see `obsidian.ts`); in tests, a folder of fixture notes with their
 * `cached-metadata.json`.
 */
export interface VaultAccess<F extends TFileLike = TFileLike> {
  /** `MetadataCache.getFirstLinkpathDest`: the file a link path points to from `sourcePath`. */
  getFirstLinkpathDest(linkpath: string, sourcePath: string): F | null;
  /** `MetadataCache.getFileCache`: the parsed structure of a note, null when not indexed yet. */
  getFileCache(file: F): CachedMetadata | null;
  /** The note's text (`Vault.cachedRead`). May throw; the embed then stays as text. */
  read(file: F): Promise<string> | string;
}

/** Obsidian's `resolveSubpath` result for `#Heading#Sub`. `next` is null at the end. */
export interface HeadingMatch {
  type: "heading";
  current: HeadingCache;
  next: HeadingCache | null;
  start: Loc;
  end: Loc | null;
}

/** Obsidian's `resolveSubpath` result for `#^id`; `list` is set when the block is a list item. */
export interface BlockMatch {
  type: "block";
  block: BlockCache;
  list?: ListItemCache;
  start: Loc;
  end: Loc | null;
}

/** Anything else `resolveSubpath` can return (footnotes); not embeddable as text here. */
export interface OtherMatch {
  type: "footnote";
  start: Loc;
  end: Loc | null;
}

export type SubpathMatch = HeadingMatch | BlockMatch | OtherMatch;

/**
 * Signature of Obsidian's `resolveSubpath(cache, "#A#B")`: the plugin passes the real one from
 * the `obsidian` module, tests use `resolveSubpathLike` from `subpath.ts`.
 */
export type ResolveSubpath = (cache: CachedMetadata, subpath: string) => SubpathMatch | null;

/** The warning codes of the embed stage (`WARNING_CODES` in sidecar/vault_rag/vault/types.py). */
export type EmbedWarningCode =
  | "missing_note"
  | "missing_heading"
  | "missing_block"
  | "self_embed"
  | "cycle"
  | "max_depth"
  | "unreadable";

export interface EmbedWarning {
  code: EmbedWarningCode;
  message: string;
  /** Vault-relative path (NFC) of the note the embed is written in. */
  note: string;
  /** The text between `[[` and `]]`, alias included; null when the note itself failed. */
  target: string | null;
  /** 1-based file line of the embed in `note`; null when the note itself failed. */
  line: number | null;
}

export interface ResolvedNote {
  /** Vault-relative path (NFC) of the resolved note. */
  path: string;
  /** The note's body (frontmatter removed) with every resolvable embed inlined. */
  text: string;
  /** Notes whose content was inlined, directly or not; sorted by code point, NFC. */
  dependencies: string[];
  warnings: EmbedWarning[];
}

export interface ResolveOptions {
  /** Obsidian's `resolveSubpath`; defaults to `resolveSubpathLike`. */
  resolveSubpath?: ResolveSubpath;
  /** Levels of embeds followed below the resolved note (default 10). */
  maxDepth?: number;
  /** Inlined embeds per resolved note before the rest stay as text (default 1000). */
  maxEmbeds?: number;
  /** Aborting rejects the pending `resolveNote` with the signal's reason. */
  signal?: AbortSignal;
  /** Notes (vault-relative, NFC) never inlined: their embeds stay as written, with a
   * `missing_note` warning, as the sidecar resolves them (excluded folders are private). */
  isExcluded?: (path: string) => boolean;
}
