/**
 * The plugin on a phone (or any app without Node): no sidecar is started or looked for; every
 * reader call goes sealed to the desktop's remote listener (`transport.ts`) through the same
 * `SidecarClient` the ask pane, history, 👍/👎 and the related view use against a loopback
 * sidecar. `main.ts` builds this instead of `Services` when `Platform.isMobile`; nothing here
 * imports a desktop-only module (child_process, fs, path, electron).
 */
import { type App, Notice, Platform, requestUrl } from "obsidian";

import { SidecarClient } from "../client";
import type { VaultRagSettings } from "../settings";
import type { AskViewHost } from "../view/askView";
import type { RemoteConnect } from "../view/connectForm";
import { type JsonPost, pairDevice, PairingError, parsePairParams } from "./pairing";
import { RemoteCredentials, type SecretsLike } from "./store";
import { type BytesPost, remoteFetch } from "./transport";

/** How long the counter may wait before the plugin data is written (a write per question would
 * be noise for vault sync; the clock floor keeps counters fresh anyway). */
export const COUNTER_SAVE_MS = 5_000;
/** Where a client points before pairing (never reached: every call is refused first). */
const UNPAIRED_URL = "http://unpaired.invalid";

export interface MobileHooks {
  /** Write the plugin's data now. */
  save(): Promise<void>;
  /** The app's secret storage; null: the plugin's data. */
  secrets: SecretsLike | null;
  /** Streaming POST (the window's `fetch`); default: the window's fetch. Null: `requestUrl` only. */
  stream?: BytesPost | null;
  /** Buffered POST; default: Obsidian's `requestUrl`. */
  buffered?: BytesPost;
  /** JSON POST for pairing; default: `requestUrl`. */
  json?: JsonPost;
}

/** POST bytes through Obsidian's `requestUrl` (no CORS, no streaming). */
export const requestUrlPost: BytesPost = async (url, body, headers) => {
  const response = await requestUrl({
    url,
    method: "POST",
    headers,
    contentType: "application/octet-stream",
    body: body.slice().buffer,
    throw: false,
  });
  return { status: response.status, headers: response.headers ?? {}, body: new Uint8Array(response.arrayBuffer) };
};

/** POST bytes through the window's `fetch`: the answer streams as the desktop sends it. */
export const fetchPost: BytesPost = async (url, body, headers, signal) => {
  const response = await window.fetch(url, { method: "POST", headers, body: body.slice().buffer, signal, cache: "no-store" });
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => (out[key] = value));
  return { status: response.status, headers: out, body: response.body ?? new Uint8Array(await response.arrayBuffer()) };
};

/** A JSON POST through `requestUrl`, for pairing. */
export const requestUrlJson: JsonPost = async (url, body) => {
  const response = await requestUrl({ url, method: "POST", contentType: "application/json", body: JSON.stringify(body), throw: false });
  let json: unknown = null;
  try {
    json = JSON.parse(response.text) as unknown;
  } catch {
    json = null;
  }
  return { status: response.status, json };
};

export function defaultDeviceName(): string {
  const kind = Platform.isIosApp ? "iPhone or iPad" : Platform.isAndroidApp ? "Android" : "device";
  const suffix = Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, "0");
  return `Obsidian on ${kind} ${suffix}`;
}

export class MobileServices {
  readonly client: SidecarClient;
  readonly credentials: RemoteCredentials;
  readonly viewHost: AskViewHost;
  readonly connect: RemoteConnect;
  private saveTimer: number | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly app: App,
    private readonly settings: () => VaultRagSettings,
    private readonly hooks: MobileHooks,
  ) {
    this.credentials = new RemoteCredentials(hooks.secrets, settings, () => this.scheduleSave());
    const fetchImpl = remoteFetch({
      device: () => this.credentials.device(),
      nextCounter: () => this.credentials.nextCounter(),
      stream: hooks.stream === undefined ? fetchPost : hooks.stream,
      buffered: hooks.buffered ?? requestUrlPost,
    });
    this.client = new SidecarClient(() => ({ url: this.credentials.device()?.url ?? UNPAIRED_URL, token: "" }), fetchImpl);
    this.connect = {
      paired: () => {
        const device = this.credentials.device();
        return device === null ? null : { url: device.url, name: device.name };
      },
      pair: (url, code, name) => this.pair(url, code, name),
      defaultName: () => this.credentials.device()?.name ?? defaultDeviceName(),
    };
    this.viewHost = {
      client: this.client,
      settings,
      reportError: () => undefined, // the views' own pollers show the state
      url: () => this.credentials.device()?.url ?? "",
      remote: this.connect,
    };
  }

  /** Pair (replacing any earlier pairing of this device) and save at once. */
  async pair(url: string, code: string, name: string): Promise<void> {
    const device = await pairDevice(this.hooks.json ?? requestUrlJson, url, code, name);
    this.credentials.save(device);
    await this.flush();
    new Notice(`Vault RAG: paired with your desktop at ${device.url} as “${device.name}”.`, 8_000);
    for (const listener of this.listeners) listener();
  }

  /** `obsidian://vault-rag-pair?url=…&code=…` (the desktop's QR code): pair at once. */
  async pairFromLink(params: Record<string, string | undefined>): Promise<boolean> {
    const link = parsePairParams(params);
    if (link === null) {
      new Notice("Vault RAG: this pairing link has no valid address and code. Pair a device again on the desktop.", 10_000);
      return false;
    }
    try {
      await this.pair(link.url, link.code, this.connect.defaultName());
      return true;
    } catch (error) {
      const message = error instanceof PairingError || error instanceof Error ? error.message : String(error);
      new Notice(`Vault RAG: ${message}`, 12_000);
      return false;
    }
  }

  /** Drop this device's pairing. */
  async forget(): Promise<void> {
    this.credentials.forget();
    await this.flush();
    for (const listener of this.listeners) listener();
  }

  /** Call `listener` after each pairing (the views ask again). */
  onPaired(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private scheduleSave(): void {
    if (this.saveTimer !== null) return;
    this.saveTimer = window.setTimeout(() => {
      this.saveTimer = null;
      void this.hooks.save();
    }, COUNTER_SAVE_MS);
  }

  private async flush(): Promise<void> {
    if (this.saveTimer !== null) window.clearTimeout(this.saveTimer);
    this.saveTimer = null;
    await this.hooks.save();
  }

  start(): void {
    // Nothing to start: the views poll the desktop while they are open.
  }

  stop(): void {
    if (this.saveTimer !== null) void this.flush();
  }
}
