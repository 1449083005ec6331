/** "Test connection" (`sidecar/connection.ts`) against a real node:http server on 127.0.0.1. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import { SidecarClient } from "../src/client";
import { describeConnection, testConnection } from "../src/sidecar/connection";
import { tokenProof } from "../src/sidecar/proof";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A sidecar stand-in accepting `token`; its health proof is made with `provesAs` (the real
 * sidecar's own token: `token`). */
async function sidecar(token: string, provesAs = token): Promise<string> {
  const server = createServer((request, response) => {
    const send = (status: number, body: unknown) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const url = new URL(request.url ?? "/", "http://x");
    if (url.pathname === "/v1/health") {
      const challenge = url.searchParams.get("challenge");
      if (challenge === null) return send(200, { status: "ok", version: "0.1.0", api: "v1" });
      void tokenProof(provesAs, challenge).then((proof) => send(200, { status: "ok", version: "0.1.0", api: "v1", proof }));
      return;
    }
    if (request.headers.authorization !== `Bearer ${token}`) return send(401, { code: "unauthorized", message: "no", detail: null });
    return send(200, { notes: 24, pending: 40, chunks: 100, embedded: 60 });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("test connection", () => {
  const start = "vault-rag serve --vault /v";

  it("says how much is indexed when the token is taken", async () => {
    const url = await sidecar("t0ken-t0ken-t0ken");
    const result = await testConnection(new SidecarClient(() => ({ url, token: "t0ken-t0ken-t0ken" })));
    expect(result).toEqual({ kind: "ok", version: "0.1.0", notes: 24, pending: 40 });
    expect(describeConnection(result, start)).toBe("Connected to the Vault RAG sidecar 0.1.0: 24 notes indexed (40 passages still waiting for vectors).");
  });

  it("tells a token it cannot prove, a refused token and nothing listening apart", async () => {
    const url = await sidecar("right-token-0000000");
    const unproven = await testConnection(new SidecarClient(() => ({ url, token: "wrong" })));
    const port = new URL(url).port;
    expect(describeConnection(unproven, start)).toMatch(
      new RegExp(`^Something else is answering on port ${port} \\(${url}\\) and cannot prove it holds this vault's token, so the token was not sent\\.`),
    );
    // One that proves the token yet answers 401 (it cannot happen with the real sidecar).
    const odd = await sidecar("right-token-0000000", "wrong");
    const refused = await testConnection(new SidecarClient(() => ({ url: odd, token: "wrong" })));
    expect(describeConnection(refused, start)).toMatch(/^The sidecar 0\.1\.0 answers, but refuses the token/);
    const server = servers.shift() as Server; // the first: nothing listens at `url` now
    await new Promise((resolve) => server.close(resolve));
    const down = await testConnection(new SidecarClient(() => ({ url, token: "x" })));
    expect(down).toEqual({ kind: "unreachable", url });
    expect(describeConnection(down, start)).toBe(
      `Nothing answers at ${url}. Start the sidecar (vault-rag serve --vault /v), or turn on "Start the sidecar with Obsidian".`,
    );
  });
});
