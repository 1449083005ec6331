/**
 * The settings tab's "Embedding model" section: the model in use, a choice among what the
 * sidecar offers (the bundled model, fastembed models already downloaded, an OpenAI-compatible
 * endpoint with its model and key), a test of the endpoint, and "Change…", which shows what the
 * change costs and asks first (`embeddingChoice.changeEmbeddingModel`), then follows the
 * re-index. Built with plain DOM in Obsidian's setting-item markup, so the same section runs in
 * the app, under vitest and in the Chromium harness.
 *
 * Stable `data-testid`s: embedding-in-use, embedding-provider, embedding-model,
 * embedding-base-url, embedding-key, embedding-test, embedding-change, embedding-status.
 */
import type { EmbeddingCost, EmbeddingProvider, EmbeddingsState } from "../client/embeddings";
import { clear, h, show } from "../view/dom";
import {
  changeEmbeddingModel,
  describeEmbeddings,
  describeSwitch,
  describeTest,
  EMBEDDING_KEY_ID,
  type EmbeddingApi,
  type EmbeddingForm,
  ENDPOINT_PRESETS,
  formOf,
  formProblem,
  isChange,
  updateOf,
} from "./embeddingChoice";
import type { KeyStore } from "./secrets";

/** What the section needs from the plugin. */
export interface EmbeddingControls {
  readonly api: EmbeddingApi;
  readonly keys: KeyStore;
  /** Show the cost, ask (the confirm dialog). */
  confirm(cost: EmbeddingCost): Promise<boolean>;
  sleep?(ms: number): Promise<void>;
}

function row(parent: HTMLElement, name: string, desc: string): { el: HTMLElement; control: HTMLElement; descEl: HTMLElement } {
  const el = h(parent, "div", { cls: "setting-item" });
  const info = h(el, "div", { cls: "setting-item-info" });
  h(info, "div", { cls: "setting-item-name", text: name });
  const descEl = h(info, "div", { cls: "setting-item-description", text: desc });
  const control = h(el, "div", { cls: "setting-item-control" });
  return { el, control, descEl };
}

