/**
 * Answers never fetch remote content by themselves (issue 13). Rendering an answer with a
 * remote image (`![x](https://…)`, `<img src="https://…">`) would fetch that URL the moment
 * the answer is shown, so a prompt-injected web page could make an answer send the user's data
 * anywhere. Remote images, frames and media become plain links the user may click or not;
 * vault images (`![[x.png]]`, relative paths) are left alone. The sidecar does the same to
 * everything it sends (`graph/safe_markdown.py`); this is the pane's own guard.
 */

const REMOTE = String.raw`(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//`;
const MD_IMAGE = new RegExp(
  String.raw`!\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*<?(` +
    REMOTE +
    String.raw`[^\s)>]*)>?(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`,
  "g",
);
const REF_IMAGE = /!\[((?:[^[\]\n]|\[[^[\]\n]*\])*)\]\[([^\]\n]*)\]/g;
const TAG = /<(img|iframe|video|audio|source|embed|object|image|track|input)\b([^>]*)>/gi;
const CLOSING = /<\/(?:iframe|video|audio|object)\s*>/gi;
const ATTR = /\b(src|srcset|data|poster|href|xlink:href|alt|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
const REMOTE_URL = new RegExp("^" + REMOTE);

function link(text: string, url: string): string {
  const label = text.trim() || url;
  return url.includes(" ") ? `[${label}](<${url}>)` : `[${label}](${url})`;
}

function tag(whole: string, attrsText: string): string {
  const attrs = new Map<string, string>();
  for (const m of attrsText.matchAll(ATTR)) {
    attrs.set(m[1]!.toLowerCase(), m[2] ?? m[3] ?? m[4] ?? "");
  }
  const srcset = (attrs.get("srcset") ?? "").trim();
  const urls = srcset ? [srcset.split(",")[0]!.trim().split(/\s+/)[0]!] : [];
  for (const name of ["src", "data", "poster", "href", "xlink:href"]) urls.push(attrs.get(name) ?? "");
  const remote = urls.map((u) => u.trim()).find((u) => u && REMOTE_URL.test(u));
  if (remote === undefined) return whole; // a vault attachment: nothing remote is fetched
  return link(attrs.get("alt") || attrs.get("title") || "", remote);
}

/** `markdown` with every remote image, frame or media element made a plain link. */
export function neutralizeRemoteImages(markdown: string): string {
  if (!markdown.includes("![") && !markdown.includes("<")) return markdown;
  return markdown
    .replace(MD_IMAGE, (_m, alt: string, url: string) => link(alt, url))
    .replace(REF_IMAGE, (_m, alt: string, ref: string) => `[${alt}][${ref}]`)
    .replace(TAG, (whole, _name: string, attrs: string) => tag(whole, attrs))
    .replace(CLOSING, "");
}
