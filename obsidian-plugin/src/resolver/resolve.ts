/**
 * Inline `![[embeds]]` (and markdown-style `![](Note.md)` embeds of notes) the way Obsidian
 * renders them, on Obsidian's metadata cache; `%%comments%%` are left out, as Obsidian shows none.
 *
 * The same algorithm as the Python resolver (sidecar/vault_rag/vault/embeds.py); both pass the
 * conformance cases in shared-schemas/fixtures/embeds/, whose README lists every rule.
 * `![[Note]]` is the body without frontmatter, `![[Note#A#B]]` a heading section,
 * `![[Note#^id]]` a block without its marker; `|alias` is ignored. Embedded markdown replaces
 * the `![[...]]` text in place, its later lines prefixed like the embedding line's container.
 * Links to non-markdown files stay silently; anything unresolvable (missing note, heading or
 * block, self-embed, cycle, depth) stays as the original text with a warning.
 */
import { cutComments } from "./comments";
import { buildDoc, bodyRegion, indent, lineEnd, matchRegion, visible } from "./document";
import type { EmbedSite, NoteDoc, Region } from "./document";
import { compareCodePoints, isNoteLink, normalizeNotePath, parseLink } from "./links";
import { resolveSubpathLike } from "./subpath";
import type {
  EmbedWarning,
  EmbedWarningCode,
  ResolveOptions,
  ResolveSubpath,
  ResolvedNote,
  TFileLike,
  VaultAccess,
} from "./types";

export const MAX_EMBED_DEPTH = 10;
export const MAX_EMBEDS = 1000;

interface Skipped {
  skipped: true;
  code: EmbedWarningCode;
  reason: string;
}

/** Resolve every embed of `file`. Never rejects for a bad embed; only an abort rejects. */
export async function resolveNote<F extends TFileLike>(
  vault: VaultAccess<F>,
  file: F,
  options: ResolveOptions = {},
): Promise<ResolvedNote> {
  return new Resolver(vault, options).run(file);
}

class Resolver<F extends TFileLike> {
  private readonly docs = new Map<string, NoteDoc<F> | Skipped>();
  private readonly warnings: EmbedWarning[] = [];
  private readonly dependencies = new Set<string>();
  private readonly resolveSubpath: ResolveSubpath;
  private readonly maxDepth: number;
  private readonly maxEmbeds: number;
  private inlined = 0;

  constructor(
    private readonly vault: VaultAccess<F>,
    private readonly options: ResolveOptions,
  ) {
    this.resolveSubpath = options.resolveSubpath ?? resolveSubpathLike;
    this.maxDepth = options.maxDepth ?? MAX_EMBED_DEPTH;
    this.maxEmbeds = options.maxEmbeds ?? MAX_EMBEDS;
  }

  async run(file: F): Promise<ResolvedNote> {
    const path = normalizeNotePath(file.path);
    const doc = await this.doc(file);
    if ("skipped" in doc) {
      const warning = { code: doc.code, message: doc.reason, note: path, target: null, line: null };
      return { path, text: "", dependencies: [], warnings: [warning] };
    }
    const pieces = await this.expand(doc, bodyRegion(doc), [path]);
    this.dependencies.delete(path);
    return {
      path,
      text: pieces.join(""),
      dependencies: [...this.dependencies].sort(compareCodePoints),
      warnings: dedupe(this.warnings),
    };
  }

  private async doc(file: F): Promise<NoteDoc<F> | Skipped> {
    const path = normalizeNotePath(file.path);
    let doc = this.docs.get(path);
    if (doc === undefined) {
      doc = await this.load(file);
      this.docs.set(path, doc);
    }
    return doc;
  }

  private async load(file: F): Promise<NoteDoc<F> | Skipped> {
    let text: string;
    try {
      text = await this.vault.read(file);
    } catch (error) {
      return { skipped: true, code: "unreadable", reason: `cannot read ${file.path}: ${String(error)}` };
    }
    const cache = this.vault.getFileCache(file);
    if (cache === null) {
      return { skipped: true, code: "unreadable", reason: `${file.path} is not in the metadata cache yet` };
    }
    return buildDoc(file, text, cache);
  }

  private warn(code: EmbedWarningCode, message: string, doc: NoteDoc<F>, site: EmbedSite): void {
    this.warnings.push({ code, message, note: doc.path, target: site.inner, line: site.line + 1 });
  }

