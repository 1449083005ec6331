/**
 * The sidecar's HTTP contract as the plugin uses it, in one place: request bodies, the answers
 * the plugin reads, and the ask stream's events. The wire types are generated from
 * `shared-schemas/openapi.json` (`openapi.ts`, `npm run gen:types`; CI fails when it is stale),
 * so a renamed or removed field is a compile error here. Parsing still checks at run time:
 * unknown fields are ignored and missing optional ones defaulted, so the server can add fields
 * without breaking the plugin; what the plugin cannot work without is a `SidecarProtocolError`.
 */
import { SidecarProtocolError } from "./errors";
import type { components } from "./openapi";
import type { SSEMessage } from "./sse";

/** The sidecar's schemas, as `shared-schemas/openapi.json` names them. */
export type Schemas = components["schemas"];
type PostedNoteIn = Schemas["PostedNoteIn"];

/** Routes, relative to the sidecar URL. */
export const ROUTES = {
  health: "/v1/health",
  status: "/v1/status",
  notes: "/v1/notes",
  rename: "/v1/notes/rename",
  hashes: "/v1/notes/hashes",
  changed: "/v1/notes/changed",
  search: "/v1/search",
  related: "/v1/related",
  ask: "/v1/ask",
  threads: "/v1/threads",
  thread: (id: string) => `/v1/threads/${encodeURIComponent(id)}`,
  feedback: (answerId: string) => `/v1/answers/${encodeURIComponent(answerId)}/feedback`,
  promote: (answerId: string) => `/v1/answers/${encodeURIComponent(answerId)}/promote`,
  exclude: "/v1/settings/exclude",
} as const;

/** One note of `PUT /v1/notes` (`PostedNoteIn`; the plugin always sends `embeds` and `mtime`). */
export interface NotePayload extends PostedNoteIn {
  /** Vault-relative path, forward slashes, NFC. */
  path: string;
  /** The frontmatter block as written, then the body with every embed resolved (see sync/content.ts). */
  content: string;
  /** Notes whose text was inlined, transitively (vault-relative, NFC, code-point order). */
  embeds: string[];
  /** Modification time of the file read, ms since the epoch (`TFile.stat.mtime`). */
  mtime: number;
}

/** `strict`: the vault only; `hybrid`: the vault plus web sources. */
export type AnswerMode = NonNullable<Schemas["AskRequest"]["mode"]>;

/** `POST /v1/ask`; the same `thread_id` continues a conversation; `note` asks about a note. */
export type AskRequest = Schemas["AskRequest"];

/** `final.focus`: the note a question was asked about, and how many citations came from it. */
export type FocusInfo = Schemas["FocusInfo"];

export interface VaultCitation {
  kind: "vault";
  note_path: string;
  heading: string;
  anchor: string;
  cite: string;
  chunk_id?: string;
  line_start?: number | null;
  line_end?: number | null;
  /** `vault` or a source's name (`GET /v1/collections`). */
  collection?: string;
  /** Code: the function, method, class or struct, cited `note_path:line_start-line_end`. */
  symbol?: string | null;
  /** A source beside the vault: `code` for a code unit, else the file's kind (`md`, `pdf`…);
   * absent for the vault's own notes. Its file is outside the vault: the pane shows `text`. */
  source_kind?: string;
  /** A source's passage (code: the cited lines, verbatim), shown in the pane. */
  text?: string;
  /** C/C++: the other file of the `.h`/`.cpp` pair; where the header declares it. */
  related_file?: string | null;
  declared_at?: string | null;
  /** A pair question ("the note about X and the code that implements it"): the units this
   * passage links to across collections — the code a note names, the notes naming a code unit. */
  linked?: LinkedUnit[];
}

/** The other half of a note ↔ code pair (`source_indexes/pair_links.py`, `LinkedHit`). */
export interface LinkedUnit {
  kind: "code" | "note";
  collection: string;
  note_path: string;
  symbol: string | null;
  line_start: number;
  line_end: number;
  reason: string;
}

export interface WebCitation {
  kind: "web";
  url: string;
  title: string;
  cite: string;
  /** A page of a web source beside the vault (online docs): the source's name, the cited
   * section's heading path and the passage. Absent for a web search result. */
  collection?: string;
  heading?: string;
  text?: string;
}

