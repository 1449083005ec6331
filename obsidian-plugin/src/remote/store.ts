/**
 * Where a paired device keeps its credentials: the device id and key in Obsidian's secret
 * storage (`app.secretStorage`, 1.11.4+, out of the vault's files) when the app has it, else in
 * the plugin's data like the sidecar token (`token.ts`); the address, name, role and the last
 * counter in the plugin's data, under the device id (so a `data.json` synced from another device
 * never mixes two devices' records).
 *
 * Counters: the first of each session is at least the clock in microseconds and more than the
 * last one stored (`transport.ts`), then they go up by one; so a `data.json` restored from a
 * backup or a sync never makes this device reuse one, and the stored value covers a clock set
 * back. It is saved lazily (`changed`): a write
 * of `data.json` per question would be noise for vault sync.
 */
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";

import type { RemoteDevice } from "./pairing";
import { nextCounterAfter } from "./transport";

export const DEVICE_ID_SECRET = "vault-rag-remote-device-id";
export const DEVICE_KEY_SECRET = "vault-rag-remote-device-key";

/** One paired device's record in the plugin's data. */
export interface RemoteRecord {
  url: string;
  name: string;
  role: string;
  serverId: string;
  counter: number;
}

/** The plugin data's part: records by device id, and the secrets when there is no secret storage. */
export interface RemoteData {
  remoteDevices: Record<string, RemoteRecord>;
  remoteSecrets: Record<string, string>;
}

export interface SecretsLike {
  getSecret(id: string): string | null;
  setSecret(id: string, value: string): void;
}

export function parseRemoteData(raw: Record<string, unknown>): RemoteData {
  const remoteDevices: Record<string, RemoteRecord> = {};
  const devices = raw.remoteDevices;
  if (typeof devices === "object" && devices !== null) {
    for (const [id, value] of Object.entries(devices as Record<string, unknown>)) {
      if (typeof value !== "object" || value === null) continue;
      const r = value as Record<string, unknown>;
      if (typeof r.url !== "string") continue;
      remoteDevices[id] = {
        url: r.url,
        name: typeof r.name === "string" ? r.name : "",
        role: typeof r.role === "string" ? r.role : "read",
        serverId: typeof r.serverId === "string" ? r.serverId : "",
        counter: typeof r.counter === "number" && Number.isSafeInteger(r.counter) && r.counter >= 0 ? r.counter : 0,
      };
    }
  }
  const remoteSecrets: Record<string, string> = {};
  const secrets = raw.remoteSecrets;
  if (typeof secrets === "object" && secrets !== null) {
    for (const [id, value] of Object.entries(secrets as Record<string, unknown>)) if (typeof value === "string") remoteSecrets[id] = value;
  }
  return { remoteDevices, remoteSecrets };
}

export class RemoteCredentials {
  /** The device whose counter was floored to the clock in this session. */
  private floored = "";

  constructor(
    /** The app's secret storage; null: the plugin's data (`remoteSecrets`). */
    private readonly secrets: SecretsLike | null,
    private readonly data: () => RemoteData,
    /** The plugin's data changed: save it (soon). */
    private readonly changed: () => void,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Where the key is kept, for the settings tab. */
  get where(): string {
    return this.secrets !== null ? "the app's secret storage" : "this vault's plugin data";
  }

  private secret(id: string): string {
    return (this.secrets !== null ? this.secrets.getSecret(id) : this.data().remoteSecrets[id]) ?? "";
  }

  private setSecret(id: string, value: string): void {
    if (this.secrets !== null) this.secrets.setSecret(id, value);
    else if (value === "") delete this.data().remoteSecrets[id];
    else this.data().remoteSecrets[id] = value;
  }

  /** This device's credentials, or null when it is not paired. */
  device(): RemoteDevice | null {
    const deviceId = this.secret(DEVICE_ID_SECRET);
    const keyHex = this.secret(DEVICE_KEY_SECRET);
    const record = this.data().remoteDevices[deviceId];
    if (deviceId === "" || record === undefined || !/^[0-9a-f]{64}$/.test(keyHex)) return null;
    return { url: record.url, deviceId, name: record.name, role: record.role, serverId: record.serverId, key: hexToBytes(keyHex) };
  }

  /** Keep a new pairing (replacing this device's previous one). */
  save(device: RemoteDevice): void {
    this.forget(false);
    this.setSecret(DEVICE_ID_SECRET, device.deviceId);
    this.setSecret(DEVICE_KEY_SECRET, bytesToHex(device.key));
    this.data().remoteDevices[device.deviceId] = { url: device.url, name: device.name, role: device.role, serverId: device.serverId, counter: 0 };
    this.changed();
  }

  /** Drop this device's pairing (after a revocation, or on "Forget"). */
  forget(save = true): void {
    const deviceId = this.secret(DEVICE_ID_SECRET);
    if (deviceId !== "") delete this.data().remoteDevices[deviceId];
    this.setSecret(DEVICE_ID_SECRET, "");
    this.setSecret(DEVICE_KEY_SECRET, "");
    if (save) this.changed();
  }

  /** The next request counter of this device (recorded, saved lazily): the first of a session
   * at least the clock in microseconds, then one more each time — consecutive, so requests
   * that reach the sidecar out of order stay inside its 64-wide replay window. */
  nextCounter(): number {
    const deviceId = this.secret(DEVICE_ID_SECRET);
    const record = this.data().remoteDevices[deviceId];
    const last = record?.counter ?? 0;
    const counter = this.floored === deviceId ? last + 1 : nextCounterAfter(last, this.now());
    this.floored = deviceId;
    if (record !== undefined) {
      record.counter = counter;
      this.changed();
    }
    return counter;
  }
}
