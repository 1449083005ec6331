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
 *
 * The second test searches both collections again (it checks the vault in the picker) and asks
 * for a note and the code implementing it. The tree also defines `UWorld::SpawnActorDeferred`,
 * which the sample vault's "Gameplay/Actor 生命周期" names in its pitfalls table, so the sidecar
 * links that note to the code unit and back (`source_indexes/pair_links.py`). The pane's done
 * line says where it searched ("searched: vault, game ×2", `view/progress.ts`), and the note's
 * citation shows "↔ code: path:lines symbol" under it, the code citation "↔ note: …"
 * (`view/pairLink.ts`). `/v1/search` and the answer the pane received are checked on the way,
 * so a failure says whether the sidecar or the pane lost the link.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

import type { Citation, LinkedUnit } from "../../src/client";
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

/** The note ↔ code pair: "Gameplay/Actor 生命周期" names `SpawnActorDeferred` (its pitfalls
 * table: "用 `SpawnActorDeferred` + `FinishSpawning`"), and this file defines it, once. */
const DEFERRED_PATH = "Source/Game/Private/DeferredSpawn.cpp";
const DEFERRED = `#include "Engine/World.h"

// Makes the actor but holds back its construction script and BeginPlay: the caller sets
// its properties first, then calls FinishSpawning.
AActor* UWorld::SpawnActorDeferred(UClass* Class, const FTransform& Transform, AActor* Owner)
{
    AActor* Actor = NewObject<AActor>(PersistentLevel, Class);
    Actor->SetActorTransform(Transform);
    Actor->SetOwner(Owner);
    return Actor;
}
`;
const DEFERRED_SYMBOL = "UWorld::SpawnActorDeferred";
/** The function's unit: its comment (line 3) to its closing brace. */
const DEFERRED_LINES = `3-${DEFERRED.trimEnd().split("\n").length}`;
const PAIR_NOTE = "Gameplay/Actor 生命周期.md";
/** A pair question ("the note and the code that implements it") on the pitfall the note's
 * table row is about ("properties read in BeginPlay are the defaults"). */
const PAIR_QUESTION = "BeginPlay 里拿到的属性是默认值：笔记和实现代码";

/** What `/v1/search` answers (the fields read here). */
interface SearchBody {
  results: { collection: string; note_path: string; line_start: number; symbol: string | null; linked: LinkedUnit[] }[];
  routing: { searched: string[]; collections: { name: string; weight: number }[] } | null;
}

/** What the pane received for the question, recorded by `TAP_ASK`. */
interface Tapped {
  searched: { name: string; weight: number }[][];
  citations: Citation[] | null;
}

/**
 * Runs in the page: wraps the pane's client so the routing of each `retrieve_vault` event and the
 * final citations the pane received are kept in `window.__pairTap` (every event passes on as it
 * came). Plain JavaScript in a string, as `pageScripts.ts` does.
 */
const TAP_ASK = `(() => {
  window.__pairTap = { searched: [], citations: null };
  const client = window.vaultRag.client;
  if (client.__pairTapped) return true;
  client.__pairTapped = true;
  const ask = client.ask.bind(client);
  client.ask = async function* (request, signal) {
    for await (const event of ask(request, signal)) {
      const tap = window.__pairTap;
      if (event.type === "progress" && event.node === "retrieve_vault" && Array.isArray(event.data.searched)) {
        tap.searched.push(event.data.searched.map((c) => ({ name: c.name, weight: c.weight })));
      }
      if (event.type === "final") tap.citations = JSON.parse(JSON.stringify(event.citations));
      yield event;
    }
  };
  return true;
})()`;

const isDeferred = (unit: LinkedUnit) => unit.kind === "code" && unit.collection === "game" && unit.note_path === DEFERRED_PATH && unit.symbol === DEFERRED_SYMBOL;

/** A git checkout of generated files: the pair, a function a note names, more units, and a build
 * folder to skip. */
