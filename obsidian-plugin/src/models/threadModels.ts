/**
 * The chat model each conversation was given in the pane's picker, kept on this device (the
 * conversations themselves live in this device's sidecar). A thread not in the map uses the
 * model in use (nothing is sent with its questions). The map is bounded: the threads picked
 * most recently are kept.
 */

/** Where the map is kept: one string (JSON), e.g. the app's per-device local storage. */
export interface TextStore {
  load(): string | null;
  save(value: string | null): void;
}

export const THREAD_MODELS_KEY = "vault-rag-thread-models";
export const MAX_THREAD_MODELS = 200;

/** What a thread was given: a model id, or "" for no chat model (answers quote the notes). */
export type PickedModel = string;

export class ThreadModels {
  private entries: Map<string, PickedModel>;

  constructor(
    private readonly store: TextStore,
    private readonly limit = MAX_THREAD_MODELS,
  ) {
    this.entries = parseEntries(store.load());
  }

  /** The model picked for `threadId`, or null: the model in use. */
  get(threadId: string): PickedModel | null {
    return this.entries.get(threadId) ?? null;
  }

  /** Keep `model` for `threadId`; null forgets it (the model in use again). */
  set(threadId: string, model: PickedModel | null): void {
    if (this.get(threadId) === model) return;
    this.entries.delete(threadId); // re-inserted last: the most recent pick
    if (model !== null) this.entries.set(threadId, model);
    while (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.store.save(this.entries.size === 0 ? null : JSON.stringify([...this.entries]));
  }
}

/** The stored pairs; anything unreadable is an empty map (the picks are a convenience). */
function parseEntries(text: string | null): Map<string, PickedModel> {
  if (!text) return new Map();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return new Map();
  }
  if (!Array.isArray(data)) return new Map();
  const pairs = data.filter(
    (pair): pair is [string, string] => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === "string" && typeof pair[1] === "string",
  );
  return new Map(pairs);
}

/** The picker's options: the model in use first, the server's list, "quotes only", and a
 * picked model the server no longer lists (kept so the conversation still shows it). */
export interface PickerOption {
  /** null: the model in use (nothing sent); "": no chat model; else a model id. */
  value: PickedModel | null;
  label: string;
}

export function pickerOptions(inUse: string | null, listed: readonly string[], picked: PickedModel | null): PickerOption[] {
  const options: PickerOption[] = [{ value: null, label: inUse ? `Default (${inUse})` : "Default (quotes only)" }];
  for (const model of listed) options.push({ value: model, label: model });
  if (picked !== null && picked !== "" && !listed.includes(picked)) options.push({ value: picked, label: `${picked} (not listed)` });
  if (inUse !== null) options.push({ value: "", label: "No model (quote my notes)" });
  else if (picked === "") options.push({ value: "", label: "No model (quote my notes)" });
  return options;
}
