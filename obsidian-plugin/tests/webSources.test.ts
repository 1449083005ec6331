/**
 * Adding a web source from the settings (issue 42): the form checked before asking
 * (`webSourceBody`), then `POST /v1/sources` and `DELETE /v1/sources/{name}` on a real HTTP
 * server, with the sidecar's refusal (its `ErrorBody`) surfacing as the error's message.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import { SidecarClient, SidecarHttpError } from "../src/client";
import { webSourceBody, type WebSourceForm } from "../src/client/sources";

let server: Server | null = null;

afterEach(async () => {
  if (server === null) return;
  server.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

const FORM: WebSourceForm = { name: "engine-docs", url: "https://docs.example.org/manual/", include: "guide/*, api/*", exclude: "blog/*\n\n", maxPages: "50" };

describe("the web source form", () => {
  it("becomes the POST /v1/sources body", () => {
    expect(webSourceBody(FORM)).toEqual({
      body: { name: "engine-docs", kind: "web", url: "https://docs.example.org/manual/", include: ["guide/*", "api/*"], exclude: ["blog/*"], max_pages: 50 },
    });
    const bare = webSourceBody({ ...FORM, include: "", exclude: " ", maxPages: "" });
    expect(bare).toEqual({ body: { name: "engine-docs", kind: "web", url: "https://docs.example.org/manual/", include: [], exclude: [] } });
  });

  it.each([
    [{ name: "Engine Docs" }, "Name"],
    [{ name: "" }, "Name"],
    [{ name: "vault" }, "vault"],
    [{ url: "file:///etc/" }, "only http:// and https://"],
    [{ url: "javascript:alert(1)" }, "only http:// and https://"],
    [{ url: "docs.example.org" }, "not a URL"],
    [{ url: "https://me:secret@docs.example.org/" }, "no user name or password"],
    [{ maxPages: "0" }, "Max pages"],
    [{ maxPages: "2.5" }, "Max pages"],
    [{ maxPages: "many" }, "Max pages"],
  ])("refuses %j", (change, words) => {
    const checked = webSourceBody({ ...FORM, ...change });
    expect("error" in checked && checked.error).toContain(words);
  });
});

async function serve(reply: (method: string, url: string) => [number, unknown]) {
  const seen: { method: string; url: string; body: string }[] = [];
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", body });
      const [status, answer] = reply(req.method ?? "", req.url ?? "");
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { client: new SidecarClient(() => ({ url, token: "" })), seen };
}

describe("sources in the client", () => {
  it("adds a web source and removes it", async () => {
    const { client, seen } = await serve((method) =>
      method === "POST"
        ? [201, { name: "engine-docs", kind: "web", path: "https://docs.example.org/manual/", include: [], exclude: [], max_pages: 50, indexing: true, next: "indexing 'engine-docs' now" }]
        : [200, { name: "engine-docs", removed_index: true }],
    );
    const checked = webSourceBody(FORM);
    if ("error" in checked) throw new Error(checked.error);
    const added = await client.addSource(checked.body);
    expect(added).toMatchObject({ name: "engine-docs", kind: "web", indexing: true, max_pages: 50 });
    expect(await client.removeSource("engine-docs")).toEqual({ name: "engine-docs", removed_index: true });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /v1/sources", "DELETE /v1/sources/engine-docs"]);
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual(checked.body);
  });

  it("surfaces the sidecar's refusal", async () => {
    const { client } = await serve(() => [409, { code: "source_exists", message: "the name 'engine-docs' is taken: choose another", detail: null }]);
    const error = await client.addSource({ name: "engine-docs", kind: "web", url: "https://docs.example.org/" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarHttpError);
    expect((error as SidecarHttpError).status).toBe(409);
    expect((error as SidecarHttpError).code).toBe("source_exists");
    expect((error as Error).message).toContain("is taken");
  });
});
