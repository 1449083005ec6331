export { buildNotePayload, isExcluded, isNotePath, noteContent, sha256Hex } from "./content";
export { SyncEngine } from "./engine";
export { isPermanent, type NoteSource, type SyncClient, type SyncOptions, type SyncState } from "./types";
export { type EmbedGraph, findEmbedders, obsidianEmbedGraph, obsidianNoteSource, syncEvents } from "./obsidian";
export { backoffDelay, type Clock, systemClock } from "./timing";
