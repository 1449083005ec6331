/**
 * The chat model chosen in Obsidian, as the sidecar's `/v1/models` and `/v1/settings/models`
 * speak it: the update the plugin pushes, the state and the try result it reads back. Types
 * from the generated spec (`openapi.ts`); parsing defaults what is missing.
 */
import type { components } from "./openapi";

type Schemas = components["schemas"];
export type ModelsUpdate = Schemas["ModelsUpdate"];

export const MODEL_ROUTES = {
  models: "/v1/models",
  settings: "/v1/settings/models",
  test: "/v1/settings/models/test",
} as const;

export interface ModelsState {
  chat: { source: "settings" | "plugin"; baseUrl: string; model: string | null; hasKey: boolean; models: string[]; error: string | null };
  web: { enabled: boolean; includeDomains: string[] | null };
  embeddings: { provider: string; model: string; change: string };
}

export interface ModelTry {
  ok: boolean;
  message: string;
  reply: string | null;
  models: string[];
}

function rec(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");
const strOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null);

export function parseModelsState(value: unknown): ModelsState {
  const data = rec(value);
  const chat = rec(data.chat);
  const web = rec(data.web);
  const embeddings = rec(data.embeddings);
  return {
    chat: {
      source: chat.source === "plugin" ? "plugin" : "settings",
      baseUrl: str(chat.base_url),
      model: strOrNull(chat.model),
      hasKey: chat.has_key === true,
      models: strings(chat.models),
      error: strOrNull(chat.error),
    },
    web: { enabled: web.enabled === true, includeDomains: Array.isArray(web.include_domains) ? strings(web.include_domains) : null },
    embeddings: { provider: str(embeddings.provider), model: str(embeddings.model), change: str(embeddings.change) },
  };
}

export function parseModelTry(value: unknown): ModelTry {
  const data = rec(value);
  return { ok: data.ok === true, message: str(data.message), reply: strOrNull(data.reply), models: strings(data.models) };
}
