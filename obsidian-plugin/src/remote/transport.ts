/**
 * The sealed transport to a desktop's remote listener, as a `fetch` for `SidecarClient`: the
 * client builds the same requests it sends to the loopback sidecar (`/v1/ask`, `/v1/search`…),
 * and this seals each one (`envelope.ts`), posts it to `POST /remote/v1/call` and hands back a
 * `Response` whose status, content type and body are the opened frames — streamed as they
 * arrive when the platform's `fetch` can stream from the desktop, else buffered whole through
 * Obsidian's `requestUrl` (no CORS there). So the ask pane, history, 👍/👎 and the related view
 * work unchanged on a phone.
 *
 * Failures are the client's own error classes: nothing answers, or no head frame in time (a
 * sleeping desktop never hangs the pane) → `SidecarUnreachableError`; a streamed answer quiet
 * for too long → `SidecarTimeoutError`; the device
 * refused (revoked, unknown, its messages do not authenticate) → `RemoteAuthError`; an answer
 * that does not open, or stops before its final frame → `SidecarProtocolError` / the stream errors.
 */
import { SidecarAuthError, SidecarProtocolError, SidecarTimeoutError, SidecarUnreachableError } from "../client/errors";
import { EnvelopeError, FrameReader, type FrameEvent, sealRequest } from "./envelope";
import type { RemoteDevice } from "./pairing";

/** The desktop refused this device: revoked, unknown, or its messages do not authenticate. */
export class RemoteAuthError extends SidecarAuthError {
  override name = "RemoteAuthError";

  constructor(
    url: string,
    readonly code: string,
  ) {
    super(url);
    this.message =
      code === "stale"
        ? `The desktop at ${url} refused this device's messages: this device's clock is more than 5 minutes off. Set the date and time, then try again.`
        : `The desktop at ${url} no longer accepts this device (revoked, or paired again elsewhere). Pair again with a new code from the desktop.`;
  }
}

/** What answered the sealed POST: the outer status and the body, as a stream or whole. */
export interface PostResult {
  status: number;
  /** The outer response's headers (lower-case names), for Retry-After. */
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array> | Uint8Array;
}

/** POST these bytes; rejects when nothing answers (and with the signal's reason on abort). */
export type BytesPost = (url: string, body: Uint8Array, headers: Record<string, string>, signal: AbortSignal) => Promise<PostResult>;

export interface RemoteTransportDeps {
  /** The paired device now; null: not paired (every call fails as refused). */
  device(): RemoteDevice | null;
  /** The next counter: strictly greater than every one used before by this device. */
  nextCounter(): number;
  /** Streaming POST (the window's `fetch`); null where the platform cannot reach the desktop with it. */
  stream: BytesPost | null;
  /** Buffered POST (Obsidian's `requestUrl`). */
  buffered: BytesPost;
  /** Unix seconds (tests fix it). */
  now?: () => number;
  /** Milliseconds until the answer's head frame (connect, seal, the sidecar's first byte). */
  headTimeoutMs?: number;
  /** Milliseconds a streamed answer may stay quiet before it counts as cut (the desktop slept). */
  idleTimeoutMs?: number;
}

/** Quick routes (the status poll, health, lists): a desktop that does not answer these within
 * this long is taken for asleep or gone. */
export const QUICK_TIMEOUT_MS = 8_000;
/** Everything else (search, ask: the head frame comes once the sidecar starts its answer). */
export const HEAD_TIMEOUT_MS = 30_000;
const QUICK = /^\/v1\/(status|health|collections|threads)(\/|$)/;
export const IDLE_TIMEOUT_MS = 120_000;

/** Routes whose answers stream (the ask pane's SSE): over `fetch` when the platform allows. */
function wantsStream(init: RequestInit): boolean {
  const headers = new Headers(init.headers);
  return (headers.get("accept") ?? "").includes("text/event-stream");
}

/** A session's first counter, never reused even when the stored one went back (a restored or
 * synced `data.json`): at least the clock in microseconds, and more than the last one. */
export function nextCounterAfter(last: number, nowMs: number): number {
  return Math.max(last + 1, Math.floor(nowMs) * 1000);
}

