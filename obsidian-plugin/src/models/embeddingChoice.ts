/**
 * Changing the embedding model from Obsidian, without the DOM: the form's choice as the
 * sidecar's update, the sentences the settings tab shows, and the whole change — ask the cost,
 * ask the user, start the re-index, follow it to the end — with every side effect injected.
 *
 * The sidecar keeps the choice (without the key) in its data dir; the key lives in the app's
 * secret storage (`EMBEDDING_KEY_ID`) and is sent again after every connection
 * (`pushEmbeddingKey`).
 */
import type {
  EmbeddingCost,
  EmbeddingProvider,
  EmbeddingsChange,
  EmbeddingsState,
  EmbeddingsUpdate,
  EmbeddingSwitchState,
  EmbeddingTestResult,
} from "../client/embeddings";

export const EMBEDDING_KEY_ID = "vault-rag-embedding-api-key";

/** What the settings form holds. */
export interface EmbeddingForm {
  provider: EmbeddingProvider;
  model: string;
  baseUrl: string;
}

/** The sidecar calls the change needs. */
export interface EmbeddingApi {
  embeddings(): Promise<EmbeddingsState>;
  setEmbeddings(choice: EmbeddingsUpdate): Promise<EmbeddingsChange>;
  testEmbeddings(choice: EmbeddingsUpdate): Promise<EmbeddingTestResult>;
}

export const ENDPOINT_PRESETS: readonly { label: string; url: string }[] = [
  { label: "Ollama (this computer)", url: "http://127.0.0.1:11434/v1" },
  { label: "LM Studio (this computer)", url: "http://127.0.0.1:1234/v1" },
  { label: "llama.cpp server (this computer)", url: "http://127.0.0.1:8080/v1" },
  { label: "OpenAI", url: "https://api.openai.com/v1" },
];

export function formOf(state: EmbeddingsState): EmbeddingForm {
  return { provider: state.provider as EmbeddingProvider, model: state.model ?? "", baseUrl: state.base_url ?? "" };
}

/** The body for the form and key; fields a provider does not take are left out. */
export function updateOf(form: EmbeddingForm, key: string, confirm = false): EmbeddingsUpdate {
  const update: EmbeddingsUpdate = { provider: form.provider, confirm };
  if (form.provider === "fastembed" || form.provider === "openai") update.model = form.model.trim();
  if (form.provider === "openai") {
    update.base_url = form.baseUrl.trim();
    if (key.trim() !== "") update.api_key = key.trim();
  }
  return update;
}

/** Whether the form names another model than the one in use (the key does not count). */
export function isChange(form: EmbeddingForm, state: EmbeddingsState): boolean {
  const now = formOf(state);
  const norm = (f: EmbeddingForm) => {
    const u = updateOf(f, "");
    return JSON.stringify([u.provider, u.model ?? null, (u.base_url ?? "").replace(/\/+$/, "") || null]);
  };
  return norm(form) !== norm(now);
}

