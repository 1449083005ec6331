/**
 * Where the sidecar's bearer token lives: Obsidian's secret storage (`app.secretStorage`,
 * Obsidian 1.11.4+, kept out of the vault's files) when the app has it, else the plugin's
 * `data.json`. A token found in `data.json` on an app with secret storage is moved there.
 */
import type { App } from "obsidian";

/** The id under which the token is stored (lowercase letters, digits and dashes). */
export const TOKEN_SECRET_ID = "vault-rag-sidecar-token";

/** The part of Obsidian's `SecretStorage` the plugin uses. */
interface SecretStore {
  getSecret(id: string): string | null;
  setSecret(id: string, secret: string): void;
}

export interface TokenStore {
  /** True when the token is kept in secret storage (so `data.json` must not hold it). */
  readonly secret: boolean;
  /** The token: from secret storage, or the one read from `data.json`. */
  load(fromData: string): string;
  /** Keep `token` (secret storage only; `data.json` is written by the caller). */
  save(token: string): void;
}

/** Secret storage when the app has it (feature-detected: older versions lack it). */
export function tokenStore(app: App): TokenStore {
  const candidate = (app as unknown as { secretStorage?: Partial<SecretStore> }).secretStorage;
  if (typeof candidate?.getSecret !== "function" || typeof candidate.setSecret !== "function") {
    return { secret: false, load: (fromData) => fromData, save: () => undefined };
  }
  const storage = candidate as SecretStore;
  return {
    secret: true,
    load: (fromData) => {
      const stored = storage.getSecret(TOKEN_SECRET_ID) ?? "";
      if (fromData !== "" && fromData !== stored) {
        storage.setSecret(TOKEN_SECRET_ID, fromData); // migrate a plain token out of data.json
        return fromData;
      }
      return stored;
    },
    save: (token) => {
      if ((storage.getSecret(TOKEN_SECRET_ID) ?? "") !== token) storage.setSecret(TOKEN_SECRET_ID, token);
    },
  };
}
