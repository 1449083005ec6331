/**
 * Obsidian comments: `%%hidden%%` inline, or a `%%` ... `%%` pair over several lines. Obsidian
 * does not show them, so resolved text leaves them out. The same rule as the Python side
 * (sidecar/vault_rag/vault/comments.py; shared-schemas/fixtures/embeds/README.md): `%%` markers
 * pair in reading order outside code blocks and code spans (`` `%%` `` is how notes show the
 * syntax), a comment may run over a code block, and an unmatched `%%` stays as text (a stray
 * `%%` must not hide the rest of a note).
 */

/** line index → [start, end) column ranges inside comments, the `%%` markers included. */
export type CommentSpans = Map<number, [number, number][]>;

/** Where the comments are in `lines[from..]`; lines in `skip` (code blocks) are not searched. */
export function commentSpans(lines: readonly string[], from = 0, skip: ReadonlySet<number> = new Set()): CommentSpans {
  const marks: [number, number][] = [];
  for (let index = from; index < lines.length; index++) {
    if (skip.has(index)) continue;
    const line = lines[index] ?? "";
    const code = codeSpans(line);
    for (let col = line.indexOf("%%"); col >= 0; col = line.indexOf("%%", col + 2)) {
      if (!inComment(code, col)) marks.push([index, col]);
    }
  }
  const spans: CommentSpans = new Map();
  for (let k = 0; k + 1 < marks.length; k += 2) {
    const [first, start] = marks[k] as [number, number];
    const [last, end] = marks[k + 1] as [number, number];
    for (let index = first; index <= last; index++) {
      const a = index === first ? start : 0;
      const b = index === last ? end + 2 : (lines[index] ?? "").length;
      const list = spans.get(index) ?? [];
      list.push([a, b]);
      spans.set(index, list);
    }
  }
  return spans;
}

/** [start, end) of the inline code spans on one line: a run of backticks up to the next run of
 * the same length (unclosed runs are text). */
export function codeSpans(line: string): [number, number][] {
  const runs = [...line.matchAll(/`+/g)].map((m): [number, number] => [m.index, m.index + m[0].length]);
  const spans: [number, number][] = [];
  for (let k = 0; k < runs.length; k++) {
    const [start, end] = runs[k] as [number, number];
    for (let j = k + 1; j < runs.length; j++) {
      const [s, e] = runs[j] as [number, number];
      if (e - s === end - start) {
        spans.push([start, e]);
        k = j;
        break;
      }
    }
  }
  return spans;
}

export function inComment(spans: readonly [number, number][] | undefined, col: number): boolean {
  return (spans ?? []).some(([a, b]) => a <= col && col < b);
}

/** `line.slice(start, end)` without the characters inside comments. */
export function cutComments(line: string, spans: readonly [number, number][] | undefined, start: number, end: number): string {
  if (spans === undefined || spans.length === 0) return line.slice(start, end);
  let out = "";
  let pos = start;
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    if (b <= pos || a >= end) continue;
    if (a > pos) out += line.slice(pos, a);
    pos = Math.max(pos, b);
  }
  if (pos < end) out += line.slice(pos, end);
  return out;
}