export type Citation = VaultCitation | WebCitation;

export type AskEvent =
  | { type: "progress"; node: string; aspect: number | null; reset: boolean; data: Record<string, unknown> }
  | { type: "delta"; text: string }
  | { type: "citations"; citations: Citation[] }
  | {
      type: "final";
      answer: string;
      answerId: string;
      threadId: string | null;
      citations: Citation[];
      usage: Schemas["Usage"] | null;
      /** Asked about a note: that note and what the answer took from it (null: not asked). */
      focus?: FocusInfo | null;
      data: Record<string, unknown>;
    }
  | { type: "error"; code: string; message: string };

/** The SSE event names the sidecar sends, each with the schema of its `data` (`ProgressEvent`, …). */
export interface AskEventData {
  progress: Schemas["ProgressEvent"];
  delta: Schemas["DeltaEvent"];
  citations: Schemas["CitationsEvent"];
  final: Schemas["FinalEvent"];
  error: Schemas["ErrorEvent"];
}
export const ASK_EVENTS: readonly (keyof AskEventData)[] = ["progress", "delta", "citations", "final", "error"];

/** What the status bar shows from `GET /v1/status`; every count is optional. */
export interface SidecarStatus {
  notes: number | null;
  chunks: number | null;
  /** Chunks waiting for their vectors (indexing in progress when > 0). */
  pending: number | null;
  /** Chunks that have their vectors. */
  embedded: number | null;
  etaSeconds: number | null;
  lastError: string | null;
  /** The index writer: what it is doing and how far (`phase`: chunking, embedding or
   * sections — the sections of merged units, for precise citations). */
  writer: { state: string; phase: string | null; done: number; total: number; queued: number } | null;
  /** One note's index state (`?path=`); null without a path. */
  note: NoteIndexState | null;
  raw: Record<string, unknown>;
}

/** `NoteState`: whether the sidecar has indexed a note, and how many of its passages have vectors. */
export interface NoteIndexState {
  path: string;
  indexed: boolean;
  chunks: number;
  embedded: number;
  pending: number;
}

/** The typed event of one SSE message, or null for an event name the plugin does not know. */
export function parseAskEvent(message: SSEMessage): AskEvent | null {
  if (!(ASK_EVENTS as readonly string[]).includes(message.event)) return null;
  let data: Record<string, unknown>;
  try {
    data = asRecord(JSON.parse(message.data));
  } catch {
    throw new SidecarProtocolError(`the sidecar sent a ${message.event} event that is not JSON`);
  }
  switch (message.event as keyof AskEventData) {
    case "progress": {
      const progress = data as Partial<AskEventData["progress"]>;
      return { type: "progress", node: str(progress.node), aspect: num(progress.aspect), reset: progress.reset === true, data };
    }
    case "delta":
      return { type: "delta", text: str((data as Partial<AskEventData["delta"]>).text) };
    case "citations":
      return { type: "citations", citations: parseCitations((data as Partial<AskEventData["citations"]>).citations) };
    case "final": {
      const final = data as Partial<AskEventData["final"]>;
      return {
        type: "final",
        answer: str(final.answer),
        answerId: str(final.answer_id),
        threadId: typeof final.thread_id === "string" ? final.thread_id : null,
        citations: parseCitations(final.citations),
        usage: isRecord(final.usage) ? final.usage : null,
        focus: parseFocus(final.focus),
        data,
      };
    }
    case "error": {
      const error = data as Partial<AskEventData["error"]>;
      return { type: "error", code: str(error.code) || "error", message: str(error.message) || "the sidecar reported an error" };
    }
  }
}

function parseFocus(value: unknown): FocusInfo | null {
  if (!isRecord(value) || typeof value.path !== "string" || !value.path) return null;
  return {
    path: value.path,
    indexed: value.indexed === true,
    linked: num(value.linked) ?? 0,
    selection: value.selection === true,
    cited: num(value.cited) ?? 0,
    cited_linked: num(value.cited_linked) ?? 0,
  };
}

