/**
 * Save-time sync with fake timers and an in-memory sidecar: per-note debounce and the batch
 * window, batching, embedders, ordering of deletes and renames, retries with backoff while the
 * sidecar is down (nothing dropped, latest content wins), and reconcile by hash.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { SidecarHttpError } from "../src/client";
import { parsePersistedSync } from "../src/sync";
import { isExcluded, sha256Hex } from "../src/sync/content";
import { SyncEngine } from "../src/sync/engine";
import type { SyncOptions } from "../src/sync/types";
import { FakeSidecar, FakeVault } from "./helpers/fakeSync";

const T0 = 1_000_000;
let sidecar: FakeSidecar;
let vault: FakeVault;
let engines: SyncEngine[] = [];

function engine(options: Partial<SyncOptions> = {}) {
  const errors: unknown[] = [];
  const dropped: string[] = [];
  const sync = new SyncEngine(sidecar, vault, {
    isExcluded: (path) => isExcluded(path, ["Private"]),
    fileDebounceMs: 2_000,
    maxDelayMs: 20_000,
    batchWindowMs: 500,
    retryBaseMs: 1_000,
    retryMaxMs: 8_000,
    onError: (error) => errors.push(error),
    onDropped: (path) => dropped.push(path),
    ...options,
  });
  engines.push(sync);
  return { sync, errors, dropped };
}

const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);
const since = (at: number) => at - T0;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  sidecar = new FakeSidecar();
  vault = new FakeVault({ "A.md": "a1", "B.md": "b1", "C.md": "c1", "Private/x.md": "secret" });
});

afterEach(() => {
  for (const sync of engines) sync.stop();
  engines = [];
  vi.useRealTimers();
});

describe("debounce and batches", () => {
  it("waits for a note to be quiet, then posts its latest content once", async () => {
    const { sync } = engine();
    sync.noteChanged("A.md");
    await advance(1_000);
    vault.notes.set("A.md", "a2");
    sync.noteChanged("A.md");
    await advance(1_000);
    vault.notes.set("A.md", "a3");
    sync.noteChanged("A.md"); // t = 2000: quiet until 4000, batch window until 4500
    await advance(2_499);
    expect(sidecar.calls).toEqual([]);
    expect(sync.state.pending).toBe(1);
    await advance(1);
    expect(sidecar.summary).toEqual(["put A.md"]);
    expect(sidecar.index.get("A.md")).toBe("a3");
    expect(sync.state.pending).toBe(0);
  });

  it("gathers notes that become ready within the batch window into one request", async () => {
    const { sync } = engine();
    sync.noteChanged("A.md");
    await advance(300);
    sync.noteChanged("B.md"); // ready 200 ms after A: inside A's batch window
    await advance(3_000);
    expect(sidecar.summary).toEqual(["put A.md,B.md"]);
  });

  it("posts a note edited without pause after the maximum delay", async () => {
    const { sync } = engine();
    for (let t = 0; t < 30_000; t += 1_000) {
      sync.noteChanged("A.md");
      await advance(1_000);
    }
    const puts = sidecar.calls.filter((c) => c.kind === "put");
    expect(puts.map((c) => since(c.at))).toEqual([20_500]);
  });

  it("splits a burst into batches by count and by size", async () => {
    for (let i = 0; i < 120; i++) vault.notes.set(`n${i}.md`, "x".repeat(10));
    const { sync } = engine({ batchNotes: 50 });
    for (let i = 0; i < 120; i++) sync.noteChanged(`n${i}.md`);
    await advance(2_500);
    expect(sidecar.calls.map((c) => (c.kind === "put" ? c.notes.length : 0))).toEqual([50, 50, 20]);

    sidecar.calls.length = 0;
    // Bytes are those of each note's JSON entry: two of these fit, a third does not.
    const entry = new TextEncoder().encode(JSON.stringify(await vault.payload("n0.md"))).byteLength;
    const big = engine({ batchBytes: entry * 2 + 1 }).sync;
    for (let i = 0; i < 5; i++) big.noteChanged(`n${i}.md`);
    await advance(2_500);
    expect(sidecar.calls.map((c) => (c.kind === "put" ? c.notes.length : 0))).toEqual([2, 2, 1]);
  });

  it("re-posts the notes that embed a changed note", async () => {
    vault.embeddersOf.set("C.md", ["B.md", "A.md"]);
    const { sync } = engine();
    sync.noteChanged("C.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["put C.md,B.md,A.md"]);
  });

  it("skips excluded folders, also as embedders", async () => {
    vault.embeddersOf.set("C.md", ["Private/x.md"]);
    const { sync } = engine();
    sync.noteChanged("Private/x.md");
    sync.noteChanged("C.md");
    sync.noteDeleted("Private/y.md");
    await advance(5_000);
    expect(sidecar.summary).toEqual(["put C.md"]);
  });

  it("posts again a note changed while its post was in flight", async () => {
    let release!: () => void;
    sidecar.gate = new Promise((resolve) => (release = resolve));
    const { sync } = engine();
    sync.noteChanged("A.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["put A.md"]);
    vault.notes.set("A.md", "a2");
    sync.noteChanged("A.md");
    sidecar.gate = null;
    release();
    await advance(2_500);
    expect(sidecar.summary).toEqual(["put A.md", "put A.md"]);
    expect(sidecar.index.get("A.md")).toBe("a2");
    expect(sync.state.pending).toBe(0);
  });
});

describe("deletes and renames", () => {
  it("sends deletes and renames in order, before the upserts", async () => {
    sidecar.index.set("A.md", "a1");
    sidecar.index.set("C.md", "c1");
    const { sync } = engine();
    sync.noteRenamed("A.md", "Folder/A.md");
    vault.notes.set("A.md", "a new note where A was");
    sync.noteChanged("A.md");
    sync.noteDeleted("C.md");
    sync.noteDeleted("B.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["rename A.md->Folder/A.md", "delete C.md,B.md", "put A.md"]);
    expect([...sidecar.index.keys()].sort()).toEqual(["A.md", "Folder/A.md"]);
  });

  it("drops a pending upsert of a deleted note and moves one of a renamed note", async () => {
    const { sync } = engine();
    sync.noteChanged("A.md");
    sync.noteChanged("B.md");
    sync.noteDeleted("A.md");
    vault.notes.set("New/B.md", "b1");
    vault.notes.delete("B.md");
    sync.noteRenamed("B.md", "New/B.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["delete A.md", "rename B.md->New/B.md", "put New/B.md"]);
  });

  it("folds a rename of a rename into one, and a delete of a renamed note into a delete", async () => {
    const { sync } = engine();
    sync.noteRenamed("A.md", "X.md");
    sync.noteRenamed("X.md", "Y.md");
    sync.noteRenamed("B.md", "Z.md");
    sync.noteDeleted("Z.md");
    sync.noteRenamed("C.md", "W.md");
    sync.noteRenamed("W.md", "C.md");
    await advance(1_000);
    expect(sidecar.summary).toEqual(["rename A.md->Y.md", "delete B.md"]);
  });

  it("treats moves into and out of an excluded folder as a new note and a delete", async () => {
    vault.notes.set("Public.md", "p");
    const { sync } = engine();
    sync.noteRenamed("A.md", "Private/A.md");
    sync.noteRenamed("Private/p.md", "Public.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["delete A.md", "put Public.md"]);
  });
});

describe("retries", () => {
  it("keeps everything while the sidecar is down and retries with exponential backoff", async () => {
    sidecar.down = true;
    const { sync, errors } = engine();
    sync.noteChanged("A.md");
    sync.noteDeleted("Gone.md");
    // The delete goes after the batch window (500 ms), fails; retries after 1, 2, 4, 8 (the cap), 8 s.
    await advance(25_500);
    const times = sidecar.calls.map((c) => since(c.at));
    expect(times).toEqual([500, 1_500, 3_500, 7_500, 15_500, 23_500]);
    expect(sidecar.calls.every((c) => c.kind === "delete")).toBe(true); // ordered: the delete first
    expect(errors).toHaveLength(6);
    expect(sync.state).toMatchObject({ pending: 2, retryInMs: 6_000 });

    // Edits during the outage: the latest content wins, nothing is lost.
    vault.notes.set("A.md", "a-latest");
    sync.noteChanged("A.md");
    sync.noteChanged("B.md");
    sidecar.down = false;
    await advance(8_000);
    expect(sidecar.summary.slice(-2)).toEqual(["delete Gone.md", "put A.md,B.md"]);
    expect(sidecar.index.get("A.md")).toBe("a-latest");
    expect(sync.state).toMatchObject({ pending: 0, lastError: null, retryInMs: null });
  });

  it("retries at once when kicked (the sidecar is back)", async () => {
    sidecar.down = true;
    const { sync } = engine();
    sync.noteChanged("A.md");
    await advance(2_500);
    await advance(1_000 + 2_000); // retries at 3500, 5500; the next would be at 9500
    sidecar.down = false;
    sync.kick();
    await advance(0);
    expect(sidecar.calls.map((c) => since(c.at))).toEqual([2_500, 3_500, 5_500, 5_500]);
    expect(sync.state.pending).toBe(0);
  });

  it("retries a refused token too (the user fixes it), but drops what a 4xx refuses", async () => {
    sidecar.unauthorized = true;
    sidecar.refuse.add("B.md");
    const { sync, dropped } = engine();
    sync.noteChanged("A.md");
    sync.noteChanged("B.md");
    sync.noteChanged("C.md");
    await advance(2_500);
    expect(sync.state.pending).toBe(3);
    sidecar.unauthorized = false;
    await advance(1_000);
    // The batch is refused, so each note goes alone: B is dropped, A and C are indexed.
    expect(sidecar.summary.slice(1)).toEqual(["put A.md,B.md,C.md", "put A.md", "put B.md", "put C.md"]);
    expect(dropped).toEqual(["B.md"]);
    expect([...sidecar.index.keys()].sort()).toEqual(["A.md", "C.md"]);
    expect(sync.state.pending).toBe(0);
  });

  it("posts a renamed note under its new name when the sidecar refuses the rename", async () => {
    const { sync } = engine();
    sidecar.renameNotes = async (renames) => {
      sidecar.calls.push({ kind: "rename", at: Date.now(), renames });
      throw new SidecarHttpError(400, "no", null, "bad_request");
    };
    vault.notes.set("D.md", "d");
    sync.noteRenamed("C.md", "D.md");
    await advance(1_000);
    expect(sidecar.summary).toEqual(["rename C.md->D.md", "put D.md"]);
  });

  it("stops: no requests after stop()", async () => {
    const { sync } = engine();
    sync.noteChanged("A.md");
    sync.stop();
    sync.noteChanged("B.md");
    await advance(60_000);
    expect(sidecar.calls).toEqual([]);
  });
});

describe("reconcile", () => {
  it("posts only what differs and deletes what the vault no longer has", async () => {
    vault.notes.set("D.md", "with an embed: d-resolved");
    vault.raw.set("D.md", "with an embed: ![[E]]");
    sidecar.hashes = new Map([
      ["A.md", await sha256Hex("a1")], // same content: skipped
      ["B.md", await sha256Hex("b-old")], // changed: posted
      ["D.md", await sha256Hex("with an embed: ![[E]]")], // indexed from disk by the sidecar: skipped
      ["Gone.md", "00"], // not in the vault: deleted
      ["Private/old.md", "11"], // excluded: left alone
    ]);
    const { sync } = engine();
    await sync.reconcile(); // C.md is not on the sidecar: posted
    expect(sidecar.summary).toEqual(["hashes", "delete Gone.md", "put B.md,C.md"]);
    expect(sync.state.pending).toBe(0);
    expect(vault.reads.get("B.md")).toBe(1); // resolved once: to compare, and that payload is sent
  });

  it("reads up to reconcileConcurrency notes at once and applies them in vault order", async () => {
    for (let i = 0; i < 20; i++) vault.notes.set(`N${String(i).padStart(2, "0")}.md`, `n${i}`);
    const hashes = new Map<string, string>();
    for (const [path, content] of vault.notes) {
      // every third note changed on this side; the rest in sync
      hashes.set(path, await sha256Hex(Number(path.slice(1, 3)) % 3 === 0 ? "old" : content));
    }
    const runs: { most: number; puts: string[] }[] = [];
    for (const concurrency of [1, 4]) {
      sidecar = new FakeSidecar();
      sidecar.hashes = new Map(hashes);
      let inFlight = 0;
      let most = 0;
      const payload = vault.payload.bind(vault);
      vault.payload = async (path: string) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        for (let k = 0; k < 5; k++) await Promise.resolve(); // a read that takes a while
        inFlight -= 1;
        return payload(path);
      };
      const { sync } = engine({ reconcileConcurrency: concurrency });
      await sync.reconcile();
      runs.push({ most, puts: sidecar.summary });
      vault.payload = payload;
    }
    expect(runs.map((r) => r.most)).toEqual([1, 4]);
    expect(runs[1]?.puts).toEqual(runs[0]?.puts); // same posts, same order
    expect(runs[0]?.puts).toEqual(["hashes", "put N00.md,N03.md,N06.md,N09.md,N12.md,N15.md,N18.md"]);
  });

  it("retries a reconcile the sidecar was down for", async () => {
    sidecar.down = true;
    const { sync } = engine();
    await sync.reconcile();
    expect(sidecar.summary).toEqual(["hashes"]);
    sidecar.down = false;
    await advance(1_000);
    await vi.waitFor(() => expect(sidecar.summary).toEqual(["hashes", "hashes", "put A.md,B.md,C.md"]));
  });

  it("re-index reads every note again, however sure the shortcut is, and sends what differs", async () => {
    sidecar.hashes = new Map([
      ["A.md", await sha256Hex("a1")],
      ["B.md", await sha256Hex("b1")],
      ["C.md", await sha256Hex("c1")],
    ]);
    const { sync } = engine();
    await sync.reconcile();
    const reads = () => [...vault.reads.values()].reduce((a, b) => a + b, 0);
    const first = reads();
    expect(first).toBe(3);
    await sync.reconcile(); // known in sync at this mtime and size: nothing read
    expect(reads()).toBe(first);
    sidecar.hashes.set("B.md", await sha256Hex("b-stale"));
    sidecar.calls.length = 0;
    expect(await sync.reindex()).toEqual({ read: 3, changed: 1 });
    expect(reads()).toBe(first + 3);
    expect(sidecar.summary).toEqual(["hashes", "put B.md"]);
    sidecar.down = true;
    expect(await sync.reindex()).toBeNull(); // queued, retried when the sidecar is back
  });

  it("compares NFC paths, as the sidecar reports them", async () => {
    const nfd = "Cafe\u0301.md";
    vault.notes.set(nfd, "x");
    sidecar.hashes = new Map([
      ["Café.md", await sha256Hex("x")],
      ["A.md", await sha256Hex("a1")],
      ["B.md", await sha256Hex("b1")],
      ["C.md", await sha256Hex("c1")],
    ]);
    const { sync } = engine();
    await sync.reconcile();
    expect(sidecar.summary).toEqual(["hashes"]);
  });
});

describe("notes too large to send", () => {
  it("reports a note the sidecar refuses with 413 and indexes the others", async () => {
    const tooLarge: [string, number][] = [];
    const put = sidecar.putNotes.bind(sidecar);
    sidecar.putNotes = async (notes) => {
      if (notes.some((n) => n.path === "B.md")) {
        sidecar.calls.push({ kind: "put", at: Date.now(), notes: structuredClone(notes) });
        throw new SidecarHttpError(413, "the request body is larger than 16777216 bytes", null, "body_too_large");
      }
      return put(notes);
    };
    const { sync, dropped } = engine({ onTooLarge: (path, bytes) => tooLarge.push([path, bytes]) });
    for (const path of ["A.md", "B.md", "C.md"]) sync.noteChanged(path);
    await advance(2_500);
    expect(sidecar.summary).toEqual(["put A.md,B.md,C.md", "put A.md", "put B.md", "put C.md"]);
    expect(tooLarge.map(([path]) => path)).toEqual(["B.md"]);
    expect(tooLarge[0]?.[1]).toBeGreaterThan(0);
    expect(dropped).toEqual([]);
    expect(sync.state).toMatchObject({ pending: 0, tooLarge: ["B.md"] });
    // Posted again once it is small enough: no longer reported.
    sidecar.putNotes = put;
    vault.notes.set("B.md", "b2");
    sync.noteChanged("B.md");
    await advance(2_500);
    expect(sync.state.tooLarge).toEqual([]);
  });

  it("does not send a note over the per-note byte cap, and counts bytes, not characters", async () => {
    const tooLarge: [string, number][] = [];
    vault.notes.set("A.md", "啊".repeat(300)); // 300 characters, 900 UTF-8 bytes
    vault.notes.set("B.md", "b".repeat(300));
    const { sync } = engine({ maxNoteBytes: 600, onTooLarge: (path, bytes) => tooLarge.push([path, bytes]) });
    sync.noteChanged("A.md");
    sync.noteChanged("B.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["put B.md"]);
    expect(tooLarge).toHaveLength(1);
    expect(tooLarge[0]?.[0]).toBe("A.md");
    expect(tooLarge[0]?.[1]).toBeGreaterThan(900);
  });
});

describe("the queue across a reload", () => {
  it("keeps a pending rename (not a delete and a new post), deletes and notes to post", async () => {
    sidecar.down = true;
    const first = engine();
    first.sync.noteRenamed("C.md", "D.md");
    first.sync.noteDeleted("Gone.md");
    first.sync.noteChanged("A.md");
    await advance(3_000);
    expect(first.sync.state.pending).toBe(3);
    // Obsidian quits: the plugin's data keeps the queue (as JSON).
    const saved = JSON.parse(JSON.stringify(first.sync.persisted)) as SyncEngine["persisted"];
    first.sync.stop();

    sidecar.down = false;
    sidecar.calls.length = 0;
    vault.notes.set("D.md", "c1");
    const second = engine({ persisted: saved });
    expect(second.sync.state.pending).toBe(3);
    await second.sync.flush(); // the start-up reconcile's flush sends them
    expect(sidecar.summary).toEqual(["rename C.md->D.md", "delete Gone.md", "put A.md"]);
    expect(second.sync.state.pending).toBe(0);
  });

  it("sends a pending rename at the start-up reconcile as a rename, not a new note and a delete", async () => {
    sidecar.down = true;
    const first = engine();
    first.sync.noteRenamed("C.md", "D.md");
    first.sync.noteDeleted("Gone.md");
    await advance(3_000);
    const saved = JSON.parse(JSON.stringify(first.sync.persisted)) as SyncEngine["persisted"];
    first.sync.stop();

    sidecar.down = false;
    sidecar.calls.length = 0;
    vault.notes.delete("C.md");
    vault.notes.set("D.md", "c1");
    sidecar.hashes = new Map([
      ["A.md", await sha256Hex("a1")],
      ["B.md", await sha256Hex("b1")],
      ["C.md", await sha256Hex("c1")],
      ["Gone.md", "00"],
    ]);
    const second = engine({ persisted: saved });
    await second.sync.reconcile();
    expect(sidecar.summary).toEqual(["hashes", "rename C.md->D.md", "delete Gone.md"]);
    expect(second.sync.state.pending).toBe(0);
  });

  it("re-posts at start-up the notes embedding a note changed while the app was closed", async () => {
    vault.notes.set("E.md", "e resolved with c1");
    vault.embeddersOf.set("C.md", ["E.md"]);
    sidecar.hashes = new Map(await Promise.all([...vault.notes].map(async ([p, c]) => [p, await sha256Hex(c)] as [string, string])));
    const first = engine();
    await first.sync.reconcile();
    expect(sidecar.summary).toEqual(["hashes"]);
    const saved = first.sync.persisted;
    first.sync.stop();
    // Closed: C changes on disk (new mtime), E's own file does not, but its resolved text does.
    vault.notes.set("C.md", "c2");
    vault.mtimes.set("C.md", 1_700_000_900_000);
    vault.notes.set("E.md", "e resolved with c2");
    vault.reads.clear();
    sidecar.calls.length = 0;
    const second = engine({ persisted: saved });
    await second.sync.reconcile();
    expect(sidecar.summary).toEqual(["hashes", "put C.md,E.md"]);
    expect([...vault.reads.keys()].sort()).toEqual(["C.md", "E.md"]); // only what changed was read
  });
});

describe("the persisted state", () => {
  it("remembers what it posted, so the next start reads that note no more", async () => {
    const first = engine();
    sidecar.hashes = new Map([
      ["B.md", await sha256Hex("b1")],
      ["C.md", await sha256Hex("c1")],
    ]);
    vault.notes.set("A.md", "a2");
    first.sync.noteChanged("A.md");
    await advance(2_500);
    expect(sidecar.summary).toEqual(["put A.md"]);
    await vi.waitFor(() => expect(first.sync.persisted.known["A.md"]).toBeDefined());
    const saved = JSON.parse(JSON.stringify(first.sync.persisted)) as SyncEngine["persisted"];
    first.sync.stop();
    expect(saved.known["A.md"]?.[2]).toHaveLength(16); // a hash prefix keeps data.json small

    sidecar.hashes.set("A.md", await sha256Hex("a2")); // what the sidecar reports for the post
    sidecar.calls.length = 0;
    vault.reads.clear();
    const second = engine({ persisted: saved });
    await second.sync.reconcile();
    expect(sidecar.summary).toEqual(["hashes"]);
    expect(vault.reads.get("A.md")).toBeUndefined();
  });

  it("reads hand-edited or broken plugin data without losing the rest", () => {
    expect(parsePersistedSync(null)).toBeNull();
    expect(parsePersistedSync("nonsense")).toBeNull();
    expect(
      parsePersistedSync({
        ops: [{ kind: "rename", from: "a.md", to: "b.md" }, { kind: "delete" }, 7, { kind: "delete", path: "c.md" }],
        upserts: ["d.md", 3],
        known: { "e.md": [1, 2, "abc"], "f.md": [1, "x", "abc"], "g.md": "bad" },
      }),
    ).toEqual({
      ops: [
        { kind: "rename", from: "a.md", to: "b.md" },
        { kind: "delete", path: "c.md" },
      ],
      upserts: ["d.md"],
      known: { "e.md": [1, 2, "abc"] },
    });
  });
});
