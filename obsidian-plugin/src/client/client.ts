/**
 * The sidecar client, with the bearer token: plain JSON calls go through Obsidian's
 * `requestUrl`, the ask stream through `fetch` (`requestUrl` buffers the whole answer, so it
 * cannot stream Server-Sent Events). Every failure is one of the error classes in `errors.ts`;
 * an abort rejects with the abort reason, untouched. The token is attached only once the server
 * at that URL has proven it holds it (`proofGate.ts`); every caller (status poller, sync, model
 * and exclusion pushes, the pane) goes through this one place.
 */
import { requestUrl, type RequestUrlResponse } from "obsidian";

import { anySignal } from "./abort";
import {
  type AskEvent,
  type AskRequest,
  isRecord,
  type NotePayload,
  parseAskEvent,
  parseHashes,
  parsePromoted,
  parseRelated,
  parseStatus,
  parseThreadList,
  type RelatedNotes,
  ROUTES,
  type SidecarStatus,
  type ThreadList,
} from "./api";
import {
  isAbortError,
  SidecarAuthError,
  SidecarError,
  SidecarHttpError,
  SidecarProtocolError,
  SidecarTimeoutError,
  SidecarUnreachableError,
} from "./errors";
import {
  EMBEDDING_ROUTES,
  type EmbeddingsChange,
  type EmbeddingsState,
  type EmbeddingsUpdate,
  type EmbeddingTestResult,
  parseEmbeddingsChange,
  parseEmbeddingsState,
  parseEmbeddingTest,
} from "./embeddings";
import { DEVICE_ROUTES, type DeviceList, type DeviceRole, type DevicesRevoked, type PairCode, parseDeviceList, parsePairCode, parseRevoked } from "./devices";
import { ProofGate } from "./proofGate";
import { COLLECTION_ROUTES, type CollectionList, parseCollections } from "./collections";
import { parseSourceAdded, parseSourceRemoved, SOURCE_ROUTES, type SourceAdd, type SourceAdded, type SourceRemoved } from "./sources";
import { MODEL_ROUTES, type ModelsState, type ModelsUpdate, type ModelTry, parseModelsState, parseModelTry } from "./models";
import { parseSSE } from "./sse";

