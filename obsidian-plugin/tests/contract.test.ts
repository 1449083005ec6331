/**
 * The client against the sidecar's exported contract (`../shared-schemas/openapi.json`): every
 * route it calls exists with its method, every request body it sends validates against the
 * request schema (the sidecar forbids unknown fields), the answers it parses are shaped as the
 * response schemas say (each sample below must validate, then parse to what the plugin needs),
 * and it knows exactly the ask stream's events the spec documents, each parsed from data that
 * validates against that event's schema.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { ASK_EVENTS, parseAskEvent, SidecarClient } from "../src/client";
import { proofResponse } from "./helpers/proofs";

type Schema = Record<string, unknown>;

const OPENAPI = path.resolve(__dirname, "../../shared-schemas/openapi.json");
const spec = existsSync(OPENAPI)
  ? (JSON.parse(readFileSync(OPENAPI, "utf8")) as { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } })
  : null;

function deref(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== "string" || spec === null) return schema;
  return spec.components.schemas[ref.replace("#/components/schemas/", "")] ?? {};
}

/** Problems of `value` against a JSON schema (the subset FastAPI emits). */
function validate(value: unknown, raw: Schema, where = "body"): string[] {
  const schema = deref(raw);
  if (Array.isArray(schema.anyOf)) {
    const options = (schema.anyOf as Schema[]).map((option) => validate(value, option, where));
    return options.some((problems) => problems.length === 0) ? [] : (options[0] ?? []);
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return [`${where}: ${String(value)} not in enum`];
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where}: not an object`];
      const record = value as Record<string, unknown>;
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const problems = ((schema.required ?? []) as string[]).filter((key) => !(key in record)).map((key) => `${where}.${key}: missing`);
      for (const [key, item] of Object.entries(record)) {
        const property = properties[key];
        if (property === undefined) {
          if (schema.additionalProperties === false) problems.push(`${where}.${key}: not allowed`);
        } else problems.push(...validate(item, property, `${where}.${key}`));
      }
      return problems;
    }
    case "array": {
      if (!Array.isArray(value)) return [`${where}: not an array`];
      const problems = value.flatMap((item, i) => validate(item, (schema.items ?? {}) as Schema, `${where}[${i}]`));
      if (typeof schema.minItems === "number" && value.length < schema.minItems) problems.push(`${where}: too few items`);
      return problems;
    }
    case "string": {
      if (typeof value !== "string") return [`${where}: not a string`];
      if (typeof schema.pattern === "string" && !new RegExp(schema.pattern).test(value)) return [`${where}: does not match ${schema.pattern}`];
      return typeof schema.minLength === "number" && value.length < schema.minLength ? [`${where}: too short`] : [];
    }
    case "integer":
      return Number.isInteger(value) ? [] : [`${where}: not an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${where}: not a number`];
    case undefined:
      return "const" in schema && value !== schema.const ? [`${where}: not ${String(schema.const)}`] : [];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${where}: not a boolean`];
    case "null":
      return value === null ? [] : [`${where}: not null`];
    default:
      return [];
  }
}

interface Sent {
  method: string;
  route: string;
  body: unknown;
}

/** A client whose fetch records the request and answers what `answer` says. */
function recordingClient(answer: unknown = {}) {
  const sent: Sent[] = [];
  const client = new SidecarClient(
    () => ({ url: "http://127.0.0.1:8765", token: "t" }),
    async (input, init) => {
      const proof = await proofResponse(input, "t"); // it proves it holds the token first
      if (proof !== null) return proof;
      sent.push({
        method: String(init.method),
        route: new URL(input).pathname,
        body: typeof init.body === "string" ? (JSON.parse(init.body) as unknown) : undefined,
      });
      return new Response(JSON.stringify(answer), { status: 200, headers: { "Content-Type": "application/json" } });
    },
  );
  return { client, sent };
}

