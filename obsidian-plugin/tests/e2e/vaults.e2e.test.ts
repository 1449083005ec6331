/**
 * Two vaults side by side, and a sidecar that dies mid-conversation (`npm run test:e2e`, issue 29).
 *
 * Two small vaults (the sample vault's Rendering/ and C++/ folders, copied to temp dirs) are
 * opened in two browser contexts, as two Obsidian windows: the same pane bundle as
 * `pane.e2e.test.ts`, both with the *same* configured sidecar URL (where nothing listens) and the
 * plugin's launcher. "Start the sidecar" in each runs the real supervisor with the command the
 * plugin runs by default (`… serve --vault <vault> --port 0`, here with a data dir of its own):
 * each vault gets its own sidecar on a free port, named in the handshake, and each answers from
 * its own notes only (`two-vaults.png`).
 *
 * Then the first vault's sidecar is killed (SIGKILL, its whole process group) while its
 * conversation is on screen: the supervisor starts it again (back-off 1 s) on another free port,
 * the pane follows it, the history list reads the stored conversation from the restarted sidecar,
 * a follow-up question is answered in the same conversation, and the conversation picked from the
 * history comes back with its sources (`sidecar-restart.png`). Last, the plugin is unloaded (its
 * sidecar stopped) and the page reloaded, as Obsidian quitting and opening again: the stored
 * conversation waits for the sidecar ("Waiting for the sidecar…", not an error;
 * `resume-wait.png`) and loads once *Start the sidecar* has it running.
 *
 * Skipped like `pane.e2e.test.ts` without the sidecar's Python, Chromium or the browser bundle.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, onTestFailed, test } from "vitest";

import { quoteArg } from "../../src/sidecar/command";
import {
  ARTIFACT_DIR,
  CHROMIUM_ARGS,
  exposeLauncher,
  findEnvironment,
  freePort,
  LAST_TURN_DONE,
  PAGE_DIR,
  type PageServer,
  sampleVaultPath,
  saveArtifact,
  sel,
  servePages,
  sidecarEnv,
} from "./helpers";

const env = findEnvironment();
const required = process.env.VAULT_RAG_E2E_REQUIRED === "1";
const START_TIMEOUT_MS = 6 * 60_000;
const ANSWER_TIMEOUT_MS = 3 * 60_000;

interface VaultWindow {
  name: string;
  /** The sample vault's folder this vault holds. */
  folder: string;
  question: string;
  root: string;
  vault: string;
  dataDir: string;
  command: string;
  context: BrowserContext;
  page: Page;
  launcher: Awaited<ReturnType<typeof exposeLauncher>>;
  errors: string[];
}

/** A vault holding only `folder` of the sample vault, with a data dir and an empty settings file. */
async function smallVault(folder: string): Promise<{ root: string; vault: string; dataDir: string; config: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), "vault-rag-e2e-vaults-"));
  const vault = path.join(root, "vault");
  await mkdir(vault, { recursive: true });
  await cp(path.join(await sampleVaultPath(env.python), folder), path.join(vault, folder), { recursive: true });
  const config = path.join(root, "vault-rag.toml");
  await writeFile(config, "# empty: defaults and the environment only\n");
  return { root, vault, dataDir: path.join(root, "data"), config };
}

/** The citations of the last turn, as the vault paths they open. */
async function citedNotes(page: Page): Promise<string[]> {
  const turn = page.locator(sel("turn")).last();
  const hrefs = await turn.locator(`${sel("citation")}[data-kind="vault"]`).evaluateAll((els) => els.map((el) => el.getAttribute("data-href") ?? ""));
  return [...new Set(hrefs.map((href) => href.split("#")[0] ?? ""))];
}

async function ask(page: Page, question: string): Promise<void> {
  await page.locator(sel("question")).fill(question);
  await page.locator(sel("ask")).click();
  await page.waitForFunction(LAST_TURN_DONE, undefined, { timeout: ANSWER_TIMEOUT_MS, polling: 200 });
  expect(await page.locator(sel("turn")).last().locator(sel("error")).isVisible()).toBe(false);
}

