/**
 * The ask pane's words and rules outside the DOM: a stored thread as turns, what the user reads
 * when a request fails (busy states say what is happening and when it will be ready), which
 * failures are worth waiting out (a sidecar still starting), and how long to wait.
 */
import {
  type Citation,
  SidecarAuthError,
  SidecarHttpError,
  SidecarTimeoutError,
  SidecarUnprovenError,
  SidecarUnreachableError,
  type ThreadMessage,
} from "../client";

export interface StoredTurn {
  question: string;
  answer: string;
  /** The answer's id (feedback, Save as note); null from sidecars that do not send it. */
  answerId: string | null;
  citations: Citation[];
}

/** Questions and their answers, in order, from a stored thread (other roles are skipped). */
export function threadTurns(messages: ThreadMessage[]): StoredTurn[] {
  const turns: StoredTurn[] = [];
  for (const message of messages) {
    if (message.role === "user") turns.push({ question: message.content, answer: "", answerId: null, citations: [] });
    else if (message.role === "assistant" && turns.length > 0) {
      const last = turns[turns.length - 1] as StoredTurn;
      last.answer = last.answer ? `${last.answer}\n\n${message.content}` : message.content;
      if (message.id) last.answerId = message.id;
      if (message.citations?.length) last.citations = [...last.citations, ...message.citations];
    }
  }
  return turns;
}

/** A new conversation id: 32 hex digits, like the sidecar's own. */
export function randomThreadId(): string {
  return crypto.randomUUID().replace(/-/g, "");
}

/** What the user reads when a request fails. */
export function describeError(error: unknown, url = "the configured URL"): string {
  if (error instanceof SidecarUnreachableError) {
    return `Cannot reach the Vault RAG sidecar at ${error.url || url}. Start it with "vault-rag serve" and check the URL in the settings.`;
  }
  if (error instanceof SidecarAuthError) {
    return 'The sidecar refused the token. Copy it from "vault-rag token" into Settings → Vault RAG.';
  }
  if (error instanceof SidecarUnprovenError) return error.message;
  if (error instanceof SidecarHttpError) {
    if (error.status === 503 && error.code === "starting") {
      return `The sidecar is still starting: it reads its index and loads the model first, usually within a minute. Ask again ${readyIn(error, "once the status line shows the notes")}.`;
    }
    if (error.status === 503 && error.code === "switching") {
      return `The sidecar is opening the index of the new embedding model; ask again ${readyIn(error, "in a few seconds")}.`;
    }
    if (error.status === 409 && error.code === "switch_running") {
      return `The embedding model is being changed: the vault is re-embedded; ${readyIn(error, "try again once the status line says it is done", "it should be done")}.`;
    }
    if (error.status === 503 && error.code === "embedding_unavailable") {
      return `The embedding model is not ready (still loading, or its server is down); questions work again once it answers. ${error.detail}`;
    }
    if (error.status === 503 && error.code === "store_unavailable") {
      return `The vector store cannot be reached; keyword search still works. ${error.detail}`;
    }
    if (error.status === 409) return `The sidecar is busy with another change (${error.detail}); try again ${readyIn(error, "in a few seconds")}.`;
    if (error.status === 503) return `The sidecar cannot answer yet (${error.detail}); try again ${readyIn(error, "in a few seconds")}.`;
    return `The sidecar answered ${error.status}: ${error.detail}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** When a busy sidecar expects to be ready, from its `Retry-After`: "in about N s" (or "N min");
 * `otherwise` when it sent none. `lead` replaces "in" (e.g. "it should be done"). */
export function readyIn(error: SidecarHttpError, otherwise: string, lead = ""): string {
  const seconds = error.retryAfterS;
  if (seconds === null) return otherwise;
  const span = seconds >= 90 ? `${Math.round(seconds / 60)} min` : `${Math.max(1, seconds)} s`;
  return lead ? `${lead} in about ${span}` : `in about ${span}`;
}

/** Failures of a sidecar that is starting or restarting: worth waiting out, not reporting. */
export function isWaitable(error: unknown): boolean {
  if (error instanceof SidecarUnreachableError || error instanceof SidecarTimeoutError) return true;
  return error instanceof SidecarHttpError && (error.status === 503 || error.status === 409);
}

/** The wait before attempt `attempt + 1`: when the sidecar said it would be ready (its
 * `Retry-After`, 1 s to 2 min), else 1, 2, 4, 8, then 15 s. */
export function retryDelayMs(attempt: number, error?: unknown): number {
  if (error instanceof SidecarHttpError && error.retryAfterS !== null) {
    return Math.min(120_000, Math.max(1_000, error.retryAfterS * 1_000));
  }
  return Math.min(15_000, 1_000 * 2 ** attempt);
}

/** How many times a pane waits for the sidecar before it says it could not load (≈ 10 min). */
export const MAX_LOAD_ATTEMPTS = 42;