export interface SidecarConfig {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:8765. */
  url: string;
  /** Bearer token; no Authorization header when empty. */
  token: string;
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RequestOptions {
  signal?: AbortSignal;
  /** Milliseconds before a request that has not answered counts as unreachable (JSON calls only). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Note writes wait in the sidecar's single writer queue, behind a first full index maybe. */
const WRITE_TIMEOUT_MS = 600_000;

export class SidecarClient {
  private readonly gate = new ProofGate(async (url, challenge) => {
    const query = `?challenge=${encodeURIComponent(challenge)}`;
    return record(await this.json("GET", ROUTES.health + query, undefined, { timeoutMs: 5_000 }, false, url)).proof;
  });

  /**
   * `config` is read on every request, so a changed URL or token applies at once. Without
   * `fetchImpl`, JSON calls use `requestUrl` and the stream the window's `fetch`; with one
   * (tests that record requests), every call goes through it.
   */
  constructor(
    private readonly config: () => SidecarConfig,
    private readonly fetchImpl: FetchLike | null = null,
  ) {}

  get url(): string {
    return this.config().url;
  }

  /** `GET /v1/health`; with `challenge` (16 to 256 characters, fresh each time) the answer's
   * `proof` shows whether the server holds the token (`sidecar/proof.ts`). */
  async health(options: RequestOptions & { challenge?: string } = {}): Promise<Record<string, unknown>> {
    const { challenge, ...rest } = options;
    const query = challenge === undefined ? "" : `?challenge=${encodeURIComponent(challenge)}`;
    // Never with the token: it needs none, and whatever answers on the port may not be ours.
    return record(await this.json("GET", ROUTES.health + query, undefined, { timeoutMs: 5_000, ...rest }, false));
  }

  /** The token the plugin holds now (empty: none). */
  get token(): string {
    return this.config().token;
  }

  /**
   * Whether the server at the URL proves it holds `token` (default: the current one), with a
   * fresh challenge; a proven pair is what later requests send the token to. False when it
   * cannot prove it, or nothing answers. The token itself is never sent.
   */
  async prove(token = this.token): Promise<boolean> {
    const url = this.url;
    try {
      return await this.gate.prove(url, token, true);
    } catch {
      return false;
    }
  }

  /** Whether the current (URL, token) is proven (no request). */
  get proven(): boolean {
    const { url, token } = this.config();
    return this.gate.isProven(url, token);
  }

  /** Trust no server until it proves itself again (the sidecar stopped or restarts). */
  forgetProof(): void {
    this.gate.forget();
  }

  /** `GET /v1/status`, optionally with one note's index state (`?path=`). */
  async status(path?: string, options: RequestOptions = {}): Promise<SidecarStatus> {
    const query = path === undefined ? "" : `?path=${encodeURIComponent(path)}`;
    return parseStatus(await this.json("GET", ROUTES.status + query, undefined, { timeoutMs: 10_000, ...options }));
  }

  async putNotes(notes: NotePayload[], options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return record(await this.json("PUT", ROUTES.notes, { notes }, { timeoutMs: WRITE_TIMEOUT_MS, ...options }));
  }

  async deleteNotes(paths: string[], options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return record(await this.json("DELETE", ROUTES.notes, { paths }, { timeoutMs: WRITE_TIMEOUT_MS, ...options }));
  }

  /** Batch rename; each file must already be at its new path. */
  async renameNotes(
    renames: { oldPath: string; newPath: string }[],
    options: RequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const body = { renames: renames.map((r) => ({ old_path: r.oldPath, new_path: r.newPath })) };
    return record(await this.json("POST", ROUTES.rename, body, { timeoutMs: WRITE_TIMEOUT_MS, ...options }));
  }

  /** `POST /v1/notes/changed`: files the sidecar reads itself (PDFs, canvases) were created,
   * modified, renamed or deleted; it reads each path from the vault. Never their bytes. */
  async filesChanged(paths: string[], options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return record(await this.json("POST", ROUTES.changed, { paths }, { timeoutMs: WRITE_TIMEOUT_MS, ...options }));
  }

  /** `PUT /v1/settings/exclude`: the sidecar keeps these folders out of its index (its scan,
   * watcher and note routes) and removes the notes they cover before it answers. */
  async setExcluded(folders: string[], options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return record(await this.json("PUT", ROUTES.exclude, { exclude: folders }, { timeoutMs: WRITE_TIMEOUT_MS, ...options }));
  }

  /** `GET /v1/models`: the chat model in use and what its server lists (`list`: ask the server). */
  async models(list = true, options: RequestOptions = {}): Promise<ModelsState> {
    const route = `${MODEL_ROUTES.models}?list=${list ? "true" : "false"}`;
    return parseModelsState(await this.json("GET", route, undefined, { timeoutMs: 20_000, ...options }));
  }

  /** `PUT /v1/settings/models`: use this chat model (keys held in the sidecar's memory only). */
  async setModels(choice: ModelsUpdate, options: RequestOptions = {}): Promise<ModelsState> {
    return parseModelsState(await this.json("PUT", MODEL_ROUTES.settings, choice, { timeoutMs: 20_000, ...options }));
  }

  /** `POST /v1/settings/models/test`: list the server's models and ask the model one line. */
  async tryModels(choice: ModelsUpdate, options: RequestOptions = {}): Promise<ModelTry> {
    return parseModelTry(await this.json("POST", MODEL_ROUTES.test, choice, { timeoutMs: 150_000, ...options }));
  }

  /** `GET /v1/settings/embeddings`: the embedding model in use, what is on offer, the switch. */
  async embeddings(options: RequestOptions = {}): Promise<EmbeddingsState> {
    return parseEmbeddingsState(await this.json("GET", EMBEDDING_ROUTES.settings, undefined, { timeoutMs: 20_000, ...options }));
  }

  /** `PUT /v1/settings/embeddings`: without `confirm` the cost (the sidecar embeds a sample to
   * measure it); with it, the re-index with the new model starts. */
  async setEmbeddings(choice: EmbeddingsUpdate, options: RequestOptions = {}): Promise<EmbeddingsChange> {
    return parseEmbeddingsChange(await this.json("PUT", EMBEDDING_ROUTES.settings, choice, { timeoutMs: 180_000, ...options }));
  }

  /** `POST /v1/settings/embeddings/test`: one embedding call, its dimension back. */
  async testEmbeddings(choice: EmbeddingsUpdate, options: RequestOptions = {}): Promise<EmbeddingTestResult> {
    return parseEmbeddingTest(await this.json("POST", EMBEDDING_ROUTES.test, choice, { timeoutMs: 150_000, ...options }));
  }

  /** `GET /v1/collections`: the vault and the sources beside it, for the collection picker. */
  async collections(options: RequestOptions = {}): Promise<CollectionList> {
    return parseCollections(await this.json("GET", COLLECTION_ROUTES.collections, undefined, options));
  }

  /** `POST /v1/sources`: add a source beside the vault; the sidecar starts indexing it (a web
   * source: crawls it first). A refusal (file:// URL, a taken name…) is a 4xx with the CLI's sentence. */
  async addSource(body: SourceAdd, options: RequestOptions = {}): Promise<SourceAdded> {
    return parseSourceAdded(await this.json("POST", SOURCE_ROUTES.sources, body, { timeoutMs: 30_000, ...options }));
  }

  /** `DELETE /v1/sources/{name}`: remove an added source and its index (its folder is kept). */
  async removeSource(name: string, options: RequestOptions = {}): Promise<SourceRemoved> {
    return parseSourceRemoved(await this.json("DELETE", SOURCE_ROUTES.source(name), undefined, { timeoutMs: 120_000, ...options }));
  }

  /** `POST /v1/devices/pair`: a one-time code for another device (409 `remote_off` without a
   * remote listener). */
  async pairCode(deviceRole: DeviceRole = "read", options: RequestOptions = {}): Promise<PairCode> {
    return parsePairCode(await this.json("POST", DEVICE_ROUTES.pair, { role: deviceRole }, { timeoutMs: 10_000, ...options }));
  }

  /** `GET /v1/devices`: the paired devices, when each was last seen, the remote URL. */
  async devices(options: RequestOptions = {}): Promise<DeviceList> {
    return parseDeviceList(await this.json("GET", DEVICE_ROUTES.devices, undefined, { timeoutMs: 10_000, ...options }));
  }

  /** `DELETE /v1/devices/{id or name}`: its next message is refused, a stream to it stops. */
  async revokeDevice(idOrName: string, options: RequestOptions = {}): Promise<DevicesRevoked> {
    return parseRevoked(await this.json("DELETE", DEVICE_ROUTES.device(idOrName), undefined, { timeoutMs: 10_000, ...options }));
  }

  /** The sidecar's manifest: note path → hash (see sync/content.ts for what is hashed). */
  async noteHashes(options: RequestOptions = {}): Promise<Map<string, string>> {
    return parseHashes(await this.json("GET", ROUTES.hashes, undefined, { timeoutMs: 60_000, ...options }));
  }

  /** `collections`: search only these (`vault`, sources' names); absent: the sidecar's default. */
  async search(query: string, limit = 10, options: RequestOptions = {}, collections?: string[]): Promise<unknown> {
    return this.json("POST", ROUTES.search, { query, k: limit, ...(collections ? { collections } : {}) }, options);
  }

  /** `GET /v1/related`: the notes closest to `path`, from its stored vectors (no model call). */
  async related(path: string, limit = 10, options: RequestOptions = {}): Promise<RelatedNotes> {
    const query = `?path=${encodeURIComponent(path)}&k=${limit}`;
    return parseRelated(await this.json("GET", ROUTES.related + query, undefined, { timeoutMs: 10_000, ...options }));
  }

  /** `GET /v1/threads`: the stored conversations, newest first (`before`: a `nextBefore`). */
  async threads(page: { limit?: number; before?: string } = {}, options: RequestOptions = {}): Promise<ThreadList> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    if (page.before !== undefined) query.set("before", page.before);
    const route = query.toString() !== "" ? `${ROUTES.threads}?${query.toString()}` : ROUTES.threads;
    return parseThreadList(await this.json("GET", route, undefined, { timeoutMs: 10_000, ...options }));
  }

  async thread(id: string, options: RequestOptions = {}): Promise<unknown> {
    return this.json("GET", ROUTES.thread(id), undefined, options);
  }

  /** 👍 (+1) or 👎 (−1) for an answer. */
  async feedback(answerId: string, rating: 1 | -1, comment?: string, options: RequestOptions = {}): Promise<unknown> {
    const body = comment === undefined ? { rating } : { rating, comment };
    return this.json("POST", ROUTES.feedback(answerId), body, options);
  }

  /** Save an answer as a note; returns the new note's vault-relative path. */
  async promote(
    answerId: string,
    target: { title?: string; folder?: string } = {},
    options: RequestOptions = {},
  ): Promise<string> {
    const body: Record<string, string> = {};
    if (target.title) body.title = target.title;
    if (target.folder) body.folder = target.folder;
    return parsePromoted(await this.json("POST", ROUTES.promote(answerId), body, options));
  }

  /**
   * `POST /v1/ask`, as the stream's typed events. An `error` event is yielded and ends the
   * stream; a stream that stops before `final` or `error` rejects with `SidecarProtocolError`.
   * Aborting `signal` closes the connection, which cancels the run on the server.
   */
  async *ask(request: AskRequest, signal?: AbortSignal): AsyncGenerator<AskEvent, void, undefined> {
    const response = await this.send("POST", ROUTES.ask, request, { signal }, "text/event-stream");
    if (response.body === null) throw new SidecarProtocolError("the sidecar's answer has no body");
    try {
      for await (const message of parseSSE(response.body, signal)) {
        const event = parseAskEvent(message);
        if (event === null) continue;
        yield event;
        if (event.type === "final" || event.type === "error") return;
      }
    } catch (error) {
      if (signal?.aborted || isAbortError(error) || error instanceof SidecarError) throw error;
      this.gate.forget(); // the connection broke: whoever answers next proves itself again
      throw new SidecarUnreachableError(this.url, error); // the connection broke mid-stream
    }
    throw new SidecarProtocolError("the sidecar closed the answer stream before its final event");
  }

  private async json(
    method: string,
    route: string,
    body: unknown,
    options: RequestOptions,
    withToken = true,
    at: string | null = null,
  ): Promise<unknown> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const linked = options.signal ? anySignal([options.signal, timeout]) : null;
    const signal = linked?.signal ?? timeout;
    const url = at ?? this.url;
    try {
      const token = withToken ? await this.admitted(url, signal) : "";
      const text = await this.exchange(url, method, route, body, signal, token);
      if (text === "") return null;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new SidecarProtocolError(`the sidecar's answer to ${method} ${route} is not JSON`);
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (timeout.aborted) throw new SidecarTimeoutError(url, timeoutMs);
      throw error;
    } finally {
      linked?.dispose();
    }
  }

