/**
 * A code source in the pane, in Chromium against a real sidecar (`npm run test:e2e`).
 *
 * The test makes a git repository of generated C++ files (a `.h`/`.cpp` pair and a build folder
 * the rules skip) and starts `python -m vault_rag serve` on a copy of the sample vault with that
 * tree as the code source `game` (`VAULT_RAG_SOURCES`; the stand-in embedder `hash`, no language
 * model: the answer quotes the code). In the pane it opens the collection picker (which lists
 * `GET /v1/collections`), unchecks the vault so only `game` is searched, asks, opens the code
 * citation (`path:line-line` and the symbol) and copies its path (`path:line`, read back from
 * the real clipboard). The picture is `test-output/e2e/code-view.png`
 * (docs/images/code-view.png in the README).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

import {
  ARTIFACT_DIR,
  CHROMIUM_ARGS,
  findEnvironment,
  LAST_TURN_DONE,
  PAGE_DIR,
  type PageServer,
  saveArtifact,
  sel,
  servePages,
  type Sidecar,
  sleep,
  startSidecar,
  waitForIndex,
} from "./helpers";

const run = promisify(execFile);
const env = findEnvironment();
const required = process.env.VAULT_RAG_E2E_REQUIRED === "1";

const HEADER = `#pragma once

UCLASS()
class AWaveSpawner : public AActor
{
    GENERATED_BODY()
public:
    // Spawns every enemy of the wave at the spawn points.
    UFUNCTION(BlueprintCallable)
    void SpawnWaveEnemies(int32 WaveIndex);
};
`;

const SOURCE = `#include "WaveSpawner.h"

// Spawns every enemy of the wave at the spawn points, one per tick.
void AWaveSpawner::SpawnWaveEnemies(int32 WaveIndex)
{
    for (const FVector& Point : SpawnPoints)
    {
        GetWorld()->SpawnActor<AEnemy>(EnemyClass, Point, FRotator::ZeroRotator);
    }
    CurrentWave = WaveIndex;
}
`;

/** A git checkout of generated files: the pair, more units, and a build folder to skip. */
async function makeRepository(root: string): Promise<void> {
  const files: Record<string, string> = {
    "Source/Game/Public/WaveSpawner.h": HEADER,
    "Source/Game/Private/WaveSpawner.cpp": SOURCE,
    "Binaries/Win64/Built.cpp": "int Built() { return 1; }\n",
  };
  for (let i = 0; i < 30; i++) {
    files[`Source/Game/Private/Pickup${i}.cpp`] = `// Gives the player ${i * 10} health.\nint HealthPickup${i}(int Health)\n{\n    return Health + ${i * 10};\n}\n`;
  }
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
  await run("git", ["init", "-q", root]);
}

