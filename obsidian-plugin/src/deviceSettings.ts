/**
 * Settings that belong to one device, not to the vault: the sidecar command (it can run any
 * program, and its paths are this computer's). Kept in the app's per-device local storage
 * (Obsidian 1.8.7+), so vault sync never carries them to another device; a value found in
 * `data.json` is moved there. Older apps keep it in `data.json`, as before.
 */
import { type App, requireApiVersion } from "obsidian";

export const SIDECAR_COMMAND_KEY = "vault-rag-sidecar-command";
/** The vault-rag program's path (`sidecarProgram`), kept per device like the command. */
export const SIDECAR_PROGRAM_KEY = "vault-rag-sidecar-program";

export interface DeviceStore {
  /** True when the value is kept on this device (so `data.json` must not hold it). */
  readonly local: boolean;
  /** The value: from local storage (a `data.json` value is moved there first). */
  load(fromData: string): string;
  save(value: string): void;
}

export function deviceStore(app: App, key: string): DeviceStore {
  if (requireApiVersion("1.8.7") && typeof app.loadLocalStorage === "function") {
    const read = (): string => {
      const value: unknown = app.loadLocalStorage(key);
      return typeof value === "string" ? value : "";
    };
    const save = (value: string) => {
      if (read() !== value) app.saveLocalStorage(key, value === "" ? null : value);
    };
    return {
      local: true,
      load: (fromData) => {
        if (fromData !== "") save(fromData);
        return fromData !== "" ? fromData : read();
      },
      save,
    };
  }
  return { local: false, load: (fromData) => fromData, save: () => undefined };
}

/** One string kept on this device (the app's local storage); in memory on older apps. */
export function deviceText(app: App, key: string): { load(): string | null; save(value: string | null): void } {
  if (requireApiVersion("1.8.7") && typeof app.loadLocalStorage === "function") {
    return {
      load: () => {
        const value: unknown = app.loadLocalStorage(key);
        return typeof value === "string" ? value : null;
      },
      save: (value) => app.saveLocalStorage(key, value),
    };
  }
  let kept: string | null = null;
  return { load: () => kept, save: (value) => void (kept = value) };
}
