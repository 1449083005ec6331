"""The shared test vectors of the remote protocol (`shared-schemas/fixtures/remote-vectors.json`):
fixed inputs and what the sidecar computes from them, for the plugin's TypeScript side to
check itself against. `tests/test_remote_protocol.py` checks that this code reproduces the file
exactly; `python -m vault_rag.remote.vectors --write` regenerates it after a deliberate change
of the protocol (then the plugin must follow)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from nacl import bindings as sodium

from vault_rag.remote import envelope, keys, spake2

FIXTURE = Path("shared-schemas") / "fixtures" / "remote-vectors.json"


def _scalar(label: str) -> bytes:
    return bytes(sodium.crypto_core_ed25519_scalar_reduce(hashlib.sha512(label.encode()).digest()))


def _nonce(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()[: envelope.NONCE_BYTES]


def build() -> dict[str, Any]:
    code, id_a, id_b = "1234-5678", "Ada’s phone", "srv-5f0c2a9d41b7e3c8"
    x, y = _scalar("vault-rag vector x"), _scalar("vault-rag vector y")
    device = spake2.Device.new(id_a, code, x=x)
    p_a = device.start()
    p_b, server = spake2.respond(id_a.encode(), id_b.encode(), device.w, p_a, y=y)
    k = spake2.shared_point(x, device.w, p_b, spake2.N)
    client = device.finish(id_b.encode(), p_b)
    assert client == server
    device_key = keys.device_key(server.ke)
    pair_id, device_id = "pair-0001", "dev-7a41c0de"
    reply = {"device_id": device_id, "name": id_a, "role": "read", "server_id": id_b}
    reply_nonce = _nonce("vault-rag vector pair reply")
    sealed_reply = envelope.seal_pair_reply(server.ke, pair_id, reply, nonce=reply_nonce)
    counter = 7
    message = {
        "method": "POST",
        "path": "/v1/search",
        "query": "",
        "body": {"query": "BeginPlay 是什么", "k": 3},
        "ts": 1767225600,
    }
    request_nonce = _nonce("vault-rag vector request")
    sealed = envelope.seal_request(device_key, device_id, counter, message, nonce=request_nonce)
    response_key = keys.response_key(device_key, counter)
    payloads = [
        (envelope.head_payload(200, "text/event-stream"), False),
        (b'event: delta\ndata: {"text": "Hello"}\n\n', False),
        (b"", True),
    ]
    frames = []
    for index, (payload, final) in enumerate(payloads):
        nonce = _nonce(f"vault-rag vector frame {index}")
        frame = envelope.seal_frame(
            response_key, device_id, counter, index, payload, final=final, nonce=nonce
        )
        frames.append(
            {
                "index": index,
                "final": final,
                "payload_hex": payload.hex(),
                "nonce": nonce.hex(),
                "frame": frame.hex(),
            }
        )
    return {
        "description": (
            "Issue 41's sealed protocol (docs/remote.md): SPAKE2 (RFC 9382) over edwards25519 "
            "with SHA-512 / HKDF-SHA512 / HMAC-SHA512, keys by HKDF-SHA512, messages by "
            "XChaCha20-Poly1305. Byte strings are hex; scalars are 32-byte little-endian. "
            "Checked by the sidecar (tests/test_remote_protocol.py) and the plugin."
        ),
        "constants": {
            "M": spake2.M.hex(),
            "N": spake2.N.hex(),
            "code_context": spake2.CODE_CONTEXT.decode(),
            "confirmation_aad": spake2.AAD.decode(),
            "labels": {
                "device_key": keys.DEVICE_KEY_INFO.decode(),
                "pair_reply": keys.PAIR_REPLY_INFO.decode(),
                "request": keys.REQUEST_INFO.decode(),
                "response": keys.RESPONSE_INFO.decode(),
            },
            "version": envelope.VERSION,
        },
        "pake": {
            "code": code,
            "id_a": id_a,
            "id_b": id_b,
            "x": x.hex(),
            "y": y.hex(),
            "w": device.w.hex(),
            "pA": p_a.hex(),
            "pB": p_b.hex(),
            "K": k.hex(),
            "TT": server.tt.hex(),
            "TT_sha512": hashlib.sha512(server.tt).hexdigest(),
            "Ke": server.ke.hex(),
            "confirm_a": server.confirm_a.hex(),
            "confirm_b": server.confirm_b.hex(),
            "device_key": device_key.hex(),
        },
        "pair_reply": {
            "pair_id": pair_id,
            "message": reply,
            "nonce": reply_nonce.hex(),
            "key": keys.pair_reply_key(server.ke).hex(),
            "sealed": sealed_reply.hex(),
        },
        "request": {
            "device_id": device_id,
            "counter": counter,
            "message": message,
            "plaintext_hex": json.dumps(message, separators=(",", ":"), ensure_ascii=False)
            .encode()
            .hex(),
            "nonce": request_nonce.hex(),
            "key": keys.request_key(device_key).hex(),
            "aad": envelope.request_aad(device_id, counter).hex(),
            "envelope": sealed.hex(),
        },
        "response": {
            "device_id": device_id,
            "counter": counter,
            "key": response_key.hex(),
            "frames": frames,
            "stream": "".join(f["frame"] for f in frames),
        },
    }


def render() -> str:
    return json.dumps(build(), ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str]) -> int:
    root = Path(argv[argv.index("--root") + 1]) if "--root" in argv else Path.cwd()
    path = root / FIXTURE
    text = render()
    if "--write" in argv:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
        return 0
    same = path.exists() and path.read_text(encoding="utf-8") == text
    print(f"{path}: {'up to date' if same else 'differs (run with --write)'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