  /** Pieces of `region` of `doc` with its embeds inlined; `chain` holds the keys of the
   * embeds being expanded, the resolved note first. */
  private async expand(doc: NoteDoc<F>, region: Region, chain: string[]): Promise<string[]> {
    const out: string[] = [];
    for (let index = region.first; index < region.stop; index++) {
      const line = doc.lines[index] ?? "";
      let pos = indent(line, region.dedent)[0];
      const end = lineEnd(doc, region, index);
      const cuts = doc.comments.get(index);
      if (cuts !== undefined && cutComments(line, cuts, pos, end).trim() === "") continue; // comment only
      for (const site of doc.embeds.get(index) ?? []) {
        if (site.col < pos || site.col + site.raw.length > end) continue;
        const inserted = await this.embed(doc, site, chain);
        if (inserted === null) continue;
        out.push(cutComments(line, cuts, pos, site.col));
        const prefix = site.prefix.slice(indent(site.prefix, region.dedent)[0]);
        inserted.forEach((piece, k) => {
          out.push(piece);
          if (prefix && piece.endsWith("\n")) {
            // A blank embedded line gets `>` or nothing, not trailing spaces.
            const blank = inserted[k + 1]?.startsWith("\n") ?? false;
            out.push(blank ? prefix.trimEnd() : prefix);
          }
        });
        pos = site.col + site.raw.length;
      }
      out.push(cutComments(line, cuts, pos, end) + (index < region.stop - 1 ? "\n" : ""));
    }
    return out.filter((piece) => piece !== "");
  }

  /** The embedded pieces for one embed, or null when it stays as written. */
  private async embed(doc: NoteDoc<F>, site: EmbedSite, chain: string[]): Promise<string[] | null> {
    this.options.signal?.throwIfAborted();
    const { path: linkpath, parts } = parseLink(site.link);
    const file = linkpath ? this.vault.getFirstLinkpathDest(linkpath.normalize("NFC"), doc.file.path) : doc.file;
    if (file === null) {
      if (isNoteLink(linkpath)) this.warn("missing_note", `no note named '${linkpath}'`, doc, site);
      return null;
    }
    if (file.extension.toLowerCase() !== "md") return null; // images, PDFs, canvases…
    if (this.options.isExcluded?.(normalizeNotePath(file.path)) === true) {
      this.warn("missing_note", `${linkpath || file.path} is in an excluded folder`, doc, site);
      return null;
    }
    const target = await this.doc(file);
    if ("skipped" in target) {
      this.warn(target.code, `embedded note ${file.path} was skipped: ${target.reason}`, doc, site);
      return null;
    }
    const match = parts.length > 0 ? this.resolveSubpath(target.cache, `#${parts.join("#")}`) : null;
    const region = parts.length > 0 ? (match ? matchRegion(target, match) : null) : bodyRegion(target);
    if (region === null) {
      const block = parts.length === 1 && (parts[0] ?? "").startsWith("^");
      this.warn(block ? "missing_block" : "missing_heading", `${target.path} has no '${parts.join("#")}'`, doc, site);
      return null;
    }
    const key = parts.length > 0 ? `${target.path}\u0000${region.first}:${region.stop}` : target.path;
    if (target.path === doc.path && region.first <= site.line && site.line < region.stop) {
      this.warn("self_embed", "the embed lies inside what it embeds", doc, site);
      return null;
    }
    if (chain.includes(key)) {
      this.warn("cycle", `${target.path} is already being embedded: ${chain[0] ?? ""}`, doc, site);
      return null;
    }
    if (chain.length > this.maxDepth || this.inlined >= this.maxEmbeds) {
      this.warn("max_depth", `embeds nested deeper than ${this.maxDepth}`, doc, site);
      return null;
    }
    this.inlined += 1;
    const shown: number[] = [];
    for (let i = region.first; i < region.stop; i++) if (visible(target, region, i)) shown.push(i);
    const firstShown = shown[0];
    const lastShown = shown[shown.length - 1];
    // Leading and trailing blank lines of the embedded part are dropped.
    const pieces =
      firstShown === undefined || lastShown === undefined
        ? []
        : await this.expand(target, { ...region, first: firstShown, stop: lastShown + 1 }, [...chain, key]);
    this.dependencies.add(target.path);
    return stripTrailingNewlines(pieces);
  }
}

function stripTrailingNewlines(pieces: string[]): string[] {
  for (let last = pieces[pieces.length - 1]; last?.endsWith("\n"); last = pieces[pieces.length - 1]) {
    const trimmed = last.replace(/\n+$/, "");
    if (trimmed) {
      pieces[pieces.length - 1] = trimmed;
    } else {
      pieces.pop();
    }
  }
  return pieces;
}

/** A note embedded twice reports each (code, note, target, line) once. */
function dedupe(warnings: EmbedWarning[]): EmbedWarning[] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key = JSON.stringify([w.code, w.note, w.target, w.line]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
