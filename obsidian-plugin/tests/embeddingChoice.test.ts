// @vitest-environment happy-dom
/**
 * Changing the embedding model from Obsidian: the update sent for the form and key, the
 * sentences shown, the whole change against a scripted sidecar (cost first, nothing without the
 * user's yes, progress followed through a 503 while the sidecar switches), the key sent again
 * after a reconnection, and the settings section in happy-dom with the confirm dialog.
 */
import type { App } from "obsidian";
import { describe, expect, it, vi } from "vitest";

import type { EmbeddingCost, EmbeddingsChange, EmbeddingsState, EmbeddingsUpdate, EmbeddingSwitchState } from "../src/client/embeddings";
import { parseEmbeddingsChange, parseEmbeddingsState } from "../src/client/embeddings";
import {
  changeEmbeddingModel,
  describeCost,
  describeEmbeddings,
  describeSwitch,
  EMBEDDING_KEY_ID,
  type EmbeddingApi,
  formProblem,
  isChange,
  pushEmbeddingKey,
  updateOf,
} from "../src/models/embeddingChoice";
import { EmbeddingCostModal } from "../src/models/embeddingModal";
import { displayEmbeddingSection } from "../src/models/embeddingSection";
import type { KeyStore } from "../src/models/secrets";

const options = [
  { provider: "local", label: "Bundled local model", models: [], available: true, reason: null },
  { provider: "fastembed", label: "fastembed", models: [], available: false, reason: "no fastembed model is in its cache" },
  { provider: "openai", label: "OpenAI-compatible endpoint", models: [], available: true, reason: null },
];

function stateOf(over: Partial<EmbeddingsState> = {}): EmbeddingsState {
  return {
    source: "settings",
    provider: "local",
    model: null,
    base_url: null,
    has_key: false,
    model_id: "local:e5-small",
    index_model: "local:e5-small",
    notes: 40,
    units: 228,
    options,
    switch: null,
    ...over,
  };
}

const cost: EmbeddingCost = {
  notes: 40,
  units: 228,
  seconds: 95,
  rate_per_s: 2.4,
  basis: "measured now: 16 of the index's units embedded in 6.67 s (2.4 a second), times 228 units",
  dimension: 768,
  model_id: "openai:nomic-embed-text",
  error: null,
  message: "Changing the embedding model re-embeds all 228 units of 40 notes (about 2 min).",
};

function switchOf(over: Partial<EmbeddingSwitchState>): EmbeddingSwitchState {
  return {
    state: "embedding",
    provider: "openai",
    model: "nomic-embed-text",
    model_id: "openai:nomic-embed-text",
    phase: "embedding",
    done: 0,
    total: 228,
    eta_seconds: null,
    elapsed_seconds: 1,
    error: null,
    message: null,
    ...over,
  };
}

const form = { provider: "openai" as const, model: " nomic-embed-text ", baseUrl: " http://127.0.0.1:11434/v1/ " };

/** A sidecar that answers the cost, starts on confirm, then reports the given states in turn
 * (an Error is a failed poll, e.g. 503 `switching`). */
function scripted(polls: (EmbeddingSwitchState | Error)[], over: { cost?: EmbeddingCost } = {}) {
  const puts: EmbeddingsUpdate[] = [];
  const api: EmbeddingApi = {
    setEmbeddings: (body) => {
      puts.push(body);
      const started = body.confirm === true;
      const change: EmbeddingsChange = {
        changed: started,
        started,
        message: started ? "re-embedding the vault with the new model" : (over.cost ?? cost).message,
        cost: started ? null : (over.cost ?? cost),
        state: stateOf({ switch: started ? switchOf({ done: 0, phase: "chunking" }) : null }),
      };
      return Promise.resolve(change);
    },
    embeddings: () => {
      const next = polls.shift();
      if (next === undefined) throw new Error("polled past the script");
      if (next instanceof Error) return Promise.reject(next);
      const done = next.state === "done";
      return Promise.resolve(stateOf(done ? { source: "plugin", provider: "openai", model_id: next.model_id ?? "", index_model: next.model_id, switch: next } : { switch: next }));
    },
    testEmbeddings: () => Promise.resolve({ ok: true, message: "openai:nomic-embed-text answered in 0.1 s with 768-d vectors", dimension: 768 }),
  };
  return { api, puts };
}

