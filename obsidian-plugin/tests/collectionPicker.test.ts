// @vitest-environment happy-dom
/**
 * The pane's collection picker: the choice logic (`collectionChoice.ts`) and the picker in the
 * pane — hidden without sources, what each question sends as `collections`, kept on this device.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { type AskEvent, type AskRequest, type CollectionList, parseCollections } from "../src/client";
import {
  describeChoice,
  describeCollection,
  effective,
  entries,
  hasSources,
  loadChoice,
  preset,
  requestCollections,
  storeChoice,
  toggle,
} from "../src/view/collectionChoice";
import { AskPane } from "../src/view/pane";

afterEach(() => {
  document.body.innerHTML = "";
});

function listOf(names: string[], def: "all" | "vault" = "all"): CollectionList {
  return parseCollections({
    default: def,
    scanning: false,
    collections: names.map((name, i) => ({
      name,
      kind: i === 0 ? "vault" : "code",
      primary: i === 0,
      path: `/data/${name}`,
      indexed: true,
      files: 10 * (i + 1),
      chunks: 40 * (i + 1),
      embedded: 40 * (i + 1),
      skipped: i === 1 ? 2 : 0,
      skipped_files: i === 1 ? [{ path: "Binaries/", why: "build folder" }, { path: "big.min.js", why: "over 2 MB" }] : [],
      problem: null,
    })),
  });
}

const THREE = listOf(["vault", "engine", "tools"]);

describe("collectionChoice", () => {
  it("starts on the sidecar's default and sends nothing for it", () => {
    expect(effective(THREE, null)).toEqual(["vault", "engine", "tools"]);
    expect(describeChoice(THREE, null)).toBe("All collections");
    expect(requestCollections(THREE, null)).toEqual({});
    const vaultFirst = listOf(["vault", "engine"], "vault");
    expect(effective(vaultFirst, null)).toEqual(["vault"]);
    expect(describeChoice(vaultFirst, null)).toBe("This vault only");
    // "All" is not that sidecar's default: it is sent
    expect(requestCollections(vaultFirst, preset(vaultFirst, "all"))).toEqual({ collections: ["vault", "engine"] });
  });

  it("checks and unchecks collections, never down to none", () => {
    let choice = toggle(THREE, null, "tools", false);
    expect(choice).toEqual(["vault", "engine"]);
    expect(describeChoice(THREE, choice)).toBe("vault + engine");
    choice = toggle(THREE, choice, "vault", false);
    expect(requestCollections(THREE, choice)).toEqual({ collections: ["engine"] });
    expect(toggle(THREE, choice, "engine", false)).toEqual(["engine"]); // the last one stays
    expect(entries(THREE, choice).map((e) => [e.name, e.checked, e.disabled])).toEqual([
      ["vault", false, false],
      ["engine", true, true],
      ["tools", false, false],
    ]);
    // checking every one again is the default: null, following the sidecar's setting
    expect(toggle(THREE, toggle(THREE, choice, "vault", true), "tools", true)).toBeNull();
    expect(preset(THREE, "vault")).toEqual(["vault"]);
    expect(preset(THREE, "all")).toBeNull();
  });

  it("drops a source that is gone, and keeps a choice while the list is unknown", () => {
    expect(requestCollections(THREE, ["gone", "engine"])).toEqual({ collections: ["engine"] });
    expect(requestCollections(THREE, ["gone"])).toEqual({}); // nothing left: the default
    expect(requestCollections(null, ["vault"])).toEqual({ collections: ["vault"] });
  });

  it("labels each collection with its kind, counts and skipped files", () => {
    const [vault, engine] = entries(THREE, null);
    expect(vault?.label).toBe("This vault");
    expect(engine?.label).toBe("engine (code)");
    expect(engine?.title).toBe("code · /data/engine · 20 files, 80 passages · 2 skipped: Binaries/ (build folder), big.min.js (over 2 MB)");
    const broken = { ...THREE.collections[2]!, indexed: false, problem: "the folder /x is missing" };
    expect(describeCollection(broken)).toBe("code · /data/tools · cannot be indexed: the folder /x is missing");
    expect(hasSources(listOf(["vault"]))).toBe(false);
    expect(hasSources(THREE)).toBe(true);
    expect(hasSources(null)).toBe(false);
  });

  it.each([null, "", "{", "42", '["", 3]'])("reads a stored %s as the default", (text) => {
    expect(loadChoice(text)).toBeNull();
  });

  it("keeps a choice as JSON", () => {
    expect(loadChoice(storeChoice(["vault", "engine"]))).toEqual(["vault", "engine"]);
    expect(storeChoice(null)).toBeNull();
  });
});

function pane(list: () => Promise<CollectionList>, stored: string | null = null) {
  const requests: AskRequest[] = [];
  const store = { value: stored, load: () => store.value, save: (v: string | null) => void (store.value = v) };
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
    collectionPicker: { list, store },
  });
  const button = document.querySelector<HTMLButtonElement>('[data-testid="collection-picker"]')!;
  const option = (name: string) => document.querySelector<HTMLInputElement>(`[data-testid="collection-option"][data-name="${name}"] input`)!;
  return { pane: p, button, option, requests, store };
}

describe("the collection picker in the pane", () => {
  it("is hidden while the vault has no source beside it, and questions send nothing", async () => {
    const list = vi.fn(async () => listOf(["vault"]));
    const { pane: p, button, requests } = pane(list);
    await vi.waitFor(() => expect(list).toHaveBeenCalled());
    await p.ask("q");
    expect(button.hidden).toBe(true);
    expect(requests[0]).not.toHaveProperty("collections");
  });

  it("is hidden (and sends nothing) when the sidecar cannot list collections", async () => {
    const { pane: p, button, requests } = pane(async () => Promise.reject(new Error("404")));
    await p.ask("q");
    expect(button.hidden).toBe(true);
    expect(requests[0]).not.toHaveProperty("collections");
  });

  it("sends the picked collections and keeps the choice on this device", async () => {
    const { pane: p, button, option, requests, store } = pane(async () => THREE);
    await vi.waitFor(() => expect(button.hidden).toBe(false));
    expect(button.getAttribute("aria-label")).toBe("Search: All collections");
    await p.collectionPicker!.toggleOpen();
    option("vault").click(); // uncheck: engine + tools
    option("tools").click(); // uncheck: engine alone
    expect(option("engine").disabled).toBe(true);
    expect(button.getAttribute("aria-label")).toBe("Search: engine");
    expect(button.classList.contains("is-active")).toBe(true);
    await p.ask("where is the spawner");
    expect(requests[0]).toMatchObject({ collections: ["engine"] });
    expect(store.value).toBe('["engine"]');

    p.newConversation(); // a device-wide choice: the new conversation keeps it
    await p.ask("again");
    expect(requests[1]).toMatchObject({ collections: ["engine"] });

    document.querySelector<HTMLButtonElement>('[data-testid="collection-all"]')!.click();
    await p.ask("everything");
    expect(requests[2]).not.toHaveProperty("collections");
    expect(store.value).toBeNull();
  });

  it("reads the kept choice back in a new pane", async () => {
    const { pane: p, button, requests } = pane(async () => THREE, '["vault"]');
    await vi.waitFor(() => expect(button.getAttribute("aria-label")).toBe("Search: This vault only"));
    await p.ask("q");
    expect(requests[0]).toMatchObject({ collections: ["vault"] });
  });
});
