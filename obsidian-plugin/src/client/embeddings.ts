/**
 * The embedding model chosen in Obsidian, as the sidecar's `/v1/settings/embeddings` speaks it:
 * what is on offer and in use, what a change costs, the switch under way. Types from the
 * generated spec (`openapi.ts`); `parseEmbeddingsState` refuses what is not such a body.
 */
import type { components } from "./openapi";

type Schemas = components["schemas"];
export type EmbeddingsUpdate = Schemas["EmbeddingsUpdate"];
export type EmbeddingsState = Schemas["EmbeddingsState"];
export type EmbeddingsChange = Schemas["EmbeddingsChange"];
export type EmbeddingCost = Schemas["EmbeddingCost"];
export type EmbeddingSwitchState = Schemas["EmbeddingSwitchState"];
export type EmbeddingTestResult = Schemas["EmbeddingTestResult"];
export type EmbeddingProvider = EmbeddingsUpdate["provider"];

export const EMBEDDING_ROUTES = {
  settings: "/v1/settings/embeddings",
  test: "/v1/settings/embeddings/test",
} as const;

function rec(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`the sidecar's ${what} is not an object`);
  return value as Record<string, unknown>;
}

export function parseEmbeddingsState(value: unknown): EmbeddingsState {
  const data = rec(value, "embedding state");
  if (typeof data.provider !== "string" || typeof data.model_id !== "string" || !Array.isArray(data.options)) {
    throw new Error("the sidecar's embedding state lacks provider, model_id or options");
  }
  return data as unknown as EmbeddingsState;
}

export function parseEmbeddingsChange(value: unknown): EmbeddingsChange {
  const data = rec(value, "answer");
  if (typeof data.started !== "boolean" || typeof data.message !== "string") throw new Error("the sidecar's answer lacks started or message");
  return { ...(data as unknown as EmbeddingsChange), state: parseEmbeddingsState(data.state) };
}

export function parseEmbeddingTest(value: unknown): EmbeddingTestResult {
  const data = rec(value, "test result");
  return { ok: data.ok === true, message: typeof data.message === "string" ? data.message : "", dimension: typeof data.dimension === "number" ? data.dimension : null };
}
