/**
 * Sealed messages between this device and the sidecar's remote listener: pure functions, no
 * I/O, byte for byte the sidecar's `remote/envelope.py` (docs/remote.md).
 *
 * Request (`POST /remote/v1/call`, header `X-Device`):
 *   0x01 ‖ counter (8, BE) ‖ nonce (24) ‖ XChaCha20-Poly1305(request key, nonce, JSON, AAD)
 *   AAD = 0x01 ‖ device id (ASCII) ‖ counter (8)
 * Response: frames `length (4, BE) ‖ nonce (24) ‖ ciphertext`, AAD = request AAD ‖ frame
 * index (4, BE) ‖ final (1). Frame 0 is JSON {status, content_type}; then the body as it came;
 * the last frame is empty with the final flag. Anything reordered, dropped, altered or cut off
 * fails to open or leaves the reader without its final frame.
 */
import { xchacha20poly1305 } from "@noble/ciphers/chacha.js";
import { concatBytes, randomBytes, utf8ToBytes } from "@noble/hashes/utils.js";

import { pairReplyKey, requestKey, responseKey, u64be } from "./keys";

export const VERSION = 1;
export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;
export const HEADER_BYTES = 1 + 8 + NONCE_BYTES;
export const FRAME_LENGTH_BYTES = 4;
/** A frame announcing more is damage, not data. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
const PAIR_REPLY_AAD = "vault-rag pairing reply v1";

/** A message that does not open: truncated, altered, for another key, out of order. */
export class EnvelopeError extends Error {
  override name = "EnvelopeError";
}

/** What a device asks: the loopback route, its query string (without `?`), the JSON body. */
export interface SealedRequest {
  method: string;
  path: string;
  query: string;
  body: unknown;
  /** Unix seconds (the sidecar refuses a clock more than 5 minutes off). */
  ts: number;
}

function seal(key: Uint8Array, nonce: Uint8Array, plain: Uint8Array, aad: Uint8Array): Uint8Array {
  return xchacha20poly1305(key, nonce, aad).encrypt(plain);
}

function open(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
  try {
    return xchacha20poly1305(key, nonce, aad).decrypt(sealed);
  } catch {
    throw new EnvelopeError("the message does not authenticate");
  }
}

function asciiBytes(value: string): Uint8Array {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new EnvelopeError("a device id is ASCII");
  return utf8ToBytes(value);
}

function u32be(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, false);
  return out;
}

/** Python's `json.dumps(obj, separators=(",", ":"), ensure_ascii=False)` for JSON values:
 * `JSON.stringify` writes the same bytes (no spaces, non-ASCII as is). */
export function compactJson(value: unknown): Uint8Array {
  return utf8ToBytes(JSON.stringify(value));
}

export function requestAad(deviceId: string, counter: number): Uint8Array {
  return concatBytes(new Uint8Array([VERSION]), asciiBytes(deviceId), u64be(counter));
}

export function sealRequest(
  deviceKey: Uint8Array,
  deviceId: string,
  counter: number,
  message: SealedRequest,
  nonce: Uint8Array = randomBytes(NONCE_BYTES),
): Uint8Array {
  const plain = compactJson({ method: message.method, path: message.path, query: message.query, body: message.body, ts: message.ts });
  const sealed = seal(requestKey(deviceKey), nonce, plain, requestAad(deviceId, counter));
  return concatBytes(new Uint8Array([VERSION]), u64be(counter), nonce, sealed);
}

/** The sidecar's side, for tests: (counter, message) or `EnvelopeError`. */
export function openRequest(deviceKey: Uint8Array, deviceId: string, envelope: Uint8Array): { counter: number; message: unknown } {
  if (envelope.length < HEADER_BYTES + TAG_BYTES || envelope[0] !== VERSION) throw new EnvelopeError("not a sealed request of this version");
  const counter = Number(new DataView(envelope.buffer, envelope.byteOffset + 1, 8).getBigUint64(0, false));
  const plain = open(requestKey(deviceKey), envelope.slice(9, HEADER_BYTES), envelope.slice(HEADER_BYTES), requestAad(deviceId, counter));
  return { counter, message: JSON.parse(new TextDecoder().decode(plain)) as unknown };
}

export function sealPairReply(ke: Uint8Array, pairId: string, message: unknown, nonce: Uint8Array = randomBytes(NONCE_BYTES)): Uint8Array {
  const aad = concatBytes(utf8ToBytes(PAIR_REPLY_AAD), asciiBytes(pairId));
  return concatBytes(nonce, seal(pairReplyKey(ke), nonce, compactJson(message), aad));
}

