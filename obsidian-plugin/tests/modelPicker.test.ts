// @vitest-environment happy-dom
/**
 * The pane's per-conversation model picker: the options from `GET /v1/models`, the pick kept per
 * conversation (on this device) and sent with that conversation's questions only.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import type { AskEvent, AskRequest } from "../src/client";
import { MAX_THREAD_MODELS, pickerOptions, type TextStore, ThreadModels } from "../src/models/threadModels";
import type { ModelList } from "../src/view/modelPicker";
import { AskPane } from "../src/view/pane";

afterEach(() => {
  document.body.innerHTML = "";
});

function memoryStore(initial: string | null = null): TextStore & { value: string | null; saves: number } {
  const store = {
    value: initial,
    saves: 0,
    load: () => store.value,
    save: (value: string | null) => {
      store.value = value;
      store.saves++;
    },
  };
  return store;
}

describe("ThreadModels", () => {
  it("keeps a pick per thread, survives a reload and forgets with null", () => {
    const store = memoryStore();
    const models = new ThreadModels(store);
    models.set("a", "qwen2.5:7b");
    models.set("b", "");
    expect(new ThreadModels(store).get("a")).toBe("qwen2.5:7b");
    expect(new ThreadModels(store).get("b")).toBe("");
    expect(models.get("c")).toBeNull();
    const saves = store.saves;
    models.set("a", "qwen2.5:7b"); // unchanged: not written again
    expect(store.saves).toBe(saves);
    models.set("a", null);
    models.set("b", null);
    expect(store.value).toBeNull();
  });

  it("keeps only the most recent picks", () => {
    const store = memoryStore();
    const models = new ThreadModels(store, 3);
    for (const id of ["a", "b", "c"]) models.set(id, `m-${id}`);
    models.set("a", "m-a2"); // picked again: now the most recent
    models.set("d", "m-d");
    const reloaded = new ThreadModels(store, 3);
    expect(["a", "b", "c", "d"].map((id) => reloaded.get(id))).toEqual(["m-a2", null, "m-c", "m-d"]);
    expect(MAX_THREAD_MODELS).toBeGreaterThan(3);
  });

  it.each(["{not json", '{"a": "x"}', '[["a", 1], "b"]'])("reads an unreadable store %s as empty", (text) => {
    expect(new ThreadModels(memoryStore(text)).get("a")).toBeNull();
  });
});

describe("pickerOptions", () => {
  it("offers the model in use, the server's list and quotes only", () => {
    expect(pickerOptions("qwen2.5:7b", ["llama3.2:3b", "qwen2.5:7b"], null)).toEqual([
      { value: null, label: "Default (qwen2.5:7b)" },
      { value: "llama3.2:3b", label: "llama3.2:3b" },
      { value: "qwen2.5:7b", label: "qwen2.5:7b" },
      { value: "", label: "No model (quote my notes)" },
    ]);
  });

  it("keeps a picked model the server no longer lists", () => {
    const labels = pickerOptions(null, ["a"], "gone").map((o) => o.label);
    expect(labels).toEqual(["Default (quotes only)", "a", "gone (not listed)"]);
  });
});

/** A pane whose answers end at once; the requests it sent are kept. */
function pane(list: () => Promise<ModelList>, store = memoryStore()) {
  const requests: AskRequest[] = [];
  let next = 0;
  const p = new AskPane(document.body, {
    ask: (request) => {
      requests.push(request);
      return (async function* (): AsyncGenerator<AskEvent> {
        yield { type: "final", answer: "ok", answerId: "a", threadId: request.thread_id ?? null, citations: [], usage: null, data: {} };
      })();
    },
    feedback: async () => ({}),
    promote: async () => "",
    openNote: () => undefined,
    openSavedNote: () => undefined,
    renderMarkdown: async (markdown, el) => {
      el.textContent = markdown;
      return () => undefined;
    },
    defaultMode: () => "strict",
    newThreadId: () => `thread-${++next}`,
    loadThread: async () => [],
    modelPicker: { list: () => list(), store: new ThreadModels(store) },
  });
  const picker = document.querySelector<HTMLSelectElement>('[data-testid="model-picker"]') as HTMLSelectElement;
  const pick = (label: string) => {
    const option = Array.from(picker.options).find((o) => o.textContent === label);
    if (!option) throw new Error(`no option ${label}: ${Array.from(picker.options).map((o) => o.textContent).join(", ")}`);
    picker.value = option.value;
    picker.dispatchEvent(new Event("change"));
  };
  return { pane: p, picker, pick, requests, store };
}

const LISTED: ModelList = { inUse: "qwen2.5:7b", models: ["llama3.2:3b", "qwen2.5:7b"], error: null };

describe("the model picker in the pane", () => {
  it("sends the picked model with that conversation's questions only", async () => {
    const { pane: p, picker, pick, requests } = pane(async () => LISTED);
    await vi.waitFor(() => expect(picker.options).toHaveLength(4));
    expect(picker.selectedOptions[0]?.textContent).toBe("Default (qwen2.5:7b)");
    await p.ask("first, with the default");
    expect(requests[0]).not.toHaveProperty("model");

    pick("llama3.2:3b");
    await p.ask("second");
    expect(requests[1]).toMatchObject({ thread_id: "thread-1", model: "llama3.2:3b" });

    p.newConversation(); // a new conversation starts on the default
    expect(picker.selectedOptions[0]?.textContent).toBe("Default (qwen2.5:7b)");
    await p.ask("third");
    expect(requests[2]).toMatchObject({ thread_id: "thread-2" });
    expect(requests[2]).not.toHaveProperty("model");

    pick("No model (quote my notes)");
    await p.ask("fourth");
    expect(requests[3]).toMatchObject({ thread_id: "thread-2", model: "" });

    await p.openThread("thread-1"); // back to the first: its model again
    expect(picker.selectedOptions[0]?.textContent).toBe("llama3.2:3b");
    await p.ask("fifth");
    expect(requests[4]).toMatchObject({ thread_id: "thread-1", model: "llama3.2:3b" });
  });

  it("shows a conversation's model after a reload, even one the server no longer lists", async () => {
    const first = pane(async () => LISTED);
    await vi.waitFor(() => expect(first.picker.options).toHaveLength(4));
    first.pick("llama3.2:3b");
    first.pane.destroy();

    const later = pane(async () => ({ inUse: "qwen2.5:7b", models: ["qwen2.5:7b"], error: null }), first.store);
    await later.pane.openThread("thread-1");
    await vi.waitFor(() => expect(later.picker.selectedOptions[0]?.textContent).toBe("llama3.2:3b (not listed)"));
    await later.pane.ask("again");
    expect(later.requests[0]).toMatchObject({ model: "llama3.2:3b" });
  });

  it("works on the default when the model list cannot be read, and reads it again when opened", async () => {
    let calls = 0;
    const { pane: p, picker, requests } = pane(async () => {
      calls++;
      if (calls === 1) throw new Error("sidecar not up");
      return LISTED;
    });
    await vi.waitFor(() => expect(picker.title).toContain("could not be read"));
    expect(Array.from(picker.options).map((o) => o.textContent)).toEqual(["Default (quotes only)"]);
    await p.ask("q");
    expect(requests[0]).not.toHaveProperty("model");
    picker.dispatchEvent(new Event("focus"));
    await vi.waitFor(() => expect(picker.options).toHaveLength(4));
  });
});