/** The operation of `route` (`/v1/answers/x/feedback` matches `/v1/answers/{answer_id}/feedback`). */
function operation(method: string, route: string): Schema | undefined {
  if (spec === null) return undefined;
  for (const [template, item] of Object.entries(spec.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (pattern.test(route)) return item[method.toLowerCase()];
  }
  return undefined;
}

function responseSchema(op: Schema): Schema | null {
  const ok = (op.responses as Record<string, { content?: Record<string, { schema?: Schema }> }> | undefined)?.["200"];
  return ok?.content?.["application/json"]?.schema ?? null;
}

function requestSchema(op: Schema): Schema | null {
  const body = op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
  return body?.content?.["application/json"]?.schema ?? null;
}

const PROMOTED = { answer_id: "ans-1", path: "UE/T.md", note_path: "UE/T.md" };
const STATUS = {
  vault: "/v",
  data_dir: "/d",
  notes: 24,
  chunks: 100,
  embedded: 60,
  pending: 40,
  warnings: 0,
  embedding_model: "local:e5",
  index_model: "local:e5",
  llm_model: null,
  embed_rate_per_s: 3.5,
  eta_seconds: 12,
  last_run: null,
  last_error: "watcher: too many files",
  writer: {
    state: "embedding",
    job: null,
    phase: "embedding",
    done: 3,
    total: 40,
    queued: 0,
    reconciled: true,
    disk_batches: 1,
    chunks_embedded: 3,
    chunks_reused: 0,
  },
  watching: true,
  asks: { running: 0, completed: 1, cancelled: 0, failed: 0 },
};

/** Sample answers, each validated against the route's response schema before it is parsed. */
const RESPONSES: [string, string, string, unknown, (client: SidecarClient) => Promise<unknown>, unknown][] = [
  ["status", "GET", "/v1/status", STATUS, (c) => c.status(), { notes: 24, pending: 40, etaSeconds: 12, lastError: "watcher: too many files", writer: { state: "embedding", phase: "embedding", done: 3, total: 40, queued: 0 } }],
  [
    "note status",
    "GET",
    "/v1/status",
    { ...STATUS, note: { path: "C++/U.md", indexed: true, chunks: 5, embedded: 3, pending: 2, warnings: [] } },
    (c) => c.status("C++/U.md"),
    { notes: 24, note: { path: "C++/U.md", indexed: true, chunks: 5, embedded: 3, pending: 2 } },
  ],
  ["hashes", "GET", "/v1/notes/hashes", { algorithm: "sha256", hashes: { "A.md": "aa" } }, (c) => c.noteHashes(), new Map([["A.md", "aa"]])],
  ["promote", "POST", "/v1/answers/ans-1/promote", PROMOTED, (c) => c.promote("ans-1"), "UE/T.md"],
  [
    "threads",
    "GET",
    "/v1/threads",
    { threads: [{ thread_id: "t1", title: "蓝图？", updated_at: "2026-12-01T14:05:00.123456+00:00", message_count: 4 }], next_before: "1f0c-ab" },
    (c) => c.threads(),
    { threads: [{ threadId: "t1", title: "蓝图？", updatedAt: new Date("2026-12-01T14:05:00.123Z"), messageCount: 4 }], nextBefore: "1f0c-ab" },
  ],
];

/** Sample `data` of each ask stream event, validated against the event's schema, then parsed. */
const EVENTS: Record<string, [unknown, unknown]> = {
  progress: [{ node: "grade", aspect: 0, kept: 3 }, { type: "progress", node: "grade", aspect: 0, reset: false }],
  delta: [{ text: "用 UFUNCTION" }, { type: "delta", text: "用 UFUNCTION" }],
  citations: [
    { citations: [{ kind: "vault", note_path: "C++/U.md", heading: "U", anchor: "U", cite: "[[C++/U#U]]" }] },
    { type: "citations", citations: [{ kind: "vault", note_path: "C++/U.md", heading: "U", anchor: "U", cite: "[[C++/U#U]]" }] },
  ],
  final: [
    {
      answer: "A",
      answer_id: "ans-1",
      citations: [],
      usage: { llm_calls: 2, prompt_tokens: 10, completion_tokens: 5, repair_retries: 0 },
      thread_id: "t1",
      notes: [],
      aspects: [],
      intent: "on_topic",
      llm_calls: 2,
      prompt_tokens: 10,
      completion_tokens: 5,
      repair_retries: 0,
      mode: "strict",
      nodes: ["take_question"],
      focus: { path: "Rendering/Lumen.md", indexed: true, linked: 3, selection: true, cited: 2, cited_linked: 1 },
    },
    {
      type: "final",
      answer: "A",
      answerId: "ans-1",
      threadId: "t1",
      usage: { llm_calls: 2 },
      focus: { path: "Rendering/Lumen.md", indexed: true, linked: 3, selection: true, cited: 2, cited_linked: 1 },
    },
  ],
  error: [{ code: "runtime_error", message: "boom" }, { type: "error", code: "runtime_error", message: "boom" }],
};

const CALLS: [string, (client: SidecarClient) => Promise<unknown>][] = [
  ["health", (c) => c.health()],
  ["status", (c) => c.status("Rendering/Lumen.md")],
  ["put notes", (c) => c.putNotes([{ path: "A.md", content: "---\na: 1\n---\nbody", embeds: ["B.md"], mtime: 1_700_000_000_123 }])],
  ["delete notes", (c) => c.deleteNotes(["A.md"])],
  ["rename notes", (c) => c.renameNotes([{ oldPath: "A.md", newPath: "Folder/A.md" }])],
  ["files changed", (c) => c.filesChanged(["Papers/A.pdf", "Boards/B.canvas"])],
  ["hashes", (c) => c.noteHashes()],
  ["search", (c) => c.search("材质", 5)],
  ["related", (c) => c.related("Rendering/Lumen.md", 5)],
  ["threads", (c) => c.threads({ limit: 20, before: "1f0c-ab" })],
  ["thread", (c) => c.thread("0123abcd")],
  ["feedback", (c) => c.feedback("ans-1", 1)],
  ["promote", (c) => c.promote("ans-1", { title: "T", folder: "UE" })],
  ["exclude", (c) => c.setExcluded(["Journal/private", "Daily"])],
];

describe.skipIf(spec === null)("the client follows shared-schemas/openapi.json", () => {
  for (const [name, call] of CALLS) {
    it(name, async () => {
      const { client, sent } = recordingClient({ hashes: {}, path: "x.md" });
      await call(client);
      const request = sent[0] as Sent;
      const op = operation(request.method, request.route);
      expect(op, `${request.method} ${request.route} is not in openapi.json`).toBeDefined();
      const schema = requestSchema(op as Schema);
      if (schema === null) {
        expect(request.body).toBeUndefined();
        return;
      }
      expect(validate(request.body, schema)).toEqual([]);
    });
  }

  it("the ask request", async () => {
    const { client, sent } = recordingClient();
    // The recorded answer is not a stream; only the request matters here.
    await client.ask({ question: "蓝图？", thread_id: "0123456789abcdef0123456789abcdef", mode: "hybrid" }).next().catch(() => undefined);
    const request = sent[0] as Sent;
    const schema = requestSchema(operation(request.method, request.route) as Schema) as Schema;
    expect(validate(request.body, schema)).toEqual([]);
    expect(validate({ question: "q", extra: 1 }, schema)).toEqual(["body.extra: not allowed"]); // the checker checks
    // Asking about a note: the note as the pane sends it.
    const note = { path: "Rendering/Lumen.md", selection: "Lumen 用屏幕追踪", links: ["Rendering/Nanite.md"] };
    expect(validate({ question: "这段什么意思？", note }, schema)).toEqual([]);
  });

  for (const [name, method, route, answer, call, expected] of RESPONSES) {
    it(`the ${name} answer`, async () => {
      const schema = responseSchema(operation(method, route) as Schema);
      expect(schema, `${method} ${route} has no JSON response schema`).not.toBeNull();
      expect(validate(answer, schema as Schema, "response")).toEqual([]);
      const { client } = recordingClient(answer);
      const parsed = await call(client);
      if (parsed instanceof Map) expect(parsed).toEqual(expected);
      else if (typeof parsed === "object") expect(parsed).toMatchObject(expected as object);
      else expect(parsed).toBe(expected);
    });
  }

  it("the ask stream's events are exactly the documented ones", () => {
    const ask = operation("POST", "/v1/ask") as Schema;
    const doc = String((ask.responses as Record<string, { description?: string }>)["200"]?.description);
    const documented = (/`event: ([a-z|_]+)`/.exec(doc)?.[1] ?? "").split("|");
    expect([...ASK_EVENTS].sort()).toEqual([...documented].sort());
    expect(Object.keys(EVENTS).sort()).toEqual([...documented].sort());
  });

  for (const [event, [data, expected]] of Object.entries(EVENTS)) {
    it(`the ${event} event`, () => {
      const name = `${event[0]?.toUpperCase()}${event.slice(1)}Event`;
      const schema = (spec as NonNullable<typeof spec>).components.schemas[name];
      expect(schema, `${name} is not in openapi.json`).toBeDefined();
      expect(validate(data, schema as Schema, event)).toEqual([]);
      expect(parseAskEvent({ event, data: JSON.stringify(data), id: "" })).toMatchObject(expected as object);
    });
  }
});
