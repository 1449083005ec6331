/**
 * Citations of a code source (a source tree beside the vault, `GET /v1/collections`): cited as
 * `path:line-line` plus the symbol (`AWaveSpawner::SpawnWaveEnemies`). The file is outside the
 * vault, so Obsidian cannot open it: the pane shows the cited lines itself (`codeView.ts`), as a
 * code block in the file's language, with "copy path" (`path:line`, what editors and terminals
 * jump to).
 */
import type { Citation, VaultCitation } from "../client";

export type CodeCitation = VaultCitation & { source_kind: "code" };

export function isCodeCitation(citation: Citation): citation is CodeCitation {
  return citation.kind === "vault" && citation.source_kind === "code";
}

function lines(citation: CodeCitation): { start: number | null; end: number | null } {
  const start = citation.line_start ?? null;
  return { start, end: citation.line_end ?? start };
}

/** `Source/WaveSpawner.cpp:3-11` (one line: `…:3`; no lines known: the path). */
export function codeLocation(citation: CodeCitation): string {
  const { start, end } = lines(citation);
  if (start === null) return citation.note_path;
  return end === null || end === start ? `${citation.note_path}:${start}` : `${citation.note_path}:${start}-${end}`;
}

/** What "copy path" puts on the clipboard: `path:line`, the first cited line. */
export function copyPathText(citation: CodeCitation): string {
  const { start } = lines(citation);
  return start === null ? citation.note_path : `${citation.note_path}:${start}`;
}

/** The symbol path shown over the code: `WaveSpawner.cpp › AWaveSpawner › SpawnWaveEnemies`
 * (the unit's heading path), else its symbol, else the file name. */
export function symbolPath(citation: CodeCitation): string {
  return citation.heading || citation.symbol || citation.note_path.split("/").pop() || citation.note_path;
}

const LANGUAGES: Record<string, string> = {
  c: "c",
  h: "cpp", // Unreal and most C++ trees use .h for C++ headers
  hh: "cpp",
  hpp: "cpp",
  hxx: "cpp",
  cc: "cpp",
  cpp: "cpp",
  cxx: "cpp",
  inl: "cpp",
  py: "python",
  pyi: "python",
  ts: "typescript",
  tsx: "tsx",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "jsx",
  mjs: "javascript",
  cjs: "javascript",
  cs: "csharp",
  go: "go",
  java: "java",
  rs: "rust",
};

/** The code block's language from the file's extension ("" when unknown: plain text). */
export function languageOf(path: string): string {
  const name = path.split("/").pop() ?? path;
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (LANGUAGES[name.slice(dot + 1).toLowerCase()] ?? "") : "";
}

/** The cited lines as a Markdown code block; the fence is longer than any run of backticks in
 * the code, so a comment holding ``` cannot end it early. */
export function codeBlock(citation: CodeCitation): string {
  const text = citation.text ?? "";
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${languageOf(citation.note_path)}\n${text}\n${fence}`;
}

/** The pairing line under the code: where the header declares it, or its partner file. */
export function pairingNote(citation: CodeCitation): string {
  if (citation.declared_at) return `Declared at ${citation.declared_at}`;
  if (citation.related_file) return `Paired with ${citation.related_file}`;
  return "";
}
