/**
 * Obsidian's `MarkdownRenderer` for the browser harness: a real CommonMark renderer (markdown-it,
 * with its GFM tables and strikethrough) plus the parts of Obsidian's flavour that answers use,
 * rendered into the DOM Obsidian produces, so the screenshots and the e2e assertions see real
 * blocks (a quoted code block is a `<blockquote>` holding a `<pre><code>`):
 *
 * - `[[Note#Heading|alias]]` → `<a class="internal-link" data-href="Note#Heading">alias</a>`
 *   (without an alias the text is `Note > Heading`, as Obsidian shows it);
 * - `![[Note]]` → `<span class="internal-embed" src="Note">` (the harness does not inline notes);
 * - `> [!type] Title` → `<div class="callout" data-callout="type">` with `.callout-title` and
 *   `.callout-content` (`+`/`-` fold marks accepted; the title defaults to the type);
 * - a single newline is a line break (Obsidian's default, "strict line breaks" off).
 *
 * Raw HTML in the markdown is shown as text here (Obsidian sanitises and renders it): the
 * harness renders answers quoted from notes and has no sanitiser.
 */
import MarkdownIt, { type StateCore, type StateInline, type Token } from "markdown-it";

const WIKILINK = /^(!?)\[\[([^\]\n]+?)\]\]/;
const CALLOUT = /^\[!([\w-]+)\]([+-]?)[ \t]*(.*)$/;

function wikilinks(state: StateInline, silent: boolean): boolean {
  const match = WIKILINK.exec(state.src.slice(state.pos));
  if (match === null) return false;
  if (!silent) {
    const [, bang, inner] = match as unknown as [string, string, string];
    const bar = inner.indexOf("|");
    const target = (bar < 0 ? inner : inner.slice(0, bar)).trim();
    const alias = bar < 0 ? null : inner.slice(bar + 1).trim();
    const token = state.push(bang ? "obsidian_embed" : "obsidian_link", "", 0);
    token.meta = { target, text: alias || target.replace(/#/g, " > ").replace(/^ > /, "") };
  }
  state.pos += match[0].length;
  return true;
}

/** `> [!type] Title` blockquotes become callouts (marked on their open token). */
function callouts(state: StateCore): void {
  const tokens = state.tokens;
  const open: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.type === "blockquote_open") {
      open.push(token);
      const inline = tokens[i + 2];
      if (tokens[i + 1]?.type !== "paragraph_open" || inline?.type !== "inline") continue;
      const [first, ...rest] = inline.content.split("\n");
      const match = CALLOUT.exec(first ?? "");
      if (match === null) continue;
      const [, type, fold, title] = match as unknown as [string, string, string, string];
      token.meta = { callout: type.toLowerCase(), fold, title: title || type[0]?.toUpperCase() + type.slice(1).toLowerCase() };
      inline.content = rest.join("\n");
      if (inline.content.trim() === "") {
        (tokens[i + 1] as Token).hidden = true;
        (tokens[i + 3] as Token).hidden = true;
      }
    } else if (token.type === "blockquote_close") {
      const opener = open.pop();
      if (opener?.meta?.callout) token.meta = { callout: opener.meta.callout };
    }
  }
}

export function obsidianMarkdown(): InstanceType<typeof MarkdownIt> {
  const md = new MarkdownIt({ html: false, linkify: false, breaks: true });
  md.inline.ruler.before("link", "obsidian_wikilink", wikilinks);
  md.core.ruler.before("inline", "obsidian_callout", callouts);
  const escape = md.utils.escapeHtml;
  md.renderer.rules.obsidian_link = (tokens, i) => {
    const { target, text } = tokens[i]?.meta as { target: string; text: string };
    return `<a class="internal-link" data-href="${escape(target)}" href="${escape(target)}">${escape(text)}</a>`;
  };
  md.renderer.rules.obsidian_embed = (tokens, i) => {
    const { target } = tokens[i]?.meta as { target: string };
    return `<span class="internal-embed" src="${escape(target)}">${escape(target)}</span>`;
  };
  const defaultOpen = md.renderer.rules.blockquote_open ?? ((tokens, i, options, _env, self) => self.renderToken(tokens, i, options));
  const defaultClose = md.renderer.rules.blockquote_close ?? ((tokens, i, options, _env, self) => self.renderToken(tokens, i, options));
  md.renderer.rules.blockquote_open = (tokens, i, options, env, self) => {
    const meta = tokens[i]?.meta as { callout?: string; fold?: string; title?: string } | null;
    if (!meta?.callout) return defaultOpen(tokens, i, options, env, self);
    const fold = meta.fold ? ` is-collapsible${meta.fold === "-" ? " is-collapsed" : ""}` : "";
    return (
      `<div class="callout${fold}" data-callout="${escape(meta.callout)}">` +
      `<div class="callout-title"><div class="callout-title-inner">${escape(meta.title ?? "")}</div></div>` +
      `<div class="callout-content">\n`
    );
  };
  md.renderer.rules.blockquote_close = (tokens, i, options, env, self) =>
    (tokens[i]?.meta as { callout?: string } | null)?.callout ? "</div></div>\n" : defaultClose(tokens, i, options, env, self);
  return md;
}

const md = obsidianMarkdown();

/** What the pane calls: `MarkdownRenderer.render(app, markdown, el, sourcePath, component)`. */
export class MarkdownRenderer {
  static readonly calls: { markdown: string; sourcePath: string }[] = [];

  static async render(_app: unknown, markdown: string, el: HTMLElement, sourcePath: string, _component: unknown): Promise<void> {
    MarkdownRenderer.calls.push({ markdown, sourcePath });
    el.innerHTML = md.render(markdown);
  }
}
