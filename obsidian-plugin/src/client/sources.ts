/**
 * `/v1/sources` on the loopback sidecar (admin token): add a source beside the vault — here, a
 * web source (online documentation: a start URL, include / exclude patterns on its URL paths,
 * at most so many pages) — and remove one (issue 42). The sidecar runs `vault-rag sources add`'s
 * checks and answers its sentences as a 4xx; `webSourceBody` only catches what is plainly
 * wrong before asking. Types from the generated spec (`openapi.ts`).
 */
import type { components } from "./openapi";

type Schemas = components["schemas"];
export type SourceAdd = Schemas["SourceAdd"];
export type SourceAdded = Schemas["SourceAdded"];
export type SourceRemoved = Schemas["SourceRemoved"];

export const SOURCE_ROUTES = {
  sources: "/v1/sources",
  source: (name: string) => `/v1/sources/${encodeURIComponent(name)}`,
} as const;

/** What the settings form holds: patterns one per line (or comma-separated), pages as typed. */
export interface WebSourceForm {
  name: string;
  url: string;
  include: string;
  exclude: string;
  maxPages: string;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

function patterns(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
}

/** The request for `POST /v1/sources`, or why the form cannot be sent. */
export function webSourceBody(form: WebSourceForm): { body: SourceAdd } | { error: string } {
  const name = form.name.trim();
  if (!NAME.test(name)) return { error: "Name: 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit." };
  if (name === "vault") return { error: "Name: “vault” is the vault's own collection; choose another." };
  let url: URL;
  try {
    url = new URL(form.url.trim());
  } catch {
    return { error: "Start URL: not a URL (e.g. https://docs.example.org/manual/)." };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { error: "Start URL: only http:// and https:// are fetched." };
  if (url.username || url.password) return { error: "Start URL: no user name or password in it; none is ever sent." };
  const body: SourceAdd = { name, kind: "web", url: url.href, include: patterns(form.include), exclude: patterns(form.exclude) };
  const pages = form.maxPages.trim();
  if (pages !== "") {
    const count = Number(pages);
    if (!Number.isInteger(count) || count < 1) return { error: "Max pages: a whole number, 1 or more (empty: the sidecar's default)." };
    body.max_pages = count;
  }
  return { body };
}

const rec = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const str = (value: unknown): string => (typeof value === "string" ? value : "");
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
const KINDS = ["code", "vault", "markdown", "web"] as const;

export function parseSourceAdded(value: unknown): SourceAdded {
  const data = rec(value);
  const kind = KINDS.find((k) => k === data.kind) ?? "web";
  return {
    name: str(data.name),
    kind,
    path: str(data.path),
    include: strings(data.include),
    exclude: strings(data.exclude),
    max_pages: typeof data.max_pages === "number" ? data.max_pages : null,
    indexing: data.indexing === true,
    next: str(data.next),
  };
}

export function parseSourceRemoved(value: unknown): SourceRemoved {
  const data = rec(value);
  return { name: str(data.name), removed_index: data.removed_index === true };
}
