// @vitest-environment happy-dom
/**
 * Citations of a code source: parsed from the sidecar's records, cited as `path:line-line` plus
 * the symbol, and shown in the turn (the file is outside the vault) with "copy path".
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { type Citation, parseCitations } from "../src/client";
import { codeBlock, codeLocation, copyPathText, isCodeCitation, languageOf, pairingNote, symbolPath } from "../src/view/codeCitation";
import { testTurn } from "./helpers/turnView";

afterEach(() => {
  document.body.innerHTML = "";
});

const CODE = "void AWaveSpawner::SpawnWaveEnemies(int32 WaveIndex)\n{\n    CurrentWave = WaveIndex;\n}";

/** As `/v1/ask` sends a code citation (`graph/sources.citation_of`). */
const RECORD = {
  kind: "vault",
  note_path: "Source/WaveSpawner.cpp",
  heading: "WaveSpawner.cpp › AWaveSpawner › SpawnWaveEnemies",
  anchor: "",
  chunk_id: "c1",
  origin: "Source/WaveSpawner.cpp",
  line_start: 3,
  line_end: 6,
  embedded_in: [],
  cite: "Source/WaveSpawner.cpp:3-6 (AWaveSpawner::SpawnWaveEnemies)",
  collection: "game",
  symbol: "AWaveSpawner::SpawnWaveEnemies",
  source_kind: "code",
  text: CODE,
  related_file: "Source/WaveSpawner.h",
  declared_at: "Source/WaveSpawner.h:12-13",
};

describe("code citations", () => {
  it("parses a code source's record and leaves a note's as it was", () => {
    const [code, note] = parseCitations([RECORD, { kind: "vault", note_path: "A.md", heading: "A", anchor: "A", cite: "[[A#A]]", collection: "vault", symbol: null }]);
    expect(code && isCodeCitation(code)).toBe(true);
    expect(code).toMatchObject({ line_end: 6, symbol: "AWaveSpawner::SpawnWaveEnemies", text: CODE, declared_at: "Source/WaveSpawner.h:12-13" });
    expect(note && isCodeCitation(note)).toBe(false);
    expect(note).not.toHaveProperty("source_kind");
  });

  it("cites path:line-line, copies path:line and names the symbol path", () => {
    const [citation] = parseCitations([RECORD]);
    if (!citation || !isCodeCitation(citation)) throw new Error("not code");
    expect(codeLocation(citation)).toBe("Source/WaveSpawner.cpp:3-6");
    expect(copyPathText(citation)).toBe("Source/WaveSpawner.cpp:3");
    expect(symbolPath(citation)).toBe("WaveSpawner.cpp › AWaveSpawner › SpawnWaveEnemies");
    expect(pairingNote(citation)).toBe("Declared at Source/WaveSpawner.h:12-13");
    const one = { ...citation, line_end: 3, heading: "", related_file: "Source/WaveSpawner.h", declared_at: null };
    expect(codeLocation(one)).toBe("Source/WaveSpawner.cpp:3");
    expect(symbolPath(one)).toBe("AWaveSpawner::SpawnWaveEnemies");
    expect(pairingNote(one)).toBe("Paired with Source/WaveSpawner.h");
  });

  it.each([
    ["a/b.cpp", "cpp"],
    ["Public/Actor.h", "cpp"],
    ["x.py", "python"],
    ["x.TS", "typescript"],
    ["x.cs", "csharp"],
    ["x.rs", "rust"],
    ["Makefile", ""],
    [".gitignore", ""],
    ["notes.txt", ""],
  ])("takes the language of %s from its extension: %j", (path, language) => {
    expect(languageOf(path)).toBe(language);
  });

  it("fences the code past any backticks it holds", () => {
    const [citation] = parseCitations([{ ...RECORD, note_path: "doc.py", text: 'x = """\n```\n"""' }]);
    if (!citation || !isCodeCitation(citation)) throw new Error("not code");
    expect(codeBlock(citation)).toBe('````python\nx = """\n```\n"""\n````');
  });
});

function turn(copied: string[], copyFails = false) {
  return testTurn("where are enemies spawned?", {
    copy: async (text) => {
      if (copyFails) throw new Error("clipboard denied");
      copied.push(text);
    },
  });
}

