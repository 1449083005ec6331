/**
 * Answers never fetch remote content by themselves (issue 13). Rendering an answer with a
 * remote image (`![x](https://…)`, `<img src="https://…">`) would fetch that URL the moment
 * the answer is shown, so a prompt-injected web page could make an answer send the user's data
 * anywhere. Remote images, frames and media become plain links the user may click or not;
 * vault images (`![[x.png]]`, relative paths) are left alone. The sidecar does the same to
 * everything it sends (`graph/safe_markdown.py`); this is the pane's own guard, run on the
 * whole answer at each render (`turn.ts`), so a reference defined after its image is caught.
 *
 * By parsing, not by pattern (issue 31, defect 4; `markdownScan.ts` finds what would load): a
 * remote image's `!` is escaped (`\![alt](url)` shows "!" and a link), a loading HTML tag
 * becomes a link `[alt](url)` (its closing tag goes too), every reference-style image is
 * escaped, and the text is parsed again, a few rounds. A block that still loads something has
 * every `![` and `<` escaped. A text with nothing remote in it is returned unchanged.
 */
import { type Hazard, hazards, lineStarts, scanTags } from "./markdownScan";

const ROUNDS = 4;

/** `text` with no `![` and no `<` left: nothing in it can load anything. */
function escapeAll(text: string): string {
  return text.split("![").join("&#33;[").split("<").join("&lt;");
}

function escapeLines(text: string, blocks: [number, number][]): string {
  // Lines with their "\n" (no lookbehind: iOS before 16.4 has none).
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [text];
  for (const [first, last] of blocks) {
    for (let i = first; i < Math.min(last, lines.length); i++) lines[i] = escapeAll(lines[i] ?? "");
  }
  return lines.join("");
}

function closingTag(text: string, start: number, end: number, name: string): [number, number] | null {
  for (const [tag, offset] of scanTags(text.slice(start, end)).ends) {
    if (tag !== name) continue;
    const close = text.indexOf(">", start + offset);
    return close === -1 ? null : [start + offset, close + 1];
  }
  return null;
}

function rewrite(text: string, found: Hazard[]): string {
  const starts = lineStarts(text);
  const whole = found.filter((h) => h.start === null || h.end === null).map((h) => h.lines);
  const inWhole = (h: Hazard): boolean => whole.some(([a, b]) => a === h.lines[0] && b === h.lines[1]);
  const edits: [number, number, string][] = [];
  for (const hazard of found) {
    if (hazard.start === null || hazard.end === null || inWhole(hazard)) continue;
    edits.push([hazard.start, hazard.end, hazard.replacement]);
    if (hazard.closing) {
      const blockEnd = starts[Math.min(hazard.lines[1], starts.length - 1)] ?? text.length;
      const closing = closingTag(text, hazard.end, blockEnd, hazard.closing);
      if (closing) edits.push([closing[0], closing[1], ""]);
    }
  }
  edits.sort((a, b) => b[0] - a[0] || b[1] - a[1]);
  let last = text.length + 1;
  let out = text;
  for (const [start, end, replacement] of edits) {
    if (end > last) continue; // two edits never overlap; the later one wins
    out = out.slice(0, start) + replacement + out.slice(end);
    last = start;
  }
  return whole.length ? escapeLines(out, whole) : out;
}

/** `markdown` with every remote image, frame or media element made a plain link. */
export function neutralizeRemoteImages(markdown: string): string {
  if (!markdown.includes("!") && !markdown.includes("<")) return markdown;
  // Line by line as markdown-it counts lines: it reads "\r\n" and "\r" as "\n".
  let text = markdown.replace(/\r\n?/g, "\n").replace(/\0/g, "\ufffd");
  if (hazards(text).length === 0) return markdown;
  for (let round = 0; round < ROUNDS; round++) {
    const found = hazards(text);
    if (found.length === 0) return text;
    text = rewrite(text, found);
  }
  const left = hazards(text);
  if (left.length) text = escapeLines(text, left.map((h) => h.lines));
  return hazards(text).length ? escapeAll(text) : text;
}
