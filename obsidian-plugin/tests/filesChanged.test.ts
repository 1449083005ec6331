/**
 * PDFs and canvases (issue 25): their create/modify/rename/delete events become
 * `POST /v1/notes/changed` with paths only (the sidecar reads the files), debounced into one
 * request, retried while the sidecar is down, excluded folders left out; and the Obsidian vault
 * events reach the queue (`fileEvents`).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { SidecarHttpError, SidecarUnreachableError } from "../src/client";
import { isExcluded } from "../src/sync/content";
import { FileChangeQueue, type FileChangeOptions, isSidecarReadPath } from "../src/sync/files";
import { fileEvents } from "../src/sync/obsidian";

const T0 = 1_000_000;

class Recorder {
  calls: string[][] = [];
  failures: unknown[] = [];
  async filesChanged(paths: string[]): Promise<unknown> {
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    this.calls.push([...paths]);
    return { results: [], indexed: paths.length, deleted: 0 };
  }
}

let sidecar: Recorder;
let queues: FileChangeQueue[] = [];

function queue(options: Partial<FileChangeOptions> = {}) {
  const errors: unknown[] = [];
  const dropped: string[][] = [];
  const q = new FileChangeQueue(sidecar, {
    isExcluded: (path) => isExcluded(path, ["Private"]),
    debounceMs: 2_000,
    maxDelayMs: 20_000,
    retryBaseMs: 1_000,
    retryMaxMs: 8_000,
    onError: (error) => errors.push(error),
    onDropped: (paths) => dropped.push(paths),
    ...options,
  });
  queues.push(q);
  return { q, errors, dropped };
}

const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  sidecar = new Recorder();
});

afterEach(() => {
  for (const q of queues) q.stop();
  queues = [];
  vi.useRealTimers();
});

describe("isSidecarReadPath", () => {
  it("is true for PDFs and canvases only", () => {
    expect(isSidecarReadPath("Papers/A.pdf")).toBe(true);
    expect(isSidecarReadPath("Papers/B.PDF")).toBe(true);
    expect(isSidecarReadPath("Boards/x.canvas")).toBe(true);
    for (const path of ["A.md", "img.png", "pdf", "Folder.pdf/readme", "a.pdf.md", "noext"]) {
      expect(isSidecarReadPath(path)).toBe(false);
    }
  });
});

describe("FileChangeQueue", () => {
  it("sends one request with every path of a burst, once each path is quiet", async () => {
    const { q } = queue();
    q.changed("Papers/A.pdf");
    await advance(1_500);
    q.changed("Papers/A.pdf"); // still being written
    q.changed("Boards/B.canvas");
    await advance(1_999);
    expect(sidecar.calls).toEqual([]);
    expect(q.pending).toBe(2);
    await advance(1);
    expect(sidecar.calls).toEqual([["Papers/A.pdf", "Boards/B.canvas"]]);
    expect(q.pending).toBe(0);
  });

  it("a file changed without pause still goes out after maxDelayMs", async () => {
    const { q } = queue();
    for (let t = 0; t < 25_000; t += 1_000) {
      q.changed("Papers/Growing.pdf");
      await advance(1_000);
    }
    expect(sidecar.calls[0]).toEqual(["Papers/Growing.pdf"]);
  });

  it("names both sides of a rename and a deleted file; Markdown and excluded paths are not its business", async () => {
    const { q } = queue();
    q.renamed("Inbox/scan.pdf", "Papers/scan.pdf");
    q.deleted("Boards/Old.canvas");
    q.changed("Notes/A.md");
    q.changed("Private/secret.pdf");
    q.renamed("Private/moved.pdf", "Private/also.pdf");
    await q.flush();
    expect(sidecar.calls).toEqual([["Inbox/scan.pdf", "Papers/scan.pdf", "Boards/Old.canvas"]]);
  });

  it("keeps every path while the sidecar is down and sends them when it is back", async () => {
    const { q, errors } = queue();
    const down = new SidecarUnreachableError("http://127.0.0.1:1", new Error("ECONNREFUSED"));
    sidecar.failures.push(down, down);
    q.changed("Papers/A.pdf");
    await advance(2_000);
    expect(errors).toHaveLength(1);
    expect(q.pending).toBe(1);
    q.changed("Papers/B.pdf");
    await advance(1_000); // first retry: fails again (backoff now 2 s)
    expect(errors).toHaveLength(2);
    expect(sidecar.calls).toEqual([]);
    q.kick(); // the poller saw the sidecar come back
    await advance(0);
    expect(sidecar.calls.flat().sort()).toEqual(["Papers/A.pdf", "Papers/B.pdf"]);
    expect(q.pending).toBe(0);
  });

  it("drops a batch the sidecar refuses for good and reports it; later changes still go", async () => {
    const { q, dropped } = queue();
    sidecar.failures.push(new SidecarHttpError(422, "bad path", null, "validation_error"));
    q.changed("Papers/A.pdf");
    await advance(2_000);
    expect(dropped).toEqual([["Papers/A.pdf"]]);
    q.changed("Papers/C.pdf");
    await advance(2_000);
    expect(sidecar.calls).toEqual([["Papers/C.pdf"]]);
  });

  it("a file changed again while its request is in flight is sent again", async () => {
    let release: () => void = () => undefined;
    const calls: string[][] = [];
    const slow = {
      filesChanged: (paths: string[]) => {
        calls.push([...paths]);
        return calls.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
    };
    const q2 = new FileChangeQueue(slow, { isExcluded: () => false, debounceMs: 100 });
    queues.push(q2);
    q2.changed("A.pdf");
    await advance(100); // in flight
    q2.changed("A.pdf");
    await advance(100); // ready again while the first request waits
    release();
    await advance(0);
    expect(calls).toEqual([["A.pdf"], ["A.pdf"]]);
    expect(q2.pending).toBe(0);
  });

  it("batches by batchPaths", async () => {
    const { q } = queue({ batchPaths: 2 });
    for (const name of ["a", "b", "c"]) q.changed(`${name}.pdf`);
    await q.flush();
    expect(sidecar.calls).toEqual([["a.pdf", "b.pdf"], ["c.pdf"]]);
  });
});

describe("fileEvents: Obsidian's vault events reach the queue", () => {
  it("create, modify, delete and rename of PDFs and canvases; folders and notes are left out", async () => {
    const { TFile, TFolder } = await import("obsidian");
    const handlers = new Map<string, (...args: unknown[]) => void>();
    const app = {
      vault: {
        on: (name: string, handler: (...args: unknown[]) => void) => {
          handlers.set(name, handler);
          return { name };
        },
      },
    };
    // The test mock's classes take the path (Obsidian's types declare no constructor arguments).
    const file = (path: string) => new (TFile as unknown as new (path: string) => InstanceType<typeof TFile>)(path);
    const folder = (path: string) => new (TFolder as unknown as new (path: string) => InstanceType<typeof TFolder>)(path);
    const { q } = queue();
    const refs = fileEvents(app as never, q);
    expect(refs).toHaveLength(4);
    handlers.get("create")?.(file("New.pdf"));
    handlers.get("modify")?.(file("Board.canvas"));
    handlers.get("modify")?.(file("Note.md"));
    handlers.get("delete")?.(file("Gone.pdf"));
    handlers.get("rename")?.(file("Moved/Scan.pdf"), "Scan.pdf");
    handlers.get("rename")?.(folder("Moved"), "Old");
    await q.flush();
    expect(sidecar.calls).toEqual([["New.pdf", "Board.canvas", "Gone.pdf", "Scan.pdf", "Moved/Scan.pdf"]]);
  });
});
