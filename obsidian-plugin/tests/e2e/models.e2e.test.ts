/**
 * Picking a chat model in the pane, in Chromium against a real sidecar (`npm run test:e2e`).
 *
 * The sidecar (`python -m vault_rag serve` on a copy of the sample vault, with the stand-in
 * embedder `embeddings = "hash"` so it indexes in seconds) is pointed at a wire fake of an
 * OpenAI-compatible server (`tests/fakes/serve_openai.py`, a real HTTP server listing two models
 * and answering with the name of the model asked) through `PUT /v1/settings/models`, as the
 * settings tab does. The pane's model picker lists the server's models from `GET /v1/models`;
 * the test picks the other one, asks, and the answer comes from that model; the picture is
 * `test-output/e2e/model-picker.png` (docs/images/model-picker.png in the README). The next
 * conversation is back on the default model.
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

const MODELS = ["llama3.2:3b", "qwen2.5:7b"];
/** A question the sample vault answers (its "Rendering/Lumen 与 Nanite" note). */
const QUESTION = "Lumen 和 Nanite 分别解决什么问题？";
const env = findEnvironment();
const required = process.env.VAULT_RAG_E2E_REQUIRED === "1";

/** The fake model server: its base URL once it listens. */
async function startModelServer(python: string): Promise<{ url: string; child: ChildProcess }> {
  const args = [path.join(REPO_ROOT, "tests/fakes/serve_openai.py"), ...MODELS.flatMap((m) => ["--model", m])];
  const child = spawn(python, args, { stdio: ["pipe", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const found = /listening (\S+)/.exec(out);
      if (found) resolve(found[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`the fake model server exited (${code})`)));
    setTimeout(() => reject(new Error("the fake model server did not start")), 30_000);
  });
  return { url, child };
}

if (env.skipReason && !required) {
  test.skip(`model picker in Chromium — skipped: ${env.skipReason}`, () => {});
} else {
  describe("model picker in Chromium against vault-rag serve and a fake model server", () => {
    let sidecar: Sidecar | null = null;
    let pages: PageServer | null = null;
    let models: { url: string; child: ChildProcess } | null = null;
    let context: BrowserContext | null = null;
    let page: Page | null = null;
    let profile: string | null = null;

    beforeAll(async () => {
      if (env.skipReason) throw new Error(`VAULT_RAG_E2E_REQUIRED=1, but: ${env.skipReason}`);
      pages = await servePages(PAGE_DIR);
      models = await startModelServer(env.python);
      sidecar = await startSidecar({
        python: env.python,
        origins: [pages.origin],
        env: { VAULT_RAG_EMBEDDINGS: "hash", VAULT_RAG_LLM_TIMEOUT: "30" },
      });
      await waitForIndex(sidecar, 5 * 60_000);
      // What the settings tab pushes: this server, its second model in use.
      const put = await sidecar.request("PUT", "/v1/settings/models", { base_url: models.url, model: MODELS[1], api_key: "" });
      expect(put.status).toBe(200);
      profile = await mkdtemp(path.join(os.tmpdir(), "vault-rag-e2e-models-"));
      context = await chromium.launchPersistentContext(profile, { executablePath: env.chromium, headless: true, args: CHROMIUM_ARGS, viewport: { width: 520, height: 760 } });
      page = context.pages()[0] ?? (await context.newPage());
      const query = new URLSearchParams({ url: sidecar.url, token: sidecar.token });
      await page.goto(`${pages.origin}/pane.html?${query.toString()}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    }, 8 * 60_000);

    afterAll(async () => {
      await context?.close().catch(() => undefined);
      if (profile) await rm(profile, { recursive: true, force: true }).catch(() => undefined);
      models?.child.stdin?.end();
      models?.child.kill();
      await sidecar?.stop();
      await pages?.close();
    });

    test("lists the server's models, answers with the one picked for this conversation only", async () => {
      if (!page || !sidecar) throw new Error("no page");
      try {
        const picker = page.locator(sel("model-picker"));
        await page.waitForFunction(
          (wanted) => Array.from(document.querySelectorAll('[data-testid="model-picker"] option')).some((o) => o.textContent === wanted),
          MODELS[0],
          { timeout: 30_000 },
        );
        expect(await picker.locator("option").allTextContents()).toEqual([`Default (${MODELS[1]})`, ...MODELS, "No model (quote my notes)"]);
        await picker.selectOption({ label: MODELS[0] as string });

        await page.fill(sel("question"), QUESTION);
        await page.click(sel("ask"));
        await page.waitForFunction(LAST_TURN_DONE, undefined, { timeout: 3 * 60_000 });
        const answer = (await page.locator(sel("answer")).last().textContent()) ?? "";
        expect(answer).toContain(`Answered by ${MODELS[0]}`);
        expect(answer).not.toContain(`Answered by ${MODELS[1]}`);
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "model-picker.png") });

        // A new conversation is on the default: the model in use answers.
        await page.click(sel("new-conversation"));
        expect(await picker.locator("option:checked").textContent()).toBe(`Default (${MODELS[1]})`);
        await page.fill(sel("question"), QUESTION);
        await page.click(sel("ask"));
        await page.waitForFunction(LAST_TURN_DONE, undefined, { timeout: 3 * 60_000 });
        expect((await page.locator(sel("answer")).last().textContent()) ?? "").toContain(`Answered by ${MODELS[1]}`);
        // The sidecar's own choice was not changed by the pick.
        const state = await sidecar.request("GET", "/v1/models?list=false");
        expect((state.body as { chat: { model: string } }).chat.model).toBe(MODELS[1]);
      } catch (error) {
        await saveArtifact("model-picker-failure.html", await page.content());
        await saveArtifact("model-picker-failure.sidecar.log", sidecar.log());
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "model-picker-failure.png") }).catch(() => undefined);
        throw error;
      }
    }, 8 * 60_000);
  });
}
