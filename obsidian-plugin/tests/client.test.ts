/**
 * The sidecar client against a real HTTP server on 127.0.0.1 (node:http), not a mocked fetch:
 * the bearer token, the error classes (401, unreachable, other statuses, timeouts), request
 * bodies, and the ask stream read while the server is still writing it, including a stop.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import {
  type AskEvent,
  connectionStateOf,
  SidecarAuthError,
  SidecarClient,
  SidecarHttpError,
  SidecarProtocolError,
  SidecarTimeoutError,
  SidecarUnreachableError,
} from "../src/client";
import { tokenProof } from "../src/sidecar/proof";
import { collect } from "./helpers/streams";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void | Promise<void>;

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  contentType: string | undefined;
  body: string;
}

const servers: Server[] = [];

/** A server on 127.0.0.1 running `handler`. It answers `GET /v1/health?challenge=` itself
 * with the proof of `provesAs` (the sidecar's, `shared-schemas/fixtures/health-proof.json`),
 * kept in `challenges` rather than `seen`; `provesAs: null` leaves those to `handler`. */
async function serve(handler: Handler, provesAs: string | null = "s3cret") {
  const seen: Seen[] = [];
  const closed: string[] = [];
  const challenges: { challenge: string; auth: string | undefined }[] = [];
  const server = createServer((req, res) => {
    const challenge = new URL(req.url ?? "/", "http://x").searchParams.get("challenge");
    if (provesAs !== null && challenge !== null) {
      challenges.push({ challenge, auth: req.headers.authorization });
      void tokenProof(provesAs, challenge).then((proof) => json(res, 200, { status: "ok", proof }));
      return;
    }
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        auth: req.headers.authorization,
        contentType: req.headers["content-type"],
        body,
      });
      res.on("close", () => closed.push(req.url ?? ""));
      void handler(req, body, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, closed, server, challenges };
}

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(value));
}

