/**
 * `/v1/devices` on the loopback sidecar (admin token): a pairing code for another device, the
 * paired devices with when each was last seen, and revoking one (issue 41, docs/remote.md).
 * Types from the generated spec (`openapi.ts`); parsing drops what does not read.
 */
import type { components } from "./openapi";

type Schemas = components["schemas"];
export type PairCode = Schemas["PairCode"];
export type DeviceInfo = Schemas["DeviceInfo"];
export type DeviceList = Schemas["DeviceList"];
export type DevicesRevoked = Schemas["DevicesRevoked"];
export type DeviceRole = PairCode["role"];

export const DEVICE_ROUTES = {
  pair: "/v1/devices/pair",
  devices: "/v1/devices",
  device: (idOrName: string) => `/v1/devices/${encodeURIComponent(idOrName)}`,
} as const;

const rec = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const str = (value: unknown): string => (typeof value === "string" ? value : "");
const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const role = (value: unknown): DeviceRole => (value === "write" ? "write" : "read");

export function parsePairCode(value: unknown): PairCode {
  const data = rec(value);
  return { code: str(data.code), expires_at: num(data.expires_at) ?? 0, remote_url: str(data.remote_url), role: role(data.role) };
}

function parseDevice(value: unknown): DeviceInfo | null {
  const data = rec(value);
  const id = str(data.id);
  if (!id) return null;
  return { id, name: str(data.name), role: role(data.role), created: num(data.created) ?? 0, last_seen: num(data.last_seen), revoked: num(data.revoked) };
}

export function parseDeviceList(value: unknown): DeviceList {
  const data = rec(value);
  const devices = (Array.isArray(data.devices) ? data.devices : []).map(parseDevice).filter((d): d is DeviceInfo => d !== null);
  return { devices, remote_url: typeof data.remote_url === "string" ? data.remote_url : null, problem: typeof data.problem === "string" ? data.problem : null };
}

export function parseRevoked(value: unknown): DevicesRevoked {
  const data = rec(value);
  return { revoked: (Array.isArray(data.revoked) ? data.revoked : []).map(parseDevice).filter((d): d is DeviceInfo => d !== null) };
}