if (env.skipReason && !required) {
  console.warn(`[e2e] the two-vault test is skipped: ${env.skipReason}`);
  test.skip(`two vaults and a restarted sidecar in Chromium — skipped: ${env.skipReason}`, () => {});
} else {
  describe("two vaults and a restarted sidecar in Chromium", () => {
    let browser: Browser | null = null;
    let pages: PageServer | null = null;
    /** The URL both vaults' settings name: nothing listens there. */
    let configured = "";
    const windows: VaultWindow[] = [];

    async function saveFailure(what: string): Promise<void> {
      for (const w of windows) {
        try {
          await w.page.screenshot({ path: path.join(ARTIFACT_DIR, `${what}-${w.name}.png`), fullPage: true });
          await saveArtifact(`${what}-${w.name}.html`, await w.page.content());
          await saveArtifact(`${what}-${w.name}.log`, [...w.errors, String(await w.page.evaluate("window.vaultRag?.supervisor?.log.text ?? ''").catch(() => ""))].join("\n"));
        } catch (problem) {
          console.warn(`[e2e] could not save ${w.name}: ${String(problem)}`);
        }
      }
    }

    async function openWindow(name: string, folder: string, question: string): Promise<VaultWindow> {
      const { root, vault, dataDir, config } = await smallVault(folder);
      const context = await browser!.newContext({ viewport: { width: 560, height: 900 }, locale: "zh-CN" });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(`pageerror: ${error.name}: ${error.message}`));
      const launcher = await exposeLauncher(
        page,
        sidecarEnv({ VAULT_RAG_CONFIG: config, VAULT_RAG_SERVER_CORS_ORIGINS: JSON.stringify(["app://obsidian.md", pages!.origin]) }),
      );
      // What the plugin runs when its command setting is empty (`launchCommand`), with the
      // test's Python and a data dir of the vault's own.
      const command = [env.python, "-m", "vault_rag", "serve", "--vault", vault, "--data-dir", dataDir, "--port", "0"].map(quoteArg).join(" ");
      const query = new URLSearchParams({ url: configured, vault, launch: "1", command });
      await page.goto(`${pages!.origin}/pane.html?${query.toString()}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
      const w: VaultWindow = { name, folder, question, root, vault, dataDir, command, context, page, launcher, errors };
      windows.push(w);
      return w;
    }

    beforeAll(async () => {
      if (env.skipReason) throw new Error(`VAULT_RAG_E2E_REQUIRED=1, but: ${env.skipReason}`);
      await mkdir(ARTIFACT_DIR, { recursive: true });
      pages = await servePages(PAGE_DIR);
      configured = `http://127.0.0.1:${await freePort()}`;
      browser = await chromium.launch({ executablePath: env.chromium, headless: true, args: CHROMIUM_ARGS });
    }, 60_000);

    afterAll(async () => {
      for (const w of windows) {
        await w.page.evaluate("window.vaultRag?.unload()").catch(() => undefined);
        await w.launcher.stopAll();
        await w.context.close().catch(() => undefined);
        await rm(w.root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
      }
      await browser?.close().catch(() => undefined);
      await pages?.close();
    }, 90_000);

    test("two vaults at once: each starts its own sidecar on its own port and answers from its own notes", async () => {
      onTestFailed(() => saveFailure("two-vaults"));
      const rendering = await openWindow("rendering", "Rendering", "Lumen 和 Nanite 分别解决什么问题？");
      const cpp = await openWindow("cpp", "C++", "为什么我存在数组里的指针过一阵子就变成野指针然后崩溃？");
      for (const w of windows) {
        await expect.poll(() => w.page.locator(sel("empty-title")).textContent(), { timeout: 30_000 }).toBe("The Vault RAG sidecar is not running");
      }
      // Both at once, as two windows opened together.
      await Promise.all(windows.map((w) => w.page.locator(sel("empty-start")).click()));
      for (const w of windows) {
        await expect.poll(() => w.page.locator(sel("empty-title")).textContent(), { timeout: START_TIMEOUT_MS, interval: 500 }).toBe("Ask your vault");
        expect(await w.page.evaluate("window.vaultRag.supervisor.state")).toEqual({ kind: "running", ours: true, tokenProblem: null });
        await expect.poll(() => w.page.locator(sel("index-status")).textContent(), { timeout: START_TIMEOUT_MS, interval: 1_000 }).toMatch(/^\d+ notes? indexed$/);
      }
      const urls = await Promise.all(windows.map(async (w) => String(await w.page.evaluate("window.vaultRag.settings.sidecarUrl"))));
      const tokens = await Promise.all(windows.map(async (w) => String(await w.page.evaluate("window.vaultRag.settings.token"))));
      // Each its own port (from its handshake), neither the configured one; each its own token.
      for (const url of urls) {
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(url).not.toBe(configured);
      }
      expect(urls[0]).not.toBe(urls[1]);
      expect(tokens[0]).not.toBe(tokens[1]);

      for (const w of windows) await ask(w.page, w.question);
      // Each answers from its own vault: every cited note is in that vault's folder.
      const rendered = await citedNotes(rendering.page);
      const cited = await citedNotes(cpp.page);
      expect(rendered.length, JSON.stringify(rendered)).toBeGreaterThan(0);
      expect(cited.length, JSON.stringify(cited)).toBeGreaterThan(0);
      for (const note of rendered) expect(note).toMatch(/^Rendering\//);
      for (const note of cited) expect(note).toMatch(/^C\+\+\//);
      expect(cited).toContain("C++/UObject 与 GC");
      for (const w of windows) expect(w.errors).toEqual([]);

      // One picture of both windows side by side.
      const shots = await Promise.all(windows.map(async (w) => (await w.page.locator("#app").screenshot()).toString("base64")));
      const board = await rendering.context.newPage();
      await board.setViewportSize({ width: 1140, height: 900 });
      await board.setContent(
        `<body style="margin:0;display:flex;gap:20px;align-items:flex-start;background:#888">${shots
          .map((shot) => `<img style="width:560px" src="data:image/png;base64,${shot}">`)
          .join("")}</body>`,
      );
      await board.screenshot({ path: path.join(ARTIFACT_DIR, "two-vaults.png"), fullPage: true });
      await board.close();
    }, 2 * START_TIMEOUT_MS + 2 * ANSWER_TIMEOUT_MS);

    test("a sidecar killed mid-conversation is restarted; the pane recovers, the history loads, the conversation goes on", async () => {
      onTestFailed(() => saveFailure("sidecar-restart"));
      const w = windows[0];
      expect(w, "needs the windows of the first test").toBeDefined();
      const { page } = w!;
      const threadId = String(await page.evaluate("window.vaultRag.view.getState().threadId"));
      const before = String(await page.evaluate("window.vaultRag.settings.sidecarUrl"));
      const firstAnswer = (await page.locator(sel("answer")).last().innerText()).trim();
      expect(w!.launcher.running.size).toBe(1);

      // The sidecar dies (its process group, at once), the conversation still on screen.
      for (const child of w!.launcher.running.values()) process.kill(-(child.pid as number), "SIGKILL");
      await expect.poll(() => page.evaluate("window.vaultRag.supervisor.state.kind"), { timeout: 30_000 }).not.toBe("running");
      // The supervisor starts it again, on a new free port the pane follows.
      await expect.poll(() => page.evaluate("window.vaultRag.supervisor.state.kind"), { timeout: START_TIMEOUT_MS, interval: 500 }).toBe("running");
      const after = String(await page.evaluate("window.vaultRag.settings.sidecarUrl"));
      expect(after).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(after).not.toBe(before);
      expect(w!.launcher.running.size).toBe(1);
      const log = String(await page.evaluate("window.vaultRag.supervisor.log.text"));
      expect(log).toMatch(/restarting in 1 s \(attempt 1 of 5\)/);

      // The history list reads the stored conversation from the restarted sidecar.
      await page.locator(sel("history")).click();
      const items = page.locator(sel("history-item"));
      await expect.poll(() => items.count(), { timeout: 60_000 }).toBe(1);
      expect(await items.first().getAttribute("data-thread-id")).toBe(threadId);
      expect((await page.locator(sel("history-meta")).first().textContent()) ?? "").toMatch(/^2 messages · /);
      await page.locator(sel("history")).click(); // close it

      // The conversation goes on in the same thread.
      await ask(page, "Nanite 适合什么样的网格？");
      expect(String(await page.evaluate("window.vaultRag.view.getState().threadId"))).toBe(threadId);
      expect(await page.locator(sel("turn")).count()).toBe(2);

      // A new chat, then the conversation picked from the history: both turns, with their sources.
      await page.locator(sel("new-conversation")).click();
      await expect.poll(() => page.locator(sel("turn")).count()).toBe(0);
      await page.locator(sel("history")).click();
      await expect.poll(() => items.count(), { timeout: 30_000 }).toBe(1);
      expect((await page.locator(sel("history-meta")).first().textContent()) ?? "").toMatch(/^4 messages · /);
      await page.locator("#app").screenshot({ path: path.join(ARTIFACT_DIR, "sidecar-restart-history.png") });
      await items.first().click();
      await expect.poll(() => page.locator(sel("turn")).count(), { timeout: 30_000 }).toBe(2);
      expect((await page.locator(sel("answer")).first().innerText()).trim()).toBe(firstAnswer);
      for (const turn of await page.locator(sel("turn")).all()) {
        expect(await turn.locator(sel("citation")).count()).toBeGreaterThan(0);
        expect(await turn.locator(sel("thumbs-up")).count()).toBe(1);
      }
      expect(await page.locator(sel("resume-error")).count()).toBe(0);
      expect(w!.errors).toEqual([]);
      await page.locator("#app").screenshot({ path: path.join(ARTIFACT_DIR, "sidecar-restart.png") });
    }, START_TIMEOUT_MS + 2 * ANSWER_TIMEOUT_MS);

    test("reopened with its sidecar down, the pane waits for it, and the conversation loads once it runs", async () => {
      onTestFailed(() => saveFailure("resume-wait"));
      const w = windows[0];
      expect(w, "needs the windows of the first test").toBeDefined();
      const { page } = w!;
      const threadId = String(await page.evaluate("window.vaultRag.view.getState().threadId"));
      const answers = (await page.locator(sel("answer")).allInnerTexts()).map((t) => t.trim());
      expect(answers).toHaveLength(2);
      // Obsidian quits (the plugin stops the sidecar it started) and opens again: the view gets
      // its saved state back while nothing answers yet.
      await page.evaluate("window.vaultRag.unload()");
      await expect.poll(() => w!.launcher.running.size, { timeout: 30_000 }).toBe(0);
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
      expect(String(await page.evaluate("window.vaultRag.view.getState().threadId"))).toBe(threadId);
      // It waits (a polite line), it does not fail.
      await expect.poll(() => page.locator(sel("resume-wait")).count(), { timeout: 30_000 }).toBe(1);
      expect(await page.locator(sel("resume-wait")).textContent()).toMatch(/^Waiting for the sidecar to load the earlier conversation/);
      expect(await page.locator(sel("resume-error")).count()).toBe(0);
      await page.locator("#app").screenshot({ path: path.join(ARTIFACT_DIR, "resume-wait.png") });

      await page.locator(sel("empty-start")).click();
      await expect.poll(() => page.evaluate("window.vaultRag.supervisor.state.kind"), { timeout: START_TIMEOUT_MS, interval: 500 }).toBe("running");
      // The next retry (at most 15 s later) reads the conversation from the started sidecar.
      await expect.poll(async () => (await page.locator(sel("answer")).allInnerTexts()).map((t) => t.trim()), { timeout: 60_000 }).toEqual(answers);
      expect(await page.locator(sel("resume-wait")).count()).toBe(0);
      expect(await page.locator(sel("resume-error")).count()).toBe(0);
      for (const turn of await page.locator(sel("turn")).all()) expect(await turn.locator(sel("citation")).count()).toBeGreaterThan(0);
      expect(w!.errors).toEqual([]);
    }, START_TIMEOUT_MS + 90_000);
  });
}
