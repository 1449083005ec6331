/**
 * Pairing this device with a desktop's remote listener (docs/remote.md, "Pairing"): SPAKE2 from
 * the one-time code (`spake2.ts`), two round trips, then the sealed reply that names the device.
 * The code never crosses the wire; a wrong code fails at the sidecar's confirmation (`cB`), before
 * this device sends anything that depends on the key. I/O goes through `post` (the plugin gives
 * Obsidian's `requestUrl`; tests a fake or the real sidecar).
 */
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";

import { openPairReply } from "./envelope";
import { deviceKey } from "./keys";
import { PakeDevice, sameBytes } from "./spake2";

/** A JSON POST: the status and the parsed answer (null when it was not JSON). */
export type JsonPost = (url: string, body: unknown) => Promise<{ status: number; json: unknown }>;

/** What a paired device keeps (the key is secret: never in the vault's files when the app has
 * secret storage). */
export interface RemoteDevice {
  /** The remote listener, e.g. http://192.168.1.20:8766 (no trailing slash). */
  url: string;
  deviceId: string;
  name: string;
  role: string;
  serverId: string;
  /** The 32-byte device key. */
  key: Uint8Array;
}

/** Pairing did not happen; `message` is one line for people. */
export class PairingError extends Error {
  override name = "PairingError";

  constructor(
    message: string,
    /** The sidecar's code (`pairing_refused`, `name_taken`, `too_many_attempts`…) or a local one. */
    readonly code: string,
  ) {
    super(message);
  }
}

/** An address as typed or from a QR code: `http(s)://host:port`, no path; a bare
 * `host:port` gets `http://`. Null for anything else. */
export function normalizeRemoteUrl(value: string): string | null {
  let text = value.trim();
  if (text === "") return null;
  if (!/^[a-z]+:\/\//i.test(text)) text = `http://${text}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) return null;
  if (url.pathname !== "/" && url.pathname !== "") return null;
  return `${url.protocol}//${url.host}`;
}

/** The digits of a code ("1234-5678", "1234 5678"), or null unless there are eight. */
export function normalizePairCode(value: string): string | null {
  const digits = value.replace(/[\s-]/g, "");
  return /^\d{8}$/.test(digits) ? digits : null;
}

/** The `obsidian://vault-rag-pair?url=…&code=…` link the desktop's QR code encodes. */
export const PAIR_ACTION = "vault-rag-pair";

export function pairLink(url: string, code: string): string {
  return `obsidian://${PAIR_ACTION}?url=${encodeURIComponent(url)}&code=${encodeURIComponent(code)}`;
}

/** The link's parameters (Obsidian hands the protocol handler the decoded query). */
export function parsePairParams(params: Record<string, string | undefined>): { url: string; code: string } | null {
  const url = normalizeRemoteUrl(params.url ?? "");
  const code = normalizePairCode(params.code ?? "");
  return url === null || code === null ? null : { url, code };
}

function refusal(status: number, json: unknown, step: string): PairingError {
  const body = typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {};
  const code = typeof body.code === "string" ? body.code : `http_${status}`;
  const said = typeof body.message === "string" ? body.message : `HTTP ${status}`;
  switch (code) {
    case "pairing_refused":
      return new PairingError("The desktop refused the code: it is wrong, expired or already used. Ask the desktop for a new one (Pair a device).", code);
    case "name_taken":
      return new PairingError(`${said}. Choose another name for this device.`, code);
    case "too_many_attempts":
      return new PairingError("Too many pairing attempts on the desktop: wait a minute, then try again with a new code.", code);
    case "remote_off":
      return new PairingError("The desktop does not accept other devices: turn on Allow other devices there.", code);
    default:
      return new PairingError(`Pairing failed at ${step}: ${said}`, code);
  }
}

function field(json: unknown, name: string): string {
  const value = typeof json === "object" && json !== null ? (json as Record<string, unknown>)[name] : undefined;
  if (typeof value !== "string" || value === "") throw new PairingError(`The desktop's pairing answer has no ${name}.`, "bad_answer");
  return value;
}

/**
 * Pair with the remote listener at `url` using the owner's one-time `code`; the device's
 * credentials, or a `PairingError`. `x` is for tests (the vectors' scalar).
 */
export async function pairDevice(post: JsonPost, url: string, code: string, name: string, x?: bigint): Promise<RemoteDevice> {
  const base = normalizeRemoteUrl(url);
  if (base === null) throw new PairingError(`Not an address: ${url} (e.g. http://192.168.1.20:8766).`, "bad_url");
  if (normalizePairCode(code) === null) throw new PairingError("A pairing code is eight digits, e.g. 1234-5678.", "bad_code");
  const device = new PakeDevice(name.trim(), code, x);
  const send = async (to: string, body: unknown) => {
    try {
      return await post(to, body);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new PairingError(`Cannot reach the desktop at ${base} (${why}). Is it awake, with other devices allowed, on this network?`, "unreachable");
    }
  };
  const started = await send(`${base}/remote/v1/pair/start`, { name: name.trim(), pA: bytesToHex(device.start()) });
  if (started.status !== 200) throw refusal(started.status, started.json, "start");
  const serverId = field(started.json, "server_id");
  const pairId = field(started.json, "pair_id");
  let keys;
  try {
    keys = device.finish(serverId, hexToBytes(field(started.json, "pB")));
    if (!sameBytes(hexToBytes(field(started.json, "confirm_b")), keys.confirmB)) throw new Error("confirmation");
  } catch (error) {
    if (error instanceof PairingError) throw error;
    throw new PairingError("Pairing failed: wrong code (or something else answered). Ask the desktop for a new code.", "wrong_code");
  }
  const finished = await send(`${base}/remote/v1/pair/finish`, { pair_id: pairId, confirm_a: bytesToHex(keys.confirmA) });
  if (finished.status !== 200) throw refusal(finished.status, finished.json, "finish");
  let reply: Record<string, unknown>;
  try {
    reply = openPairReply(keys.ke, pairId, hexToBytes(field(finished.json, "sealed")));
  } catch {
    throw new PairingError("The desktop's pairing reply does not authenticate; nothing was kept.", "bad_reply");
  }
  const deviceId = typeof reply.device_id === "string" ? reply.device_id : "";
  if (!/^[\x21-\x7e]{1,128}$/.test(deviceId)) throw new PairingError("The desktop's pairing reply has no device id.", "bad_reply");
  return {
    url: base,
    deviceId,
    name: typeof reply.name === "string" ? reply.name : name.trim(),
    role: typeof reply.role === "string" ? reply.role : "read",
    serverId: typeof reply.server_id === "string" ? reply.server_id : serverId,
    key: deviceKey(keys.ke),
  };
}