function client(url: string, token = "s3cret") {
  return new SidecarClient(() => ({ url, token }));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("SidecarClient: errors", () => {
  it("sends the bearer token and reads JSON", async () => {
    const { url, seen } = await serve((_req, _body, res) => json(res, 200, { notes: 1, chunks: 2, pending: 0, embedded: 2 }));
    expect((await client(url).status()).notes).toBe(1);
    expect(seen[0]).toMatchObject({ method: "GET", url: "/v1/status", auth: "Bearer s3cret" });
  });

  it("sends no Authorization header without a token", async () => {
    const { url, seen } = await serve((_req, _body, res) => json(res, 200, {}));
    await client(url, "").status().catch(() => undefined);
    expect(seen[0]?.auth).toBeUndefined();
  });

  it("never sends the token to /v1/health (whatever answers may not be the sidecar), and passes the challenge", async () => {
    const { url, seen } = await serve((_req, _body, res) => json(res, 200, { status: "ok", version: "0.1", proof: "ab" }), null);
    expect(await client(url).health()).toEqual({ status: "ok", version: "0.1", proof: "ab" });
    await client(url).health({ challenge: "c7f3a1e0 9b5d&4e2f" });
    expect(seen.map((s) => [s.url, s.auth])).toEqual([
      ["/v1/health", undefined],
      ["/v1/health?challenge=c7f3a1e0%209b5d%264e2f", undefined],
    ]);
  });

  it("maps 401 to SidecarAuthError", async () => {
    // A server that proves the token yet refuses it (the real sidecar never does both).
    const { url } = await serve((_req, _body, res) => json(res, 401, { detail: "bad token" }), "wrong");
    const error = await client(url, "wrong").status().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarAuthError);
    expect((error as Error).message).toContain("refused the token");
  });

  it("maps a refused connection to SidecarUnreachableError", async () => {
    const { url, server } = await serve(() => undefined);
    await new Promise((resolve) => server.close(resolve));
    const error = await client(url).status().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarUnreachableError);
    expect((error as SidecarUnreachableError).url).toBe(url);
    expect((error as Error).message).toContain("ECONNREFUSED");
  });

  it("maps a server that does not answer in time to SidecarTimeoutError (not unreachable)", async () => {
    const { url } = await serve(() => undefined); // never answers
    const error = await client(url).health({ timeoutMs: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarTimeoutError);
    expect(connectionStateOf(error)).toBeNull();
    expect((error as Error).message).toContain("did not answer within");
  });

  it("maps other statuses to SidecarHttpError with the sidecar's code and message", async () => {
    const { url } = await serve((req, _body, res) => {
      if (req.url === "/v1/notes") json(res, 422, { code: "invalid_request", message: "notes: Field required", detail: [] });
      else if (req.url === "/v1/threads/old") json(res, 404, { detail: [{ loc: ["path"], msg: "Not Found" }] });
      else if (req.url === "/v1/search") json(res, 500, { detail: "index is rebuilding" });
      else {
        res.writeHead(502);
        res.end("bad gateway");
      }
    });
    const c = client(url);
    await expect(c.putNotes([])).rejects.toMatchObject({ status: 422, code: "invalid_request", detail: "notes: Field required" });
    await expect(c.thread("old")).rejects.toMatchObject({ status: 404, code: "", detail: "Not Found" });
    await expect(c.search("x")).rejects.toMatchObject({ status: 500, detail: "index is rebuilding" });
    const error = await c.thread("t").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarHttpError);
    expect(error).toMatchObject({ status: 502, detail: "bad gateway" });
  });

  it("rejects a 2xx answer that is not JSON", async () => {
    const { url } = await serve((_req, _body, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end("<html>");
    });
    await expect(client(url).health()).rejects.toBeInstanceOf(SidecarProtocolError);
  });

  it("passes an abort through untouched", async () => {
    const { url } = await serve(() => undefined);
    const controller = new AbortController();
    const pending = client(url).health({ signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("SidecarClient: requests", () => {
  it("sends notes, deletes, renames, feedback and promote with their bodies", async () => {
    const { url, seen } = await serve((req, _body, res) => {
      if (req.url?.endsWith("/promote")) json(res, 201, { path: "Answers/Blueprint 调用.md" });
      else if (req.url === "/v1/notes/hashes") json(res, 200, { algorithm: "sha256", hashes: { "A.md": "aa", "B.md": "bb" } });
      else if (req.method === "DELETE") {
        res.writeHead(204);
        res.end();
      } else json(res, 200, { reembedded: 1, reused: 0, skipped: 0 });
    });
    const c = client(url);
    const note = { path: "Rendering/材质.md", content: "# 材质\n", embeds: ["B.md"], mtime: 1700000000123 };
    expect(await c.putNotes([note])).toEqual({ reembedded: 1, reused: 0, skipped: 0 });
    expect(await c.deleteNotes(["Old.md"])).toEqual({});
    await c.renameNotes([{ oldPath: "A.md", newPath: "Folder/A.md" }]);
    expect(await c.noteHashes()).toEqual(
      new Map([
        ["A.md", "aa"],
        ["B.md", "bb"],
      ]),
    );
    await c.feedback("ans 1", -1);
    expect(await c.promote("ans 1", { folder: "Answers" })).toBe("Answers/Blueprint 调用.md");
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "PUT /v1/notes",
      "DELETE /v1/notes",
      "POST /v1/notes/rename",
      "GET /v1/notes/hashes",
      "POST /v1/answers/ans%201/feedback",
      "POST /v1/answers/ans%201/promote",
    ]);
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ notes: [note] });
    expect(seen[0]?.contentType).toBe("application/json");
    expect(JSON.parse(seen[1]?.body ?? "")).toEqual({ paths: ["Old.md"] });
    expect(JSON.parse(seen[2]?.body ?? "")).toEqual({ renames: [{ old_path: "A.md", new_path: "Folder/A.md" }] });
    expect(JSON.parse(seen[4]?.body ?? "")).toEqual({ rating: -1 });
    expect(JSON.parse(seen[5]?.body ?? "")).toEqual({ folder: "Answers" });
  });

  it("names changed PDFs and canvases in POST /v1/notes/changed, never their bytes", async () => {
    const { url, seen } = await serve((_req, _body, res) => json(res, 200, { results: [], indexed: 1, deleted: 1 }));
    expect(await client(url).filesChanged(["Papers/A.pdf", "Boards/B.canvas"])).toEqual({ results: [], indexed: 1, deleted: 1 });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /v1/notes/changed"]);
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ paths: ["Papers/A.pdf", "Boards/B.canvas"] });
  });

  it("reads the status counts", async () => {
    const { url, seen } = await serve((_req, _body, res) =>
      json(res, 200, {
        notes: 24,
        chunks: 100,
        embedded: 60,
        pending: 40,
        eta_seconds: 12,
        last_error: null,
        writer: { state: "embedding", job: "upsert notes", phase: "embedding", done: 60, total: 100, queued: 1 },
      }),
    );
    const status = await client(url).status("A.md");
    expect(status).toMatchObject({ notes: 24, chunks: 100, embedded: 60, pending: 40, etaSeconds: 12, lastError: null });
    expect(status.writer).toEqual({ state: "embedding", phase: "embedding", done: 60, total: 100, queued: 1 });
    expect(seen[0]?.url).toBe("/v1/status?path=A.md");
  });
});

