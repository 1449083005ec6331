/** The SSE parser on byte streams: framing, chunk splits, multibyte splits, aborts; and the
 * typed ask events built from its messages. */
import { describe, expect, it } from "vitest";

import { parseAskEvent, parseSSE, SidecarProtocolError, type SSEMessage } from "../src/client";
import { byteChunks, collect, streamOf } from "./helpers/streams";

const parse = (chunks: (string | Uint8Array)[]) => collect(parseSSE(streamOf(chunks).stream));
const msg = (event: string, data: string, id = ""): SSEMessage => ({ event, data, id });

const STREAM =
  'event: progress\ndata: {"node":"plan","aspects":3}\n\n' +
  ": ping 2024-01-01\n\n" +
  'event: delta\ndata: {"text":"蓝图调用 C++ 函数，"}\n\n' +
  'event: delta\ndata: {"text":"用 UFUNCTION(BlueprintCallable) 🚀"}\n\n' +
  'event: final\ndata: {"answer":"…","answer_id":"a1"}\n\n';

const EXPECTED = [
  msg("progress", '{"node":"plan","aspects":3}'),
  msg("delta", '{"text":"蓝图调用 C++ 函数，"}'),
  msg("delta", '{"text":"用 UFUNCTION(BlueprintCallable) 🚀"}'),
  msg("final", '{"answer":"…","answer_id":"a1"}'),
];

describe("parseSSE", () => {
  it("reads events, skipping comments", async () => {
    expect(await parse([STREAM])).toEqual(EXPECTED);
  });

  it("gives the same events wherever the stream is split", async () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (let cut = 1; cut < bytes.length; cut++) {
      const events = await parse([bytes.slice(0, cut), bytes.slice(cut)]);
      expect(events, `split at byte ${cut}`).toEqual(EXPECTED);
    }
  });

  it("decodes characters split across chunks, one byte per chunk", async () => {
    expect(await parse(byteChunks(STREAM))).toEqual(EXPECTED);
  });

  it("splits inside a three-byte Chinese character and a four-byte emoji", async () => {
    const text = 'data: {"text":"材质🚀"}\n\n';
    const bytes = new TextEncoder().encode(text);
    const start = bytes.indexOf(0xe6); // first byte of 材
    const emoji = bytes.indexOf(0xf0);
    const chunks = [bytes.slice(0, start + 1), bytes.slice(start + 1, start + 2), bytes.slice(start + 2, emoji + 2), bytes.slice(emoji + 2)];
    expect(await parse(chunks)).toEqual([msg("message", '{"text":"材质🚀"}')]);
  });

  it("joins multi-line data with newlines and keeps empty data lines", async () => {
    const events = await parse(["event: delta\ndata: line one\ndata:\ndata:  two spaces\n\n"]);
    expect(events).toEqual([msg("delta", "line one\n\n two spaces")]);
  });

  it("accepts CRLF, CR and LF line ends, also a CRLF split between chunks", async () => {
    const events = await parse(["event: a\r\ndata: 1\r", "\n\r", "\nevent: b\rdata: 2\r\r", "data: 3\n\n"]);
    expect(events).toEqual([msg("a", "1"), msg("b", "2"), msg("message", "3")]);
  });

  it("drops messages without data, discards an unfinished last message, skips a BOM", async () => {
    const events = await parse(["\uFEFFevent: progress\n\n", "id: 7\ndata: x\n\n", "retry: 10\nunknown: y\n", "data: cut off"]);
    expect(events).toEqual([msg("message", "x", "7")]);
  });

  it("treats a field without a colon as a field with an empty value", async () => {
    expect(await parse(["data\ndata\n\n"])).toEqual([msg("message", "\n")]);
  });

  it("stops and cancels the stream when the signal aborts", async () => {
    const source = streamOf(['event: delta\ndata: {"text":"a"}\n\n'], { keepOpen: true });
    const controller = new AbortController();
    const seen: SSEMessage[] = [];
    const run = (async () => {
      for await (const event of parseSSE(source.stream, controller.signal)) {
        seen.push(event);
        controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toHaveLength(1);
    expect(source.cancelled).toBe(true);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(collect(parseSSE(streamOf(["data: x\n\n"]).stream, controller.signal))).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("cancels the stream when the reader stops early", async () => {
    const source = streamOf(["data: 1\n\ndata: 2\n\n"], { keepOpen: true });
    for await (const event of parseSSE(source.stream)) {
      expect(event.data).toBe("1");
      break;
    }
    expect(source.cancelled).toBe(true);
  });

  it("passes a stream error on", async () => {
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new TypeError("network error"));
      },
    });
    await expect(collect(parseSSE(stream))).rejects.toThrow("network error");
  });
});

