"""Sealed messages between a paired device and the remote listener: pure functions, no I/O.

Request (`POST /remote/v1/call`, header `X-Device: <device id>`, body = the envelope):

    version (1 byte, 0x01) ‖ counter (8 bytes, big-endian) ‖ nonce (24 random bytes)
    ‖ XChaCha20-Poly1305(request_key, nonce, JSON {method, path, query, body, ts},
                         AAD = version ‖ device id (ASCII) ‖ counter)

Response: a stream of frames, each `length (4 bytes, big-endian) ‖ nonce (24 random bytes) ‖
ciphertext`, sealed with `response_key(device key, counter)` and AAD = version ‖ device id ‖
counter ‖ frame index (4 bytes, big-endian) ‖ final flag (1 byte). Frame 0 holds JSON
{status, content_type}; the next frames hold the body as it comes (an answer's SSE events one
by one); the last frame has the final flag and no payload. A reordered, dropped, altered or
cut-off frame fails to open or leaves the stream without its final frame.

The counter is the device's: strictly new per request (`ReplayWindow` on the server).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from nacl import bindings as sodium
from nacl.exceptions import CryptoError

from vault_rag.remote.keys import pair_reply_key, request_key, response_key

VERSION = 1
NONCE_BYTES = 24
TAG_BYTES = 16
HEADER_BYTES = 1 + 8 + NONCE_BYTES
FRAME_LENGTH_BYTES = 4
MAX_FRAME_BYTES = 16 * 1024 * 1024  # a frame announcing more is damage, not data
WINDOW = 64


class EnvelopeError(ValueError):
    """A message that does not open: truncated, altered, for another key, or malformed."""


def _aead_seal(key: bytes, nonce: bytes, plain: bytes, aad: bytes) -> bytes:
    return bytes(sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plain, aad, nonce, key))


def _aead_open(key: bytes, nonce: bytes, sealed: bytes, aad: bytes) -> bytes:
    try:
        return bytes(sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(sealed, aad, nonce, key))
    except CryptoError as exc:
        raise EnvelopeError("the message does not authenticate") from exc


def request_aad(device_id: str, counter: int) -> bytes:
    return bytes([VERSION]) + device_id.encode("ascii") + counter.to_bytes(8, "big")


def seal_request(
    device_key: bytes,
    device_id: str,
    counter: int,
    message: dict[str, Any],
    nonce: bytes | None = None,
) -> bytes:
    nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
    plain = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    sealed = _aead_seal(request_key(device_key), nonce, plain, request_aad(device_id, counter))
    return bytes([VERSION]) + counter.to_bytes(8, "big") + nonce + sealed


def request_counter(envelope: bytes) -> int:
    """The counter of an envelope, read before anything is decrypted (`EnvelopeError` for a
    truncated envelope or another version)."""
    if len(envelope) < HEADER_BYTES + TAG_BYTES or envelope[0] != VERSION:
        raise EnvelopeError("not a sealed request of this version")
    return int.from_bytes(envelope[1:9], "big")


def open_request(device_key: bytes, device_id: str, envelope: bytes) -> tuple[int, dict[str, Any]]:
    """(counter, the request's JSON object), or `EnvelopeError`."""
    counter = request_counter(envelope)
    nonce = envelope[9:HEADER_BYTES]
    aad = request_aad(device_id, counter)
    plain = _aead_open(request_key(device_key), nonce, envelope[HEADER_BYTES:], aad)
    try:
        message = json.loads(plain)
    except ValueError as exc:
        raise EnvelopeError("the sealed request is not JSON") from exc
    if not isinstance(message, dict):
        raise EnvelopeError("the sealed request is not a JSON object")
    return counter, message


def seal_pair_reply(
    ke: bytes, pair_id: str, message: dict[str, Any], nonce: bytes | None = None
) -> bytes:
    """The server's answer to `pair/finish`: nonce ‖ XChaCha20-Poly1305(pair_reply_key(Ke),
    nonce, JSON, AAD = "vault-rag pairing reply v1" ‖ pair id)."""
    nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
    plain = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    aad = b"vault-rag pairing reply v1" + pair_id.encode("ascii")
    return nonce + _aead_seal(pair_reply_key(ke), nonce, plain, aad)


def open_pair_reply(ke: bytes, pair_id: str, sealed: bytes) -> dict[str, Any]:
    aad = b"vault-rag pairing reply v1" + pair_id.encode("ascii")
    plain = _aead_open(pair_reply_key(ke), sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], aad)
    message = json.loads(plain)
    if not isinstance(message, dict):
        raise EnvelopeError("the pairing reply is not a JSON object")
    return message


