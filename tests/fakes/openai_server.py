"""A wire-level fake of the OpenAI HTTP API for tests: standard library only, no network.

It listens on 127.0.0.1 (a free port) in a background thread and answers

* ``POST /v1/embeddings`` -- deterministic unit vectors derived from a hash of each input
  (`FakeOpenAIServer.vector_for`), ``dimensions`` honoured, ``encoding_format`` float or base64
  (what openai-python asks for by default), ``usage`` filled in;
* ``POST /v1/chat/completions`` -- scripted replies taken from a queue (`queue_chat`): plain
  text, JSON content (`ChatReply.json`), ``tool_calls``, or an HTTP error (`ErrorReply`); as one
  JSON body or, when the request says ``"stream": true``, as SSE ``data: {...}`` chunks ending in
  ``data: [DONE]`` (plus a usage chunk when ``stream_options.include_usage`` is set);
* ``GET /v1/models`` -- the configured model ids.

Every request is recorded (`requests`, `embedding_requests`, `chat_requests`) for assertions.

Usage::

    with FakeOpenAIServer(dimension=8) as srv:
        srv.queue_chat("Hello!", ChatReply(tool_calls=[ToolCall("search", {"q": "x"})]))
        llm = ChatOpenAI(base_url=srv.base_url, api_key="k", model="m", max_retries=0)
        ...
        assert srv.chat_requests[0].body["messages"][-1]["content"] == "hi"

A reply may also be a callable ``(request_body) -> ChatReply | ErrorReply | str`` for answers
that depend on the request. With the queue empty, `default_chat_reply` is used; if that is
None the server answers HTTP 400 (not retried by openai-python), so a missing script fails fast.
`queue_error` makes the next request to an endpoint fail (e.g. a 500 or 429);
`embedding_error` (a callable of one request's inputs) fails the embeddings requests it picks.
`unused_base_url()` gives a URL nobody listens on, for "server is down" tests.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ChatReply",
    "ErrorReply",
    "FakeOpenAIServer",
    "RecordedRequest",
    "ToolCall",
    "unused_base_url",
]


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)  # dict -> JSON-encoded
    id: str | None = None  # default: call_<n>

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class ChatReply:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] | list[ToolCall] = ()
    finish_reason: str | None = None  # default: "tool_calls" when there are tool calls, else "stop"
    chunks: list[str] | None = None  # how to split `content` when streaming; default: by words
    usage: dict[str, int] | None = None  # default: rough counts
    # Streaming only: after this many content pieces the stream sends a truncated, unparsable
    # ``data:`` line and ends (a server that crashed mid-answer or garbled its output).
    garbled_after: int | None = None
    # Streaming only: send SSE keep-alive comments for this long before the first chunk (a
    # server still reading a long prompt: bytes arrive, no content does).
    stall_s: float = 0.0

    @classmethod
    def json(cls, obj: Any, **kwargs: Any) -> ChatReply:
        """A reply whose content is `obj` as JSON (for JSON mode / structured output)."""
        return cls(content=json.dumps(obj, ensure_ascii=False), **kwargs)


@dataclass(frozen=True)
class ErrorReply:
    status: int = 500
    message: str = "scripted failure"
    type: str = "server_error"
    code: str | None = None


Reply = ChatReply | ErrorReply | str | Callable[[dict[str, Any]], "ChatReply | ErrorReply | str"]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or the raw text when it is not JSON, or None

    @property
    def inputs(self) -> list[Any]:
        """The ``input`` of an embeddings request as a list."""
        raw = self.body.get("input") if isinstance(self.body, dict) else None
        if raw is None:
            return []
        if isinstance(raw, str) or (raw and isinstance(raw[0], int)):
            return [raw]
        return list(raw)


def unused_base_url() -> str:
    """An OpenAI-style base URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _approx_tokens(text: str) -> int:
    return max(1, (len(text.encode("utf-8")) + 3) // 4)


class FakeOpenAIServer:
    """See module doc. Thread-safe; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        dimension: int = 64,
        api_key: str | None = None,
        models: Iterable[str] = ("fake-embedding", "fake-chat"),
        strict_models: bool = False,
        max_batch: int | None = None,
        force_float: bool = False,
    ) -> None:
        """`api_key`: require ``Authorization: Bearer <api_key>`` (401 otherwise).
        `strict_models`: unknown model names get a 404 (like OpenAI); otherwise any name works.
        `max_batch`: embeddings requests with more inputs get a 400.
        `force_float`: answer floats even when base64 is asked (like servers that ignore it).
        """
        self.dimension = dimension
        self.api_key = api_key
        self.models = list(models)
        self.strict_models = strict_models
        self.max_batch = max_batch
        self.force_float = force_float
        self.default_chat_reply: Reply | None = None
        # Called with each embeddings request's inputs: an ErrorReply fails that request.
        self.embedding_error: Callable[[list[Any]], ErrorReply | None] | None = None
        self.ignore_stream_options = False  # no usage chunk when streaming (llama-cpp-python)
        self.delay = 0.0  # seconds to wait before answering any request
        self.chunk_delay = 0.0  # seconds between SSE chunks
        self.in_flight = 0  # requests being answered now
        self.max_in_flight = 0  # the most answered at once (since start or `clear`)
        self._lock = threading.Lock()
        self._chat_queue: deque[Reply] = deque()
        self._errors: deque[tuple[str | None, ErrorReply]] = deque()
        self._requests: list[RecordedRequest] = []
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeOpenAIServer:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What OpenAI clients take as ``base_url`` (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ scripting
    def queue_chat(self, *replies: Reply) -> None:
        """Append replies for the next chat completions, in order."""
        with self._lock:
            self._chat_queue.extend(replies)

    def queue_error(
        self, status: int = 500, message: str = "scripted failure", endpoint: str | None = None
    ) -> None:
        """Fail the next request to `endpoint` ("embeddings", "chat/completions", "models";
        None = any endpoint) with HTTP `status`."""
        kind = "invalid_request_error" if status < 500 else "server_error"
        with self._lock:
            self._errors.append((endpoint, ErrorReply(status, message, kind)))

    @property
    def pending_chat_replies(self) -> int:
        with self._lock:
            return len(self._chat_queue)

    # ------------------------------------------------------------------ inspection
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def clear(self) -> None:
        """Forget recorded requests and scripted replies/errors."""
        with self._lock:
            self._requests.clear()
            self._chat_queue.clear()
            self._errors.clear()
            self.max_in_flight = self.in_flight

    @staticmethod
    def vector_for(item: str | list[int], dimension: int = 64) -> list[float]:
        """The unit vector the server returns for one input (str or token-id list)."""
        key = item if isinstance(item, str) else "tokens:" + json.dumps(item)
        seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
        rng = random.Random(seed)
        raw = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
        norm = sum(x * x for x in raw) ** 0.5 or 1.0
        return [x / norm for x in raw]

    # ------------------------------------------------------------------ internals
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_error(self, endpoint: str) -> ErrorReply | None:
        with self._lock:
            for i, (target, error) in enumerate(self._errors):
                if target is None or target == endpoint:
                    del self._errors[i]
                    return error
        return None

    def _next_chat_reply(self, body: dict[str, Any]) -> ChatReply | ErrorReply:
        with self._lock:
            reply = self._chat_queue.popleft() if self._chat_queue else self.default_chat_reply
        if reply is None:
            return ErrorReply(400, "FakeOpenAIServer: no scripted chat reply queued", "fake_error")
        if callable(reply) and not isinstance(reply, ChatReply | ErrorReply):
            reply = reply(body)
        if isinstance(reply, str):
            reply = ChatReply(content=reply)
        return reply

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}{self._counter}"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer  # set on the bound subclass
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    # -------------------------------------------------------------- plumbing
    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        text = raw.decode("utf-8", "replace")
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")  # one request per connection: simple and robust
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _send_error(self, error: ErrorReply) -> None:
        payload = {
            "error": {
                "message": error.message,
                "type": error.type,
                "param": None,
                "code": error.code,
            }
        }
        self._send_json(error.status, payload)

    def _handle(self, method: str) -> None:
        fake = self.fake
        body = self._read_body() if method == "POST" else None
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake._record(RecordedRequest(method, path, headers, body))
        with fake._lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            self._answer(fake, method, path, body)
        finally:
            with fake._lock:
                fake.in_flight -= 1

    def _answer(self, fake: FakeOpenAIServer, method: str, path: str, body: Any) -> None:
        if fake.delay:
            time.sleep(fake.delay)
        if (
            fake.api_key is not None
            and self.headers.get("Authorization") != f"Bearer {fake.api_key}"
        ):
            self._send_error(
                ErrorReply(
                    401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key"
                )
            )
            return
        endpoint = path.removeprefix("/v1/")
        routes: dict[tuple[str, str], Callable[[Any], None]] = {
            ("POST", "embeddings"): self._embeddings,
            ("POST", "chat/completions"): self._chat,
            ("GET", "models"): self._models,
        }
        route = routes.get((method, endpoint))
        if route is None:
            self._send_error(
                ErrorReply(404, f"no route for {method} {path}", "invalid_request_error")
            )
            return
        error = fake._next_error(endpoint)
        if error is not None:
            self._send_error(error)
            return
        if not isinstance(body, dict) and method == "POST":
            self._send_error(
                ErrorReply(400, "request body must be a JSON object", "invalid_request_error")
            )
            return
        route(body)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _check_model(self, body: dict[str, Any]) -> bool:
        model = body.get("model")
        if not model:
            self._send_error(
                ErrorReply(400, "you must provide a model parameter", "invalid_request_error")
            )
            return False
        if self.fake.strict_models and model not in self.fake.models:
            self._send_error(
                ErrorReply(
                    404,
                    f"The model `{model}` does not exist",
                    "invalid_request_error",
                    "model_not_found",
                )
            )
            return False
        return True

    # -------------------------------------------------------------- endpoints
    def _models(self, _body: Any) -> None:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.fake.models
        ]
        self._send_json(200, {"object": "list", "data": data})

    def _embeddings(self, body: dict[str, Any]) -> None:
        fake = self.fake
        if not self._check_model(body):
            return
        inputs = RecordedRequest("POST", "", {}, body).inputs
        if not inputs or any(item in ("", []) for item in inputs):
            self._send_error(
                ErrorReply(
                    400, "'input' must be a non-empty string or array", "invalid_request_error"
                )
            )
            return
        if fake.max_batch is not None and len(inputs) > fake.max_batch:
            self._send_error(
                ErrorReply(
                    400,
                    f"too many inputs: {len(inputs)} > {fake.max_batch}",
                    "invalid_request_error",
                )
            )
            return
        failure = fake.embedding_error(inputs) if fake.embedding_error else None
        if failure is not None:
            self._send_error(failure)
            return
        dimension = int(body.get("dimensions") or fake.dimension)
        as_base64 = body.get("encoding_format") == "base64" and not fake.force_float
        data = []
        tokens = 0
        for index, item in enumerate(inputs):
            vector = FakeOpenAIServer.vector_for(item, dimension)
            tokens += _approx_tokens(item) if isinstance(item, str) else len(item)
            encoded: Any = vector
            if as_base64:
                encoded = base64.b64encode(struct.pack(f"<{dimension}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send_json(
            200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.fake
        if not self._check_model(body):
            return
        reply = fake._next_chat_reply(body)
        if isinstance(reply, ErrorReply):
            self._send_error(reply)
            return
        calls = [
            {
                "id": call.id or fake._next_id("call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for call in reply.tool_calls
        ]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
        completion = (reply.content or "") + "".join(c["function"]["arguments"] for c in calls)
        usage = reply.usage or {
            "prompt_tokens": _approx_tokens(prompt),
            "completion_tokens": _approx_tokens(completion),
            "total_tokens": _approx_tokens(prompt) + _approx_tokens(completion),
        }
        head = {
            "id": fake._next_id("chatcmpl-fake-"),
            "created": int(time.time()),
            "model": body["model"],
        }
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            include_usage = include_usage and not fake.ignore_stream_options
            self._stream(head, reply, calls, finish, usage if include_usage else None)
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        self._send_json(
            200, {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    def _stream(
        self,
        head: dict[str, Any],
        reply: ChatReply,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, int] | None,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # no Content-Length: the body ends at close
        self.end_headers()
        self.close_connection = True
        stall_until = time.monotonic() + reply.stall_s
        while time.monotonic() < stall_until:
            self.wfile.write(b": keepalive\n\n")
            self.wfile.flush()
            time.sleep(0.1)
        for sent, payload in enumerate(_stream_payloads(head, reply, calls, finish, usage)):
            if reply.garbled_after is not None and sent > reply.garbled_after:
                line = json.dumps(payload, ensure_ascii=False)
                self.wfile.write(f"data: {line[: len(line) // 2]}\n\n".encode())
                self.wfile.flush()
                return
            self.wfile.write(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())
            self.wfile.flush()
            if self.fake.chunk_delay:
                time.sleep(self.fake.chunk_delay)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _split_words(text: str) -> list[str]:
    """Split into pieces that concatenate back to `text` (words with their trailing space)."""
    pieces: list[str] = []
    current = ""
    for char in text:
        current += char
        if char.isspace() or ord(char) > 0x2E80:  # CJK: one character per piece
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def _stream_payloads(
    head: dict[str, Any],
    reply: ChatReply,
    calls: list[dict[str, Any]],
    finish: str,
    usage: dict[str, int] | None,
) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return {**head, "object": "chat.completion.chunk", "choices": [choice]}

    yield chunk({"role": "assistant", "content": ""})
    if reply.content:
        for piece in reply.chunks if reply.chunks is not None else _split_words(reply.content):
            yield chunk({"content": piece})
    for index, call in enumerate(calls):
        start = {"index": index, "id": call["id"], "type": "function"}
        yield chunk(
            {
                "tool_calls": [
                    {**start, "function": {"name": call["function"]["name"], "arguments": ""}}
                ]
            }
        )
        arguments = call["function"]["arguments"]
        step = max(1, len(arguments) // 3)  # arguments arrive in a few fragments, as in reality
        for i in range(0, len(arguments), step):
            yield chunk(
                {
                    "tool_calls": [
                        {"index": index, "function": {"arguments": arguments[i : i + step]}}
                    ]
                }
            )
    yield chunk({}, finish)
    if usage is not None:
        yield {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}
