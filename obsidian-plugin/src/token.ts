/**
 * Where the sidecar's bearer token lives: Obsidian's secret storage (`app.secretStorage`,
 * Obsidian 1.11.4+, kept out of the vault's files) when the app has it, else the plugin's
 * `data.json`. A token found in `data.json` on an app with secret storage is moved there.
 */
import { type App, requireApiVersion, type SecretStorage } from "obsidian";

/** The id under which the token is stored (lowercase letters, digits and dashes). */
export const TOKEN_SECRET_ID = "vault-rag-sidecar-token";


export interface TokenStore {
  /** True when the token is kept in secret storage (so `data.json` must not hold it). */
  readonly secret: boolean;
  /** The token: from secret storage, or the one read from `data.json`. */
  load(fromData: string): string;
  /** Keep `token` (secret storage only; `data.json` is written by the caller). */
  save(token: string): void;
}

/** Secret storage when the app has it — `SecretStorage` is `@since 1.11.4`, newer than
 * minAppVersion: `requireApiVersion` with a literal (what lint's no-unsupported-api checks the
 * uses against) and the object itself — else data.json. */
export function tokenStore(app: App): TokenStore {
  if (requireApiVersion("1.11.4")) {
    const storage = app.secretStorage as SecretStorage | undefined; // absent in stand-ins
    if (storage !== undefined) {
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
  }
  return { secret: false, load: (fromData) => fromData, save: () => undefined };
}

/** The app's secret storage (1.11.4+), or null: for the remote device's id and key
 * (`remote/store.ts`). */
export function secretStorageOf(app: App): SecretStorage | null {
  if (requireApiVersion("1.11.4")) {
    const storage = app.secretStorage as SecretStorage | undefined; // absent in stand-ins
    if (storage !== undefined) return storage;
  }
  return null;
}
