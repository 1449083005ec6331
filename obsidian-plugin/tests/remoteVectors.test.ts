/**
 * The sealed remote protocol (`src/remote/`) against the vectors the sidecar's own test checks
 * (shared-schemas/fixtures/remote-vectors.json, tests/test_remote_protocol.py): the same x, y,
 * code and nonces give the same bytes, or this device could not pair with its desktop. Then the
 * refusals: tampered, truncated, reordered, replayed and cut messages never open.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { bytesToNumberLE } from "@noble/curves/utils.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { describe, expect, it } from "vitest";

import {
  EnvelopeError,
  FrameReader,
  openPairReply,
  openRequest,
  requestAad,
  sealFrame,
  sealPairReply,
  sealRequest,
  type SealedRequest,
  VERSION,
} from "../src/remote/envelope";
import { DEVICE_KEY_INFO, deviceKey, PAIR_REPLY_INFO, pairReplyKey, REQUEST_INFO, requestKey, RESPONSE_INFO, responseKey } from "../src/remote/keys";
import {
  checkedPoint,
  CODE_CONTEXT,
  CONFIRMATION_AAD,
  derive,
  M_HEX,
  N_HEX,
  PakeDevice,
  PakeError,
  passwordScalar,
  respond,
  sameBytes,
  scalarBytes,
} from "../src/remote/spake2";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../shared-schemas/fixtures/remote-vectors.json");

interface Frame {
  index: number;
  final: boolean;
  payload_hex: string;
  nonce: string;
  frame: string;
}
const v = JSON.parse(readFileSync(FIXTURE, "utf8")) as {
  constants: { M: string; N: string; code_context: string; confirmation_aad: string; labels: Record<string, string>; version: number };
  pake: Record<string, string>;
  pair_reply: { pair_id: string; message: Record<string, string>; nonce: string; key: string; sealed: string };
  request: { device_id: string; counter: number; message: SealedRequest; plaintext_hex: string; nonce: string; key: string; aad: string; envelope: string };
  response: { device_id: string; counter: number; key: string; frames: Frame[]; stream: string };
};
const p = v.pake as Record<"code" | "id_a" | "id_b" | "x" | "y" | "w" | "pA" | "pB" | "K" | "TT" | "TT_sha512" | "Ke" | "confirm_a" | "confirm_b" | "device_key", string>;
const hex = (bytes: Uint8Array) => bytesToHex(bytes);
const scalar = (h: string) => bytesToNumberLE(hexToBytes(h));
const key = hexToBytes(p.device_key);
const stream = hexToBytes(v.response.stream);

function readAll(reader: FrameReader, bytes: Uint8Array, step = bytes.length) {
  const events = [];
  for (let at = 0; at < bytes.length; at += step) events.push(...reader.feed(bytes.slice(at, at + step)));
  return events;
}

describe("the shared remote vectors", () => {
  it("uses the fixture's constants and labels", () => {
    expect([M_HEX, N_HEX, CODE_CONTEXT, CONFIRMATION_AAD, VERSION]).toEqual([
      v.constants.M,
      v.constants.N,
      v.constants.code_context,
      v.constants.confirmation_aad,
      v.constants.version,
    ]);
    expect(v.constants.labels).toEqual({ device_key: DEVICE_KEY_INFO, pair_reply: PAIR_REPLY_INFO, request: REQUEST_INFO, response: RESPONSE_INFO });
  });

  it("derives w, pA, K, the transcript, Ke, cA, cB and the device key (device side)", () => {
    expect(hex(scalarBytes(passwordScalar(p.code)))).toBe(p.w);
    expect(passwordScalar("12345678")).toBe(passwordScalar(p.code));
    const device = new PakeDevice(p.id_a, p.code, scalar(p.x));
    expect(hex(device.start())).toBe(p.pA);
    expect(hex(device.sharedPoint(hexToBytes(p.pB)))).toBe(p.K);
    const keys = device.finish(p.id_b, hexToBytes(p.pB));
    expect(hex(keys.tt)).toBe(p.TT);
    expect(hex(keys.ke)).toBe(p.Ke);
    expect(p.TT_sha512.startsWith(p.Ke)).toBe(true);
    expect(hex(keys.confirmA)).toBe(p.confirm_a);
    expect(hex(keys.confirmB)).toBe(p.confirm_b);
    expect(hex(deviceKey(keys.ke))).toBe(p.device_key);
  });

  it("agrees with the sidecar's side (pB from y)", () => {
    const device = new PakeDevice(p.id_a, p.code, scalar(p.x));
    const { pB, keys } = respond(p.id_a, p.id_b, device.w, device.start(), scalar(p.y));
    expect(hex(pB)).toBe(p.pB);
    expect(hex(keys.ke)).toBe(p.Ke);
    expect(sameBytes(keys.confirmB, device.finish(p.id_b, pB).confirmB)).toBe(true);
  });

  it("opens and reproduces the sealed pairing reply", () => {
    const ke = hexToBytes(p.Ke);
    expect(hex(pairReplyKey(ke))).toBe(v.pair_reply.key);
    expect(openPairReply(ke, v.pair_reply.pair_id, hexToBytes(v.pair_reply.sealed))).toEqual(v.pair_reply.message);
    expect(hex(sealPairReply(ke, v.pair_reply.pair_id, v.pair_reply.message, hexToBytes(v.pair_reply.nonce)))).toBe(v.pair_reply.sealed);
  });

  it("seals the request byte for byte", () => {
    const r = v.request;
    expect(hex(requestKey(key))).toBe(r.key);
    expect(hex(requestAad(r.device_id, r.counter))).toBe(r.aad);
    expect(hex(new TextEncoder().encode(JSON.stringify(r.message)))).toBe(r.plaintext_hex);
    expect(hex(sealRequest(key, r.device_id, r.counter, r.message, hexToBytes(r.nonce)))).toBe(r.envelope);
    expect(openRequest(key, r.device_id, hexToBytes(r.envelope))).toEqual({ counter: r.counter, message: r.message });
  });

  it("seals each response frame byte for byte and reads the stream, whole or a byte at a time", () => {
    const r = v.response;
    const rk = responseKey(key, r.counter);
    expect(hex(rk)).toBe(r.key);
    for (const f of r.frames) {
      expect(hex(sealFrame(rk, r.device_id, r.counter, f.index, hexToBytes(f.payload_hex), f.final, hexToBytes(f.nonce)))).toBe(f.frame);
    }
    for (const step of [stream.length, 1, 7]) {
      const reader = new FrameReader(key, r.device_id, r.counter);
      const events = readAll(reader, stream, step);
      expect(events).toEqual([
        { kind: "head", head: { status: 200, content_type: "text/event-stream" } },
        { kind: "body", bytes: hexToBytes(r.frames[1]!.payload_hex) },
        { kind: "end" },
      ]);
      expect(reader.done).toBe(true);
    }
  });
});

describe("refusals", () => {
  const r = v.response;
  const frames = r.frames.map((f) => hexToBytes(f.frame));
  const cat = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  };

  it("refuses a tampered frame, wherever the bit flips", () => {
    for (const at of [4, 4 + 24, stream.length - 1]) {
      const bad = stream.slice();
      bad[at]! ^= 0x01;
      expect(() => readAll(new FrameReader(key, r.device_id, r.counter), bad)).toThrow(EnvelopeError);
    }
  });

  it("refuses reordered, dropped and duplicated frames", () => {
    const open = (bytes: Uint8Array) => readAll(new FrameReader(key, r.device_id, r.counter), bytes);
    expect(() => open(cat(frames[1]!, frames[0]!, frames[2]!))).toThrow(EnvelopeError);
    expect(() => open(cat(frames[0]!, frames[2]!))).toThrow(EnvelopeError); // the body dropped
    expect(() => open(cat(frames[0]!, frames[0]!))).toThrow(EnvelopeError);
    expect(() => open(cat(frames[2]!))).toThrow(EnvelopeError); // final without a head
    expect(() => open(cat(stream, frames[2]!))).toThrow(EnvelopeError); // after the final frame
  });

  it("refuses a replayed response (another counter's key) and another device's", () => {
    expect(() => readAll(new FrameReader(key, r.device_id, r.counter + 1), stream)).toThrow(EnvelopeError);
    expect(() => readAll(new FrameReader(key, "dev-someone-else", r.counter), stream)).toThrow(EnvelopeError);
    expect(() => readAll(new FrameReader(hexToBytes(p.Ke), r.device_id, r.counter), stream)).toThrow(EnvelopeError);
  });

  it("leaves a truncated stream unfinished, and refuses impossible frame lengths", () => {
    const reader = new FrameReader(key, r.device_id, r.counter);
    const events = readAll(reader, stream.slice(0, stream.length - 5));
    expect(events.map((e) => e.kind)).toEqual(["head", "body"]);
    expect(reader.done).toBe(false);
    const cut = new FrameReader(key, r.device_id, r.counter);
    cut.feed(cat(frames[0]!, frames[1]!));
    expect(cut.done).toBe(false);
    expect(() => new FrameReader(key, r.device_id, r.counter).feed(new Uint8Array([0, 0, 0, 3, 1, 2, 3]))).toThrow(EnvelopeError);
    expect(() => new FrameReader(key, r.device_id, r.counter).feed(new Uint8Array([0xff, 0, 0, 0]))).toThrow(EnvelopeError);
  });

  it("refuses a tampered, truncated or misaddressed request and pairing reply", () => {
    const envelope = hexToBytes(v.request.envelope);
    const bad = envelope.slice();
    bad[bad.length - 1]! ^= 0x80;
    expect(() => openRequest(key, v.request.device_id, bad)).toThrow(EnvelopeError);
    expect(() => openRequest(key, v.request.device_id, envelope.slice(0, 40))).toThrow(EnvelopeError);
    const recounted = envelope.slice();
    recounted[8] = 8; // the counter is in the AAD
    expect(() => openRequest(key, v.request.device_id, recounted)).toThrow(EnvelopeError);
    expect(() => openRequest(key, "dev-other", envelope)).toThrow(EnvelopeError);
    const ke = hexToBytes(p.Ke);
    const sealed = hexToBytes(v.pair_reply.sealed);
    expect(() => openPairReply(ke, "pair-0002", sealed)).toThrow(EnvelopeError);
    expect(() => openPairReply(ke, v.pair_reply.pair_id, sealed.slice(0, 30))).toThrow(EnvelopeError);
  });

  it("gives a fresh nonce to each sealed request, so equal requests never look equal", () => {
    const a = sealRequest(key, v.request.device_id, 9, v.request.message);
    const b = sealRequest(key, v.request.device_id, 9, v.request.message);
    expect(hex(a)).not.toBe(hex(b));
  });

  it("refuses a wrong code: the confirmations differ", () => {
    const device = new PakeDevice(p.id_a, "1234-5679", scalar(p.x));
    const keys = device.finish(p.id_b, hexToBytes(p.pB));
    expect(sameBytes(keys.confirmB, hexToBytes(p.confirm_b))).toBe(false);
  });

  it("refuses invalid peer shares: identity, small order, non-canonical, off-curve", () => {
    const device = new PakeDevice(p.id_a, p.code, scalar(p.x));
    const identity = new Uint8Array(32);
    identity[0] = 1;
    const smallOrder = hexToBytes("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"); // order 2
    const nonCanonical = hexToBytes("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
    const torsioned = hexToBytes("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"); // order 8
    for (const bad of [identity, smallOrder, nonCanonical, torsioned, new Uint8Array(31), new Uint8Array(32).fill(0xff)]) {
      expect(() => device.finish(p.id_b, bad)).toThrow(PakeError);
    }
    expect(() => checkedPoint(hexToBytes(M_HEX))).not.toThrow();
    expect(derive(new Uint8Array(1)).ke.length).toBe(32);
  });
});
