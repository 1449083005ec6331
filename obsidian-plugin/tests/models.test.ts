import { describe, expect, it } from "vitest";

import { parseModelsState, parseModelTry } from "../src/client/models";
import { choiceKey, describeModels, describeTry, modelsUpdateOf, parseDomains } from "../src/models/choice";

const chosen = { chatSource: "plugin" as const, chatBaseUrl: " http://127.0.0.1:11434/v1 ", chatModel: "llama3.2:3b ", webDomains: ["a.dev"] };

describe("the chat model chosen in Obsidian", () => {
  it("pushes nothing while the sidecar's settings file decides", () => {
    expect(modelsUpdateOf({ ...chosen, chatSource: "sidecar" }, { chatKey: "k", tavilyKey: "t" })).toBeNull();
    expect(choiceKey(null)).toBe("");
  });

  it("pushes the server, model, keys and domains, trimmed", () => {
    expect(modelsUpdateOf(chosen, { chatKey: " sk-1 ", tavilyKey: "" })).toEqual({
      base_url: "http://127.0.0.1:11434/v1",
      model: "llama3.2:3b",
      api_key: "sk-1",
      tavily_api_key: "",
      web_include_domains: ["a.dev"],
    });
  });

  it("reads the sidecar's answers, defaulting what is missing", () => {
    const state = parseModelsState({
      chat: { source: "plugin", base_url: "http://x/v1", model: "m", has_key: true, models: ["m", 3], error: null },
      web: { enabled: false, include_domains: null },
      embeddings: { provider: "local", model: "local:e5", change: "re-index" },
    });
    expect(state.chat).toEqual({ source: "plugin", baseUrl: "http://x/v1", model: "m", hasKey: true, models: ["m"], error: null });
    expect(describeModels(state)).toBe("In use: m at http://x/v1 (chosen here); no web search key; embeddings: local:e5.");
    expect(parseModelsState({}).chat.model).toBeNull();
  });

  it("says a try in one line", () => {
    expect(describeTry(parseModelTry({ ok: true, message: "m answered in 0.4 s", reply: "ready", models: [] }))).toBe(
      "m answered in 0.4 s. It said: “ready”",
    );
    expect(describeTry(parseModelTry({ ok: false, message: "http://x answered HTTP 401 (check the API key): bad" }))).toBe(
      "Failed: http://x answered HTTP 401 (check the API key): bad",
    );
  });

  it("reads allowed domains one per line or comma separated", () => {
    expect(parseDomains("Docs.Example.com\n, a.dev  a.dev\n")).toEqual(["docs.example.com", "a.dev"]);
  });
});