const noSleep = () => Promise.resolve();
/** The shim's `Modal` takes any app; the dialog never reads it. */
const noApp = {} as unknown as App;

describe("the embedding model chosen in Obsidian", () => {
  it("sends only the fields a provider takes, trimmed, and the key only to an endpoint", () => {
    expect(updateOf(form, " sk-1 ")).toEqual({ provider: "openai", model: "nomic-embed-text", base_url: "http://127.0.0.1:11434/v1/", api_key: "sk-1", confirm: false });
    expect(updateOf({ provider: "local", model: "x", baseUrl: "y" }, "sk-1", true)).toEqual({ provider: "local", confirm: true });
    expect(updateOf({ ...form, provider: "fastembed" }, "sk-1")).toEqual({ provider: "fastembed", model: "nomic-embed-text", confirm: false });
  });

  it("tells a change from the model in use, and what is missing", () => {
    const now = stateOf({ provider: "openai", model: "nomic-embed-text", base_url: "http://127.0.0.1:11434/v1" });
    expect(isChange(form, now)).toBe(false); // the trailing slash and spaces do not count
    expect(isChange({ ...form, model: "bge-m3" }, now)).toBe(true);
    expect(isChange({ provider: "local", model: "", baseUrl: "" }, stateOf())).toBe(false);
    expect(formProblem({ ...form, model: " " }, stateOf())).toBe("Name the model.");
    expect(formProblem({ provider: "fastembed", model: "m", baseUrl: "" }, stateOf())).toContain("no fastembed model");
    expect(formProblem(form, stateOf())).toBeNull();
  });

  it("says the model in use, the cost and the switch in plain words", () => {
    expect(describeEmbeddings(stateOf())).toBe("In use: local:e5-small (from the sidecar's settings file); 228 units of 40 notes.");
    expect(describeEmbeddings(stateOf({ index_model: "hash:x" }))).toContain("The index was built with hash:x.");
    const text = describeCost(cost);
    expect(text.body).toBe(cost.message);
    expect(text.detail).toBe(
      "New model: openai:nomic-embed-text (768-d vectors). Embedding time estimated from measured now: 16 of the index's units embedded in 6.67 s (2.4 a second), times 228 units; reading and storing the notes adds to it.",
    );
    expect(describeSwitch(switchOf({ done: 64, eta_seconds: 40 }))).toBe(
      "Re-indexing with openai:nomic-embed-text: 64 of 228 units, about 40 s left. Searches use the current index meanwhile.",
    );
    expect(describeSwitch(switchOf({ phase: "sections", done: 3, total: 32, eta_seconds: null }))).toBe(
      "Re-indexing with openai:nomic-embed-text: sections for citations, 3 of 32 units. Searches use the current index meanwhile.",
    );
    expect(describeSwitch(switchOf({ state: "failed", error: "EmbeddingError: nothing answers" }))).toBe(
      "The switch to openai:nomic-embed-text failed: EmbeddingError: nothing answers. The previous index is still in use.",
    );
  });

  it("changes nothing when the user says no", async () => {
    const { api, puts } = scripted([]);
    const confirm = vi.fn(() => Promise.resolve(false));
    const outcome = await changeEmbeddingModel({ api, confirm, progress: () => undefined, sleep: noSleep }, form, "sk-1");
    expect(outcome.kind).toBe("declined");
    expect(confirm).toHaveBeenCalledWith(cost);
    expect(puts.map((p) => p.confirm)).toEqual([false]);
  });

  it("does not ask about a model the sidecar cannot use", async () => {
    const down = { ...cost, seconds: null, error: "nothing answers at http://x", message: "The new embedding model cannot be used: nothing answers at http://x. Nothing was changed." };
    const { api, puts } = scripted([], { cost: down });
    const confirm = vi.fn(() => Promise.resolve(true));
    const outcome = await changeEmbeddingModel({ api, confirm, progress: () => undefined, sleep: noSleep }, form, "");
    expect(outcome).toEqual({ kind: "unusable", message: down.message });
    expect(confirm).not.toHaveBeenCalled();
    expect(puts).toHaveLength(1);
  });

  it("asks, starts and follows the re-index through the switch-over to the end", async () => {
    const { api, puts } = scripted([
      switchOf({ done: 64, eta_seconds: 40 }),
      new Error("503 switching the embedding model"),
      switchOf({ state: "done", done: 228, message: "the new embedding model is in use" }),
    ]);
    const lines: string[] = [];
    const outcome = await changeEmbeddingModel({ api, confirm: () => Promise.resolve(true), progress: (l) => lines.push(l), sleep: noSleep }, form, "sk-1");
    expect(outcome.kind).toBe("done");
    expect(puts.map((p) => [p.confirm, p.api_key])).toEqual([
      [false, "sk-1"],
      [true, "sk-1"],
    ]);
    expect(lines).toEqual([
      "re-embedding the vault with the new model",
      "Re-indexing with openai:nomic-embed-text: 64 of 228 units, about 40 s left. Searches use the current index meanwhile.",
      "Switching over: the sidecar is opening the new index…",
      "Switched to openai:nomic-embed-text.",
    ]);
  });

  it("reports a failed switch, and gives up on a sidecar that stays away", async () => {
    const failed = scripted([switchOf({ state: "failed", error: "HTTP 503" })]);
    const outcome = await changeEmbeddingModel({ api: failed.api, confirm: () => Promise.resolve(true), progress: () => undefined, sleep: noSleep }, form, "");
    expect(outcome).toEqual({ kind: "failed", message: expect.stringContaining("The previous index is still in use.") as string });
    const gone = scripted([new Error("connection refused"), new Error("connection refused")]);
    const lost = await changeEmbeddingModel({ api: gone.api, confirm: () => Promise.resolve(true), progress: () => undefined, sleep: noSleep, maxMisses: 2 }, form, "");
    expect(lost).toEqual({ kind: "failed", message: "Lost the sidecar while switching: connection refused" });
  });

  it("sends the key again after a reconnection only for an endpoint chosen here", async () => {
    const sent: EmbeddingsUpdate[] = [];
    const api = (state: EmbeddingsState): EmbeddingApi => ({
      embeddings: () => Promise.resolve(state),
      setEmbeddings: (body) => {
        sent.push(body);
        return Promise.resolve(parseEmbeddingsChange({ changed: true, started: false, message: "key updated", cost: null, state }));
      },
      testEmbeddings: () => Promise.reject(new Error("unused")),
    });
    const remote = stateOf({ source: "plugin", provider: "openai", model: "m", base_url: "http://h/v1" });
    expect(await pushEmbeddingKey(api(remote), "sk-9")).toBe(true);
    expect(sent).toEqual([{ provider: "openai", model: "m", base_url: "http://h/v1", api_key: "sk-9", confirm: false }]);
    expect(await pushEmbeddingKey(api(remote), "")).toBe(false);
    expect(await pushEmbeddingKey(api(stateOf({ source: "settings", provider: "openai", model: "m" })), "sk-9")).toBe(false);
    expect(sent).toHaveLength(1);
    expect(() => parseEmbeddingsState({ provider: "local" })).toThrow("lacks provider, model_id or options");
  });
});

