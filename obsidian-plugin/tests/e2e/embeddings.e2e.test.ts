/**
 * Changing the embedding model from the settings, in Chromium against a real sidecar
 * (`npm run test:e2e`).
 *
 * The sidecar (`python -m vault_rag serve` on a copy of the sample vault) starts on the stand-in
 * embedder `embeddings = "hash"`; the new model is an OpenAI-compatible `/v1/embeddings` endpoint,
 * the wire fake `tests/fakes/serve_openai.py` (a real HTTP server). In the settings tab's
 * "Embedding model" section (the page's `&settings=1`) the test picks the endpoint, types its URL
 * and model, presses "Change…", reads the cost the sidecar measured in the confirm dialog
 * (`test-output/e2e/embedding-switch.png`, docs/images/embedding-switch.png in the README),
 * confirms, waits for the re-index and the switch-over, and asks a question in the pane: it is
 * answered from the new index, whose model the sidecar's status now names.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

import {
  ARTIFACT_DIR,
  CHROMIUM_ARGS,
  findEnvironment,
  LAST_TURN_DONE,
  PAGE_DIR,
  type PageServer,
  REPO_ROOT,
  saveArtifact,
  sel,
  servePages,
  type Sidecar,
  startSidecar,
  waitForIndex,
} from "./helpers";

/** A question the sample vault answers (its "Rendering/Lumen 与 Nanite" note). */
const QUESTION = "Lumen 和 Nanite 分别解决什么问题？";
const NEW_MODEL = "openai:fake-embedding";
const env = findEnvironment();
const required = process.env.VAULT_RAG_E2E_REQUIRED === "1";

/** The fake embedding endpoint: its base URL once it listens. */
async function startEndpoint(python: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(python, [path.join(REPO_ROOT, "tests/fakes/serve_openai.py"), "--model", "fake-embedding"], { stdio: ["pipe", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const found = /listening (\S+)/.exec(out);
      if (found) resolve(found[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`the fake endpoint exited (${code})`)));
    setTimeout(() => reject(new Error("the fake endpoint did not start")), 30_000);
  });
  return { url, child };
}

if (env.skipReason && !required) {
  test.skip(`embedding model switch in Chromium — skipped: ${env.skipReason}`, () => {});
} else {
  describe("embedding model switch in Chromium against vault-rag serve and a fake endpoint", () => {
    let sidecar: Sidecar | null = null;
    let pages: PageServer | null = null;
    let endpoint: { url: string; child: ChildProcess } | null = null;
    let context: BrowserContext | null = null;
    let page: Page | null = null;
    let profile: string | null = null;

    beforeAll(async () => {
      if (env.skipReason) throw new Error(`VAULT_RAG_E2E_REQUIRED=1, but: ${env.skipReason}`);
      pages = await servePages(PAGE_DIR);
      endpoint = await startEndpoint(env.python);
      sidecar = await startSidecar({ python: env.python, origins: [pages.origin], env: { VAULT_RAG_EMBEDDINGS: "hash" } });
      await waitForIndex(sidecar, 5 * 60_000);
      profile = await mkdtemp(path.join(os.tmpdir(), "vault-rag-e2e-embeddings-"));
      context = await chromium.launchPersistentContext(profile, { executablePath: env.chromium, headless: true, args: CHROMIUM_ARGS, viewport: { width: 880, height: 760 } });
      page = context.pages()[0] ?? (await context.newPage());
      const query = new URLSearchParams({ url: sidecar.url, token: sidecar.token, settings: "1" });
      await page.goto(`${pages.origin}/pane.html?${query.toString()}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    }, 8 * 60_000);

    afterAll(async () => {
      await context?.close().catch(() => undefined);
      if (profile) await rm(profile, { recursive: true, force: true }).catch(() => undefined);
      endpoint?.child.stdin?.end();
      endpoint?.child.kill();
      await sidecar?.stop();
      await pages?.close();
    });

    test("picks an endpoint, shows the cost, asks, re-indexes, and answers from the new index", async () => {
      if (!page || !sidecar || !endpoint) throw new Error("no page");
      try {
        await page.waitForFunction(() => document.querySelector('[data-testid="embedding-in-use"]')?.textContent?.startsWith("In use: hash:"), undefined, {
          timeout: 30_000,
        });
        const before = (await sidecar.request("GET", "/v1/status")).body as { index_model: string; chunks: number };
        expect(before.index_model).toMatch(/^hash:/);
        await page.selectOption(sel("embedding-provider"), "openai");
        await page.fill(sel("embedding-base-url"), endpoint.url);
        await page.fill(sel("embedding-model"), "fake-embedding");
        await page.click(sel("embedding-test"));
        await page.waitForFunction(() => /64-d vectors/.test(document.querySelector('[data-testid="embedding-status"]')?.textContent ?? ""), undefined, { timeout: 30_000 });

        await page.click(sel("embedding-change"));
        await page.waitForSelector(sel("embedding-confirm"), { timeout: 60_000 });
        const cost = (await page.locator(sel("embedding-cost")).textContent()) ?? "";
        expect(cost).toMatch(/re-embeds all \d+ units of \d+ notes/);
        expect((await page.locator(sel("embedding-cost-detail")).textContent()) ?? "").toContain(NEW_MODEL);
        // Nothing changed while the dialog asks.
        expect(((await sidecar.request("GET", "/v1/status")).body as { index_model: string }).index_model).toBe(before.index_model);
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "embedding-switch.png") });

        await page.click(sel("embedding-confirm"));
        await page.waitForFunction(
          (wanted) => document.querySelector('[data-testid="embedding-status"]')?.textContent === `Switched to ${wanted}.`,
          NEW_MODEL,
          { timeout: 4 * 60_000 },
        );
        const status = (await sidecar.request("GET", "/v1/status")).body as { index_model: string; embedding_model: string; pending: number; embedded: number };
        expect(status.index_model).toBe(NEW_MODEL);
        expect(status.embedding_model).toBe(NEW_MODEL);
        expect(status.pending).toBe(0);
        expect(await page.locator(sel("embedding-in-use")).textContent()).toContain(`In use: ${NEW_MODEL} (chosen here)`);

        await page.fill(sel("question"), QUESTION);
        await page.click(sel("ask"));
        await page.waitForFunction(LAST_TURN_DONE, undefined, { timeout: 3 * 60_000 });
        // Answered (quoting passages with their sources: no chat model here) from the new
        // index: the question was embedded by the new model, as the index's 64-d vectors need.
        // (The fake's vectors are hashes, not meaning: which passages come back is not the point.)
        const answer = (await page.locator(sel("answer")).last().textContent()) ?? "";
        expect(answer).toMatch(/— \S+\/\S+/);
        expect((await page.locator(sel("progress")).last().textContent()) ?? "").toMatch(/^done/);
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "embedding-switched.png") });
      } catch (error) {
        await saveArtifact("embedding-switch-failure.html", await page.content());
        await saveArtifact("embedding-switch-failure.sidecar.log", sidecar.log());
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "embedding-switch-failure.png") }).catch(() => undefined);
        throw error;
      }
    }, 10 * 60_000);
  });
}
