/**
 * The shared embed conformance suite (shared-schemas/fixtures/embeds/, rules in its README):
 * every case folder runs through the TypeScript resolver and must give exactly the text,
 * warnings and dependencies the Python resolver gives (tests/test_embed_fixtures.py).
 */
import path from "node:path";

import { describe, expect, it } from "vitest";

import { resolveNote } from "../src/resolver";
import { caseNames, FIXTURES, FixtureVault, METADATA_FILE, readJson, readText } from "./helpers/fixtureVault";

interface CaseJson {
  note: string;
  description: string;
  rule: string;
}

interface ExpectedWarning {
  code: string;
  target: string;
}

const CASES = caseNames();

function pairs(warnings: { code: string; target: string | null }[]): string[] {
  return warnings.map((w) => `${w.code} ${w.target ?? ""}`).sort();
}

describe("embed conformance fixtures", () => {
  it("finds the suite", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)("%s", async (name) => {
    const folder = path.join(FIXTURES, name);
    const vault = new FixtureVault(folder);
    const spec = readJson<CaseJson>(path.join(folder, "case.json"));
    const resolved = await resolveNote(vault, vault.file(spec.note));

    // Comparison rule: trailing newlines are not significant, everything else is.
    const expected = readText(path.join(folder, "expected.md")).replace(/\n+$/, "");
    expect(resolved.text.replace(/\n+$/, "")).toBe(expected);

    const expectedWarnings = readJson<ExpectedWarning[]>(path.join(folder, "expected-warnings.json"));
    expect(pairs(resolved.warnings)).toEqual(pairs(expectedWarnings));

    const dependencies = readJson<string[]>(path.join(folder, "expected-dependencies.json"));
    expect(resolved.dependencies).toEqual(dependencies);
  });
});

describe(`${METADATA_FILE} of every case`, () => {
  const regenerate = `run: python scripts/gen_cached_metadata.py`;

  it.each(CASES)("%s has metadata for exactly its notes, matching their text", (name) => {
    const vault = new FixtureVault(path.join(FIXTURES, name));
    expect(Object.keys(vault.metadata).length, `${name}/${METADATA_FILE} is missing; ${regenerate}`).toBeGreaterThan(0);
    const notes = vault.notePaths().sort();
    expect(Object.keys(vault.metadata).sort(), `stale ${METADATA_FILE}; ${regenerate}`).toEqual(notes);
    for (const notePath of notes) {
      const text = vault.read(vault.file(notePath));
      const cache = vault.metadata[notePath] ?? {};
      // Every embed and heading must sit where the metadata says, or the file is stale.
      for (const embed of cache.embeds ?? []) {
        const { start, end } = embed.position;
        expect(text.slice(start.offset, end.offset), `${notePath}: stale embed; ${regenerate}`).toBe(embed.original);
      }
      for (const heading of cache.headings ?? []) {
        const line = text.split("\n")[heading.position.start.line] ?? "";
        expect(line, `${notePath}: stale heading; ${regenerate}`).toContain(heading.heading);
      }
      const lastSection = cache.sections?.at(-1);
      if (lastSection) expect(lastSection.position.end.offset).toBeLessThanOrEqual(text.length);
    }
  });
});
