/**
 * Busy sidecars and a token still on its way, against a real HTTP server on 127.0.0.1:
 * - a 409/503 answer's `Retry-After` reaches `SidecarHttpError.retryAfterS`, the message says
 *   when it will be ready, and the stored conversation's reload waits exactly that long;
 * - a stored conversation loaded while the plugin's own sidecar is starting, with the last run's
 *   token (the sidecar cannot prove it, so the token is not sent), is retried and loads once the
 *   new token is handed over; the same failure when no sidecar of the plugin is starting is
 *   reported at once (issue 29).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import { parseThread, SidecarClient, SidecarHttpError, SidecarUnprovenError } from "../src/client";
import { tokenProof } from "../src/sidecar/proof";
import type { Clock } from "../src/sync/timing";
import { describeError, retryDelayMs } from "../src/view/conversation";
import { loadPatiently } from "../src/view/resume";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A sidecar stand-in: proves `token` on `/v1/health?challenge=`, answers `GET /v1/threads/t1`
 * with `answer()` (status, body, headers) after checking the bearer token itself. */
async function sidecar(token: () => string, answer: () => [number, unknown, Record<string, string>?]) {
  const seen: { auth: string | undefined }[] = [];
  const server = createServer((req, res) => {
    const challenge = new URL(req.url ?? "/", "http://x").searchParams.get("challenge");
    if (challenge !== null) {
      void tokenProof(token(), challenge).then((proof) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ status: "ok", proof }));
      });
      return;
    }
    seen.push({ auth: req.headers.authorization });
    const [status, body, headers] =
      req.headers.authorization === `Bearer ${token()}` ? answer() : [401, { code: "unauthorized", message: "wrong token" }];
    res.writeHead(status, { "Content-Type": "application/json", ...(headers ?? {}) });
    res.end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** Timers that fire at once but remember how long they were asked to wait. */
function recordingClock(waits: number[]): Clock {
  return {
    now: () => Date.now(),
    setTimeout: (fn: () => void, ms: number) => {
      waits.push(ms);
      return setTimeout(fn, 0);
    },
    clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  } as Clock;
}

const THREAD = { thread_id: "t1", messages: [{ role: "user", content: "q?" }, { role: "assistant", content: "a.", id: "a1" }] };

describe("Retry-After", () => {
  it("is read from a busy answer and said to the user", async () => {
    const { url } = await sidecar(
      () => "tok",
      () => [409, { code: "switch_running", message: "a switch of embedding model is under way" }, { "Retry-After": "95" }],
    );
    const error = await new SidecarClient(() => ({ url, token: "tok" })).thread("t1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SidecarHttpError);
    expect((error as SidecarHttpError).retryAfterS).toBe(95);
    expect(describeError(error)).toContain("it should be done in about 2 min");
    expect(retryDelayMs(0, error)).toBe(95_000);
  });

  it("is absent when the sidecar sends none, and the old wording and back-off stay", async () => {
    const { url } = await sidecar(() => "tok", () => [503, { code: "unavailable", message: "busy" }]);
    const error = await new SidecarClient(() => ({ url, token: "tok" })).thread("t1").catch((e: unknown) => e);
    expect((error as SidecarHttpError).retryAfterS).toBeNull();
    expect(describeError(error)).toContain("try again in a few seconds");
    expect(retryDelayMs(2, error)).toBe(4_000);
  });

  it("sets the wait of a stored conversation's reload", async () => {
    let calls = 0;
    const { url } = await sidecar(
      () => "tok",
      () => (++calls === 1 ? [503, { code: "starting", message: "the server is still starting" }, { "Retry-After": "3" }] : [200, THREAD]),
    );
    const client = new SidecarClient(() => ({ url, token: "tok" }));
    const waits: number[] = [];
    const notes: (string | null)[] = [];
    const messages = await loadPatiently("t1", new AbortController().signal, {
      load: async (id, signal) => parseThread(await client.thread(id, { signal })).messages,
      clock: recordingClock(waits),
      onError: () => undefined,
      note: (text) => notes.push(text),
    });
    expect(messages?.map((m) => m.content)).toEqual(["q?", "a."]);
    expect(waits).toEqual([3_000]);
    expect(notes[0]).toBe("Waiting for the sidecar to load the earlier conversation (ready in about 3 s; trying again in 3 s)…");
  });
});

describe("a stored conversation while the plugin's own sidecar starts", () => {
  async function resume(starting: () => boolean, token: { sent: string; served: string }, handOver: () => void) {
    const { url, seen } = await sidecar(() => token.served, () => [200, THREAD]);
    const client = new SidecarClient(() => ({ url, token: token.sent }));
    const errors: unknown[] = [];
    const waits: number[] = [];
    const messages = await loadPatiently("t1", new AbortController().signal, {
      load: async (id, signal) => {
        try {
          return parseThread(await client.thread(id, { signal })).messages;
        } finally {
          handOver();
        }
      },
      clock: recordingClock(waits),
      onError: (error) => errors.push(error),
      note: () => undefined,
      sidecarStarting: starting,
    });
    return { messages, errors, waits, seen };
  }

  it("waits for the new token instead of saying it could not load", async () => {
    const token = { sent: "last-runs-token", served: "new-token" };
    let state: "starting" | "running" = "starting";
    const { messages, errors, seen } = await resume(
      () => state === "starting",
      token,
      () => {
        // the handshake arrives while the first request is out: token first, then the state
        token.sent = token.served;
        state = "running";
      },
    );
    expect(errors).toEqual([]);
    expect(messages?.map((m) => m.content)).toEqual(["q?", "a."]);
    expect(seen.map((s) => s.auth)).toEqual(["Bearer new-token"]); // the stale token never went out
  });

  it("reports a refused token at once when no sidecar of the plugin is starting", async () => {
    const token = { sent: "wrong", served: "right" };
    const { messages, errors, seen } = await resume(() => false, token, () => undefined);
    expect(messages).toBeNull();
    expect(errors[0]).toBeInstanceOf(SidecarUnprovenError);
    expect(errors).toHaveLength(1);
    expect(seen).toHaveLength(0);
  });
});
