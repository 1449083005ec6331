/**
 * The sealed transport (`src/remote/transport.ts`) under the real `SidecarClient`, against a
 * stand-in remote listener built from the protocol's own functions (`envelope.ts`, the sidecar's
 * side of `spake2.ts`); pairing (`pairing.ts`) and the credentials store (`store.ts`). The real
 * sidecar is in tests/e2e/remote.e2e.test.ts.
 */
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { describe, expect, it } from "vitest";

import { SidecarClient, SidecarHttpError, SidecarProtocolError, SidecarUnreachableError } from "../src/client";
import { openRequest, sealFrame, sealPairReply } from "../src/remote/envelope";
import { deviceKey, responseKey } from "../src/remote/keys";
import { normalizePairCode, normalizeRemoteUrl, pairDevice, PairingError, pairLink, parsePairParams, type RemoteDevice } from "../src/remote/pairing";
import { respond, sameBytes } from "../src/remote/spake2";
import { DEVICE_ID_SECRET, DEVICE_KEY_SECRET, parseRemoteData, RemoteCredentials } from "../src/remote/store";
import { type BytesPost, nextCounterAfter, RemoteAuthError, remoteFetch } from "../src/remote/transport";

const URL_ = "http://127.0.0.2:8766";
const device: RemoteDevice = { url: URL_, deviceId: "dev-1", name: "phone", role: "read", serverId: "srv-1", key: deviceKey(new Uint8Array(32).fill(7)) };

interface Seen {
  counter: number;
  message: { method: string; path: string; query: string; body: unknown };
}

/** A stand-in remote listener: opens the request, answers with sealed frames. */
function listener(answer: (message: Seen["message"]) => { status: number; type: string; chunks: string[]; cut?: boolean; tamper?: boolean }, seen: Seen[] = []) {
  const post: BytesPost = async (url, body, headers) => {
    expect(url).toBe(`${URL_}/remote/v1/call`);
    expect(headers["X-Device"]).toBe(device.deviceId);
    const { counter, message } = openRequest(device.key, device.deviceId, body);
    seen.push({ counter, message: message as Seen["message"] });
    const reply = answer(message as Seen["message"]);
    const key = responseKey(device.key, counter);
    const payloads = [new TextEncoder().encode(JSON.stringify({ status: reply.status, content_type: reply.type })), ...reply.chunks.map((c) => new TextEncoder().encode(c))];
    const frames = payloads.map((p, i) => sealFrame(key, device.deviceId, counter, i, p));
    if (!reply.cut) frames.push(sealFrame(key, device.deviceId, counter, payloads.length, new Uint8Array(0), true));
    if (reply.tamper) frames[1]![30]! ^= 1;
    return {
      status: 200,
      headers: {},
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (const frame of frames) for (let at = 0; at < frame.length; at += 9) controller.enqueue(frame.slice(at, at + 9));
          controller.close();
        },
      }),
    };
  };
  return post;
}

