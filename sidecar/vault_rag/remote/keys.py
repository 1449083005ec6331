"""Key derivation: HKDF-SHA512 (RFC 5869, `cryptography`'s) with this protocol's labels, so the
TypeScript side (`@noble/hashes/hkdf`) derives the same bytes. Every key the protocol uses
after pairing comes from one 32-byte device key through these functions."""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_BYTES = 32
DEVICE_KEY_INFO = b"vault-rag device key v1"
PAIR_REPLY_INFO = b"vault-rag pairing reply v1"
REQUEST_INFO = b"vault-rag request v1"
RESPONSE_INFO = b"vault-rag response v1"


def hkdf(ikm: bytes, info: bytes, length: int = KEY_BYTES, salt: bytes | None = None) -> bytes:
    """HKDF-SHA512; `salt` None is the RFC's default (a block of zeros)."""
    return HKDF(algorithm=hashes.SHA512(), length=length, salt=salt, info=info).derive(ikm)


def device_key(ke: bytes) -> bytes:
    """The long-term key of a paired device, from the PAKE's shared secret Ke."""
    return hkdf(ke, DEVICE_KEY_INFO)


def pair_reply_key(ke: bytes) -> bytes:
    """Seals the server's answer to `pair/finish` (the device id and role)."""
    return hkdf(ke, PAIR_REPLY_INFO)


def request_key(device: bytes) -> bytes:
    return hkdf(device, REQUEST_INFO)


def response_key(device: bytes, counter: int) -> bytes:
    """One key per answered request: the response label and the request's counter."""
    return hkdf(device, RESPONSE_INFO + counter.to_bytes(8, "big"))
