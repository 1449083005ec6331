/**
 * A citation of a code source in a turn's source list: `path:line-line` and the symbol; a click
 * opens (and closes) the cited lines right under it — the symbol path, a code block in the
 * file's language, the `.h`/`.cpp` pairing and a "copy path" icon that copies `path:line`. The
 * file is outside the vault: nothing here opens it. Logic in `codeCitation.ts`.
 *
 * Stable `data-testid`s: citation (with `data-kind="code"`), code-view, code-symbol,
 * code-location, code-block, code-pairing, copy-path, code-status.
 */
import { setIcon } from "obsidian";

import { type CodeCitation, codeBlock, codeLocation, copyPathText, pairingNote, symbolPath } from "./codeCitation";
import { h, show } from "./dom";
import type { RenderMarkdown } from "./turn";

export interface CodeViewDeps {
  render: RenderMarkdown;
  copy(text: string): Promise<void>;
  describeError(error: unknown): string;
}

/** The code citations of one turn; `destroy` releases their rendered blocks. */
export class CodeViews {
  private disposers: (() => void)[] = [];

  constructor(private readonly deps: CodeViewDeps) {}

  /** Fill a citation's list item. */
  add(item: HTMLElement, citation: CodeCitation): void {
    const location = codeLocation(citation);
    const link = h(item, "a", {
      cls: "vault-rag-code-citation",
      testid: "citation",
      attrs: { href: "#", "data-kind": "code", "aria-expanded": "false", title: `Show ${location}${citation.collection ? ` (${citation.collection})` : ""}` },
    });
    h(link, "span", { cls: "vault-rag-code-path", text: location });
    if (citation.symbol) h(link, "code", { cls: "vault-rag-code-symbol", text: citation.symbol });
    let view: HTMLElement | null = null;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      view ??= this.view(item, citation);
      const opening = view.hidden;
      show(view, opening);
      link.setAttribute("aria-expanded", String(opening));
    });
  }

  destroy(): void {
    for (const dispose of this.disposers) dispose();
    this.disposers = [];
  }

  private view(item: HTMLElement, citation: CodeCitation): HTMLElement {
    const view = h(item, "div", { cls: "vault-rag-code-view", testid: "code-view" });
    view.hidden = true;
    const head = h(view, "div", { cls: "vault-rag-code-head" });
    h(head, "span", { cls: "vault-rag-code-symbol-path", testid: "code-symbol", text: symbolPath(citation) });
    h(head, "span", { cls: "vault-rag-code-location", testid: "code-location", text: codeLocation(citation) });
    const copyLabel = `Copy path (${copyPathText(citation)})`;
    const copy = h(head, "button", {
      cls: "clickable-icon vault-rag-action",
      testid: "copy-path",
      attrs: { type: "button", "aria-label": copyLabel, title: copyLabel, "data-tooltip-position": "top" },
    });
    setIcon(copy, "clipboard-copy");
    const block = h(view, "div", { cls: "vault-rag-code-block markdown-rendered", testid: "code-block" });
    const pairing = pairingNote(citation);
    if (pairing) h(view, "div", { cls: "vault-rag-code-pairing", testid: "code-pairing", text: pairing });
    const status = h(view, "div", { cls: "vault-rag-action-status", testid: "code-status", attrs: { "aria-live": "polite" } });
    copy.addEventListener("click", () => {
      const text = copyPathText(citation);
      this.deps.copy(text).then(
        () => void (status.textContent = `Copied ${text}`),
        (error: unknown) => void (status.textContent = `Could not copy: ${this.deps.describeError(error)}`),
      );
    });
    const markdown = codeBlock(citation);
    this.deps.render(markdown, block).then(
      (dispose) => this.disposers.push(dispose),
      () => void (block.textContent = citation.text ?? ""), // plain text, at least
    );
    return view;
  }
}
