"""One polite HTTP client for a crawl: one request at a time, `delay` seconds between two
requests to the host, a User-Agent naming the project and its version, no cookies kept, no
credentials sent (`trust_env` off: no .netrc, no proxy settings from the environment), redirects
followed by hand (only within the origin, never in a loop), 429/503 with Retry-After waited out
when short enough, a time limit per request and per body, and a size cap on the body."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urljoin

import httpx

from vault_rag.sources.web.urls import normalise, origin

MAX_REDIRECTS = 5
MAX_RETRIES = 2  # 429/503 waited out at most this many times per URL


def user_agent() -> str:
    try:
        ours = version("vault-rag")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        ours = "0"
    return f"vault-rag/{ours} (+https://github.com/vault-rag; a personal documentation index)"


class FetchProblem(Exception):
    """A page that could not be fetched: `code` (for status) and a sentence."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Fetched:
    url: str  # after redirects (within the origin)
    status: int
    headers: httpx.Headers
    body: bytes = b""
    redirects: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


class Fetcher:
    def __init__(
        self,
        *,
        delay: float = 1.0,
        timeout: float = 20.0,
        max_bytes: int = 5 * 1024 * 1024,
        max_retry_after: float = 60.0,
        sleep=time.sleep,
    ) -> None:
        self.delay, self.timeout, self.max_bytes = delay, timeout, max_bytes
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.requests = 0
        self._last: dict[str, float] = {}  # origin → when its last request ended
        self.client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            trust_env=False,
            headers={"User-Agent": user_agent(), "Accept-Encoding": "gzip, deflate"},
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, url: str, *, headers: dict[str, str] | None = None) -> Fetched:
        """GET `url`, following redirects within its origin. A 304 or an error status is
        returned (the caller decides); a transport problem, a refused redirect, an over-long
        or over-slow body is a `FetchProblem`."""
        seen = [url]
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            fetched = self._get_waiting(current, headers or {})
            if fetched.status in (301, 302, 303, 307, 308):
                target = fetched.headers.get("location")
                if not target:
                    raise FetchProblem("bad_redirect", f"{current}: a redirect without Location")
                nxt = normalise(urljoin(current, target))
                if origin(nxt) != origin(url):
                    raise FetchProblem(
                        "redirect_off_origin",
                        f"{current} redirects to {nxt}, outside {origin(url)}: not followed",
                    )
                if nxt in seen:
                    raise FetchProblem("redirect_loop", f"{url}: redirects in a loop ({nxt})")
                seen.append(nxt)
                current = nxt
                continue
            fetched.redirects = seen[1:]
            return fetched
        raise FetchProblem("redirect_loop", f"{url}: more than {MAX_REDIRECTS} redirects")

    def _get_waiting(self, url: str, headers: dict[str, str]) -> Fetched:
        for attempt in range(MAX_RETRIES + 1):
            fetched = self._get_once(url, headers)
            if fetched.status not in (429, 503) or attempt == MAX_RETRIES:
                return fetched
            wait = retry_after(fetched.headers.get("retry-after"))
            if wait is None:
                return fetched
            if wait > self.max_retry_after:
                raise FetchProblem(
                    "retry_after",
                    f"{url}: the server asks to wait {wait:.0f} s (HTTP {fetched.status}), "
                    f"longer than web_max_retry_after ({self.max_retry_after:.0f} s): "
                    "left for the next run",
                )
            self.sleep(wait)
        return fetched  # pragma: no cover

    def _get_once(self, url: str, headers: dict[str, str]) -> Fetched:
        key = origin(url)
        last = self._last.get(key)
        if last is not None and self.delay > 0:
            pause = last + self.delay - time.monotonic()
            if pause > 0:
                self.sleep(pause)
        self.requests += 1
        deadline = time.monotonic() + self.timeout
        try:
            with self.client.stream("GET", url, headers=headers) as response:
                body = bytearray()
                if response.status_code == 200:
                    declared = response.headers.get("content-length")
                    if declared and declared.isdigit() and int(declared) > self.max_bytes:
                        raise FetchProblem("too_large", _too_large(url, self.max_bytes))
                    for piece in response.iter_bytes():
                        body += piece
                        if len(body) > self.max_bytes:
                            raise FetchProblem("too_large", _too_large(url, self.max_bytes))
                        if time.monotonic() > deadline:
                            raise FetchProblem(
                                "timeout",
                                f"{url}: the body took longer than {self.timeout:g} s: "
                                "not kept (web_timeout)",
                            )
                return Fetched(url, response.status_code, response.headers, bytes(body))
        except httpx.TimeoutException as exc:
            raise FetchProblem(
                "timeout", f"{url}: no answer within {self.timeout:g} s ({type(exc).__name__})"
            ) from exc
        except httpx.TransportError as exc:
            raise FetchProblem("unreachable", f"{url}: {type(exc).__name__}: {exc}") from exc
        finally:
            self.client.cookies.clear()  # no cookies kept between requests
            self._last[key] = time.monotonic()


def _too_large(url: str, limit: int) -> str:
    return f"{url}: larger than {limit / 1024 / 1024:g} MB (web_max_page_mb): not kept"


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
