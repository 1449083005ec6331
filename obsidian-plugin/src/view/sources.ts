/**
 * Whether an answer already names its sources in its text: an extractive answer quotes each
 * passage followed by its `[[note#heading]]`, so listing the same sources again below is a
 * repeat. Then the list is folded away (a `<details>` with "N sources"), open otherwise.
 */
import type { Citation } from "../client";

/** The link targets written in `text` (`[[target|alias]]`, `[[target#h]]`), without `.md`. */
function linkedTargets(text: string): Set<string> {
  const out = new Set<string>();
  for (const match of text.matchAll(/\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]/g)) {
    const target = (match[1] ?? "").trim().replace(/\.md$/i, "");
    if (target) {
      out.add(target);
      out.add(target.split("/").pop() ?? target);
    }
  }
  return out;
}

/** True when every vault citation's note is linked in `text` (web citations: their URL is in it). */
export function citedInline(text: string, citations: Citation[]): boolean {
  if (citations.length === 0) return false;
  const linked = linkedTargets(text);
  return citations.every((citation) => {
    if (citation.kind === "web") return text.includes(citation.url);
    const path = citation.note_path.replace(/\.md$/i, "");
    return linked.has(path) || linked.has(path.split("/").pop() ?? path);
  });
}

/** "1 source", "3 sources". */
export function sourcesLabel(count: number): string {
  return `${count} source${count === 1 ? "" : "s"}`;
}