/** A `fetch` (`FetchLike` of `SidecarClient`) over the sealed remote protocol. */
export function remoteFetch(deps: RemoteTransportDeps): (input: string, init: RequestInit) => Promise<Response> {
  /** null: not known yet; false: `fetch` failed where `requestUrl` reached the desktop. */
  let streamWorks: boolean | null = deps.stream === null ? false : null;
  return async (input, init) => {
    const device = deps.device();
    const target = new URL(input);
    if (device === null) throw new RemoteAuthError(target.origin, "not_paired");
    const streaming = wantsStream(init) && streamWorks !== false && deps.stream !== null;
    try {
      return await call(device, target, init, streaming ? deps.stream! : deps.buffered);
    } catch (error) {
      if (!streaming || !(error instanceof SidecarUnreachableError) || init.signal?.aborted) throw error;
      // `fetch` could not reach the desktop (a WebView's CORS or mixed-content rules): try
      // `requestUrl` once, with a new counter; if that works, stop streaming from here on.
      const answer = await call(device, target, init, deps.buffered);
      streamWorks = false;
      return answer;
    }
  };

  async function call(device: RemoteDevice, target: URL, init: RequestInit, post: BytesPost): Promise<Response> {
    const counter = deps.nextCounter();
    const body = typeof init.body === "string" && init.body !== "" ? (JSON.parse(init.body) as unknown) : null;
    const message = {
      method: (init.method ?? "GET").toUpperCase(),
      path: decodeURI(target.pathname),
      query: target.search.replace(/^\?/, ""),
      body,
      ts: Math.floor(deps.now?.() ?? Date.now() / 1000),
    };
    const sealed = sealRequest(device.key, device.deviceId, counter, message);
    const headTimeout = deps.headTimeoutMs ?? (message.method === "GET" && QUICK.test(message.path) ? QUICK_TIMEOUT_MS : HEAD_TIMEOUT_MS);
    const silent = () => new SidecarUnreachableError(device.url, new Error(`no answer within ${Math.round(headTimeout / 1000)} s (asleep, or off this network?)`));
    const controller = new AbortController();
    const outer = init.signal ?? null;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    else outer?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = window.setTimeout(() => {
      timedOut = true;
      controller.abort(silent());
    }, headTimeout);
    const done = () => {
      window.clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    };
    try {
      const headers = { "Content-Type": "application/octet-stream", "X-Device": device.deviceId };
      let result: PostResult;
      try {
        result = await untilAborted(post(`${device.url}/remote/v1/call`, sealed, headers, controller.signal), controller.signal);
      } catch (error) {
        if (timedOut) throw silent();
        if (outer?.aborted) throw outer.reason;
        throw new SidecarUnreachableError(device.url, error);
      }
      if (result.status !== 200) {
        const text = await bodyText(result.body);
        const code = codeOf(text);
        if (result.status === 401) throw new RemoteAuthError(device.url, code);
        // The listener's own refusals (413, 429, 409 replayed…): the client reads them as HTTP errors.
        return new Response(text, { status: result.status, headers: { "content-type": "application/json", ...pick(result.headers, "retry-after") } });
      }
      const reader = new FrameReader(device.key, device.deviceId, counter);
      const frames = frameSource(result.body, reader);
      const first = await untilAborted(frames.next(), controller.signal).catch((error: unknown) => {
        void frames.return(undefined);
        if (timedOut) throw silent();
        if (outer?.aborted) throw outer.reason;
        throw error;
      });
      window.clearTimeout(timer);
      if (first.done || first.value.kind !== "head") throw new SidecarProtocolError("the desktop's answer has no head frame");
      const head = first.value.head;
      const stream = bodyStream(frames, controller, deps.idleTimeoutMs ?? IDLE_TIMEOUT_MS, device.url);
      const status = head.status === 204 || head.status === 304 ? 200 : head.status; // a Response with a body cannot be 204
      return new Response(stream, { status, headers: { "content-type": head.content_type } });
    } catch (error) {
      if (!(error instanceof Error) || error.name !== "AbortError") controller.abort();
      throw error instanceof EnvelopeError ? new SidecarProtocolError(`the desktop's answer does not authenticate (${error.message}); nothing of it was used`) : error;
    } finally {
      done();
    }
  }
}

/** The frames of a response body, opened in order; throws when the body ends before the final one. */
async function* frameSource(body: ReadableStream<Uint8Array> | Uint8Array, reader: FrameReader): AsyncGenerator<FrameEvent, void, undefined> {
  if (body instanceof Uint8Array) {
    yield* reader.feed(body);
  } else {
    const chunks = body.getReader();
    try {
      for (;;) {
        const { value, done } = await chunks.read();
        if (done) break;
        yield* reader.feed(value);
        if (reader.done) return;
      }
    } finally {
      await chunks.cancel().catch(() => undefined);
      chunks.releaseLock();
    }
  }
  if (!reader.done) throw new SidecarProtocolError("the desktop's answer stopped before its end (the desktop stopped, or this device was revoked)");
}

/** The body frames as a byte stream; an idle gap longer than `idleMs` cuts it. */
function bodyStream(frames: AsyncGenerator<FrameEvent, void, undefined>, controller: AbortController, idleMs: number, url: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(sink) {
      let timer = 0;
      const idle = new Promise<never>((_, reject) => {
        timer = window.setTimeout(() => reject(new SidecarTimeoutError(url, idleMs)), idleMs);
      });
      try {
        for (;;) {
          const next = await Promise.race([frames.next(), idle]);
          if (next.done || next.value.kind === "end") {
            sink.close();
            return;
          }
          if (next.value.kind === "body") {
            sink.enqueue(next.value.bytes);
            return;
          }
        }
      } catch (error) {
        controller.abort();
        void frames.return(undefined);
        sink.error(error instanceof EnvelopeError ? new SidecarProtocolError(`the desktop's answer does not authenticate (${error.message})`) : error);
      } finally {
        window.clearTimeout(timer);
      }
    },
    async cancel() {
      controller.abort();
      await frames.return(undefined);
    },
  });
}

async function bodyText(body: ReadableStream<Uint8Array> | Uint8Array): Promise<string> {
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  return new Response(body).text().catch(() => "");
}

function codeOf(text: string): string {
  try {
    const json = JSON.parse(text) as unknown;
    if (typeof json === "object" && json !== null && typeof (json as { code?: unknown }).code === "string") return (json as { code: string }).code;
  } catch {
    // not JSON
  }
  return "";
}

function pick(headers: Record<string, string>, name: string): Record<string, string> {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return { [name]: value };
  return {};
}

/** `promise`, or the signal's reason once it aborts (the promise runs on, unheard). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort = () => undefined as void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
