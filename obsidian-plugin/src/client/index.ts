export { SidecarClient, type FetchLike, type RequestOptions, type SidecarConfig } from "./client";
export { parseSSE, type SSEMessage } from "./sse";
export {
  type AnswerMode,
  type AskEvent,
  type AskRequest,
  type Citation,
  type NotePayload,
  parseAskEvent,
  parseCitations,
  parseHashes,
  parseRelated,
  parseStatus,
  parseThread,
  type RelatedNote,
  type RelatedNotes,
  ROUTES,
  type SidecarStatus,
  type ThreadMessage,
  type VaultCitation,
  type WebCitation,
} from "./api";
export {
  type ConnectionState,
  connectionStateOf,
  isAbortError,
  SidecarAuthError,
  SidecarError,
  SidecarHttpError,
  SidecarProtocolError,
  SidecarTimeoutError,
  SidecarUnreachableError,
} from "./errors";
