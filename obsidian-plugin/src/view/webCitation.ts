/**
 * A web citation: a web search result, or a page of a web source beside the vault (online
 * documentation, `kind: "web"` with its `collection`, section `heading` and passage). It is
 * not a note: it opens in the browser (`window.open`, which Obsidian hands to the system
 * browser on desktop and mobile), never through `openLinkText`, which would create a note
 * named after the URL. Only http(s) URLs are opened.
 */
import type { Citation } from "../client";

export type WebCitation = Extract<Citation, { kind: "web" }>;

/** The URL when it is http(s), else null (`javascript:`, `file:`, junk: never opened). */
export function safeExternalUrl(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch {
    return null;
  }
}

/** What the citation list shows: the page's title and the cited section (`Install › Troubleshooting`);
 * without a title, the URL's host and path. */
export function webCitationLabel(citation: WebCitation): string {
  const section = (citation.heading ?? "").split(" > ").pop()?.trim() ?? "";
  let title = citation.title.trim();
  if (!title) {
    try {
      const parsed = new URL(citation.url);
      title = `${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
    } catch {
      title = citation.url;
    }
  }
  return section && section !== title ? `${title} › ${section}` : title;
}

/** The link's tooltip: the URL, and the source it came from (a web source's collection). */
export function webCitationTooltip(citation: WebCitation): string {
  return citation.collection ? `${citation.url} (${citation.collection})` : citation.url;
}

export type OpenUrl = (url: string) => void;

/** Opens in the system browser: Obsidian routes `window.open` of an http(s) URL there. */
export const openInBrowser: OpenUrl = (url) => {
  window.open(url, "_blank", "noopener");
};

/** Open `url` with `open` when it is http(s); whether it was opened. */
export function openExternal(url: string, open: OpenUrl = openInBrowser): boolean {
  const safe = safeExternalUrl(url);
  if (safe === null) return false;
  open(safe);
  return true;
}