/** An SSE endpoint writing `parts` with a pause between them. */
function sseHandler(parts: (string | Buffer)[], options: { end?: boolean; pauseMs?: number } = {}): Handler {
  return async (_req, _body, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    res.flushHeaders();
    for (const part of parts) {
      if (res.destroyed) return;
      res.write(part);
      await sleep(options.pauseMs ?? 5);
    }
    if (options.end !== false) res.end();
  };
}

describe("SidecarClient.ask", () => {
  it("streams typed events as the server writes them, split anywhere", async () => {
    const body = Buffer.from(
      'event: progress\r\ndata: {"node":"plan","aspects":2}\r\n\r\n' +
        ": ping\r\n\r\n" +
        'event: delta\r\ndata: {"text":"用 UFUNCTION 暴露"}\r\n\r\n' +
        'event: citations\r\ndata: {"citations":[{"kind":"vault","note_path":"C++/UFUNCTION.md","heading":"H","anchor":"H","cite":"[[C++/UFUNCTION#H]]"}]}\r\n\r\n' +
        'event: final\r\ndata: {"answer":"用 UFUNCTION 暴露","answer_id":"a1","thread_id":"t1","citations":[]}\r\n\r\n',
    );
    // Cut into 7-byte writes: cuts land inside CRLFs, field names and Chinese characters.
    const parts: Buffer[] = [];
    for (let i = 0; i < body.length; i += 7) parts.push(body.subarray(i, i + 7));
    const { url, seen } = await serve(sseHandler(parts, { pauseMs: 1 }));
    const events = await collect(client(url).ask({ question: "蓝图怎么调 C++？", thread_id: "t1", mode: "hybrid" }));
    expect(events.map((e) => e.type)).toEqual(["progress", "delta", "citations", "final"]);
    expect(events[1]).toEqual({ type: "delta", text: "用 UFUNCTION 暴露" });
    expect(events[3]).toMatchObject({ answerId: "a1", threadId: "t1" });
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ question: "蓝图怎么调 C++？", thread_id: "t1", mode: "hybrid" });
    expect(seen[0]?.auth).toBe("Bearer s3cret");
  });

  it("yields an error event and ends there", async () => {
    const { url } = await serve(
      sseHandler(['event: error\ndata: {"code":"model_unavailable","message":"no model"}\n\n', 'event: delta\ndata: {"text":"x"}\n\n'], {
        end: false,
      }),
    );
    const events = await collect(client(url).ask({ question: "q" }));
    expect(events).toEqual([{ type: "error", code: "model_unavailable", message: "no model" }]);
  });

  it("rejects a stream that ends before its final event", async () => {
    const { url } = await serve(sseHandler(['event: delta\ndata: {"text":"half"}\n\n']));
    await expect(collect(client(url).ask({ question: "q" }))).rejects.toBeInstanceOf(SidecarProtocolError);
  });

  it("maps 401 and an unreachable sidecar before the stream starts", async () => {
    const { url } = await serve((_req, _body, res) => json(res, 401, { detail: "no" }));
    await expect(collect(client(url).ask({ question: "q" }))).rejects.toBeInstanceOf(SidecarAuthError);
    await expect(collect(client("http://127.0.0.1:9").ask({ question: "q" }))).rejects.toBeInstanceOf(
      SidecarUnreachableError,
    );
  });

  it("stops on abort and closes the connection, so the server can cancel the run", async () => {
    const deltas = Array.from({ length: 200 }, (_, i) => `event: delta\ndata: {"text":"${i} "}\n\n`);
    const { url, closed } = await serve(sseHandler(deltas, { pauseMs: 20, end: false }));
    const controller = new AbortController();
    const seen: AskEvent[] = [];
    const run = (async () => {
      for await (const event of client(url).ask({ question: "q" }, controller.signal)) {
        seen.push(event);
        if (seen.length === 2) controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toHaveLength(2);
    await expect.poll(() => closed).toEqual(["/v1/ask"]);
  });
});
