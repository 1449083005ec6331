export { buildNotePayload, isExcluded, isNotePath, noteContent, sha256Hex } from "./content";
export { EmbedIndex, type EmbedEdges } from "./embedIndex";
export { FileChangeQueue, isSidecarReadPath } from "./files";
export { SyncEngine } from "./engine";
export { embedEdges, ObsidianEmbedIndex, obsidianNoteSource, syncEvents } from "./obsidian";
export { parsePersistedSync } from "./persist";
export { macrotask, Slicer, type YieldToUi } from "./slicer";
export { backoffDelay, type Clock, systemClock } from "./timing";
export {
  isPermanent,
  type NoteSource,
  type PersistedSync,
  type SyncClient,
  type SyncOptions,
  type SyncState,
} from "./types";