/** Why the form cannot be sent as it is; null: it can. */
export function formProblem(form: EmbeddingForm, state: EmbeddingsState): string | null {
  const option = state.options.find((o) => o.provider === form.provider);
  if (option === undefined) return `The sidecar does not offer ${form.provider}.`;
  if (!option.available) return option.reason ?? `${option.label} cannot be used here.`;
  if ((form.provider === "openai" || form.provider === "fastembed") && form.model.trim() === "") return "Name the model.";
  return null;
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** One line about the model in use. */
export function describeEmbeddings(state: EmbeddingsState): string {
  const where = state.source === "plugin" ? "chosen here" : "from the sidecar's settings file";
  const mismatch = state.index_model !== null && state.index_model !== state.model_id ? ` The index was built with ${state.index_model}.` : "";
  return `In use: ${state.model_id} (${where}); ${state.units} units of ${state.notes} notes.${mismatch}`;
}

/** What the confirm dialog says. */
export function describeCost(cost: EmbeddingCost): { title: string; body: string; detail: string } {
  const model = cost.model_id ?? "the new model";
  const size = cost.dimension === null ? "" : ` (${cost.dimension}-d vectors)`;
  return {
    title: "Re-index with the new embedding model?",
    body: cost.message,
    detail: `New model: ${model}${size}. Embedding time estimated from ${cost.basis}; reading and storing the notes adds to it.`,
  };
}

/** One line for the switch under way, or how it ended. */
export function describeSwitch(s: EmbeddingSwitchState): string {
  const model = s.model_id ?? s.provider ?? "the new model";
  switch (s.state) {
    case "embedding": {
      const eta = s.eta_seconds === null ? "" : `, about ${formatDuration(s.eta_seconds)} left`;
      // the last phase: each section of merged units, for precise citations
      if (s.phase === "sections")
        return `Re-indexing with ${model}: sections for citations, ${s.done} of ${s.total} units${eta}. Searches use the current index meanwhile.`;
      if (s.phase !== "embedding") return `Re-indexing with ${model}: reading the notes…`;
      return `Re-indexing with ${model}: ${s.done} of ${s.total} units${eta}. Searches use the current index meanwhile.`;
    }
    case "swapping":
      return `Re-indexed with ${model}; switching over…`;
    case "done":
      return `Switched to ${model}.`;
    case "failed":
      return `The switch to ${model} failed: ${s.error ?? "unknown error"}. The previous index is still in use.`;
    default:
      return "";
  }
}

export function describeTest(result: EmbeddingTestResult): string {
  return result.ok ? `${result.message}.` : `Failed: ${result.message}`;
}

export type ChangeOutcome =
  | { kind: "unchanged"; message: string }
  | { kind: "unusable"; message: string }
  | { kind: "declined"; message: string }
  | { kind: "done"; message: string; state: EmbeddingsState }
  | { kind: "failed"; message: string };

export interface ChangeDeps {
  api: EmbeddingApi;
  /** Show the cost and ask; true: go ahead. */
  confirm(cost: EmbeddingCost): Promise<boolean>;
  /** Each progress line while the re-index runs. */
  progress(line: string): void;
  sleep(ms: number): Promise<void>;
  pollMs?: number;
  /** Give up following after this many polls in a row that got no answer. */
  maxMisses?: number;
}

/** Ask the cost, ask the user, start the re-index and follow it until it ends. */
export async function changeEmbeddingModel(deps: ChangeDeps, form: EmbeddingForm, key: string): Promise<ChangeOutcome> {
  const asked = await deps.api.setEmbeddings(updateOf(form, key, false));
  if (asked.cost === null || asked.cost === undefined) return { kind: "unchanged", message: asked.message };
  if (asked.cost.error !== null) return { kind: "unusable", message: asked.cost.message };
  if (!(await deps.confirm(asked.cost))) return { kind: "declined", message: "Nothing was changed." };
  const started = await deps.api.setEmbeddings(updateOf(form, key, true));
  if (!started.started) return { kind: "unchanged", message: started.message };
  deps.progress(started.message);
  const target = started.state.switch?.model_id ?? asked.cost.model_id;
  let misses = 0;
  for (;;) {
    await deps.sleep(deps.pollMs ?? 1000);
    let state: EmbeddingsState;
    try {
      state = await deps.api.embeddings();
      misses = 0;
    } catch (error) {
      // 503 `switching` while the sidecar opens the new index, or a short outage
      if (++misses >= (deps.maxMisses ?? 120)) return { kind: "failed", message: `Lost the sidecar while switching: ${errorText(error)}` };
      deps.progress("Switching over: the sidecar is opening the new index…");
      continue;
    }
    const s = state.switch;
    if (s === null || s === undefined || (target !== null && s.model_id !== target)) continue;
    deps.progress(describeSwitch(s));
    if (s.state === "done") return { kind: "done", message: describeSwitch(s), state };
    if (s.state === "failed") return { kind: "failed", message: describeSwitch(s) };
  }
}

/** After a (re)connection: a model chosen here that needs a key gets it again (memory only
 * on the sidecar). Returns whether it was sent. */
export async function pushEmbeddingKey(api: EmbeddingApi, key: string): Promise<boolean> {
  if (key.trim() === "") return false;
  const state = await api.embeddings();
  if (state.source !== "plugin" || state.provider !== "openai") return false;
  await api.setEmbeddings(updateOf(formOf(state), key, false));
  return true;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