export function parseCitations(value: unknown): Citation[] {
  if (!Array.isArray(value)) return [];
  const out: Citation[] = [];
  for (const item of value) {
    if (!isRecord(item)) continue;
    if (item.kind === "web" || (typeof item.url === "string" && typeof item.note_path !== "string")) {
      const url = str(item.url);
      if (!url) continue;
      const web: WebCitation = { kind: "web", url, title: str(item.title), cite: str(item.cite) || url };
      if (typeof item.collection === "string" && item.collection) web.collection = item.collection;
      if (typeof item.heading === "string" && item.heading) web.heading = item.heading;
      if (typeof item.text === "string" && item.text) web.text = item.text;
      out.push(web);
    } else if (typeof item.note_path === "string") {
      out.push({
        kind: "vault",
        note_path: item.note_path,
        heading: str(item.heading),
        anchor: str(item.anchor),
        cite: str(item.cite),
        chunk_id: typeof item.chunk_id === "string" ? item.chunk_id : undefined,
        line_start: num(item.line_start),
        ...codeFields(item),
        ...linkedField(item.linked),
      });
    }
  }
  return out;
}

/** A citation's note ↔ code links, when it has any (malformed entries dropped). */
export function linkedField(value: unknown): { linked?: LinkedUnit[] } {
  if (!Array.isArray(value)) return {};
  const linked: LinkedUnit[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.note_path !== "string" || !item.note_path) continue;
    if (item.kind !== "code" && item.kind !== "note") continue;
    linked.push({
      kind: item.kind,
      collection: str(item.collection) || "vault",
      note_path: item.note_path,
      symbol: typeof item.symbol === "string" && item.symbol ? item.symbol : null,
      line_start: num(item.line_start) ?? 0,
      line_end: num(item.line_end) ?? num(item.line_start) ?? 0,
      reason: str(item.reason),
    });
  }
  return linked.length ? { linked } : {};
}

/** The fields a citation from a source beside the vault adds: its collection, kind and passage
 * (a code unit also its line range, symbol and pairing). None for the vault's own notes. */
function codeFields(item: Record<string, unknown>): Partial<VaultCitation> {
  if (typeof item.source_kind !== "string" || !item.source_kind) return {};
  if (item.source_kind !== "code") {
    return { source_kind: item.source_kind, collection: str(item.collection) || "vault", line_end: num(item.line_end), text: str(item.text) };
  }
  const opt = (value: unknown): string | null => (typeof value === "string" && value ? value : null);
  return {
    source_kind: "code",
    collection: str(item.collection) || "vault",
    line_end: num(item.line_end),
    symbol: opt(item.symbol),
    text: str(item.text),
    related_file: opt(item.related_file),
    declared_at: opt(item.declared_at),
  };
}

export function parseStatus(value: unknown): SidecarStatus {
  const data = asRecord(value) as Partial<Schemas["Status"]> & Record<string, unknown>;
  const writer = isRecord(data.writer) ? (data.writer as Partial<Schemas["WriterState"]>) : null;
  return {
    notes: num(data.notes),
    chunks: num(data.chunks),
    pending: num(data.pending),
    embedded: num(data.embedded),
    etaSeconds: num(data.eta_seconds),
    lastError: typeof data.last_error === "string" && data.last_error ? data.last_error : null,
    writer:
      writer === null
        ? null
        : {
            state: str(writer.state),
            phase: typeof writer.phase === "string" ? writer.phase : null,
            done: num(writer.done) ?? 0,
            total: num(writer.total) ?? 0,
            queued: num(writer.queued) ?? 0,
          },
    note: parseNoteState(data.note),
    raw: data,
  };
}

function parseNoteState(value: unknown): NoteIndexState | null {
  if (!isRecord(value)) return null;
  const note = value as Partial<Schemas["NoteState"]>;
  return {
    path: str(note.path),
    indexed: note.indexed === true,
    chunks: num(note.chunks) ?? 0,
    embedded: num(note.embedded) ?? 0,
    pending: num(note.pending) ?? 0,
  };
}

/** `GET /v1/notes/hashes` (`NoteHashes`): path → hash. */
export function parseHashes(value: unknown): Map<string, string> {
  const hashes = (asRecord(value) as Partial<Schemas["NoteHashes"]>).hashes;
  if (!isRecord(hashes)) throw new SidecarProtocolError("the sidecar's note hashes are not a mapping");
  const out = new Map<string, string>();
  for (const [path, hash] of Object.entries(hashes)) {
    if (typeof hash === "string") out.set(path, hash);
  }
  return out;
}

