/** The sync engine's state in the plugin's data (`data.json` → `sync`), read defensively. */
import type { PersistedSync, StructuralOp } from "./types";

const isString = (value: unknown): value is string => typeof value === "string";

function parseOp(value: unknown): StructuralOp | null {
  if (typeof value !== "object" || value === null) return null;
  const op = value as Record<string, unknown>;
  if (op.kind === "delete" && isString(op.path)) return { kind: "delete", path: op.path };
  if (op.kind === "rename" && isString(op.from) && isString(op.to)) return { kind: "rename", from: op.from, to: op.to };
  return null;
}

/** What was saved, or null for nothing usable (a fresh install, a hand-edited file). */
export function parsePersistedSync(value: unknown): PersistedSync | null {
  if (typeof value !== "object" || value === null) return null;
  const raw = value as Record<string, unknown>;
  const ops = Array.isArray(raw.ops) ? raw.ops.map(parseOp).filter((op): op is StructuralOp => op !== null) : [];
  const upserts = Array.isArray(raw.upserts) ? raw.upserts.filter(isString) : [];
  const known: PersistedSync["known"] = {};
  if (typeof raw.known === "object" && raw.known !== null) {
    for (const [path, entry] of Object.entries(raw.known as Record<string, unknown>)) {
      if (!Array.isArray(entry) || entry.length !== 3) continue;
      const [mtime, size, hash] = entry as unknown[];
      if (typeof mtime === "number" && typeof size === "number" && isString(hash)) known[path] = [mtime, size, hash];
    }
  }
  return { ops, upserts, known };
}