  /**
   * The token to send to `url`: "" when there is none, else the current one once `url` has
   * proven it holds it (asked now, or shared with a proof under way). A server that cannot
   * prove it rejects with `SidecarUnprovenError`, and the token is not sent.
   */
  private async admitted(url: string, signal: AbortSignal | undefined): Promise<string> {
    const token = this.config().token;
    if (token === "") return "";
    const admit = this.gate.admit(url, token);
    await (signal ? untilAborted(admit, signal) : admit);
    return token;
  }

  /** One JSON request; the answer's text, or a typed error. */
  private async exchange(url: string, method: string, route: string, body: unknown, signal: AbortSignal, token: string): Promise<string> {
    if (this.fetchImpl !== null) {
      const response = await this.send(method, route, body, { signal }, "application/json", { url, token });
      return response.status === 204 ? "" : response.text();
    }
    const headers: Record<string, string> = { Accept: "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    let response: RequestUrlResponse;
    try {
      // `requestUrl` cannot be cancelled: an abort or a timeout stops waiting for it.
      response = await untilAborted(
        requestUrl({
          url: url + route,
          method,
          headers,
          contentType: body === undefined ? undefined : "application/json",
          body: body === undefined ? undefined : JSON.stringify(body),
          throw: false,
        }),
        signal,
      );
    } catch (error) {
      if (signal.aborted || isAbortError(error)) throw error;
      this.gate.forget(); // whoever answers next proves itself again
      throw new SidecarUnreachableError(url, error); // refused, wrong host
    }
    if (response.status === 401) throw new SidecarAuthError(url);
    if (response.status < 200 || response.status >= 300) {
      throw httpErrorOf(response.status, "", response.text, headerOf(response.headers, "retry-after"));
    }
    return response.status === 204 ? "" : response.text;
  }

  private async send(
    method: string,
    route: string,
    body: unknown,
    options: { signal?: AbortSignal },
    accept: string,
    /** Where, with which token (already admitted); absent: the current URL, admitted here. */
    to: { url: string; token: string } | null = null,
  ): Promise<Response> {
    const url = to?.url ?? this.url;
    const token = to !== null ? to.token : await this.admitted(url, options.signal);
    const headers: Record<string, string> = { Accept: accept };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      const fetchImpl = this.fetchImpl ?? ((input: string, init: RequestInit) => window.fetch(input, init));
      response = await fetchImpl(url + route, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted || isAbortError(error)) throw error;
      // A transport of its own (the sealed remote one, `remote/transport.ts`) says what failed.
      if (error instanceof SidecarError) throw error;
      this.gate.forget(); // whoever answers next proves itself again
      throw new SidecarUnreachableError(url, error); // refused, wrong host, or blocked by CORS
    }
    if (response.status === 401) {
      await response.body?.cancel().catch(() => undefined);
      throw new SidecarAuthError(url);
    }
    if (!response.ok) throw await httpError(response);
    return response;
  }
}

