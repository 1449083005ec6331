/**
 * Example questions for the empty ask pane, drawn from the vault's own headings
 * (`metadataCache.getFileCache(file).headings`): the first section heading of each of the most
 * recently changed notes, made into a question in the heading's language. Headings that would
 * make poor questions (dates, "TODO", one character, a whole sentence) are skipped.
 */

export interface NoteHeadings {
  path: string;
  /** `TFile.stat.mtime`: recent notes first. */
  mtime: number;
  headings: { heading: string; level: number }[];
}

export interface ExampleQuestion {
  question: string;
  /** The note and heading it came from. */
  path: string;
  heading: string;
}

/** Notes looked at, newest first (a large vault is not walked whole). */
export const EXAMPLE_NOTES = 200;
const GENERIC = new Set(
  [
    "todo",
    "notes",
    "note",
    "summary",
    "overview",
    "introduction",
    "intro",
    "references",
    "reference",
    "links",
    "see also",
    "resources",
    "misc",
    "index",
    "contents",
    "table of contents",
    "参考",
    "参考资料",
    "总结",
    "小结",
    "概述",
    "目录",
    "备注",
    "链接",
    "待办",
  ].map((word) => word.normalize("NFC")),
);
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/;
const DATE = /^\d{4}[-/.]\d{1,2}([-/.]\d{1,2})?\b/;

/** A heading as plain text: links, emphasis and code marks dropped, trailing punctuation off. */
export function plainHeading(heading: string): string {
  return heading
    .replace(/\[\[([^\]|]*\|)?([^\]]*)\]\]/g, "$2")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`~=]+/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\s:：,，.。;；!！?？-]+$/u, "");
}

/** Whether a heading makes a question worth asking. */
export function goodHeading(text: string): boolean {
  if (!text || DATE.test(text) || GENERIC.has(text.toLowerCase())) return false;
  if (/^[\d\s.#-]+$/.test(text)) return false;
  const cjk = CJK.test(text);
  const length = [...text].length;
  return cjk ? length >= 2 && length <= 24 : length >= 4 && length <= 60 && text.split(" ").length <= 8;
}

export function questionFor(heading: string): string {
  return CJK.test(heading) ? `笔记里关于「${heading}」写了什么？` : `What do my notes say about ${heading}?`;
}

/** Up to `count` example questions, one per note, from the newest notes' first good section
 * heading (level 2 or deeper first, else the title heading). */
export function exampleQuestions(notes: NoteHeadings[], count = 3): ExampleQuestion[] {
  const newest = [...notes].sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : 1)).slice(0, EXAMPLE_NOTES);
  const out: ExampleQuestion[] = [];
  const seen = new Set<string>();
  for (const note of newest) {
    if (out.length >= count) break;
    const ordered = [...note.headings.filter((h) => h.level >= 2), ...note.headings.filter((h) => h.level < 2)];
    for (const { heading } of ordered) {
      const text = plainHeading(heading);
      const key = text.toLowerCase();
      if (!goodHeading(text) || seen.has(key)) continue;
      seen.add(key);
      out.push({ question: questionFor(text), path: note.path, heading: text });
      break;
    }
  }
  return out;
}
