/**
 * The shared exclusion cases (shared-schemas/fixtures/exclude.json): the plugin's `isExcluded`
 * must cover exactly the paths the sidecar's exclusion matching covers (tests/test_exclude.py
 * runs the same file), so a note the plugin would send is never one the sidecar would keep; and
 * the note paths the plugin posts are the ones the sidecar can take (odd names it skips).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

import { isExcluded, isNotePath } from "../src/sync";

interface ExcludeCase {
  exclude: string;
  path: string;
  excluded: boolean;
}

const FIXTURE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../shared-schemas/fixtures/exclude.json",
);
const CASES = (JSON.parse(readFileSync(FIXTURE, "utf-8")) as { cases: ExcludeCase[] }).cases;

describe("excluded folders: one meaning with the sidecar", () => {
  it("finds the cases", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES.map((c) => [`${c.exclude} → ${c.path}`, c] as const))("%s", (_, c) => {
    expect(isExcluded(c.path, [c.exclude])).toBe(c.excluded);
  });

  it("an empty or slash-only entry covers nothing", () => {
    expect(isExcluded("a/b.md", ["", "/", " ./ "])).toBe(false);
  });
});

describe("note paths the sidecar can take", () => {
  it.each([
    ["Plain.md", true],
    ["Sub/Q: a colon below the top.md", true],
    ["#1 [draft] 100%.md", true],
    ["Q: quokkas.md", false],
    ["C:x.md", false],
    ["a\\b.md", false],
    ["..\\x.md", false],
    ["Folder\\Sub/inside.md", false],
    ["image.png", false],
  ])("%s → %s", (path, expected) => {
    expect(isNotePath(path)).toBe(expected);
  });
});
