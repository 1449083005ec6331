/**
 * What can go wrong talking to the sidecar, as error classes a caller can tell apart:
 * - `SidecarUnreachableError`: no HTTP answer at all (not running, wrong URL or port, CORS);
 * - `SidecarTimeoutError`: connected, but no answer within the request's time limit;
 * - `SidecarAuthError`: 401 — the token is missing or wrong;
 * - `SidecarUnprovenError`: what answers cannot prove it holds the token, so it was not sent;
 * - `SidecarHttpError`: any other non-2xx answer, with the server's `detail` when it sent one;
 * - `SidecarProtocolError`: a 2xx answer that is not what the contract says.
 * An aborted request rejects with the signal's reason (an `AbortError`), never with these.
 */

export class SidecarError extends Error {
  override name = "SidecarError";
}

export class SidecarUnreachableError extends SidecarError {
  override name = "SidecarUnreachableError";

  constructor(
    readonly url: string,
    readonly reason: unknown,
  ) {
    super(`Cannot reach the Vault RAG sidecar at ${url}: ${describeCause(reason)}`);
  }
}

/** The sidecar took longer than the request's time limit (it may be busy indexing). */
export class SidecarTimeoutError extends SidecarError {
  override name = "SidecarTimeoutError";

  constructor(
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`The Vault RAG sidecar at ${url} did not answer within ${Math.round(timeoutMs / 1000)} s`);
  }
}

export class SidecarAuthError extends SidecarError {
  override name = "SidecarAuthError";

  constructor(readonly url: string) {
    super(`The Vault RAG sidecar at ${url} refused the token (401): check the token in the plugin settings`);
  }
}

/** What answers at the URL could not prove it holds the token in the settings
 * (`GET /v1/health?challenge=` gave no valid `proof`), so the token was not sent (issue 31,
 * defect 5): another program (or another vault's sidecar) holds the port, or the token in the
 * settings is not this sidecar's. The plugin cannot tell these apart without sending it. */
export class SidecarUnprovenError extends SidecarError {
  override name = "SidecarUnprovenError";

  constructor(readonly url: string) {
    super(
      `Something else is answering ${whereOf(url)} and cannot prove it holds this vault's token, so the token was not sent. ` +
        "Another program (or another vault's sidecar) holds that port, or the token in Settings → Vault RAG is not this sidecar's (`vault-rag token` prints it).",
    );
  }
}

export class SidecarHttpError extends SidecarError {
  override name = "SidecarHttpError";

  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: unknown = null,
    /** The sidecar's stable error word (`invalid_request`, `body_too_large`…), "" if none. */
    readonly code = "",
    /** Its `Retry-After` in seconds (busy 409/503 answers: when it expects to be ready); null if none. */
    readonly retryAfterS: number | null = null,
  ) {
    super(`Vault RAG sidecar answered ${status}${detail ? `: ${detail}` : ""}`);
  }
}

export class SidecarProtocolError extends SidecarError {
  override name = "SidecarProtocolError";
}

/** True for the rejection an aborted `fetch` (or our own abort checks) produces. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** The connection state an error says the sidecar is in (for notices and the status bar). */
export type ConnectionState = "ok" | "unreachable" | "unauthorized" | "unproven";

export function connectionStateOf(error: unknown): ConnectionState | null {
  if (error instanceof SidecarUnreachableError) return "unreachable";
  if (error instanceof SidecarAuthError) return "unauthorized";
  if (error instanceof SidecarUnprovenError) return "unproven";
  return null;
}

/** "on port N (URL)" for a URL with a port, else "at URL". */
function whereOf(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
    return `on port ${port} (${url})`;
  } catch {
    return `at ${url}`;
  }
}

function describeCause(reason: unknown): string {
  if (reason instanceof Error) {
    // Node's fetch hides the socket error in `cause` (ECONNREFUSED, ENOTFOUND…).
    const cause = (reason as Error & { cause?: unknown }).cause;
    const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined;
    return typeof code === "string" ? `${reason.message} (${code})` : reason.message;
  }
  return String(reason);
}
