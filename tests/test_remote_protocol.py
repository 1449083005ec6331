"""Issue 41, the pure parts of the sealed protocol (docs/remote.md): SPAKE2 over edwards25519,
the key labels, sealed requests, response frames and the replay window; and the shared test
vectors (`shared-schemas/fixtures/remote-vectors.json`) that the plugin checks too."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from nacl import bindings as sodium

from vault_rag.remote import envelope, keys, spake2, vectors

FIXTURE = Path(__file__).resolve().parents[1] / vectors.FIXTURE


def test_the_shared_vectors_are_reproduced_exactly() -> None:
    assert FIXTURE.read_text(encoding="utf-8") == vectors.render(), (
        "run `python -m vault_rag.remote.vectors --write` after a deliberate protocol change"
    )


def test_the_vectors_open_with_the_receiving_side() -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    pake, request, response = data["pake"], data["request"], data["response"]
    device_key = bytes.fromhex(pake["device_key"])
    counter, message = envelope.open_request(
        device_key, request["device_id"], bytes.fromhex(request["envelope"])
    )
    assert (counter, message) == (request["counter"], request["message"])
    reader = envelope.FrameReader(device_key, response["device_id"], response["counter"])
    got = list(reader.feed(bytes.fromhex(response["stream"])))
    assert [kind for kind, _ in got] == ["head", "body", "end"] and reader.done
    assert got[0][1] == {"status": 200, "content_type": "text/event-stream"}
    reply = data["pair_reply"]
    opened = envelope.open_pair_reply(
        bytes.fromhex(pake["Ke"]), reply["pair_id"], bytes.fromhex(reply["sealed"])
    )
    assert opened == reply["message"]


@pytest.mark.parametrize("label", ["M", "N"])
def test_m_and_n_are_the_rfc_points_of_the_prime_order_subgroup(label: str) -> None:
    spake2.check_constants()
    # RFC 9382's generation: SHA-256 of the seed, hashed again until it decodes to a point of
    # order L (libsodium's is_valid_point: canonical, on the curve, main subgroup).
    block = hashlib.sha256(f"edwards25519 point generation seed ({label})".encode()).digest()
    while not sodium.crypto_core_ed25519_is_valid_point(block):
        block = hashlib.sha256(block).digest()
    assert block == getattr(spake2, label)
    order = spake2.L.to_bytes(32, "little")
    with pytest.raises(RuntimeError):  # L·M is the identity, which libsodium refuses
        sodium.crypto_scalarmult_ed25519_noclamp(order, block)


def test_both_sides_agree_only_with_the_same_code() -> None:
    device = spake2.Device.new("laptop", "8765 4321")
    p_a = device.start()
    p_b, server = spake2.respond(b"laptop", b"srv", spake2.password_scalar("87654321"), p_a)
    client = device.finish(b"srv", p_b)
    assert client.ke == server.ke and spake2.same(client.confirm_b, server.confirm_b)
    p_b2, wrong = spake2.respond(b"laptop", b"srv", spake2.password_scalar("87654320"), p_a)
    other = device.finish(b"srv", p_b2)
    assert other.ke != wrong.ke and not spake2.same(other.confirm_b, wrong.confirm_b)
    # Another identity (a man in the middle renaming the device): no agreement either.
    p_b3, renamed = spake2.respond(b"laptop2", b"srv", spake2.password_scalar("87654321"), p_a)
    assert device.finish(b"srv", p_b3).confirm_b != renamed.confirm_b


@pytest.mark.parametrize(
    "share",
    [
        bytes(32),  # not a point encoding of the subgroup
        (1).to_bytes(32, "little"),  # the identity
        bytes.fromhex(
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
        ),  # order 8
        b"\xff" * 32,  # non-canonical
        b"\x01" * 31,  # too short
    ],
)
def test_a_bad_share_is_refused(share: bytes) -> None:
    with pytest.raises(spake2.PakeError):
        spake2.respond(b"a", b"b", spake2.password_scalar("1"), share)


def test_a_share_equal_to_w_times_m_is_refused() -> None:
    w = spake2.password_scalar("12345678")
    blind = bytes(sodium.crypto_scalarmult_ed25519_noclamp(w, spake2.M))
    with pytest.raises(spake2.PakeError):
        spake2.respond(b"a", b"b", w, blind)  # pA − w·M is the identity


KEY = keys.device_key(b"k" * 32)


def test_a_sealed_request_opens_and_any_change_is_refused() -> None:
    sealed = envelope.seal_request(KEY, "dev1", 9, {"method": "GET", "path": "/v1/status"})
    assert envelope.open_request(KEY, "dev1", sealed) == (
        9,
        {"method": "GET", "path": "/v1/status"},
    )
    for position in (0, 1, 8, 9, 40, len(sealed) - 1):
        tampered = bytearray(sealed)
        tampered[position] ^= 1
        with pytest.raises(envelope.EnvelopeError):
            envelope.open_request(KEY, "dev1", bytes(tampered))
    for cut in (0, 10, envelope.HEADER_BYTES, len(sealed) - 1):
        with pytest.raises(envelope.EnvelopeError):
            envelope.open_request(KEY, "dev1", sealed[:cut])
    with pytest.raises(envelope.EnvelopeError):
        envelope.open_request(KEY, "dev2", sealed)  # another device's id
    with pytest.raises(envelope.EnvelopeError):
        envelope.open_request(keys.device_key(b"j" * 32), "dev1", sealed)


def _stream(counter: int, payloads: list[bytes]) -> list[bytes]:
    key = keys.response_key(KEY, counter)
    frames = [envelope.seal_frame(key, "dev1", counter, 0, envelope.head_payload(200, "x/y"))]
    for i, payload in enumerate(payloads, start=1):
        frames.append(envelope.seal_frame(key, "dev1", counter, i, payload))
    frames.append(envelope.seal_frame(key, "dev1", counter, len(frames), b"", final=True))
    return frames


def test_frames_read_in_order_even_split_anywhere() -> None:
    stream = b"".join(_stream(3, [b"one", b"two"]))
    reader = envelope.FrameReader(KEY, "dev1", 3)
    got = [item for i in range(0, len(stream), 7) for item in reader.feed(stream[i : i + 7])]
    assert got == [
        ("head", {"status": 200, "content_type": "x/y"}),
        ("body", b"one"),
        ("body", b"two"),
        ("end", b""),
    ]
    assert reader.done


def test_reordered_dropped_altered_or_foreign_frames_fail() -> None:
    frames = _stream(3, [b"one", b"two"])
    cases = {
        "reordered": [frames[0], frames[2], frames[1], frames[3]],
        "dropped": [frames[0], frames[2], frames[3]],
        "another request's": _stream(4, [b"one"]),
        "after the final": [*frames, frames[1]],
    }
    for name, sequence in cases.items():
        reader = envelope.FrameReader(KEY, "dev1", 3)
        with pytest.raises(envelope.EnvelopeError):
            for frame in sequence:
                list(reader.feed(frame))
            pytest.fail(name)
    altered = bytearray(frames[1])
    altered[-1] ^= 1
    reader = envelope.FrameReader(KEY, "dev1", 3)
    list(reader.feed(frames[0]))
    with pytest.raises(envelope.EnvelopeError):
        list(reader.feed(bytes(altered)))
    truncated = envelope.FrameReader(KEY, "dev1", 3)
    for frame in frames[:-1]:
        list(truncated.feed(frame))
    assert not truncated.done  # cut before the final frame: the client reports it


def test_the_replay_window() -> None:
    window = envelope.ReplayWindow()
    assert not window.fresh(0)
    for counter in (1, 2, 5, 4):
        assert window.fresh(counter)
        window.accept(counter)
    assert not any(window.fresh(c) for c in (1, 2, 4, 5))
    assert window.fresh(3)  # out of order inside the window: still fresh once
    window.accept(3)
    assert not window.fresh(3)
    window.accept(200)
    assert not window.fresh(200 - 64)  # older than the window
    assert window.fresh(200 - 63) and window.fresh(201)
    assert not window.fresh(5)