describe("a code citation in a turn", () => {
  it("shows path:line-line and the symbol, opens the lines in the pane and copies path:line", async () => {
    const copied: string[] = [];
    const { view, actions, rendered } = turn(copied);
    const citations = parseCitations([RECORD]) as Citation[];
    view.apply({ type: "final", answer: "See the spawner.", answerId: "a1", threadId: "t", citations, usage: null, data: {} });
    const link = view.citationsEl.querySelector<HTMLElement>('[data-testid="citation"]')!;
    expect(link.dataset.kind).toBe("code");
    expect(link.textContent).toBe("Source/WaveSpawner.cpp:3-6AWaveSpawner::SpawnWaveEnemies");
    expect(view.citationsEl.querySelector('[data-testid="code-view"]')).toBeNull(); // not until asked
    link.click();
    const code = view.citationsEl.querySelector<HTMLElement>('[data-testid="code-view"]')!;
    expect(code.hidden).toBe(false);
    expect(link.getAttribute("aria-expanded")).toBe("true");
    expect(actions.openNote).not.toHaveBeenCalled(); // outside the vault: nothing to open
    expect(code.querySelector('[data-testid="code-symbol"]')?.textContent).toBe("WaveSpawner.cpp › AWaveSpawner › SpawnWaveEnemies");
    expect(code.querySelector('[data-testid="code-location"]')?.textContent).toBe("Source/WaveSpawner.cpp:3-6");
    expect(code.querySelector('[data-testid="code-pairing"]')?.textContent).toBe("Declared at Source/WaveSpawner.h:12-13");
    await vi.waitFor(() => expect(rendered).toContain("```cpp\n" + CODE + "\n```"));
    const copy = code.querySelector<HTMLButtonElement>('[data-testid="copy-path"]')!;
    expect(copy.getAttribute("aria-label")).toBe("Copy path (Source/WaveSpawner.cpp:3)");
    copy.click();
    await vi.waitFor(() => expect(code.querySelector('[data-testid="code-status"]')?.textContent).toBe("Copied Source/WaveSpawner.cpp:3"));
    expect(copied).toEqual(["Source/WaveSpawner.cpp:3"]);
    link.click(); // and closes again
    expect(code.hidden).toBe(true);
  });

  it("says when the clipboard refuses", async () => {
    const { view } = turn([], true);
    view.apply({ type: "final", answer: "x", answerId: "a1", threadId: "t", citations: parseCitations([RECORD]), usage: null, data: {} });
    view.citationsEl.querySelector<HTMLElement>('[data-testid="citation"]')!.click();
    view.citationsEl.querySelector<HTMLButtonElement>('[data-testid="copy-path"]')!.click();
    await vi.waitFor(() =>
      expect(view.citationsEl.querySelector('[data-testid="code-status"]')?.textContent).toBe("Could not copy: clipboard denied"),
    );
  });
});

describe("a citation from another vault or a docs folder", () => {
  const DOC = {
    kind: "vault",
    note_path: "Turret guide.md",
    heading: "Turret guide > Calibration",
    anchor: "Calibration",
    line_start: 3,
    line_end: 5,
    cite: "[[Turret guide#Calibration]]",
    collection: "manual",
    source_kind: "md",
    text: "## Calibration\n\nCalibrate the barrel. ![x](https://example.com/x.png)",
  };

  it("is parsed with its collection and passage, and shown in the pane, not opened", async () => {
    const [citation] = parseCitations([DOC]);
    expect(citation).toMatchObject({ collection: "manual", source_kind: "md", line_end: 5 });
    const { view, actions, rendered } = turn([]);
    view.apply({ type: "final", answer: "x", answerId: "a1", threadId: "t", citations: parseCitations([DOC]), usage: null, data: {} });
    const link = view.citationsEl.querySelector<HTMLElement>('[data-testid="citation"]')!;
    expect(link.dataset.kind).toBe("source");
    expect(link.textContent).toBe("manual ›Turret guide.md:3-5");
    link.click();
    expect(actions.openNote).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(rendered.some((m) => m.startsWith("## Calibration\n\nCalibrate the barrel."))).toBe(true));
    expect(rendered.join("\n")).toContain("barrel. \\![x](https://example.com/x.png)"); // a remote image made inert
    expect(view.citationsEl.querySelector('[data-testid="code-symbol"]')?.textContent).toBe("Turret guide > Calibration");
  });

  it("leaves the vault's own notes to Obsidian", () => {
    const [mine] = parseCitations([{ ...DOC, collection: "vault", source_kind: undefined, text: undefined }]);
    expect(mine).not.toHaveProperty("source_kind");
    const { view, actions } = turn([]);
    view.apply({ type: "final", answer: "x", answerId: "a1", threadId: "t", citations: [mine!], usage: null, data: {} });
    view.citationsEl.querySelector<HTMLElement>('[data-testid="citation"]')!.click();
    expect(actions.openNote).toHaveBeenCalledTimes(1);
  });
});