def frame_aad(device_id: str, counter: int, index: int, final: bool) -> bytes:
    return request_aad(device_id, counter) + index.to_bytes(4, "big") + bytes([int(final)])


def seal_frame(
    key: bytes,
    device_id: str,
    counter: int,
    index: int,
    payload: bytes,
    *,
    final: bool = False,
    nonce: bytes | None = None,
) -> bytes:
    """One response frame; `key` is `response_key(device key, counter)`."""
    nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
    sealed = _aead_seal(key, nonce, payload, frame_aad(device_id, counter, index, final))
    body = nonce + sealed
    return len(body).to_bytes(FRAME_LENGTH_BYTES, "big") + body


def head_payload(status: int, content_type: str) -> bytes:
    return json.dumps({"status": status, "content_type": content_type}).encode("utf-8")


@dataclass
class FrameReader:
    """The device's side of a response: `feed(bytes)` yields ("head", dict) once, then
    ("body", bytes)… and ("end", b"") for the final frame. Anything that does not open in
    order raises `EnvelopeError`; `done` tells whether the final frame came."""

    device_key: bytes
    device_id: str
    counter: int
    index: int = 0
    done: bool = False
    buffer: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        self.key = response_key(self.device_key, self.counter)

    def feed(self, data: bytes) -> Iterator[tuple[str, Any]]:
        self.buffer.extend(data)
        while len(self.buffer) >= FRAME_LENGTH_BYTES:
            size = int.from_bytes(self.buffer[:FRAME_LENGTH_BYTES], "big")
            if size < NONCE_BYTES + TAG_BYTES or size > MAX_FRAME_BYTES:
                raise EnvelopeError("a response frame of an impossible length")
            if len(self.buffer) < FRAME_LENGTH_BYTES + size:
                return
            body = bytes(self.buffer[FRAME_LENGTH_BYTES : FRAME_LENGTH_BYTES + size])
            del self.buffer[: FRAME_LENGTH_BYTES + size]
            yield self._open(body)

    def _open(self, body: bytes) -> tuple[str, Any]:
        if self.done:
            raise EnvelopeError("a response frame after the final one")
        nonce, sealed = body[:NONCE_BYTES], body[NONCE_BYTES:]
        for final in (False, True):  # the flag is authenticated: only one of the two opens
            aad = frame_aad(self.device_id, self.counter, self.index, final)
            try:
                payload = _aead_open(self.key, nonce, sealed, aad)
            except EnvelopeError:
                continue
            index = self.index
            self.index += 1
            if final:
                if index == 0:
                    raise EnvelopeError("a response without its head frame")
                self.done = True
                return "end", b""
            if index == 0:
                try:
                    head = json.loads(payload)
                except ValueError as exc:
                    raise EnvelopeError("the response head is not JSON") from exc
                return "head", head
            return "body", payload
        raise EnvelopeError("a response frame does not authenticate (altered or out of order)")


@dataclass
class ReplayWindow:
    """DTLS-style anti-replay: the highest counter accepted and a 64-wide bitmap of the ones
    below it (bit i set: `highest - i` was accepted). Counters start at 1."""

    highest: int = 0
    bitmap: int = 0

    def fresh(self, counter: int) -> bool:
        if counter <= 0:
            return False
        if counter > self.highest:
            return True
        offset = self.highest - counter
        return offset < WINDOW and not (self.bitmap >> offset) & 1

    def accept(self, counter: int) -> None:
        """Record `counter` (call only after `fresh` said yes and the envelope opened)."""
        if counter > self.highest:
            shift = counter - self.highest
            self.bitmap = ((self.bitmap << shift) | 1) & ((1 << WINDOW) - 1)
            self.highest = counter
        else:
            self.bitmap |= 1 << (self.highest - counter)
