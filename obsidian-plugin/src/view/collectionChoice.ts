/**
 * The pane's collection picker, as logic: which collections a question searches (`vault` and the
 * sources beside it, `GET /v1/collections`), how the choice reads, what `AskRequest.collections`
 * carries, and how the choice is kept on this device (one working context for every
 * conversation: a user who picked "vault only" keeps it until they change it).
 *
 * A choice is null (the sidecar's default: every collection, or the vault alone when its
 * `default_collections` setting says so) or the names picked. A choice equal to the default is
 * kept as null, so it follows the sidecar's setting.
 */
import type { CollectionList, CollectionState } from "../client";

export type CollectionChoice = string[] | null;

export const VAULT = "vault";

export interface PickerEntry {
  name: string;
  label: string;
  /** Tooltip: kind, path, counts, skipped files or the problem. */
  title: string;
  checked: boolean;
  /** The last one checked cannot be unchecked (a search of nothing). */
  disabled: boolean;
}

/** The picker is worth showing: there is a source beside the vault. */
export function hasSources(list: CollectionList | null): boolean {
  return (list?.collections.length ?? 0) > 1;
}

const names = (list: CollectionList): string[] => list.collections.map((c) => c.name);

function defaultNames(list: CollectionList): string[] {
  return list.default === "vault" ? [VAULT] : names(list);
}

/** The names a question searches with `choice` (a source no longer declared is dropped). */
export function effective(list: CollectionList, choice: CollectionChoice): string[] {
  const known = new Set(names(list));
  const picked = (choice ?? []).filter((name) => known.has(name));
  return picked.length > 0 ? picked : defaultNames(list);
}

/** Keep a choice equal to the default as null (it then follows the sidecar's setting). */
function normalise(list: CollectionList, picked: string[]): CollectionChoice {
  const order = names(list);
  const sorted = order.filter((name) => picked.includes(name));
  const fallback = defaultNames(list);
  return sorted.length === 0 || (sorted.length === fallback.length && sorted.every((n, i) => n === fallback[i])) ? null : sorted;
}

/** Check or uncheck one collection. */
export function toggle(list: CollectionList, choice: CollectionChoice, name: string, on: boolean): CollectionChoice {
  const now = effective(list, choice);
  const next = on ? [...new Set([...now, name])] : now.filter((n) => n !== name);
  return next.length === 0 ? choice : normalise(list, next);
}

/** The presets: every collection, or the vault alone. */
export function preset(list: CollectionList, which: "all" | "vault"): CollectionChoice {
  return normalise(list, which === "all" ? names(list) : [VAULT]);
}

/** `AskRequest.collections`: nothing for the default (or while the list is unknown and nothing
 * was picked); the picked names otherwise. */
export function requestCollections(list: CollectionList | null, choice: CollectionChoice): { collections?: string[] } {
  if (choice === null) return {};
  if (list === null) return { collections: choice }; // the sidecar says so if one is gone
  const picked = effective(list, choice);
  return normalise(list, picked) === null ? {} : { collections: picked };
}

/** The picker's short label: "All collections", "This vault only", "engine", "vault + engine". */
export function describeChoice(list: CollectionList, choice: CollectionChoice): string {
  const picked = effective(list, choice);
  if (picked.length === list.collections.length) return "All collections";
  if (picked.length === 1 && picked[0] === VAULT) return "This vault only";
  return picked.join(" + ");
}

export function entries(list: CollectionList, choice: CollectionChoice): PickerEntry[] {
  const picked = new Set(effective(list, choice));
  return list.collections.map((c) => ({
    name: c.name,
    label: c.primary ? "This vault" : `${c.name} (${c.kind})`,
    title: describeCollection(c),
    checked: picked.has(c.name),
    disabled: picked.has(c.name) && picked.size === 1,
  }));
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** One collection for its tooltip: "code · /src/engine · 312 files, 4120 passages · 3 skipped". */
export function describeCollection(c: CollectionState): string {
  const parts = [c.primary ? "the vault" : c.kind, c.path];
  if (c.problem) parts.push(`cannot be indexed: ${c.problem}`);
  else if (!c.indexed) parts.push("not indexed yet");
  else parts.push(`${plural(c.files ?? 0, "file")}, ${plural(c.chunks ?? 0, "passage")}`);
  const skipped = c.skipped_files ?? [];
  if ((c.skipped ?? 0) > 0) {
    const first = skipped.slice(0, 3).map((f) => `${f.path} (${f.why})`);
    parts.push(`${c.skipped} skipped${first.length ? `: ${first.join(", ")}` : ""}`);
  }
  return parts.filter(Boolean).join(" · ");
}

/** The choice as kept on this device (JSON), and read back (anything odd: the default). */
export function storeChoice(choice: CollectionChoice): string | null {
  return choice === null ? null : JSON.stringify(choice);
}

export function loadChoice(text: string | null): CollectionChoice {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value)) return null;
    const picked = value.filter((v): v is string => typeof v === "string" && v !== "");
    return picked.length > 0 ? picked : null;
  } catch {
    return null;
  }
}
