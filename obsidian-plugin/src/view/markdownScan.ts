/**
 * Where answer markdown would fetch something remote, found by parsing it (issue 31, defect 4),
 * as the sidecar does (`graph/markdown_scan.py`, same rules; both run
 * shared-schemas/fixtures/hostile-markdown.json). The text is parsed with markdown-it
 * (CommonMark with raw HTML, GFM tables and strikethrough) and its raw HTML with htmlparser2.
 * A hazard is an image whose `src` (after markdown-it's entity decoding) is remote (any scheme
 * but `data:`, or `//host`); any reference-style image (`![x]`, `![x][]`, `![x][y]`: the
 * parse resolves every label but a `[wikilink]` to a remote target); or an HTML start tag
 * that loads a remote `src`, `srcset`, `data`, `poster`… or loads by `style`, or `style`/`meta`.
 * Each hazard has its source offsets when they are known for sure, else the caller escapes its
 * whole block (`lines`).
 */
import { Parser } from "htmlparser2";
import markdownit, { type MarkdownIt, type StateInline, type Token } from "markdown-it";

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;
const URL_NOISE = /[\t\n\r]/g;
const LOADING_STYLE = /url\s*\(|@import|image-set\s*\(|image\s*\(/i;
const LOADED = new Set(["src", "srcset", "imagesrcset", "data", "poster", "background", "lowsrc", "dynsrc"]);
for (const name of ["xlink:href", "codebase", "archive", "manifest"]) LOADED.add(name);
const HREF_LOADED = new Set(["link", "base", "image", "use", "feimage", "script", "img", "iframe", "embed"]);
const ALWAYS = new Set(["style", "meta"]);
const CONTAINERS = new Set(["iframe", "video", "audio", "object", "picture", "svg"]);
const REF_TARGET = "//reference.invalid/";

/** Would `url` (an image or tag source) be fetched from elsewhere than the vault? */
export function isRemote(url: string): boolean {
  // eslint-disable-next-line no-control-regex -- browsers strip C0 controls around a URL
  const clean = url.replace(URL_NOISE, "").replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  if (["//", "\\\\", "/\\", "\\/"].includes(clean.slice(0, 2))) return true;
  const scheme = SCHEME.exec(clean);
  return scheme !== null && scheme[0].toLowerCase() !== "data:";
}

export interface Hazard {
  lines: [number, number];
  start: number | null;
  end: number | null;
  replacement: string;
  closing: string;
}

interface Tag {
  name: string;
  text: string;
  offset: number;
  url: string | null;
  label: string;
}

type Rule = (state: StateInline, silent: boolean) => boolean;

function recording(rule: Rule): Rule {
  return (state, silent) => {
    const start = state.pos;
    const count = state.tokens.length;
    const found = rule(state, silent);
    const token = state.tokens[state.tokens.length - 1];
    if (found && !silent && state.tokens.length > count && token) {
      token.meta = { ...(token.meta as object | null), at: start };
    }
    return found;
  };
}

function parser(): MarkdownIt {
  const md = markdownit("commonmark", { html: true }).enable(["table", "strikethrough"]);
  const ruler = md.inline.ruler as unknown as {
    __rules__: { fn: Rule }[];
    __find__(name: string): number;
    at(name: string, fn: Rule): void;
  };
  for (const name of ["image", "html_inline"]) {
    const rule = ruler.__rules__[ruler.__find__(name)];
    if (rule) ruler.at(name, recording(rule.fn));
  }
  return md;
}

const MD = parser();

/** References in which every label but `[…]` (a wikilink) names a remote target. */
function anyReference(): Record<string, { href: string; title: string }> {
  return new Proxy<Record<string, { href: string; title: string }>>(
    {},
    {
      get: (target, label) =>
        typeof label === "string" && !(label.startsWith("[") && label.endsWith("]"))
          ? { href: REF_TARGET, title: "" }
          : target[label as string],
    },
  );
}

export function parse(text: string, references: boolean): Token[] {
  return MD.parse(text, references ? { references: anyReference() } : {});
}

/** (remote URL or null, label) when a tag named `name` with `attrs` loads by itself. */
function loadingTag(name: string, attrs: [string, string][]): [string | null, string] | null {
  const values = new Map<string, string>();
  for (const [key, value] of [...attrs].reverse()) values.set(key, value);
  const label = values.get("alt") || values.get("title") || "";
  const urls: string[] = [];
  for (const [key, value] of attrs) {
    if (key === "srcset" || key === "imagesrcset") {
      for (const part of value.split(",")) if (part.trim()) urls.push(part.trim().split(/\s+/)[0] ?? "");
    } else if (LOADED.has(key) || (key === "href" && HREF_LOADED.has(name))) {
      urls.push(value.trim());
    }
  }
  const remote = urls.find((url) => url && isRemote(url));
  if (remote !== undefined) return [remote, label];
  if (ALWAYS.has(name) || LOADING_STYLE.test(values.get("style") ?? "")) return [null, label];
  return null;
}

/** The loading start tags in `html` (`every` one), and every closing tag (name, offset). */
export function scanTags(html: string, every = false): { tags: Tag[]; ends: [string, number][] } {
  const tags: Tag[] = [];
  const ends: [string, number][] = [];
  let attrs: [string, string][] = [];
  const scanner: Parser = new Parser(
    {
      onopentagname: () => {
        attrs = [];
      },
      onattribute: (name, value) => {
        attrs.push([name, value]);
      },
      onopentag: (name, _attribs, isImplied) => {
        if (isImplied) return;
        const found = loadingTag(name, attrs) ?? (every ? [null, ""] : null);
        if (found === null) return;
        const offset = scanner.startIndex;
        tags.push({ name, text: html.slice(offset, scanner.endIndex + 1), offset, url: found[0], label: found[1] });
      },
      onclosetag: (name, isImplied) => {
        if (!isImplied) ends.push([name, scanner.startIndex]);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  scanner.write(html);
  scanner.end();
  return { tags, ends };
}

/** `label` as link text that cannot open an image, a tag, a code span or another link. */
export function escapeLabel(label: string): string {
  return label.replace(/([\\[\]<>`])/g, "\\$1");
}

/** A markdown link to `url` that cannot itself become an image or a tag. */
export function link(label: string, url: string): string {
  const clean = url.replace(URL_NOISE, "");
  const text = escapeLabel(label.replace(/\s+/g, " ").trim() || clean);
  if (/^[^\s<>()\\]+$/.test(clean)) return `[${text}](${clean})`;
  return `[${text}](<${clean.replace(/([\\<>])/g, "\\$1")}>)`;
}

function nth(haystack: string, needle: string, n: number): number {
  let at = -1;
  for (let i = 0; i <= n; i++) {
    at = haystack.indexOf(needle, at + 1);
    if (at === -1) return -1;
  }
  return at;
}

function count(text: string, needle: string, end = text.length): number {
  return text.slice(0, end).split(needle).length - 1;
}

function span(pos: number | null, base: number, length: number): [number | null, number | null] {
  return pos === null || pos < 0 ? [null, null] : [base + pos, base + pos + length];
}

function tagHazard(tag: Tag, pos: number | null, base: number, lines: [number, number]): Hazard {
  const [start, end] = span(pos, base, tag.text.length);
  if (tag.url === null) return { lines, start, end: start === null ? null : start + 1, replacement: "&lt;", closing: "" };
  const closing = CONTAINERS.has(tag.name) ? tag.name : "";
  return { lines, start, end, replacement: link(tag.label, tag.url), closing };
}

function inlineHazards(inlines: Token[], source: string, base: number, lines: [number, number], every: boolean): Hazard[] {
  const content = inlines.map((token) => token.content).join("");
  const exact = count(content, "![") === count(source, "![") && count(content, "<") === count(source, "<");
  const out: Hazard[] = [];
  let offset = 0;
  for (const token of inlines) {
    for (const child of token.children ?? []) {
      const at = (child.meta as { at?: number } | null)?.at;
      const where = at === undefined || !exact ? null : offset + at;
      if (child.type === "image" && (every || isRemote(String(child.attrGet("src") ?? "")))) {
        let pos: number | null = null;
        if (where !== null && content.startsWith("![", where)) pos = nth(source, "![", count(content, "![", where));
        if (every) out.push({ lines, ...spanOf(pos, base, 1), replacement: "image", closing: "" });
        else if ((child.children ?? []).length === 0 && pos !== null && source.startsWith("![](", pos)) {
          const label = "\\![" + escapeLabel(String(child.attrGet("src") ?? "")) + "]";
          out.push({ lines, ...spanOf(pos, base, 3), replacement: label, closing: "" });
        } else out.push({ lines, ...spanOf(pos, base, 1), replacement: "\\!", closing: "" });
      } else if (child.type === "html_inline") {
        for (const tag of scanTags(child.content, every).tags) {
          let pos: number | null = null;
          if (where !== null && tag.offset === 0 && content.startsWith("<", where)) {
            pos = nth(source, "<", count(content, "<", where));
            if (pos !== -1 && !source.startsWith(tag.text, pos)) pos = null;
          }
          out.push(tagHazard(tag, pos, base, lines));
        }
      }
    }
    offset += token.content.length;
  }
  return out;
}

function spanOf(pos: number | null, base: number, length: number): { start: number | null; end: number | null } {
  const [start, end] = span(pos, base, length);
  return { start, end };
}

function htmlHazards(content: string, source: string, base: number, lines: [number, number], every: boolean): Hazard[] {
  const exact = source.startsWith(content) || source === content.replace(/\n+$/, "");
  return scanTags(content, every).tags.map((tag) =>
    tagHazard(tag, exact && source.startsWith(tag.text, tag.offset) ? tag.offset : null, base, lines),
  );
}

export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  starts.push(text.length, text.length);
  return starts;
}

/** Every remote image and loading tag in `text` (`every`: every image and start tag). */
export function hazards(text: string, every = false): Hazard[] {
  const starts = lineStarts(text);
  const at = (line: number): number => starts[Math.min(line, starts.length - 1)] ?? text.length;
  const found = new Map<string, Hazard>();
  const add = (hazard: Hazard): void => {
    const key = `${hazard.start}:${hazard.end}:${hazard.replacement}`;
    if (!found.has(key)) found.set(key, hazard);
  };
  for (const references of [true, false]) {
    const groups = new Map<string, { lines: [number, number]; tokens: Token[] }>();
    let map: [number, number] = [0, 0];
    for (const token of parse(text, references)) {
      if (token.map) map = [token.map[0], token.map[1]];
      else if (token.type !== "inline") continue; // a table cell's text: its row's lines
      const lines: [number, number] = [map[0], map[1]];
      if (token.type === "inline") {
        const key = lines.join(":");
        const group = groups.get(key) ?? { lines, tokens: [] };
        group.tokens.push(token);
        groups.set(key, group);
      } else if (token.type === "html_block") {
        const source = text.slice(at(lines[0]), at(lines[1]));
        for (const hazard of htmlHazards(token.content, source, at(lines[0]), lines, every)) add(hazard);
      }
    }
    for (const { lines, tokens } of groups.values()) {
      const source = text.slice(at(lines[0]), at(lines[1]));
      for (const hazard of inlineHazards(tokens, source, at(lines[0]), lines, every)) add(hazard);
    }
  }
  return [...found.values()].sort((a, b) => a.lines[0] - b.lines[0] || (a.start ?? 0) - (b.start ?? 0));
}