export function displayEmbeddingSection(containerEl: HTMLElement, controls: EmbeddingControls): { refresh(): Promise<void> } {
  const root = h(containerEl, "div", { cls: "vault-rag-embedding" });
  const heading = h(root, "div", { cls: "setting-item setting-item-heading" });
  h(h(heading, "div", { cls: "setting-item-info" }), "div", { cls: "setting-item-name", text: "Embedding model" });
  const inUse = row(root, "In use", "Asking the sidecar…");
  inUse.descEl.setAttribute("data-testid", "embedding-in-use");

  const providerRow = row(root, "Embeddings come from", "Changing the model re-embeds every note; the cost is shown before anything happens.");
  const provider = h(providerRow.control, "select", { cls: "dropdown", testid: "embedding-provider" });
  const modelRow = row(root, "Model", "The model's name on the endpoint (e.g. nomic-embed-text), or a downloaded fastembed model.");
  const model = h(modelRow.control, "input", { testid: "embedding-model", attrs: { type: "text", placeholder: "Model name", list: "vault-rag-fastembed-models" } });
  const cached = h(modelRow.control, "datalist", { attrs: { id: "vault-rag-fastembed-models" } });
  const urlRow = row(root, "Endpoint", "An OpenAI-compatible server's base URL (ending in /v1); the presets fill it in. Empty: OpenAI.");
  const preset = h(urlRow.control, "select", { cls: "dropdown" });
  h(preset, "option", { text: "Preset…", attrs: { value: "" } });
  for (const p of ENDPOINT_PRESETS) h(preset, "option", { text: p.label, attrs: { value: p.url } });
  const url = h(urlRow.control, "input", { testid: "embedding-base-url", attrs: { type: "text", placeholder: "http://127.0.0.1:11434/v1" } });
  const keyRow = row(root, "Endpoint API key", `For endpoints that need one. Kept in ${controls.keys.where}, never in the plugin's data file.`);
  const key = h(keyRow.control, "input", { testid: "embedding-key", attrs: { type: "password" } });
  key.value = controls.keys.get(EMBEDDING_KEY_ID);
  const actions = row(root, "Change the embedding model", "Test asks the endpoint for one embedding; Change… shows the cost and asks first.");
  const test = h(actions.control, "button", { text: "Test", testid: "embedding-test" });
  const change = h(actions.control, "button", { text: "Change…", cls: "mod-cta", testid: "embedding-change" });
  const status = h(root, "div", { cls: "setting-item-description vault-rag-embedding-status", testid: "embedding-status" });

  let state: EmbeddingsState | null = null;
  const form = (): EmbeddingForm => ({ provider: provider.value as EmbeddingProvider, model: model.value, baseUrl: url.value });
  const layout = () => {
    const p = provider.value;
    show(modelRow.el, p === "openai" || p === "fastembed");
    show(urlRow.el, p === "openai");
    show(keyRow.el, p === "openai");
    const option = state?.options.find((o) => o.provider === p);
    clear(cached);
    for (const m of option?.models ?? []) h(cached, "option", { attrs: { value: m } });
    change.disabled = state === null || !isChange(form(), state) || formProblem(form(), state) !== null;
  };
  const say = (text: string, error = false) => {
    status.textContent = text;
    status.classList.toggle("vault-rag-setting-error", error);
  };
  const fill = (next: EmbeddingsState) => {
    state = next;
    inUse.descEl.textContent = describeEmbeddings(next);
    clear(provider);
    for (const o of next.options) {
      h(provider, "option", { text: o.available ? o.label : `${o.label} — ${o.reason ?? "not available"}`, attrs: { value: o.provider } });
    }
    const now = formOf(next);
    provider.value = now.provider;
    model.value = now.model;
    url.value = now.baseUrl;
    if (next.switch && next.switch.state !== "idle") say(describeSwitch(next.switch), next.switch.state === "failed");
    layout();
  };
  const refresh = async () => {
    try {
      fill(await controls.api.embeddings());
    } catch (error) {
      inUse.descEl.textContent = `The sidecar could not be asked: ${errorText(error)}`;
    }
  };

  provider.addEventListener("change", layout);
  model.addEventListener("input", layout);
  url.addEventListener("input", layout);
  preset.addEventListener("change", () => {
    if (preset.value === "") return;
    url.value = preset.value;
    preset.value = "";
    layout();
  });
  key.addEventListener("change", () => controls.keys.set(EMBEDDING_KEY_ID, key.value.trim()));
  test.addEventListener("click", () => {
    say("Asking the endpoint…");
    controls.api
      .testEmbeddings(updateOf(form(), key.value))
      .then((result) => say(describeTest(result), !result.ok))
      .catch((error: unknown) => say(`The sidecar could not be asked: ${errorText(error)}`, true));
  });
  change.addEventListener("click", () => {
    if (state === null) return;
    const problem = formProblem(form(), state);
    if (problem !== null) return say(problem, true);
    controls.keys.set(EMBEDDING_KEY_ID, key.value.trim());
    change.disabled = true;
    say("Measuring what the change costs (the new model embeds a few of your notes)…");
    const sleep = (ms: number) => (controls.sleep ? controls.sleep(ms) : new Promise<void>((resolve) => window.setTimeout(resolve, ms)));
    changeEmbeddingModel({ api: controls.api, confirm: (cost) => controls.confirm(cost), progress: (line) => say(line), sleep }, form(), key.value)
      .then(async (outcome) => {
        say(outcome.message, outcome.kind === "failed" || outcome.kind === "unusable");
        if (outcome.kind === "done") fill(outcome.state);
        else await refresh();
        if (outcome.kind === "done") say(outcome.message);
      })
      .catch((error: unknown) => say(`The change could not be made: ${errorText(error)}`, true))
      .finally(() => layout());
  });
  void refresh();
  return { refresh };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
