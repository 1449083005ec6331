/** The status poller (fake timers), the status bar text and the connection notices. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import {
  parseStatus,
  SidecarAuthError,
  SidecarHttpError,
  type SidecarStatus,
  SidecarUnreachableError,
} from "../src/client";
import { ConnectionNotices, describePhase, describeStatus, type StatusSnapshot, StatusPoller } from "../src/status/poller";

const URL = "http://127.0.0.1:8765";
const unreachable = () => new SidecarUnreachableError(URL, new TypeError("fetch failed"));
const status = (data: Record<string, unknown>) => parseStatus({ notes: 24, chunks: 100, embedded: 100, pending: 0, ...data });

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => vi.useRealTimers());

describe("StatusPoller", () => {
  it("polls slowly when idle, fast while indexing, and backs off while the sidecar is down", async () => {
    const answers: (SidecarStatus | Error)[] = [
      status({}),
      status({ pending: 40, embedded: 60 }),
      unreachable(),
      unreachable(),
      unreachable(),
      status({}),
    ];
    const at: number[] = [];
    const recovered = vi.fn();
    const snapshots: StatusSnapshot[] = [];
    const poller = new StatusPoller(
      {
        status: async () => {
          at.push(Date.now());
          const next = answers.shift() ?? status({});
          if (next instanceof Error) throw next;
          return next;
        },
      },
      { intervalMs: 15_000, busyIntervalMs: 2_000, retryBaseMs: 2_000, retryMaxMs: 60_000, onRecovered: recovered, onUpdate: (s) => snapshots.push(s) },
    );
    poller.start();
    await vi.advanceTimersByTimeAsync(15_000 + 2_000 + 2_000 + 4_000 + 8_000);
    poller.stop();
    // ok → 15 s; indexing → 2 s; down → 2, 4, 8 s; back.
    expect(at).toEqual([0, 15_000, 17_000, 19_000, 23_000, 31_000]);
    expect(snapshots.map((s) => s.connection)).toEqual(["ok", "ok", "unreachable", "unreachable", "unreachable", "ok"]);
    expect(recovered).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(100_000);
    expect(at).toHaveLength(6); // stopped
  });

  it("takes reports from sync and the pane; HTTP errors do not change the connection", () => {
    const poller = new StatusPoller({ status: () => new Promise(() => undefined) });
    poller.report(new SidecarAuthError(URL));
    expect(poller.current.connection).toBe("unauthorized");
    poller.report(new SidecarHttpError(500, "boom"));
    expect(poller.current.connection).toBe("unauthorized");
    poller.report(unreachable());
    expect(poller.current.connection).toBe("unreachable");
    poller.setSyncPending(3);
    expect(poller.current.syncPending).toBe(3);
  });
});

describe("describeStatus", () => {
  const snap = (s: Partial<StatusSnapshot>): StatusSnapshot => ({ connection: "ok", status: null, syncPending: 0, error: null, ...s });

  it("shows reachability, notes pending and indexing progress", () => {
    expect(describeStatus(snap({ connection: "unknown" }), URL).text).toBe("RAG: connecting…");
    expect(describeStatus(snap({ connection: "unreachable", syncPending: 3 }), URL).text).toBe("RAG: offline · 3 to sync");
    expect(describeStatus(snap({ connection: "unreachable" }), URL).title).toContain(URL);
    expect(describeStatus(snap({ connection: "unauthorized" }), URL).text).toBe("RAG: token rejected");
    expect(describeStatus(snap({ status: status({}) }), URL).text).toBe("RAG: 24 notes");
    expect(describeStatus(snap({ status: status({ pending: 25, embedded: 75 }), syncPending: 1 }), URL).text).toBe(
      "RAG: 24 notes · indexing 75% · 1 to sync",
    );
    const writing = status({ writer: { state: "writing", phase: "chunking", done: 12, total: 500, queued: 0 } });
    expect(describeStatus(snap({ status: writing }), URL).text).toBe("RAG: 24 notes · reading notes 12/500");
  });

  it("names the writer's phase in words, the sections step included", () => {
    const writer = (phase: string | null) =>
      describeStatus(snap({ status: status({ writer: { state: "embedding", phase, done: 3, total: 40, queued: 0 } }) }), URL).text;
    expect(writer("embedding")).toBe("RAG: 24 notes · embedding 3/40");
    expect(writer("sections")).toBe("RAG: 24 notes · sections for citations 3/40");
    expect(writer(null)).toBe("RAG: 24 notes · indexing 3/40");
    // a phase a newer sidecar may add is shown as sent
    expect(writer("reranking")).toBe("RAG: 24 notes · reranking 3/40");
    expect(describePhase("chunking")).toBe("reading notes");
    expect(describePhase("")).toBe("indexing");
  });
});

describe("ConnectionNotices", () => {
  it("shows one notice per change of state, none for a first success", () => {
    const shown: string[] = [];
    const notices = new ConnectionNotices((m) => shown.push(m), () => URL);
    for (const state of ["ok", "ok", "unreachable", "unreachable", "unreachable", "unauthorized", "unauthorized", "ok", "ok"] as const) {
      notices.update(state);
    }
    expect(shown).toHaveLength(3);
    expect(shown[0]).toContain(`cannot reach the sidecar at ${URL}`);
    expect(shown[1]).toContain("refused the token");
    expect(shown[2]).toContain("connected to the sidecar again");
  });
});
