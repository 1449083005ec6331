/** The browser harness's `MarkdownRenderer` (tests/browser/markdownRenderer.ts): CommonMark with
 * Obsidian's wikilinks, embeds and callouts, so the e2e screenshots show real blocks. */
import { describe, expect, it } from "vitest";

import { obsidianMarkdown } from "./browser/markdownRenderer";

const md = obsidianMarkdown();

describe("the harness's markdown", () => {
  it("renders a quoted code block as a code block inside the quote", () => {
    const html = md.render("> 引用：\n> ```cpp\n> UPROPERTY()\n> TObjectPtr<UObject> Ref;\n> ```\n\n— [[C++/UObject 与 GC#TObjectPtr]]");
    expect(html).toContain("<blockquote>\n<p>引用：</p>\n<pre><code class=\"language-cpp\">UPROPERTY()\nTObjectPtr&lt;UObject&gt; Ref;\n</code></pre>\n</blockquote>");
    expect(html).toContain('<a class="internal-link" data-href="C++/UObject 与 GC#TObjectPtr" href="C++/UObject 与 GC#TObjectPtr">C++/UObject 与 GC &gt; TObjectPtr</a>');
  });

  it("renders wikilinks with aliases, embeds, and keeps line breaks", () => {
    expect(md.render("see [[Lumen|the Lumen note]] and ![[diagram.png]]\nnext line")).toBe(
      '<p>see <a class="internal-link" data-href="Lumen" href="Lumen">the Lumen note</a> and ' +
        '<span class="internal-embed" src="diagram.png">diagram.png</span><br>\nnext line</p>\n',
    );
    expect(md.render("`[[not a link]]`")).toBe("<p><code>[[not a link]]</code></p>\n");
  });

  it("renders callouts with their type, title and content; a plain quote stays a quote", () => {
    const html = md.render("> [!warning] GC\n> Raw pointers are not tracked.\n\n> [!tip]-\n> folded\n\n> just a quote");
    expect(html).toContain(
      '<div class="callout" data-callout="warning"><div class="callout-title"><div class="callout-title-inner">GC</div></div><div class="callout-content">\n<p>Raw pointers are not tracked.</p>\n</div></div>',
    );
    expect(html).toContain('<div class="callout is-collapsible is-collapsed" data-callout="tip"><div class="callout-title"><div class="callout-title-inner">Tip</div></div>');
    expect(html).toContain("<blockquote>\n<p>just a quote</p>\n</blockquote>");
  });

  it("renders tables and escapes raw HTML", () => {
    expect(md.render("| a | b |\n|---|---|\n| 1 | 2 |")).toContain("<table>");
    expect(md.render("<img src=x onerror=alert(1)>")).toBe("<p>&lt;img src=x onerror=alert(1)&gt;</p>\n");
  });
});