if (env.skipReason && !required) {
  test.skip(`code source in Chromium — skipped: ${env.skipReason}`, () => {});
} else {
  describe("code source in Chromium against vault-rag serve", () => {
    let sidecar: Sidecar | null = null;
    let pages: PageServer | null = null;
    let context: BrowserContext | null = null;
    let page: Page | null = null;
    let tmp: string | null = null;

    beforeAll(async () => {
      if (env.skipReason) throw new Error(`VAULT_RAG_E2E_REQUIRED=1, but: ${env.skipReason}`);
      tmp = await mkdtemp(path.join(os.tmpdir(), "vault-rag-e2e-code-"));
      const repo = path.join(tmp, "game");
      await makeRepository(repo);
      pages = await servePages(PAGE_DIR);
      sidecar = await startSidecar({
        python: env.python,
        origins: [pages.origin],
        env: { VAULT_RAG_EMBEDDINGS: "hash", VAULT_RAG_SOURCES: JSON.stringify([{ name: "game", path: repo, kind: "code" }]) },
      });
      await waitForIndex(sidecar, 5 * 60_000);
      for (const deadline = Date.now() + 120_000; ; await sleep(500)) {
        const listed = (await sidecar.request("GET", "/v1/collections")).body as { scanning: boolean; collections: { name: string; indexed: boolean }[] };
        if (!listed.scanning && listed.collections.some((c) => c.name === "game" && c.indexed)) break;
        if (Date.now() > deadline) throw new Error(`the code source was not indexed: ${JSON.stringify(listed)}`);
      }
      tmp = tmp as string;
      context = await chromium.launchPersistentContext(path.join(tmp, "profile"), { executablePath: env.chromium, headless: true, args: CHROMIUM_ARGS, viewport: { width: 520, height: 900 } });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: pages.origin });
      page = context.pages()[0] ?? (await context.newPage());
      const query = new URLSearchParams({ url: sidecar.url, token: sidecar.token });
      await page.goto(`${pages.origin}/pane.html?${query.toString()}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    }, 8 * 60_000);

    afterAll(async () => {
      await context?.close().catch(() => undefined);
      await sidecar?.stop();
      await pages?.close();
      if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    });

    test("picks the code collection, asks, opens the code citation and copies its path", async () => {
      if (!page || !sidecar) throw new Error("no page");
      try {
        const picker = page.locator(sel("collection-picker"));
        await picker.waitFor({ state: "visible", timeout: 30_000 });
        expect(await picker.getAttribute("aria-label")).toBe("Search: All collections");
        await picker.click();
        const game = page.locator(`${sel("collection-option")}[data-name="game"]`);
        await game.waitFor({ timeout: 10_000 });
        // the tooltip counts the files and names the skipped build folder
        expect(await game.getAttribute("title")).toMatch(/^code · .* · 32 files, \d+ passages · 1 skipped: Binaries\/ /);
        await page.locator(`${sel("collection-option")}[data-name="vault"] input`).uncheck();
        expect(await picker.getAttribute("aria-label")).toBe("Search: game");

        // what the pane sends: recorded from its own request
        const sent = page.waitForRequest((r) => r.url().endsWith("/v1/ask") && r.method() === "POST");
        await page.fill(sel("question"), "SpawnWaveEnemies spawn points");
        await page.click(sel("ask"));
        expect(JSON.parse((await sent).postData() ?? "{}")).toMatchObject({ collections: ["game"] });
        await page.waitForFunction(LAST_TURN_DONE, undefined, { timeout: 3 * 60_000 });

        const citation = page.locator(`${sel("citation")}[data-kind="code"]`, { hasText: "AWaveSpawner::SpawnWaveEnemies" }).first();
        await citation.waitFor({ timeout: 10_000 });
        expect(await citation.textContent()).toBe("Source/Game/Private/WaveSpawner.cpp:3-11AWaveSpawner::SpawnWaveEnemies");
        expect(await page.locator(`${sel("citation")}[data-kind="vault"]`).count()).toBe(0); // the vault was not searched
        await citation.click();
        const view = page.locator(sel("code-view")).first();
        await view.waitFor({ state: "visible" });
        expect(await view.locator(sel("code-location")).textContent()).toBe("Source/Game/Private/WaveSpawner.cpp:3-11");
        expect(await view.locator(sel("code-symbol")).textContent()).toContain("SpawnWaveEnemies");
        expect(await view.locator(sel("code-pairing")).textContent()).toMatch(/^Declared at Source\/Game\/Public\/WaveSpawner\.h:\d+-\d+$/);
        // the cited lines, rendered as a C++ code block
        const code = view.locator(`${sel("code-block")} pre code`);
        expect(await code.getAttribute("class")).toContain("language-cpp");
        expect((await code.textContent())?.trim()).toBe(SOURCE.split("\n").slice(2, 11).join("\n"));
        expect(await page.evaluate(() => window.vaultRag?.opened.length)).toBe(0); // nothing opened in Obsidian

        const copy = view.locator(sel("copy-path"));
        expect(await copy.getAttribute("aria-label")).toBe("Copy path (Source/Game/Private/WaveSpawner.cpp:3)");
        await copy.click();
        await page.waitForFunction(() => document.querySelector('[data-testid="code-status"]')?.textContent?.startsWith("Copied"), undefined, { timeout: 10_000 });
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("Source/Game/Private/WaveSpawner.cpp:3");
        await page.locator("#app").screenshot({ path: path.join(ARTIFACT_DIR, "code-view.png") });
      } catch (error) {
        await saveArtifact("code-view-failure.html", await page.content());
        await saveArtifact("code-view-failure.sidecar.log", sidecar.log());
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "code-view-failure.png") }).catch(() => undefined);
        throw error;
      }
    }, 8 * 60_000);
  });
}
