/**
 * A note ↔ code pair under a citation (issue 43, part 3): a note that names a code symbol
 * (`DBImpl::Write`) links to that symbol's unit in a code source beside the vault, and a code
 * unit to the notes naming it. The sidecar sends them on a pair question's citations
 * (`linked`); the turn shows one line per link: `↔ code: db/db_impl.cc:12-40 DBImpl::Write`,
 * `↔ note: Notes/Write path`. A linked note opens in Obsidian; a linked code unit is outside
 * the vault, so it is shown as text (and marked when the answer cites it too).
 * Pure (plain DOM, no Obsidian): tested under vitest with happy-dom.
 */
import type { Citation, LinkedUnit } from "../client";
import { h } from "./dom";
import { type NoteTarget, noteTarget } from "./noteTarget";

export interface PairLine {
  kind: "code" | "note";
  /** `↔ code: path:12-40 Symbol` or `↔ note: Folder/Note`. */
  label: string;
  /** Why: `note names DBImpl::Write`. */
  reason: string;
  /** A linked vault note: where to open it; null for code (outside the vault) and other sources. */
  target: NoteTarget | null;
  /** The linked unit is itself one of the answer's citations (1-based number), else null. */
  cited: number | null;
}

function lines(unit: LinkedUnit): string {
  if (!unit.line_start) return "";
  return unit.line_end && unit.line_end !== unit.line_start ? `:${unit.line_start}-${unit.line_end}` : `:${unit.line_start}`;
}

/** The line shown for one link. */
export function pairLabel(unit: LinkedUnit): string {
  if (unit.kind === "code") {
    const symbol = unit.symbol ? ` ${unit.symbol}` : "";
    return `↔ code: ${unit.note_path}${lines(unit)}${symbol}`;
  }
  const name = unit.note_path.replace(/\.md$/i, "");
  return `↔ note: ${unit.collection === "vault" ? name : `${unit.collection}: ${name}`}`;
}

function citedAs(unit: LinkedUnit, citations: Citation[]): number | null {
  const index = citations.findIndex(
    (c) =>
      c.kind === "vault" &&
      c.note_path === unit.note_path &&
      (c.collection ?? "vault") === unit.collection &&
      (unit.kind === "note" || c.line_start === unit.line_start),
  );
  return index < 0 ? null : index + 1;
}

/** The pair lines of one citation (none: []), each knowing whether the answer cites it too. */
export function pairLines(citation: Citation, citations: Citation[] = []): PairLine[] {
  if (citation.kind !== "vault" || !citation.linked) return [];
  return citation.linked.map((unit) => ({
    kind: unit.kind,
    label: pairLabel(unit),
    reason: unit.reason,
    target: unit.kind === "note" && unit.collection === "vault" ? noteTarget(unit.note_path, "", unit.line_start) : null,
    cited: citedAs(unit, citations),
  }));
}

/** Render the pair lines under a citation's list item; `open` follows a linked vault note. */
export function renderPairs(
  item: HTMLElement,
  pairs: PairLine[],
  open: (target: NoteTarget, event: MouseEvent) => void,
): HTMLElement | null {
  if (pairs.length === 0) return null;
  const box = h(item, "div", { cls: "vault-rag-pairs", testid: "pairs" });
  for (const pair of pairs) {
    const row = h(box, "div", { cls: "vault-rag-pair", attrs: { "data-kind": pair.kind, title: pair.reason } });
    if (pair.target) {
      const target = pair.target;
      const link = h(row, "a", {
        cls: "internal-link",
        text: pair.label,
        testid: "pair-link",
        attrs: { href: "#", "data-href": target.linktext },
      });
      link.addEventListener("click", (event) => {
        event.preventDefault();
        open(target, event);
      });
    } else {
      h(row, "span", { text: pair.label, testid: "pair-link" });
    }
    if (pair.cited !== null) h(row, "span", { cls: "vault-rag-pair-cited", text: ` [${pair.cited}]` });
  }
  return box;
}