/** One note of `GET /v1/related`: its best-matching passage and whether the note links to it. */
export interface RelatedNote {
  note_path: string;
  heading_path: string;
  anchor: string;
  line_start: number | null;
  snippet: string;
  score: number;
  linked: boolean;
}

/** `GET /v1/related`: `pending` while the note has no vector yet, `not_indexed` before it is indexed. */
export interface RelatedNotes {
  path: string;
  status: "ok" | "pending" | "not_indexed";
  related: RelatedNote[];
}

export function parseRelated(value: unknown): RelatedNotes {
  const data = asRecord(value);
  const status = data.status === "pending" || data.status === "not_indexed" ? data.status : "ok";
  const related: RelatedNote[] = [];
  for (const item of Array.isArray(data.related) ? data.related : []) {
    if (!isRecord(item) || typeof item.note_path !== "string" || !item.note_path) continue;
    related.push({
      note_path: item.note_path,
      heading_path: str(item.heading_path),
      anchor: str(item.anchor),
      line_start: num(item.line_start),
      snippet: str(item.snippet),
      score: num(item.score) ?? 0,
      linked: item.linked === true,
    });
  }
  return { path: str(data.path), status, related };
}

/** One message of `GET /v1/threads/{id}`. */
export interface ThreadMessage {
  role: "user" | "assistant" | "system" | "tool";
  content: string;
  /** An answer's id (feedback, Save as note); absent for questions and older sidecars. */
  id?: string;
  /** An answer's citations as its stream gave them (older sidecars: none). */
  citations?: Citation[];
}

/** `GET /v1/threads/{id}`: the stored conversation, oldest message first. */
export function parseThread(value: unknown): { threadId: string; messages: ThreadMessage[] } {
  const data = asRecord(value);
  const roles = ["user", "assistant", "system", "tool"];
  const messages: ThreadMessage[] = [];
  for (const item of Array.isArray(data.messages) ? data.messages : []) {
    if (!isRecord(item) || typeof item.role !== "string" || !roles.includes(item.role)) continue;
    const message: ThreadMessage = { role: item.role as ThreadMessage["role"], content: str(item.content) };
    if (typeof item.id === "string" && item.id) message.id = item.id;
    const citations = parseCitations(item.citations);
    if (citations.length > 0) message.citations = citations;
    messages.push(message);
  }
  return { threadId: str(data.thread_id), messages };
}

/** One conversation of `GET /v1/threads` (`ThreadListItem`). */
export interface ThreadSummary {
  threadId: string;
  /** The first question, on one line. */
  title: string;
  /** When the thread last changed; null if the sidecar sent no readable time. */
  updatedAt: Date | null;
  messageCount: number;
}

/** `GET /v1/threads` (`ThreadList`): newest first; `nextBefore` asks for the next, older page. */
export interface ThreadList {
  threads: ThreadSummary[];
  nextBefore: string | null;
}

export function parseThreadList(value: unknown): ThreadList {
  const data = asRecord(value) as Partial<Record<keyof Schemas["ThreadList"], unknown>>;
  const threads: ThreadSummary[] = [];
  for (const item of Array.isArray(data.threads) ? data.threads : []) {
    if (!isRecord(item) || typeof item.thread_id !== "string" || !item.thread_id) continue;
    const raw = item as Partial<Record<keyof Schemas["ThreadListItem"], unknown>>;
    const updated = typeof raw.updated_at === "string" ? new Date(raw.updated_at) : null;
    threads.push({
      threadId: item.thread_id,
      title: str(raw.title),
      updatedAt: updated !== null && Number.isFinite(updated.getTime()) ? updated : null,
      messageCount: num(raw.message_count) ?? 0,
    });
  }
  const nextBefore = typeof data.next_before === "string" && data.next_before ? data.next_before : null;
  return { threads, nextBefore };
}

/** `POST /v1/answers/{id}/promote` (`PromoteOut`): the new note's vault-relative path. */
export function parsePromoted(value: unknown): string {
  const path = (asRecord(value) as Partial<Schemas["PromoteOut"]>).path;
  if (typeof path !== "string" || !path) throw new SidecarProtocolError("the sidecar did not say where it saved the note");
  return path;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asRecord(value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw new SidecarProtocolError("the sidecar sent something other than a JSON object");
  return value;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
