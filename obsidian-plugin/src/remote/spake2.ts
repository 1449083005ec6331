/**
 * SPAKE2 (RFC 9382) over edwards25519 with SHA-512, HKDF-SHA512 and HMAC-SHA512: the device's
 * side (A) of pairing from a one-time code that never crosses the wire. The same computation as
 * the sidecar's `remote/spake2.py`, byte for byte (checked by `tests/remoteVectors.test.ts`
 * against `shared-schemas/fixtures/remote-vectors.json`); group operations from @noble/curves.
 *
 *     w  = SHA-512("vault-rag pairing code v1" ‖ 0x00 ‖ code digits) mod L
 *     pA = x·P + w·M                  K = 8·x·(pB − w·N)
 *     TT = len(A)‖A ‖ len(B)‖B ‖ len(pA)‖pA ‖ len(pB)‖pB ‖ len(K)‖K ‖ len(w)‖w   (len: u64 LE)
 *     Ke ‖ Ka = SHA-512(TT);  KcA ‖ KcB = HKDF(Ka, "ConfirmationKeys" ‖ "vault-rag pairing v1", 64)
 *     cA = HMAC-SHA512(KcA, TT),  cB = HMAC-SHA512(KcB, TT)
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, equalBytes, numberToBytesLE } from "@noble/curves/utils.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concatBytes, hexToBytes, randomBytes, utf8ToBytes } from "@noble/hashes/utils.js";

import { hkdf } from "./keys";

const Point = ed25519.Point;
type EdPoint = ReturnType<typeof Point.fromBytes>;

/** RFC 9382, section 6: edwards25519's M and N. */
export const M_HEX = "d048032c6ea0b6d697ddc2e86bda85a33adac920f1bf18e1b0c6d166a5cecdaf";
export const N_HEX = "d3bfb518f44f3430f29d0c92af503865a1ed3281dc69b35dd868ba85f886c4ab";
/** The prime order of the subgroup. */
export const L = Point.Fn.ORDER;
export const CODE_CONTEXT = "vault-rag pairing code v1\u0000";
export const CONFIRMATION_AAD = "vault-rag pairing v1";
const COFACTOR = 8n;

/** A point or scalar that must not be used: the exchange is refused. */
export class PakeError extends Error {
  override name = "PakeError";
}

/** A received (or constant) point: canonical, on the curve, in the prime-order subgroup, not of
 * small order — what libsodium's `crypto_core_ed25519_is_valid_point` checks. */
export function checkedPoint(bytes: Uint8Array): EdPoint {
  if (bytes.length !== 32) throw new PakeError("a point must be 32 bytes");
  let point: EdPoint;
  try {
    point = Point.fromBytes(bytes, false);
    point.assertValidity();
  } catch {
    throw new PakeError("not a point of edwards25519");
  }
  if (point.is0() || point.isSmallOrder() || !point.isTorsionFree()) {
    throw new PakeError("not a point of the prime-order subgroup");
  }
  return point;
}

const M = checkedPoint(hexToBytes(M_HEX));
const N = checkedPoint(hexToBytes(N_HEX));

/** The code's digits only, so "1234-5678" and "12345678" agree. */
export function normalizeCode(code: string): string {
  return code.replace(/[^0-9]/g, "");
}

/** w from the code, as a scalar. */
export function passwordScalar(code: string): bigint {
  return bytesToNumberLE(sha512(utf8ToBytes(CODE_CONTEXT + normalizeCode(code)))) % L;
}

/** x: 64 random bytes reduced mod L, never zero. */
export function randomScalar(): bigint {
  for (;;) {
    const scalar = bytesToNumberLE(randomBytes(64)) % L;
    if (scalar !== 0n) return scalar;
  }
}

export function scalarBytes(scalar: bigint): Uint8Array {
  return numberToBytesLE(scalar, 32);
}

function lengthPrefixed(value: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + value.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(value.length), true);
  out.set(value, 8);
  return out;
}

export function transcript(idA: Uint8Array, idB: Uint8Array, pA: Uint8Array, pB: Uint8Array, k: Uint8Array, w: Uint8Array): Uint8Array {
  return concatBytes(...[idA, idB, pA, pB, k, w].map(lengthPrefixed));
}

/** What both sides derive from the transcript. */
export interface PakeKeys {
  tt: Uint8Array;
  /** The shared secret; the device key is derived from it. */
  ke: Uint8Array;
  /** cA: what the device sends, the sidecar checks. */
  confirmA: Uint8Array;
  /** cB: what the sidecar sends, the device checks. */
  confirmB: Uint8Array;
}

export function derive(tt: Uint8Array): PakeKeys {
  const digest = sha512(tt);
  const ke = digest.slice(0, 32);
  const kc = hkdf(digest.slice(32), utf8ToBytes("ConfirmationKeys" + CONFIRMATION_AAD), 64);
  return {
    tt,
    ke,
    confirmA: hmac(sha512, kc.slice(0, 32), tt),
    confirmB: hmac(sha512, kc.slice(32), tt),
  };
}

/** Constant-time comparison of two byte strings. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && equalBytes(a, b);
}

/** The device's side: `start()` gives pA to send; `finish(serverId, pB)` the keys (then check
 * the sidecar's cB against `confirmB` before sending `confirmA`). */
export class PakeDevice {
  readonly w: bigint;
  readonly idA: Uint8Array;

  constructor(
    name: string,
    code: string,
    private readonly x: bigint = randomScalar(),
  ) {
    if (x <= 0n || x >= L) throw new PakeError("x must be in [1, L)");
    this.idA = utf8ToBytes(name);
    this.w = passwordScalar(code);
    if (this.w === 0n) throw new PakeError("this code gives a zero scalar");
  }

  start(): Uint8Array {
    return Point.BASE.multiply(this.x).add(M.multiply(this.w)).toBytes();
  }

  /** The shared point K = 8·x·(pB − w·N). */
  sharedPoint(pB: Uint8Array): Uint8Array {
    const unblinded = checkedPoint(pB).subtract(N.multiply(this.w));
    if (unblinded.is0() || unblinded.isSmallOrder() || !unblinded.isTorsionFree()) {
      throw new PakeError("the peer's share unblinds to an invalid point");
    }
    const k = unblinded.multiply(this.x).multiplyUnsafe(COFACTOR);
    if (k.is0()) throw new PakeError("the shared point is the identity");
    return k.toBytes();
  }

  finish(serverId: string, pB: Uint8Array): PakeKeys {
    const k = this.sharedPoint(pB);
    return derive(transcript(this.idA, utf8ToBytes(serverId), this.start(), pB, k, scalarBytes(this.w)));
  }
}

/** The sidecar's side (B), for tests: pB and the keys from pA. */
export function respond(idA: string, idB: string, w: bigint, pA: Uint8Array, y: bigint = randomScalar()): { pB: Uint8Array; keys: PakeKeys } {
  const pB = Point.BASE.multiply(y).add(N.multiply(w)).toBytes();
  const unblinded = checkedPoint(pA).subtract(M.multiply(w));
  if (unblinded.is0() || !unblinded.isTorsionFree()) throw new PakeError("the peer's share unblinds to an invalid point");
  const k = unblinded.multiply(y).multiplyUnsafe(COFACTOR).toBytes();
  return { pB, keys: derive(transcript(utf8ToBytes(idA), utf8ToBytes(idB), pA, pB, k, scalarBytes(w))) };
}
