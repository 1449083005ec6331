/**
 * The sync state in files of its own (`sync/stateFile.ts`, issue 29): what survives a restart,
 * and the bytes written in an hour of editing at 10,000 notes, against the earlier policy
 * (the whole state in `data.json`, rewritten 2 s after every synced save).
 */
import { createHash } from "node:crypto";

import { describe, expect, it } from "vitest";

import { parsePersistedSync } from "../src/sync";
import { KNOWN_FILE, QUEUE_FILE, type StateAdapter, SyncStateFile } from "../src/sync/stateFile";
import type { Clock } from "../src/sync/timing";
import type { PersistedSync } from "../src/sync/types";
import { GeneratedVault } from "./helpers/generatedVault";

/** A clock the test advances by hand. */
function manualClock() {
  let now = 1_700_000_000_000;
  let timers: { at: number; run: () => void; id: number }[] = [];
  let ids = 0;
  const clock: Clock = {
    now: () => now,
    setTimeout: (run, ms) => {
      const timer = { at: now + ms, run, id: ++ids };
      timers.push(timer);
      return timer.id;
    },
    clearTimeout: (id) => {
      timers = timers.filter((t) => t.id !== id);
    },
  };
  const advance = async (ms: number) => {
    const end = now + ms;
    for (;;) {
      const next = timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      timers = timers.filter((t) => t !== next);
      now = next.at;
      next.run();
      await Promise.resolve();
    }
    now = end;
  };
  return { clock, advance };
}

function memoryAdapter() {
  const files = new Map<string, string>();
  const adapter: StateAdapter = {
    read: async (path) => files.get(path) ?? "",
    write: async (path, data) => void files.set(path, data),
    exists: async (path) => files.has(path),
  };
  return { files, adapter };
}

/** The state the engine keeps for a vault of `count` notes, all in sync. */
function stateOf(count: number): PersistedSync {
  const known: PersistedSync["known"] = {};
  for (let i = 0; i < count; i++) {
    const path = GeneratedVault.path(i);
    known[path] = [1_700_000_000_000 + i * 1_000, 1_000 + ((i * 37) % 9_000), createHash("sha256").update(path).digest("hex").slice(0, 16)];
  }
  return { ops: [], upserts: [], known };
}

const SETTINGS = { sidecarUrl: "http://127.0.0.1:8765", token: "", answerMode: "strict", excludedFolders: [], answersFolder: "" };
const bytes = (text: string) => new TextEncoder().encode(text).length;

describe("the sync state's own files", () => {
  it("keep the queue and the in-sync map across a restart, and write nothing unchanged", async () => {
    const { clock, advance } = manualClock();
    const { files, adapter } = memoryAdapter();
    const state: PersistedSync = { ops: [{ kind: "delete", path: "Old.md" }], upserts: ["New.md"], known: { "A.md": [1, 2, "abcd"] } };
    const writes: string[] = [];
    const file = new SyncStateFile(() => state, { dir: ".obsidian/plugins/vault-rag", adapter, clock, onWrite: (name) => writes.push(name) });
    file.changed();
    await advance(2_000);
    expect(writes).toEqual([QUEUE_FILE, KNOWN_FILE]); // the first map is written at once
    file.changed();
    await advance(600_000);
    expect(writes).toHaveLength(2); // nothing changed: nothing written
    expect([...files.keys()].sort()).toEqual([`.obsidian/plugins/vault-rag/${KNOWN_FILE}`, `.obsidian/plugins/vault-rag/${QUEUE_FILE}`]);
    const again = new SyncStateFile(() => state, { dir: ".obsidian/plugins/vault-rag", adapter, clock });
    expect(parsePersistedSync(await again.load())).toEqual(state);
    expect(await new SyncStateFile(() => state, { dir: "elsewhere", adapter, clock }).load()).toBeNull();
  });

  it("at 10,000 notes, an hour of editing writes a few MB instead of hundreds", async () => {
    const { clock, advance } = manualClock();
    const { adapter } = memoryAdapter();
    const state = stateOf(10_000);
    let after = 0;
    const file = new SyncStateFile(() => state, { dir: "p", adapter, clock, onWrite: (_name, size) => (after += size) });
    let before = 0;
    // One synced save every 5 s for an hour (Obsidian saves a typed note ~2 s after the last key).
    const saves = 3_600 / 5;
    for (let i = 0; i < saves; i++) {
      const path = GeneratedVault.path(i % 10_000);
      const entry = state.known[path] as [number, number, string];
      state.known[path] = [entry[0] + 5_000, entry[1] + 1, createHash("sha256").update(`${path}${i}`).digest("hex").slice(0, 16)];
      // Before: data.json with the settings and the whole state, 2 s after each save.
      before += bytes(JSON.stringify({ ...SETTINGS, sync: state }));
      file.changed();
      await advance(5_000);
    }
    await file.flush();
    const mb = (n: number) => (n / 1e6).toFixed(2);
    console.log(
      `sync state at 10k notes: data.json ${mb(bytes(JSON.stringify({ ...SETTINGS, sync: state })))} MB; ` +
        `one hour, ${saves} saves: before ${mb(before)} MB written, after ${mb(after)} MB`,
    );
    expect(after).toBeLessThan(before / 50);
    expect(after).toBeLessThan(15e6);
  }, 120_000);
});