describe("parseAskEvent", () => {
  it("types progress, delta, citations and final events", () => {
    expect(parseAskEvent(msg("progress", '{"node":"retrieve_vault","aspect":1,"found":4}'))).toMatchObject({
      type: "progress",
      node: "retrieve_vault",
      aspect: 1,
      reset: false,
      data: { found: 4 },
    });
    expect(parseAskEvent(msg("progress", '{"node":"answer","reset":true}'))).toMatchObject({ reset: true, aspect: null });
    expect(parseAskEvent(msg("delta", '{"text":"你好"}'))).toEqual({ type: "delta", text: "你好" });
    const citations = [
      { kind: "vault", note_path: "C++/UFUNCTION.md", heading: "UFUNCTION > Specifiers", anchor: "Specifiers", cite: "[[C++/UFUNCTION#Specifiers]]", chunk_id: "c1" },
      { kind: "web", url: "https://dev.epicgames.com/x", title: "Docs", cite: "https://dev.epicgames.com/x", doc_id: "w" },
      { kind: "vault" },
      "nonsense",
    ];
    const cited = parseAskEvent(msg("citations", JSON.stringify({ citations })));
    expect(cited).toEqual({
      type: "citations",
      citations: [
        { kind: "vault", note_path: "C++/UFUNCTION.md", heading: "UFUNCTION > Specifiers", anchor: "Specifiers", cite: "[[C++/UFUNCTION#Specifiers]]", chunk_id: "c1", line_start: null },
        { kind: "web", url: "https://dev.epicgames.com/x", title: "Docs", cite: "https://dev.epicgames.com/x" },
      ],
    });
    const final = parseAskEvent(msg("final", JSON.stringify({ answer: "A", answer_id: "ans-1", thread_id: "t1", citations, usage: { llm_calls: 2 } })));
    expect(final).toMatchObject({ type: "final", answer: "A", answerId: "ans-1", threadId: "t1", usage: { llm_calls: 2 } });
  });

  it("reads error events by their code (ErrorEvent); the graph sends `code` itself, so no other field is read", () => {
    expect(parseAskEvent(msg("error", '{"code":"index_busy","message":"try again"}'))).toEqual({
      type: "error",
      code: "index_busy",
      message: "try again",
    });
    // The old hedges are gone: `kind` (the graph's exception type) and `detail` are not the contract.
    expect(parseAskEvent(msg("error", '{"kind":"RuntimeError","detail":"boom"}'))).toEqual({
      type: "error",
      code: "error",
      message: "the sidecar reported an error",
    });
    expect(parseAskEvent(msg("error", "{}"))).toMatchObject({ code: "error", message: "the sidecar reported an error" });
  });

  it("ignores unknown events and refuses data that is not a JSON object", () => {
    expect(parseAskEvent(msg("message", "hello"))).toBeNull();
    expect(parseAskEvent(msg("ping", "{}"))).toBeNull();
    expect(() => parseAskEvent(msg("delta", "not json"))).toThrow(SidecarProtocolError);
    expect(() => parseAskEvent(msg("final", "[1]"))).toThrow(SidecarProtocolError);
  });
});