/** The sidecar's answer to `pair/finish`, opened with Ke: {device_id, name, role, server_id}. */
export function openPairReply(ke: Uint8Array, pairId: string, sealed: Uint8Array): Record<string, unknown> {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new EnvelopeError("the pairing reply is truncated");
  const aad = concatBytes(utf8ToBytes(PAIR_REPLY_AAD), asciiBytes(pairId));
  const plain = open(pairReplyKey(ke), sealed.slice(0, NONCE_BYTES), sealed.slice(NONCE_BYTES), aad);
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    throw new EnvelopeError("the pairing reply is not JSON");
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) throw new EnvelopeError("the pairing reply is not a JSON object");
  return message as Record<string, unknown>;
}

export function frameAad(deviceId: string, counter: number, index: number, final: boolean): Uint8Array {
  return concatBytes(requestAad(deviceId, counter), u32be(index), new Uint8Array([final ? 1 : 0]));
}

/** One response frame (the sidecar's side; for tests). `key` is `responseKey(device key, counter)`. */
export function sealFrame(
  key: Uint8Array,
  deviceId: string,
  counter: number,
  index: number,
  payload: Uint8Array,
  final = false,
  nonce: Uint8Array = randomBytes(NONCE_BYTES),
): Uint8Array {
  const body = concatBytes(nonce, seal(key, nonce, payload, frameAad(deviceId, counter, index, final)));
  return concatBytes(u32be(body.length), body);
}

/** The response's head frame: the loopback app's status and content type. */
export interface ResponseHead {
  status: number;
  content_type: string;
}

export type FrameEvent = { kind: "head"; head: ResponseHead } | { kind: "body"; bytes: Uint8Array } | { kind: "end" };

/**
 * The device's side of a response: `feed(bytes)` returns the frames completed by these bytes —
 * the head once, then body chunks, then `end` for the final frame. Anything that does not open
 * in order throws `EnvelopeError`; `done` tells whether the final frame came.
 */
export class FrameReader {
  private readonly key: Uint8Array;
  private buffer = new Uint8Array(0);
  private index = 0;
  done = false;

  constructor(
    deviceKey: Uint8Array,
    private readonly deviceId: string,
    private readonly counter: number,
  ) {
    this.key = responseKey(deviceKey, counter);
  }

  feed(data: Uint8Array): FrameEvent[] {
    this.buffer = this.buffer.length === 0 ? data.slice() : concatBytes(this.buffer, data);
    const events: FrameEvent[] = [];
    while (this.buffer.length >= FRAME_LENGTH_BYTES) {
      const size = new DataView(this.buffer.buffer, this.buffer.byteOffset, 4).getUint32(0, false);
      if (size < NONCE_BYTES + TAG_BYTES || size > MAX_FRAME_BYTES) throw new EnvelopeError("a response frame of an impossible length");
      if (this.buffer.length < FRAME_LENGTH_BYTES + size) break;
      const body = this.buffer.slice(FRAME_LENGTH_BYTES, FRAME_LENGTH_BYTES + size);
      this.buffer = this.buffer.slice(FRAME_LENGTH_BYTES + size);
      events.push(this.open(body));
    }
    return events;
  }

  private open(body: Uint8Array): FrameEvent {
    if (this.done) throw new EnvelopeError("a response frame after the final one");
    const nonce = body.slice(0, NONCE_BYTES);
    const sealed = body.slice(NONCE_BYTES);
    for (const final of [false, true]) {
      // The flag is authenticated: only one of the two opens.
      let payload: Uint8Array;
      try {
        payload = open(this.key, nonce, sealed, frameAad(this.deviceId, this.counter, this.index, final));
      } catch {
        continue;
      }
      const index = this.index++;
      if (final) {
        if (index === 0) throw new EnvelopeError("a response without its head frame");
        this.done = true;
        return { kind: "end" };
      }
      if (index === 0) return { kind: "head", head: parseHead(payload) };
      return { kind: "body", bytes: payload };
    }
    throw new EnvelopeError("a response frame does not authenticate (altered or out of order)");
  }
}

function parseHead(payload: Uint8Array): ResponseHead {
  let head: unknown;
  try {
    head = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    throw new EnvelopeError("the response head is not JSON");
  }
  if (typeof head !== "object" || head === null) throw new EnvelopeError("the response head is not a JSON object");
  const { status, content_type } = head as Record<string, unknown>;
  if (typeof status !== "number" || !Number.isInteger(status)) throw new EnvelopeError("the response head has no status");
  return { status, content_type: typeof content_type === "string" ? content_type : "application/octet-stream" };
}