/** A `SidecarHttpError` with the sidecar's `{code, message}`, or FastAPI's `detail`. */
async function httpError(response: Response): Promise<SidecarHttpError> {
  const text = await response.text().catch(() => "");
  return httpErrorOf(response.status, response.statusText, text, response.headers.get("retry-after"));
}

/** A header of `requestUrl`'s answer, whose names may come in any case. */
function headerOf(headers: Record<string, string> | undefined, name: string): string | null {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name) return value;
  return null;
}

/** `Retry-After` as whole seconds (the sidecar sends seconds; an HTTP date is ignored). */
function retryAfterOf(value: string | null): number | null {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return null;
  return Number(value.trim());
}

function httpErrorOf(status: number, statusText: string, text: string, retryAfter: string | null = null): SidecarHttpError {
  let body: unknown = text === "" ? null : text;
  let detail = statusText;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // not JSON: keep the text (or nothing)
  }
  let code = "";
  if (isRecord(body)) {
    if (typeof body.code === "string") code = body.code;
    const raw = typeof body.message === "string" ? body.message : (body.detail ?? body.error);
    if (typeof raw === "string") detail = raw;
    else if (Array.isArray(raw)) detail = raw.map((item) => (isRecord(item) ? textOf(item.msg) : textOf(item))).join("; ");
  } else if (typeof body === "string" && body) {
    detail = body.slice(0, 300);
  }
  return new SidecarHttpError(status, detail, body, code, retryAfterOf(retryAfter));
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `promise`, or the signal's abort reason if it aborts first (`promise` then runs on, unheard). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort = () => undefined as void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
