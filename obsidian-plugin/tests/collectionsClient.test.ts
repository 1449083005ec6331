/**
 * The client's side of the collections: `GET /v1/collections` read and parsed (what does not
 * read is dropped), and `collections` on `POST /v1/search` only when given. A real HTTP server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import { SidecarClient } from "../src/client";

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

async function serve(reply: (url: string) => unknown): Promise<{ client: SidecarClient; seen: { url: string; body: string }[] }> {
  const seen: { url: string; body: string }[] = [];
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", body });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(reply(req.url ?? "")));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The proof of the token is the client's business elsewhere (client.test.ts): none asked here.
  return { client: new SidecarClient(() => ({ url, token: "" })), seen };
}

describe("collections in the client", () => {
  it("reads GET /v1/collections", async () => {
    const { client, seen } = await serve(() => ({
      default: "vault",
      scanning: true,
      problem: null,
      collections: [
        { name: "vault", kind: "vault", primary: true, path: "/v", indexed: true, files: 3, chunks: 9, embedded: 9, skipped: 0, skipped_files: [] },
        { name: "game", kind: "code", primary: false, path: "/g", indexed: true, files: 2, chunks: 4, embedded: 1, skipped: 1, skipped_files: [{ path: "Binaries/", why: "build" }], problem: null },
        { kind: "code" }, // no name: dropped
      ],
    }));
    const list = await client.collections();
    expect(seen[0]?.url).toBe("/v1/collections");
    expect(list.default).toBe("vault");
    expect(list.scanning).toBe(true);
    expect(list.collections.map((c) => [c.name, c.kind, c.primary, c.files, c.skipped])).toEqual([
      ["vault", "vault", true, 3, 0],
      ["game", "code", false, 2, 1],
    ]);
    expect(list.collections[1]?.skipped_files).toEqual([{ path: "Binaries/", why: "build" }]);
  });

  it("sends collections with a search only when given", async () => {
    const { client, seen } = await serve(() => ({ results: [], took_ms: 1 }));
    await client.search("spawn", 5, {}, ["game"]);
    await client.search("spawn", 5);
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ query: "spawn", k: 5, collections: ["game"] });
    expect(JSON.parse(seen[1]?.body ?? "")).toEqual({ query: "spawn", k: 5 });
  });
});
