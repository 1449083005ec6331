/**
 * The chat model chosen in Obsidian, without the DOM: what is pushed to the sidecar
 * (`PUT /v1/settings/models`) for these settings and keys, the servers offered as presets, and
 * how a try or a listing is said in the settings tab.
 */
import type { ModelsState, ModelsUpdate, ModelTry } from "../client/models";

/** `sidecar`: the sidecar's settings file decides (nothing is pushed); `plugin`: chosen here. */
export type ChatSource = "sidecar" | "plugin";

export interface ModelSettings {
  chatSource: ChatSource;
  /** OpenAI-compatible base URL; empty: api.openai.com. */
  chatBaseUrl: string;
  chatModel: string;
  /** Domains web search may use; empty: the sidecar's default list. */
  webDomains: string[];
}

export interface ModelKeys {
  chatKey: string;
  tavilyKey: string;
}

export const SERVER_PRESETS: readonly { id: string; label: string; url: string }[] = [
  { id: "ollama", label: "Ollama (this computer)", url: "http://127.0.0.1:11434/v1" },
  { id: "lmstudio", label: "LM Studio (this computer)", url: "http://127.0.0.1:1234/v1" },
  { id: "llamacpp", label: "llama.cpp server (this computer)", url: "http://127.0.0.1:8080/v1" },
  { id: "openai", label: "OpenAI", url: "https://api.openai.com/v1" },
];

/** The body to push, or null when the sidecar's own settings decide. */
export function modelsUpdateOf(settings: ModelSettings, keys: ModelKeys): ModelsUpdate | null {
  if (settings.chatSource !== "plugin") return null;
  return {
    base_url: settings.chatBaseUrl.trim(),
    model: settings.chatModel.trim(),
    api_key: keys.chatKey.trim(),
    tavily_api_key: keys.tavilyKey.trim(),
    web_include_domains: settings.webDomains,
  };
}

/** A stable key of what was pushed, so the same choice is not pushed twice. */
export function choiceKey(update: ModelsUpdate | null): string {
  return update === null ? "" : JSON.stringify(update);
}

/** One line for the result of "Test". */
export function describeTry(result: ModelTry): string {
  if (!result.ok) return `Failed: ${result.message}`;
  const reply = result.reply ? ` It said: “${result.reply.slice(0, 120)}”` : "";
  return `${result.message}.${reply}`;
}

/** One line about the model in use, for the settings tab. */
export function describeModels(state: ModelsState): string {
  const chat = state.chat;
  const where = chat.source === "plugin" ? "chosen here" : "from the sidecar's settings file";
  const model = chat.model ? `${chat.model} at ${chat.baseUrl}` : "no chat model (answers quote your notes)";
  const web = state.web.enabled ? "web search on" : "no web search key";
  return `In use: ${model} (${where}); ${web}; embeddings: ${state.embeddings.model}.`;
}

/** Domains from the text area: one per line or comma separated, lower-cased, no duplicates. */
export function parseDomains(text: string): string[] {
  const domains = text.split(/[\n,\s]/).map((d) => d.trim().toLowerCase()).filter((d) => d !== "");
  return [...new Set(domains)];
}
