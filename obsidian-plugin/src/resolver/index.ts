export { MAX_EMBED_DEPTH, MAX_EMBEDS, resolveNote } from "./resolve";
export { resolveSubpathLike } from "./subpath";
export { isNoteLink, parseLink, stripHeading } from "./links";
export type {
  EmbedWarning,
  EmbedWarningCode,
  ResolveOptions,
  ResolveSubpath,
  ResolvedNote,
  SubpathMatch,
  TFileLike,
  VaultAccess,
} from "./types";
