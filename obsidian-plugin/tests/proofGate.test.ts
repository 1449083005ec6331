/**
 * The client sends the bearer token only to a server that proved it holds it (issue 31,
 * defect 5; `src/client/proofGate.ts`), against real HTTP servers on 127.0.0.1: a squatter on
 * the port (200 to everything, no proof) never receives an Authorization header from any call,
 * a genuine stand-in proves once per (URL, token) and then gets the token, and a changed URL
 * or token, a failed connection or a restart makes whatever answers prove itself again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import { connectionStateOf, SidecarClient, SidecarUnprovenError, SidecarUnreachableError } from "../src/client";
import { tokenProof } from "../src/sidecar/proof";
import { collect } from "./helpers/streams";

const TOKEN = "vault-token-0123456789abcdef";

interface Recorded {
  url: string;
  /** Every request (challenges too): its path and Authorization header. */
  requests: { path: string; auth: string | undefined }[];
  challenges: number;
  /** Authorization headers received (never expected at a squatter). */
  auth: string[];
  server: Server;
  port: number;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * A server on `port` (0: a free one). `provesAs`: the token its health proof is made with
 * (the genuine sidecar's); null: a squatter, 200 `{"status":"ok"}` to everything, no proof.
 */
async function listen(provesAs: string | null, port = 0, delayProofMs = 0): Promise<Recorded> {
  const recorded = { requests: [], challenges: 0, auth: [] } as unknown as Recorded;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    const url = new URL(req.url ?? "/", "http://x");
    recorded.requests.push({ path: url.pathname + url.search, auth: req.headers.authorization });
    if (req.headers.authorization !== undefined) recorded.auth.push(req.headers.authorization);
    req.resume();
    const challenge = url.searchParams.get("challenge");
    if (url.pathname === "/v1/health" && challenge !== null) recorded.challenges++;
    if (provesAs === null) return send(200, { status: "ok" });
    if (url.pathname === "/v1/health") {
      if (challenge === null) return send(200, { status: "ok", version: "stand-in" });
      setTimeout(() => void tokenProof(provesAs, challenge).then((proof) => send(200, { status: "ok", proof })), delayProofMs);
      return;
    }
    if (req.headers.authorization !== `Bearer ${provesAs}`) return send(401, { code: "unauthorized", message: "no", detail: null });
    if (url.pathname === "/v1/status") return send(200, { notes: 3, chunks: 9, embedded: 9, pending: 0 });
    return send(200, {});
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  recorded.server = server;
  recorded.port = (server.address() as AddressInfo).port;
  recorded.url = `http://127.0.0.1:${recorded.port}`;
  return recorded;
}

async function close(server: Server): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** Every call of the client that carries the token. */
function everyCall(client: SidecarClient): [string, () => Promise<unknown>][] {
  const choice = { base_url: "http://127.0.0.1:11434/v1", model: "m", api_key: "", tavily_api_key: "", web_include_domains: [] };
  return [
    ["status (the poller)", () => client.status()],
    ["putNotes (sync)", () => client.putNotes([{ path: "A.md", content: "# A\n", embeds: [], mtime: 1 }])],
    ["deleteNotes (sync)", () => client.deleteNotes(["A.md"])],
    ["renameNotes (sync)", () => client.renameNotes([{ oldPath: "A.md", newPath: "B.md" }])],
    ["noteHashes (reconcile)", () => client.noteHashes()],
    ["setExcluded (exclusion push)", () => client.setExcluded(["Private"])],
    ["setModels (model push)", () => client.setModels(choice)],
    ["models", () => client.models(true)],
    ["tryModels", () => client.tryModels(choice)],
    ["search", () => client.search("q")],
    ["related", () => client.related("A.md")],
    ["threads", () => client.threads()],
    ["thread", () => client.thread("t")],
    ["feedback", () => client.feedback("a", 1)],
    ["promote", () => client.promote("a")],
    ["ask", () => collect(client.ask({ question: "q" }))],
  ];
}

describe("the token goes only to a server that proved it holds it", () => {
  it("a squatter on the port never receives it, from any call", async () => {
    const squatter = await listen(null);
    const client = new SidecarClient(() => ({ url: squatter.url, token: TOKEN }));
    for (const [name, call] of everyCall(client)) {
      const error = await call().then(
        () => new Error(`${name} succeeded`),
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(SidecarUnprovenError);
      expect(connectionStateOf(error)).toBe("unproven");
    }
    expect(squatter.auth).toEqual([]);
    // It was only ever asked to prove itself: every request was a fresh challenge.
    expect(squatter.requests.every((r) => r.path.startsWith("/v1/health?challenge="))).toBe(true);
    expect(new Set(squatter.requests.map((r) => r.path)).size).toBe(squatter.requests.length);
    expect(squatter.challenges).toBe(everyCall(client).length);
    const error = await client.status().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      new RegExp(`^Something else is answering on port ${squatter.port} \\(http://127\\.0\\.0\\.1:${squatter.port}\\) and cannot prove it holds this vault's token, so the token was not sent\\.`),
    );
    expect(await client.prove()).toBe(false);
    expect(client.proven).toBe(false);
  });

  it("the genuine sidecar proves once per (URL, token), concurrent requests sharing one proof", async () => {
    const sidecar = await listen(TOKEN, 0, 50);
    const client = new SidecarClient(() => ({ url: sidecar.url, token: TOKEN }));
    const answers = await Promise.all([client.status(), client.status(), client.noteHashes().catch(() => null), client.setExcluded([])]);
    expect(answers[0]).toMatchObject({ notes: 3 });
    await client.status();
    expect(sidecar.challenges).toBe(1);
    expect(client.proven).toBe(true);
    const authorized = sidecar.requests.filter((r) => !r.path.startsWith("/v1/health"));
    expect(authorized).toHaveLength(5);
    expect(authorized.every((r) => r.auth === `Bearer ${TOKEN}`)).toBe(true);
    // The challenge itself never carries the token.
    expect(sidecar.requests.filter((r) => r.path.startsWith("/v1/health")).every((r) => r.auth === undefined)).toBe(true);
  });

  it("a new token or a new URL is proven again before it is sent", async () => {
    const sidecar = await listen(TOKEN);
    const config = { url: sidecar.url, token: TOKEN };
    const client = new SidecarClient(() => config);
    await client.status();
    config.token = "a-token-this-sidecar-does-not-hold";
    await expect(client.status()).rejects.toBeInstanceOf(SidecarUnprovenError);
    expect(sidecar.auth).toEqual([`Bearer ${TOKEN}`]); // the new token was never sent
    config.token = TOKEN;
    await client.status(); // proven again, with a fresh challenge
    expect(sidecar.challenges).toBe(3);

    const squatter = await listen(null);
    config.url = squatter.url;
    await expect(client.putNotes([])).rejects.toBeInstanceOf(SidecarUnprovenError);
    expect(squatter.auth).toEqual([]);
  });

  it("after a failed connection whatever answers on the port proves itself again (a squatter gets nothing)", async () => {
    const sidecar = await listen(TOKEN);
    const client = new SidecarClient(() => ({ url: sidecar.url, token: TOKEN }));
    await client.status();
    expect(client.proven).toBe(true);
    await close(sidecar.server); // the sidecar stops…
    await expect(client.status()).rejects.toBeInstanceOf(SidecarUnreachableError);
    expect(client.proven).toBe(false);
    const squatter = await listen(null, sidecar.port); // …and another program takes its port
    for (const [name, call] of everyCall(client)) await expect(call(), name).rejects.toBeInstanceOf(SidecarUnprovenError);
    expect(squatter.auth).toEqual([]);
    await close(squatter.server);
    const back = await listen(TOKEN, sidecar.port); // the sidecar again
    // A pooled connection to the squatter may fail once: that too is a failed connection.
    const status = await client.status().catch((e: unknown) => (e instanceof SidecarUnreachableError ? client.status() : Promise.reject(e)));
    expect(status).toMatchObject({ notes: 3 });
    expect(back.auth).toEqual([`Bearer ${TOKEN}`]);
  });

  it("forgetProof (the sidecar restarts) makes the next request prove it again", async () => {
    const sidecar = await listen(TOKEN);
    const client = new SidecarClient(() => ({ url: sidecar.url, token: TOKEN }));
    await client.status();
    client.forgetProof();
    expect(client.proven).toBe(false);
    await client.status();
    expect(sidecar.challenges).toBe(2);
  });

  it("without a token nothing is proven and no Authorization header is sent", async () => {
    const squatter = await listen(null);
    const client = new SidecarClient(() => ({ url: squatter.url, token: "" }));
    await client.status().catch(() => undefined);
    expect(squatter.requests.map((r) => r.path)).toEqual(["/v1/status"]);
    expect(squatter.auth).toEqual([]);
  });

  it("an abort while the proof is under way stops the request before anything is sent", async () => {
    const sidecar = await listen(TOKEN, 0, 300);
    const client = new SidecarClient(() => ({ url: sidecar.url, token: TOKEN }));
    const controller = new AbortController();
    const pending = client.status(undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(sidecar.requests.map((r) => r.path.split("?")[0])).toEqual(["/v1/health"]);
  });
});