async function makeRepository(root: string): Promise<void> {
  const files: Record<string, string> = {
    "Source/Game/Public/WaveSpawner.h": HEADER,
    "Source/Game/Private/WaveSpawner.cpp": SOURCE,
    [DEFERRED_PATH]: DEFERRED,
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
        expect(await game.getAttribute("title")).toMatch(/^code · .* · 33 files, \d+ passages · 1 skipped: Binaries\/ /);
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

    test("searches the vault and the code, says so, and shows the note ↔ code pair under the citations", async () => {
      if (!page || !sidecar) throw new Error("no page");
      let search: unknown = null;
      let tapped: Tapped | null = null;
      try {
        // The sidecar on its own first: a failure here is the sidecar's, not the pane's.
        const searched = await sidecar.request("POST", "/v1/search", { query: PAIR_QUESTION });
        search = searched.body;
        expect(searched.status, JSON.stringify(searched.body)).toBe(200);
        const { results, routing } = searched.body as SearchBody;
        expect(routing?.searched, "/v1/search did not search the vault and the code").toEqual(["vault", "game"]);
        const hits = results.map((r) => `${r.collection}:${r.note_path}:${r.line_start} → ${r.linked.map((u) => `${u.kind}:${u.note_path}:${u.line_start}`).join(", ") || "-"}`);
        expect(
          results.some((r) => r.collection === "vault" && r.note_path === PAIR_NOTE && r.linked.some(isDeferred)),
          `the sidecar's /v1/search has no hit on ${PAIR_NOTE} linked to ${DEFERRED_SYMBOL}: ${hits.join(" | ")}`,
        ).toBe(true);

        // Both collections: the first test unchecked the vault. (The choice lives in the page's
        // memory here, as the shim's app has no loadLocalStorage; a reload would reset it but also
        // resume that test's conversation.) Checked again through the picker, as a user would.
        const picker = page.locator(sel("collection-picker"));
        await picker.waitFor({ state: "visible", timeout: 30_000 });
        if ((await picker.getAttribute("aria-expanded")) !== "true") await picker.click();
        await page.locator(`${sel("collection-option")}[data-name="vault"] input`).check({ timeout: 10_000 });
        expect(await page.locator(`${sel("collection-option")}[data-name="game"] input`).isChecked()).toBe(true);
        expect(await picker.getAttribute("aria-label")).toBe("Search: All collections");
        await picker.click(); // closed again, and off the screen (styles.css: `[hidden]`)
        await page.locator(sel("collection-panel")).waitFor({ state: "hidden", timeout: 10_000 });
        await page.click(sel("new-conversation")); // a question of its own, not a follow-up

        await page.evaluate(TAP_ASK);
        const sent = page.waitForRequest((r) => r.url().endsWith("/v1/ask") && r.method() === "POST");
        await page.fill(sel("question"), PAIR_QUESTION);
        await page.click(sel("ask"));
        // every collection is the sidecar's default: the pane sends no list
        expect(JSON.parse((await sent).postData() ?? "{}")).not.toHaveProperty("collections");
        await page.waitForFunction(LAST_TURN_DONE, undefined, { timeout: 3 * 60_000 });
        tapped = (await page.evaluate("window.__pairTap")) as Tapped;
        const turn = page.locator(sel("turn")).last();

        // -- "searched:": the routing of the search, with the weight the sidecar gave each
        const routed = tapped.searched.at(-1);
        expect(routed?.map((c) => c.name), "the answer's retrieve_vault event carried no routing of vault and game").toEqual(["vault", "game"]);
        const done = (await turn.locator(sel("progress")).textContent()) ?? "";
        const shown = /^done · \d+ sources?(?: · \d+ aspects)? · searched: vault(?: ×([\d.]+))?, game(?: ×([\d.]+))?$/.exec(done);
        expect(shown, `the done line: ${done}`).not.toBeNull();
        expect([Number(shown?.[1] ?? 1), Number(shown?.[2] ?? 1)]).toEqual(routed?.map((c) => c.weight));

        // -- the pair, as the answer carried it to the pane
        const citations = tapped.citations ?? [];
        const cited = citations.map((c) => (c.kind === "web" ? c.url : `${c.collection ?? "vault"}:${c.note_path}:${c.line_start}${c.linked ? ` → ${c.linked.map((u) => `${u.kind}:${u.note_path}`).join(", ")}` : ""}`));
        const noteCitation = citations.find((c) => c.kind === "vault" && (c.collection ?? "vault") === "vault" && c.note_path === PAIR_NOTE && (c.linked ?? []).some(isDeferred));
        expect(noteCitation, `the answer the pane received cites no ${PAIR_NOTE} linked to ${DEFERRED_SYMBOL}: ${cited.join(" | ")}`).toBeDefined();
        const codeAt = citations.findIndex((c) => c.kind === "vault" && c.collection === "game" && c.note_path === DEFERRED_PATH && c.symbol === DEFERRED_SYMBOL);
        const codeCitation = citations[codeAt];
        const toNote = codeCitation?.kind === "vault" ? codeCitation.linked?.find((u) => u.kind === "note" && u.collection === "vault" && u.note_path === PAIR_NOTE) : undefined;
        expect(toNote, `the answer the pane received has no ${DEFERRED_PATH} citation linked to ${PAIR_NOTE}: ${cited.join(" | ")}`).toBeDefined();

        // -- and as the pane shows it: under the note's citation, the code unit (text: it is outside
        // the vault), with why, and the number of the code's own citation
        const noteName = PAIR_NOTE.replace(/\.md$/, "");
        const noteItem = turn.locator(`${sel("citations")} > li`).filter({ has: page.locator(`${sel("citation")}[data-kind="vault"][data-href^="${noteName}"]`) });
        const toCode = noteItem.locator('.vault-rag-pair[data-kind="code"]', { hasText: DEFERRED_PATH });
        await toCode.waitFor({ state: "attached", timeout: 10_000 });
        expect(await toCode.count()).toBe(1);
        expect(await toCode.locator(sel("pair-link")).textContent()).toBe(`↔ code: ${DEFERRED_PATH}:${DEFERRED_LINES} ${DEFERRED_SYMBOL}`);
        expect(await toCode.locator(`a${sel("pair-link")}`).count()).toBe(0); // code: not a note to open
        expect(await toCode.getAttribute("title")).toBe("note names SpawnActorDeferred");
        expect(await toCode.locator(".vault-rag-pair-cited").textContent()).toBe(` [${codeAt + 1}]`);

        // under the code's citation, the note naming it: a link that opens it at the linked line
        const codeItem = turn.locator(`${sel("citations")} > li`).filter({ has: page.locator(`${sel("citation")}[data-kind="code"]`, { hasText: DEFERRED_SYMBOL }) });
        const back = codeItem.locator(`.vault-rag-pair[data-kind="note"] a${sel("pair-link")}`);
        expect(await back.textContent()).toBe(`↔ note: ${noteName}`);
        expect(await back.getAttribute("data-href")).toBe(noteName);
        const sources = turn.locator(sel("sources"));
        if (!(await sources.evaluate((el) => (el as HTMLDetailsElement).open))) await turn.locator(sel("sources-label")).click();
        const before = await page.evaluate(() => window.vaultRag?.links.length ?? 0);
        await back.click();
        const opened = await page.evaluate(() => window.vaultRag?.links.slice(-1)[0]);
        expect(await page.evaluate(() => window.vaultRag?.links.length)).toBe(before + 1);
        expect(opened).toMatchObject({ linktext: noteName, line: (toNote?.line_start ?? 0) - 1 });
        await page.locator("#app").screenshot({ path: path.join(ARTIFACT_DIR, "pair-link.png") });
      } catch (error) {
        await saveArtifact("pair-link-failure.html", await page.content());
        await saveArtifact("pair-link-failure.sidecar.log", sidecar.log());
        await saveArtifact("pair-link-failure.json", JSON.stringify({ question: PAIR_QUESTION, search, tapped }, null, 2));
        await page.screenshot({ path: path.join(ARTIFACT_DIR, "pair-link-failure.png") }).catch(() => undefined);
        throw error;
      }
    }, 8 * 60_000);
  });
}
