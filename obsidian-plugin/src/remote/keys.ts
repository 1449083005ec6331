/**
 * Key derivation of the remote protocol (docs/remote.md, the sidecar's `remote/keys.py`):
 * HKDF-SHA512 (RFC 5869, @noble/hashes) with this protocol's labels. Every key used after
 * pairing comes from the one 32-byte device key through these functions.
 */
import { hkdf as nobleHkdf } from "@noble/hashes/hkdf.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concatBytes, utf8ToBytes } from "@noble/hashes/utils.js";

export const KEY_BYTES = 32;
export const DEVICE_KEY_INFO = "vault-rag device key v1";
export const PAIR_REPLY_INFO = "vault-rag pairing reply v1";
export const REQUEST_INFO = "vault-rag request v1";
export const RESPONSE_INFO = "vault-rag response v1";

/** HKDF-SHA512 without a salt (the RFC's default: a block of zeros), as the sidecar does. */
export function hkdf(ikm: Uint8Array, info: Uint8Array | string, length = KEY_BYTES): Uint8Array {
  return nobleHkdf(sha512, ikm, undefined, typeof info === "string" ? utf8ToBytes(info) : info, length);
}

/** The long-term key of a paired device, from the PAKE's shared secret Ke. */
export function deviceKey(ke: Uint8Array): Uint8Array {
  return hkdf(ke, DEVICE_KEY_INFO);
}

/** Seals the sidecar's answer to `pair/finish`. */
export function pairReplyKey(ke: Uint8Array): Uint8Array {
  return hkdf(ke, PAIR_REPLY_INFO);
}

export function requestKey(device: Uint8Array): Uint8Array {
  return hkdf(device, REQUEST_INFO);
}

/** One key per answered request: the response label and the request's counter. */
export function responseKey(device: Uint8Array, counter: number): Uint8Array {
  return hkdf(device, concatBytes(utf8ToBytes(RESPONSE_INFO), u64be(counter)));
}

/** A counter as 8 bytes, big-endian (counters stay below 2^53). */
export function u64be(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a counter: ${value}`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), false);
  return out;
}