function clientWith(post: BytesPost, extra: Partial<Parameters<typeof remoteFetch>[0]> = {}) {
  let counter = 0;
  const fetchImpl = remoteFetch({ device: () => device, nextCounter: () => ++counter, stream: post, buffered: post, now: () => Math.floor(Date.now() / 1000), ...extra });
  return new SidecarClient(() => ({ url: URL_, token: "" }), fetchImpl);
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

describe("the sealed transport", () => {
  it("streams an answer's events, sealed, with a fresh counter per request", async () => {
    const seen: Seen[] = [];
    const client = clientWith(
      listener(
        (m) => m.path !== "/v1/ask" ? { status: 200, type: "application/json", chunks: ['{"threads":[]}'] } : ({
          status: 200,
          type: "text/event-stream",
          chunks: [sse("delta", { text: "Begin" }), sse("delta", { text: "Play 是" }), sse("final", { answer_id: "a1", answer: "BeginPlay 是", citations: [], thread_id: "t1" })],
        }),
        seen,
      ),
    );
    const events = [];
    for await (const event of client.ask({ question: "What is BeginPlay?", thread_id: "t1" })) events.push(event.type);
    expect(events).toEqual(["delta", "delta", "final"]);
    expect(seen[0]!.message).toMatchObject({ method: "POST", path: "/v1/ask", query: "", body: { question: "What is BeginPlay?" } });
    await client.threads({ limit: 5 });
    expect(seen[1]!.message).toMatchObject({ method: "GET", path: "/v1/threads", query: "limit=5", body: null });
    expect(seen[1]!.counter).toBeGreaterThan(seen[0]!.counter);
  });

  it("gives JSON answers and the sidecar's sealed refusals as the client's errors", async () => {
    const client = clientWith(
      listener((m) =>
        m.path === "/v1/search"
          ? { status: 200, type: "application/json", chunks: ['{"results":', '[]}'] }
          : { status: 403, type: "application/json", chunks: ['{"code":"not_allowed","message":"a read device cannot PUT /v1/notes"}'] },
      ),
    );
    expect(await client.search("q")).toEqual({ results: [] });
    const refused = await client.putNotes([]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SidecarHttpError);
    expect((refused as SidecarHttpError).code).toBe("not_allowed");
  });

  it("refuses a tampered or cut answer", async () => {
    const tampered = clientWith(listener(() => ({ status: 200, type: "application/json", chunks: ["{}"], tamper: true })));
    await expect(tampered.status()).rejects.toBeInstanceOf(SidecarProtocolError);
    const cut = clientWith(listener(() => ({ status: 200, type: "text/event-stream", chunks: [sse("delta", { text: "half" })], cut: true })));
    const events: string[] = [];
    const run = (async () => {
      for await (const event of cut.ask({ question: "q" })) events.push(event.type);
    })();
    await expect(run).rejects.toBeInstanceOf(SidecarProtocolError);
    expect(events).toEqual(["delta"]);
  });

  it("says revoked (401) with a way to pair again, and passes other listener refusals on", async () => {
    const refusing = (status: number, code: string): BytesPost => async () => ({ status, headers: { "Retry-After": "30" }, body: new TextEncoder().encode(JSON.stringify({ code, message: code })) });
    const revoked = await clientWith(refusing(401, "unauthorized")).status().catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(RemoteAuthError);
    expect((revoked as Error).message).toMatch(/Pair again/);
    expect(((await clientWith(refusing(401, "stale")).status().catch((e: unknown) => e)) as Error).message).toMatch(/clock/);
    const busy = await clientWith(refusing(429, "too_many")).status().catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(SidecarHttpError);
    expect((busy as SidecarHttpError).retryAfterS).toBe(30);
  });

  it("does not hang on a desktop that never answers: a timeout, then unreachable when refused", async () => {
    const never: BytesPost = (_u, _b, _h, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    const asleep = clientWith(never, { headTimeoutMs: 50 });
    const started = Date.now();
    const events = (async () => {
      for await (const _ of asleep.ask({ question: "q" })) void _;
    })();
    await expect(events).rejects.toBeInstanceOf(SidecarUnreachableError);
    await expect(events).rejects.toThrow(/no answer within/);
    expect(Date.now() - started).toBeLessThan(2_000);
    const refused: BytesPost = async () => Promise.reject(new TypeError("Failed to fetch"));
    await expect(clientWith(refused).search("q")).rejects.toBeInstanceOf(SidecarUnreachableError);
  });

  it("falls back to the buffered POST when fetch cannot reach the desktop, and stays there", async () => {
    let streamed = 0;
    const stream: BytesPost = async () => {
      streamed++;
      throw new TypeError("Failed to fetch (CORS)");
    };
    const buffered = listener(() => ({ status: 200, type: "text/event-stream", chunks: [sse("final", { answer_id: "a", answer: "x", citations: [] })] }));
    const client = clientWith(stream, { stream, buffered });
    for (let i = 0; i < 2; i++) {
      const events = [];
      for await (const event of client.ask({ question: "q" })) events.push(event.type);
      expect(events).toEqual(["final"]);
    }
    expect(streamed).toBe(1);
  });

  it("counts on from the clock, never below the last counter", () => {
    expect(nextCounterAfter(0, 1_000)).toBe(1_000_000);
    expect(nextCounterAfter(5_000_000, 1_000)).toBe(5_000_001);
    expect(Number.isSafeInteger(nextCounterAfter(0, Date.now()))).toBe(true);
  });
});

describe("pairing", () => {
  /** The sidecar's two pairing steps, from the protocol's own functions. */
  function pairingServer(code: string, opts: { wrongConfirm?: boolean } = {}) {
    let state: { keys: ReturnType<typeof respond>["keys"]; name: string } | null = null;
    const calls: string[] = [];
    const post = async (url: string, body: unknown) => {
      calls.push(url.replace(URL_, ""));
      const b = body as Record<string, string>;
      if (url.endsWith("/pair/start")) {
        const name = b.name as string;
        const w = new (await import("../src/remote/spake2")).PakeDevice(name, code).w;
        const { pB, keys } = respond(name, "srv-9", w, hexToBytes(b.pA as string));
        state = { keys, name };
        const confirmB = opts.wrongConfirm ? new Uint8Array(64) : keys.confirmB;
        return { status: 200, json: { pair_id: "pair-1", server_id: "srv-9", pB: bytesToHex(pB), confirm_b: bytesToHex(confirmB) } };
      }
      if (state === null || !sameBytes(hexToBytes(b.confirm_a as string), state.keys.confirmA)) return { status: 401, json: { code: "pairing_refused", message: "no" } };
      const sealed = sealPairReply(state.keys.ke, "pair-1", { device_id: "dev-42", name: state.name, role: "read", server_id: "srv-9" });
      return { status: 200, json: { pair_id: "pair-1", sealed: bytesToHex(sealed) } };
    };
    return { post, calls, keys: () => state?.keys };
  }

  it("pairs with the right code: both sides hold the same device key", async () => {
    const server = pairingServer("12345678");
    const paired = await pairDevice(server.post, `${URL_}/`, "1234-5678", "My phone");
    expect(paired).toMatchObject({ url: URL_, deviceId: "dev-42", name: "My phone", role: "read", serverId: "srv-9" });
    expect(bytesToHex(paired.key)).toBe(bytesToHex(deviceKey(server.keys()!.ke)));
  });

  it("stops at the sidecar's confirmation with a wrong code, before sending its own", async () => {
    const server = pairingServer("87654321");
    const error = await pairDevice(server.post, URL_, "1234-5678", "My phone").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PairingError);
    expect((error as PairingError).code).toBe("wrong_code");
    expect(server.calls).toEqual(["/remote/v1/pair/start"]);
  });

  it("says what the sidecar refused, and what cannot be reached", async () => {
    const refused = async () => ({ status: 401, json: { code: "pairing_refused", message: "x" } });
    await expect(pairDevice(refused, URL_, "12345678", "p")).rejects.toThrow(/wrong, expired or already used/);
    const limited = async () => ({ status: 429, json: { code: "too_many_attempts" } });
    await expect(pairDevice(limited, URL_, "12345678", "p")).rejects.toThrow(/Too many/);
    const down = async () => Promise.reject(new Error("net::ERR_CONNECTION_REFUSED"));
    await expect(pairDevice(down, URL_, "12345678", "p")).rejects.toMatchObject({ code: "unreachable" });
    await expect(pairDevice(down, "ftp://x", "12345678", "p")).rejects.toMatchObject({ code: "bad_url" });
    await expect(pairDevice(down, URL_, "1234", "p")).rejects.toMatchObject({ code: "bad_code" });
  });

  it("reads addresses, codes and the QR code's obsidian:// link", () => {
    expect(normalizeRemoteUrl("192.168.1.20:8766")).toBe("http://192.168.1.20:8766");
    expect(normalizeRemoteUrl("http://[fd00::1]:8766/")).toBe("http://[fd00::1]:8766");
    expect(normalizeRemoteUrl("http://h:1/path")).toBeNull();
    expect(normalizePairCode(" 1234 5678 ")).toBe("12345678");
    expect(normalizePairCode("1234-567")).toBeNull();
    const link = pairLink("http://192.168.1.20:8766", "1234-5678");
    expect(link).toBe("obsidian://vault-rag-pair?url=http%3A%2F%2F192.168.1.20%3A8766&code=1234-5678");
    const params = Object.fromEntries(new URL(link).searchParams);
    expect(parsePairParams(params)).toEqual({ url: "http://192.168.1.20:8766", code: "12345678" });
    expect(parsePairParams({ url: "x y", code: "1" })).toBeNull();
  });
});

describe("the credentials store", () => {
  it("keeps id and key in secret storage, the rest and the counter in the plugin data", () => {
    const secrets = new Map<string, string>();
    const data = parseRemoteData({});
    let saves = 0;
    let now = 2_000;
    const store = new RemoteCredentials({ getSecret: (id) => secrets.get(id) ?? null, setSecret: (id, v) => void secrets.set(id, v) }, () => data, () => saves++, () => now);
    expect(store.device()).toBeNull();
    store.save(device);
    expect(secrets.get(DEVICE_ID_SECRET)).toBe("dev-1");
    expect(secrets.get(DEVICE_KEY_SECRET)).toBe(bytesToHex(device.key));
    expect(JSON.stringify(data)).not.toContain(bytesToHex(device.key));
    expect(store.device()).toEqual(device);
    expect(store.nextCounter()).toBe(2_000_000);
    expect(store.nextCounter()).toBe(2_000_001);
    // Consecutive within a session, whatever the clock does (the replay window is 64 wide).
    now = 9_000;
    expect(store.nextCounter()).toBe(2_000_002);
    // A new session (a restart) with data.json restored from before: floored to the clock again.
    data.remoteDevices["dev-1"]!.counter = 5;
    const next = new RemoteCredentials({ getSecret: (id) => secrets.get(id) ?? null, setSecret: (id, v) => void secrets.set(id, v) }, () => data, () => saves++, () => now);
    expect(next.nextCounter()).toBe(9_000_000);
    expect(parseRemoteData(JSON.parse(JSON.stringify(data)) as Record<string, unknown>).remoteDevices["dev-1"]!.counter).toBe(9_000_000);
    store.forget();
    expect(store.device()).toBeNull();
    expect(data.remoteDevices).toEqual({});
    expect(saves).toBeGreaterThan(2);
  });

  it("falls back to the plugin data without secret storage", () => {
    const data = parseRemoteData({ remoteDevices: { bad: 3 }, remoteSecrets: { x: 1 } });
    expect(data).toEqual({ remoteDevices: {}, remoteSecrets: {} });
    const store = new RemoteCredentials(null, () => data, () => undefined);
    store.save(device);
    expect(data.remoteSecrets[DEVICE_KEY_SECRET]).toBe(bytesToHex(device.key));
    expect(store.device()).toEqual(device);
  });
});
