/**
 * Keys the plugin holds for the sidecar's chat model and web search: in Obsidian's secret
 * storage (1.11.4+) when the app has it, else in the app's per-device local storage (1.8.7+),
 * else for this session only. Never in `data.json`, so vault sync never carries them.
 */
import { type App, requireApiVersion, type SecretStorage } from "obsidian";

export const CHAT_KEY_ID = "vault-rag-chat-api-key";
export const TAVILY_KEY_ID = "vault-rag-tavily-api-key";

export interface KeyStore {
  /** Where the keys are kept, for the settings tab. */
  readonly where: "secret storage" | "this device's app storage" | "memory (this session)";
  get(id: string): string;
  set(id: string, value: string): void;
}

export function keyStore(app: App): KeyStore {
  if (requireApiVersion("1.11.4")) {
    const storage = app.secretStorage as SecretStorage | undefined; // absent in stand-ins
    if (storage !== undefined) {
      return {
        where: "secret storage",
        get: (id) => storage.getSecret(id) ?? "",
        set: (id, value) => storage.setSecret(id, value),
      };
    }
  }
  if (requireApiVersion("1.8.7") && typeof app.loadLocalStorage === "function") {
    return {
      where: "this device's app storage",
      get: (id) => {
        const value: unknown = app.loadLocalStorage(id);
        return typeof value === "string" ? value : "";
      },
      set: (id, value) => app.saveLocalStorage(id, value === "" ? null : value),
    };
  }
  const memory = new Map<string, string>();
  return { where: "memory (this session)", get: (id) => memory.get(id) ?? "", set: (id, value) => void memory.set(id, value) };
}
