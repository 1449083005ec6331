/**
 * `GET /v1/collections`: what a search can cover — the vault and each source beside it (a code
 * tree, another vault, a folder of docs) — for the pane's collection picker. Types from the
 * generated spec (`openapi.ts`); parsing drops what does not read.
 */
import type { components } from "./openapi";

type Schemas = components["schemas"];
export type CollectionState = Schemas["CollectionState"];
export type CollectionList = Schemas["CollectionList"];

export const COLLECTION_ROUTES = { collections: "/v1/collections" } as const;

const rec = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const str = (value: unknown): string => (typeof value === "string" ? value : "");
const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

export function parseCollections(value: unknown): CollectionList {
  const data = rec(value);
  const collections: CollectionState[] = [];
  for (const item of Array.isArray(data.collections) ? data.collections : []) {
    const entry = rec(item);
    const name = str(entry.name);
    if (!name) continue;
    collections.push({
      name,
      kind: str(entry.kind),
      primary: entry.primary === true,
      path: str(entry.path),
      indexed: entry.indexed === true,
      files: count(entry.files),
      chunks: count(entry.chunks),
      embedded: count(entry.embedded),
      skipped: count(entry.skipped),
      skipped_files: (Array.isArray(entry.skipped_files) ? entry.skipped_files : []).map((f) => ({ path: str(rec(f).path), why: str(rec(f).why) })),
      problem: typeof entry.problem === "string" ? entry.problem : null,
    });
  }
  return {
    collections,
    default: data.default === "vault" ? "vault" : "all",
    scanning: data.scanning === true,
    problem: typeof data.problem === "string" ? data.problem : null,
  };
}
