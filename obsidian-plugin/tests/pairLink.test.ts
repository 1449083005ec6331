// @vitest-environment happy-dom
/**
 * A note ↔ code pair under a citation: parsed from the sidecar's records (`linked`, as
 * `graph/sources.citation_of` sends it for a pair question), labelled, and shown in the turn —
 * a linked note opens in Obsidian, a linked code unit is text; nothing when there is no link.
 */
import { afterEach, describe, expect, it } from "vitest";

import { type Citation, linkedField, parseCitations } from "../src/client";
import { pairLabel, pairLines, renderPairs } from "../src/view/pairLink";
import { testTurn } from "./helpers/turnView";

afterEach(() => {
  document.body.innerHTML = "";
});

const SPAWN = {
  kind: "code",
  collection: "engine",
  note_path: "src/core.h",
  symbol: "eng::Actor::Spawn",
  line_start: 16,
  line_end: 16,
  heading_path: "core.h › eng › Actor › Spawn",
  text: "void Spawn() { Tick(0.f); Helper(); }",
  reason: "note names eng::Actor::Spawn",
};
const NOTE_RECORD = {
  kind: "vault",
  note_path: "Engine/Actors.md",
  heading: "Actors",
  anchor: "Actors",
  chunk_id: "n1",
  line_start: 4,
  line_end: 6,
  cite: "[[Engine/Actors#Actors]]",
  collection: "vault",
  symbol: null,
  linked: [SPAWN],
};
const CODE_RECORD = {
  kind: "vault",
  note_path: "src/core.h",
  heading: "core.h › eng › Actor › Spawn",
  anchor: "",
  chunk_id: "c1",
  line_start: 16,
  line_end: 16,
  cite: "src/core.h:16-16 (eng::Actor::Spawn)",
  collection: "engine",
  symbol: "eng::Actor::Spawn",
  source_kind: "code",
  text: "void Spawn() { Tick(0.f); Helper(); }",
  linked: [{ ...SPAWN, kind: "note", collection: "vault", note_path: "Engine/Actors.md", line_start: 4, line_end: 6 }],
};

describe("pair links", () => {
  it("parses the links and drops malformed ones; none: no field", () => {
    expect(linkedField(undefined)).toEqual({});
    expect(linkedField([])).toEqual({});
    expect(linkedField([{ kind: "other", note_path: "x" }, { kind: "code" }, "x"])).toEqual({});
    const [note] = parseCitations([NOTE_RECORD]);
    expect(note).toMatchObject({
      linked: [{ kind: "code", collection: "engine", note_path: "src/core.h", symbol: "eng::Actor::Spawn", line_start: 16, line_end: 16 }],
    });
    const [plain] = parseCitations([{ ...NOTE_RECORD, linked: undefined }]);
    expect(plain && "linked" in plain).toBe(false);
  });

  it("labels code with its lines and symbol, notes by name", () => {
    const [note, code] = parseCitations([NOTE_RECORD, CODE_RECORD]) as Citation[];
    if (note?.kind !== "vault" || code?.kind !== "vault") throw new Error("not vault");
    expect(pairLabel(note.linked![0]!)).toBe("↔ code: src/core.h:16 eng::Actor::Spawn");
    expect(pairLabel({ ...note.linked![0]!, line_end: 20 })).toBe("↔ code: src/core.h:16-20 eng::Actor::Spawn");
    expect(pairLabel(code.linked![0]!)).toBe("↔ note: Engine/Actors");
    expect(pairLabel({ ...code.linked![0]!, collection: "docs" })).toBe("↔ note: docs: Engine/Actors");
  });

  it("knows when the answer cites the other half too", () => {
    const citations = parseCitations([NOTE_RECORD, CODE_RECORD]);
    const [toCode] = pairLines(citations[0]!, citations);
    expect(toCode).toMatchObject({ kind: "code", target: null, cited: 2, reason: "note names eng::Actor::Spawn" });
    const [toNote] = pairLines(citations[1]!, citations);
    expect(toNote).toMatchObject({ kind: "note", cited: 1, target: { notePath: "Engine/Actors", line: 3 } });
    expect(pairLines(citations[0]!, [citations[0]!])[0]?.cited).toBeNull();
    expect(pairLines({ kind: "web", url: "https://x", title: "x", cite: "x" })).toEqual([]);
  });

  it("renders nothing without links", () => {
    expect(renderPairs(document.body, [], () => undefined)).toBeNull();
    expect(document.body.innerHTML).toBe("");
  });

  it("shows the pair under each citation of a turn; a linked note opens", () => {
    const { view, actions } = testTurn("the note about Spawn and the code that implements it");
    const plain = { ...NOTE_RECORD, note_path: "Hub.md", linked: undefined };
    const citations = parseCitations([NOTE_RECORD, CODE_RECORD, plain]);
    view.apply({ type: "final", answer: "Spawn [1] [2].", answerId: "a1", threadId: "t", citations, usage: null, data: {} });
    const items = Array.from(view.citationsEl.querySelectorAll("li"));
    expect(items).toHaveLength(3);
    const pairs = items.map((li) => Array.from(li.querySelectorAll("[data-testid=\"pair-link\"]")).map((el) => el.textContent));
    expect(pairs).toEqual([["↔ code: src/core.h:16 eng::Actor::Spawn"], ["↔ note: Engine/Actors"], []]);
    expect(items[0]!.querySelector(".vault-rag-pair")?.getAttribute("title")).toBe("note names eng::Actor::Spawn");
    expect(items[0]!.querySelector(".vault-rag-pair-cited")?.textContent).toBe(" [2]");
    const toNote = items[1]!.querySelector<HTMLElement>('a[data-testid="pair-link"]')!;
    expect(toNote.dataset.href).toBe("Engine/Actors");
    toNote.click();
    expect(actions.openNote).toHaveBeenCalledWith(expect.objectContaining({ notePath: "Engine/Actors", line: 3 }), expect.anything());
    expect(items[0]!.querySelector("a[data-testid='pair-link']")).toBeNull(); // code: outside the vault
  });
});
