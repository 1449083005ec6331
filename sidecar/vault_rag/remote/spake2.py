"""SPAKE2 (RFC 9382) over edwards25519 with SHA-512, HKDF-SHA512 and HMAC-SHA512: the pairing
of another device from a one-time code that never crosses the wire.

The group operations are libsodium's (PyNaCl's `nacl.bindings`), on RFC 8032 point encodings;
the TypeScript side reproduces them with @noble/curves' `ed25519.Point`. Roles: A is the device
(its name is idA), B is this sidecar (its server id is idB).

    w  = SHA-512("vault-rag pairing code v1" || 0x00 || code digits) mod L
    pA = x·P + w·M          (A → B)
    pB = y·P + w·N          (B → A)
    K  = h·x·(pB − w·N)  =  h·y·(pA − w·M)      (h = 8)
    TT = len(idA)‖idA ‖ len(idB)‖idB ‖ len(pA)‖pA ‖ len(pB)‖pB ‖ len(K)‖K ‖ len(w)‖w
         (len: 8 bytes little-endian; w: its 32-byte little-endian scalar encoding)
    Ke ‖ Ka = SHA-512(TT)                       (32 bytes each)
    KcA ‖ KcB = HKDF-SHA512(salt=nil, ikm=Ka, info="ConfirmationKeys" ‖ AAD, 64 bytes)
    cA = HMAC-SHA512(KcA, TT),  cB = HMAC-SHA512(KcB, TT)

M and N are the RFC's edwards25519 constants (section 6); `check_constants` verifies that they
decode and lie in the prime-order subgroup. Every received point is checked the same way
(`crypto_core_ed25519_is_valid_point`: canonical, on the curve, in the main subgroup, not of
small order) before use.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass

from nacl import bindings as sodium

from vault_rag.remote.keys import hkdf

# RFC 9382, section 6: edwards25519's M and N (seeds "edwards25519 point generation seed (M)"
# and "(N)").
M = bytes.fromhex("d048032c6ea0b6d697ddc2e86bda85a33adac920f1bf18e1b0c6d166a5cecdaf")
N = bytes.fromhex("d3bfb518f44f3430f29d0c92af503865a1ed3281dc69b35dd868ba85f886c4ab")
L = 2**252 + 27742317777372353535851937790883648493  # the prime order of the subgroup
COFACTOR = 8
CODE_CONTEXT = b"vault-rag pairing code v1\x00"
AAD = b"vault-rag pairing v1"
SCALAR_BYTES = 32
POINT_BYTES = 32


class PakeError(ValueError):
    """A point or scalar that must not be used: the exchange is refused."""


def check_constants() -> None:
    """M and N decode and lie in the prime-order subgroup (raises `PakeError` otherwise)."""
    for name, point in (("M", M), ("N", N)):
        if not sodium.crypto_core_ed25519_is_valid_point(point):
            raise PakeError(f"{name} is not a point of the prime-order subgroup")


def password_scalar(code: str) -> bytes:
    """w from the code: its digits only (so "1234-5678" and "12345678" agree), hashed with
    SHA-512 and reduced mod L. 32 bytes little-endian."""
    digits = normalize_code(code)
    wide = hashlib.sha512(CODE_CONTEXT + digits.encode("ascii")).digest()
    return bytes(sodium.crypto_core_ed25519_scalar_reduce(wide))


def normalize_code(code: str) -> str:
    return "".join(ch for ch in code if ch.isascii() and ch.isdigit())


def random_scalar() -> bytes:
    """x or y: 64 random bytes reduced mod L (bias below 2^-250), never zero."""
    while True:
        scalar = bytes(sodium.crypto_core_ed25519_scalar_reduce(os.urandom(64)))
        if any(scalar):
            return scalar


def _mul(scalar: bytes, point: bytes) -> bytes:
    try:
        return bytes(sodium.crypto_scalarmult_ed25519_noclamp(scalar, point))
    except Exception as exc:  # libsodium refuses the identity and invalid points
        raise PakeError("invalid point or scalar") from exc


def _checked(point: bytes) -> bytes:
    if len(point) != POINT_BYTES or not sodium.crypto_core_ed25519_is_valid_point(point):
        raise PakeError("the peer's share is not a point of the prime-order subgroup")
    return point


def _len(value: bytes) -> bytes:
    return len(value).to_bytes(8, "little") + value


def share(scalar: bytes, w: bytes, blind: bytes) -> bytes:
    """scalar·P + w·blind (pA with x and M, pB with y and N)."""
    base = bytes(sodium.crypto_scalarmult_ed25519_base_noclamp(scalar))
    return bytes(sodium.crypto_core_ed25519_add(base, _mul(w, blind)))


def shared_point(scalar: bytes, w: bytes, peer: bytes, peer_blind: bytes) -> bytes:
    """K = h·scalar·(peer − w·peer_blind)."""
    unblinded = bytes(sodium.crypto_core_ed25519_sub(_checked(peer), _mul(w, peer_blind)))
    if not sodium.crypto_core_ed25519_is_valid_point(unblinded):
        raise PakeError("the peer's share unblinds to an invalid point")
    return _mul(COFACTOR.to_bytes(SCALAR_BYTES, "little"), _mul(scalar, unblinded))


def transcript(id_a: bytes, id_b: bytes, p_a: bytes, p_b: bytes, k: bytes, w: bytes) -> bytes:
    return b"".join(_len(v) for v in (id_a, id_b, p_a, p_b, k, w))


@dataclass(frozen=True)
class Keys:
    """What both sides derive from TT."""

    tt: bytes
    ke: bytes  # the shared secret (the device key is derived from it)
    confirm_a: bytes  # cA: what A sends, B checks
    confirm_b: bytes  # cB: what B sends, A checks


def derive(tt: bytes) -> Keys:
    digest = hashlib.sha512(tt).digest()
    ke, ka = digest[:32], digest[32:]
    kc = hkdf(ka, b"ConfirmationKeys" + AAD, length=64)
    kca, kcb = kc[:32], kc[32:]
    return Keys(
        tt=tt,
        ke=ke,
        confirm_a=hmac.new(kca, tt, hashlib.sha512).digest(),
        confirm_b=hmac.new(kcb, tt, hashlib.sha512).digest(),
    )


def same(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


@dataclass
class Device:
    """A's side (the device): `start()` gives pA; `finish(idB, pB)` the keys (check cB)."""

    id_a: bytes
    w: bytes
    x: bytes

    @classmethod
    def new(cls, name: str, code: str, x: bytes | None = None) -> Device:
        return cls(name.encode("utf-8"), password_scalar(code), x or random_scalar())

    def start(self) -> bytes:
        return share(self.x, self.w, M)

    def finish(self, id_b: bytes, p_b: bytes) -> Keys:
        k = shared_point(self.x, self.w, p_b, N)
        return derive(transcript(self.id_a, id_b, self.start(), p_b, k, self.w))


def respond(
    id_a: bytes, id_b: bytes, w: bytes, p_a: bytes, y: bytes | None = None
) -> tuple[bytes, Keys]:
    """B's side (the sidecar): from A's pA, (pB, keys). The caller sends pB and cB, and accepts
    the device only once A's cA matches `keys.confirm_a`."""
    y = y or random_scalar()
    p_b = share(y, w, N)
    k = shared_point(y, w, p_a, M)
    return p_b, derive(transcript(id_a, id_b, p_a, p_b, k, w))
