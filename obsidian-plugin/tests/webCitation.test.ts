// @vitest-environment happy-dom
/**
 * Web citations (issue 42): a page of a web source beside the vault, as `/v1/ask` sends it
 * (`graph/sources.citation_of`: `kind: "web"` with its collection, section and passage), and a
 * web search result. In a turn both open in the browser, never as a note.
 */
import { afterEach, describe, expect, it, vi } from "vitest";

import { parseCitations } from "../src/client";
import { openExternal, safeExternalUrl, webCitationLabel, webCitationTooltip, type WebCitation } from "../src/view/webCitation";
import { testTurn } from "./helpers/turnView";

afterEach(() => {
  document.body.innerHTML = "";
  vi.restoreAllMocks();
});

/** A web source's page, as `/v1/ask` cites it. */
const PAGE = {
  kind: "web",
  url: "http://127.0.0.1:8123/docs/install.html#troubleshooting",
  title: "Installation — Widget docs",
  cite: "http://127.0.0.1:8123/docs/install.html#troubleshooting",
  doc_id: "c9",
  collection: "widget",
  source_kind: "web",
  heading: "Installation > Troubleshooting",
  chunk_id: "c9",
  text: "If the quokka compiler is missing, install it first.",
};
const SEARCH = { kind: "web", url: "https://dev.epicgames.com/x", title: "Docs", cite: "https://dev.epicgames.com/x", doc_id: "w" };

function web(record: Record<string, unknown>): WebCitation {
  const [citation] = parseCitations([record]);
  if (!citation || citation.kind !== "web") throw new Error("not a web citation");
  return citation;
}

describe("web citations", () => {
  it("keeps a web source's collection, section and passage; a search result has none", () => {
    expect(web(PAGE)).toEqual({
      kind: "web",
      url: PAGE.url,
      title: PAGE.title,
      cite: PAGE.cite,
      collection: "widget",
      heading: "Installation > Troubleshooting",
      text: PAGE.text,
    });
    expect(web(SEARCH)).toEqual({ kind: "web", url: SEARCH.url, title: "Docs", cite: SEARCH.url });
  });

  it("labels the page and its section, and says where it came from", () => {
    expect(webCitationLabel(web(PAGE))).toBe("Installation — Widget docs › Troubleshooting");
    expect(webCitationTooltip(web(PAGE))).toBe(`${PAGE.url} (widget)`);
    expect(webCitationLabel(web(SEARCH))).toBe("Docs");
    expect(webCitationTooltip(web(SEARCH))).toBe(SEARCH.url);
    expect(webCitationLabel(web({ ...SEARCH, title: "" }))).toBe("dev.epicgames.com/x");
    expect(webCitationLabel(web({ ...PAGE, heading: "Installation — Widget docs" }))).toBe("Installation — Widget docs");
  });

  it("opens only http(s) URLs", () => {
    const opened: string[] = [];
    expect(openExternal(PAGE.url, (url) => opened.push(url))).toBe(true);
    for (const bad of ["javascript:alert(1)", "file:///etc/passwd", "obsidian://open?vault=x", "not a url"]) {
      expect(safeExternalUrl(bad)).toBeNull();
      expect(openExternal(bad, (url) => opened.push(url))).toBe(false);
    }
    expect(opened).toEqual([PAGE.url]);
  });

  it("uses window.open by default", () => {
    const open = vi.spyOn(window, "open").mockImplementation(() => null);
    expect(openExternal(SEARCH.url)).toBe(true);
    expect(open).toHaveBeenCalledWith(SEARCH.url, "_blank", "noopener");
  });
});

function turn(openUrl?: (url: string) => void) {
  return testTurn("how do I install it?", openUrl ? { openUrl } : {});
}

describe("a web citation in a turn", () => {
  it("opens the page in the browser, not as a note, on a click and a middle click", () => {
    const opened: string[] = [];
    const { view, actions } = turn((url) => opened.push(url));
    const citations = parseCitations([PAGE, SEARCH]);
    view.apply({ type: "final", answer: `Install it first (${PAGE.url}).`, answerId: "a1", threadId: "t", citations, usage: null, data: {} });
    const links = Array.from(view.citationsEl.querySelectorAll<HTMLAnchorElement>('[data-testid="citation"]'));
    expect(links.map((a) => a.dataset.kind)).toEqual(["web", "web"]);
    const [page, search] = links as [HTMLAnchorElement, HTMLAnchorElement];
    expect(page.textContent).toBe("Installation — Widget docs › Troubleshooting");
    expect(page.getAttribute("href")).toBe(PAGE.url);
    expect(page.dataset.collection).toBe("widget");
    expect(page.title).toBe(`${PAGE.url} (widget)`);

    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    page.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true); // not followed inside Obsidian's window
    search.dispatchEvent(new MouseEvent("auxclick", { bubbles: true, cancelable: true, button: 1 }));
    search.dispatchEvent(new MouseEvent("auxclick", { bubbles: true, cancelable: true, button: 2 })); // right click: nothing
    expect(opened).toEqual([PAGE.url, SEARCH.url]);
    expect(actions.openNote).not.toHaveBeenCalled();
  });

  it("falls back to window.open and never opens a javascript: URL", () => {
    const open = vi.spyOn(window, "open").mockImplementation(() => null);
    const { view, actions } = turn();
    const citations = parseCitations([PAGE, { ...SEARCH, url: "javascript:alert(1)" }]);
    view.apply({ type: "final", answer: "See the docs.", answerId: "a1", threadId: "t", citations, usage: null, data: {} });
    const links = Array.from(view.citationsEl.querySelectorAll<HTMLAnchorElement>('[data-testid="citation"]'));
    for (const link of links) link.click();
    expect(open).toHaveBeenCalledTimes(1);
    expect(open).toHaveBeenCalledWith(PAGE.url, "_blank", "noopener");
    expect(actions.openNote).not.toHaveBeenCalled();
  });
});