function memoryKeys(): KeyStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, where: "secret storage", get: (id) => map.get(id) ?? "", set: (id, value) => void map.set(id, value) };
}

async function settle(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 0));
  expect(check()).toBe(true);
}

describe("the settings section", () => {
  it("offers the choice, shows the cost in the dialog, and follows the re-index", async () => {
    const { api, puts } = scripted([switchOf({ done: 100, eta_seconds: 20 }), switchOf({ state: "done", done: 228 })]);
    const first = stateOf();
    const keys = memoryKeys();
    let dialog: EmbeddingCostModal | null = null;
    const container = document.createElement("div");
    document.body.appendChild(container);
    displayEmbeddingSection(container, {
      // The state in use until the change is confirmed; then the scripted switch.
      api: { ...api, embeddings: () => (puts.some((p) => p.confirm === true) ? api.embeddings() : Promise.resolve(first)) },
      keys,
      sleep: noSleep,
      confirm: (c) =>
        new Promise((resolve) => {
          dialog = new EmbeddingCostModal(noApp, c, resolve);
          dialog.open();
        }),
    });
    const q = <T extends HTMLElement>(id: string) => container.querySelector<T>(`[data-testid="${id}"]`) as T;
    await settle(() => q("embedding-in-use").textContent?.startsWith("In use: local:e5-small") === true);
    const provider = q<HTMLSelectElement>("embedding-provider");
    expect(Array.from(provider.querySelectorAll("option"), (o) => o.value)).toEqual(["local", "fastembed", "openai"]);
    expect(provider.options[1]?.textContent).toContain("no fastembed model is in its cache");
    expect(q<HTMLButtonElement>("embedding-change").disabled).toBe(true); // nothing changed yet
    provider.value = "openai";
    provider.dispatchEvent(new Event("change"));
    q<HTMLInputElement>("embedding-model").value = "nomic-embed-text";
    q<HTMLInputElement>("embedding-base-url").value = "http://127.0.0.1:11434/v1";
    q<HTMLInputElement>("embedding-key").value = "sk-secret";
    q<HTMLInputElement>("embedding-model").dispatchEvent(new Event("input"));
    expect(q<HTMLButtonElement>("embedding-change").disabled).toBe(false);
    q<HTMLButtonElement>("embedding-change").click();
    await settle(() => document.querySelector('[data-testid="embedding-confirm"]') !== null);
    expect(document.querySelector('[data-testid="embedding-cost"]')?.textContent).toBe(cost.message);
    expect(puts).toHaveLength(1); // only the question so far
    (document.querySelector('[data-testid="embedding-confirm"]') as HTMLButtonElement).click();
    await settle(() => q("embedding-status").textContent === "Switched to openai:nomic-embed-text.");
    expect(puts.map((p) => p.confirm)).toEqual([false, true]);
    expect(keys.map.get(EMBEDDING_KEY_ID)).toBe("sk-secret");
    expect(document.querySelector('[data-testid="embedding-confirm"]')).toBeNull(); // closed
    container.remove();
  });

  it("cancelling the dialog changes nothing", async () => {
    const { api, puts } = scripted([]);
    const container = document.createElement("div");
    displayEmbeddingSection(container, {
      api: { ...api, embeddings: () => Promise.resolve(stateOf()) },
      keys: memoryKeys(),
      sleep: noSleep,
      confirm: (c) => new Promise((resolve) => new EmbeddingCostModal(noApp, c, resolve).open()),
    });
    const q = <T extends HTMLElement>(id: string) => container.querySelector<T>(`[data-testid="${id}"]`) as T;
    await settle(() => q<HTMLSelectElement>("embedding-provider").options.length === 3);
    q<HTMLSelectElement>("embedding-provider").value = "openai";
    q<HTMLInputElement>("embedding-model").value = "m";
    q<HTMLInputElement>("embedding-model").dispatchEvent(new Event("input"));
    q<HTMLButtonElement>("embedding-change").click();
    await settle(() => document.querySelector('[data-testid="embedding-cancel"]') !== null);
    (document.querySelector('[data-testid="embedding-cancel"]') as HTMLButtonElement).click();
    await settle(() => q("embedding-status").textContent === "Nothing was changed.");
    expect(puts.map((p) => p.confirm)).toEqual([false]);
  });
});
