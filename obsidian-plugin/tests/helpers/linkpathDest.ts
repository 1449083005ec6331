/**
 * Obsidian's `MetadataCache.getFirstLinkpathDest` rules for the fixture vaults, ported from the
 * Python side (`NoteIndex.resolve` in sidecar/vault_rag/vault/links.py). Inside Obsidian the
 * plugin calls the real method; this port lets the shared fixtures run without Obsidian.
 *
 * 1. an empty link path is the source note itself;
 * 2. candidates: notes whose file name equals the link's last part, case-insensitively, with
 *    `.md` appended when the link has no `.md` extension (or the extension matched nothing);
 * 3. a link without folders and a single candidate resolves to it;
 * 4. `./` and `../` links are tried relative to the source note's folder;
 * 5. an exact vault path wins (a leading `/` means the vault root and allows nothing else);
 * 6. otherwise candidates whose path ends with `/`+link: inside the source folder (or below)
 *    first, then the shortest path, then code-point order.
 */
import { basename, compareCodePoints, dirname, fileExtension } from "../../src/resolver/links";

const NOTE_SUFFIX = ".md";

function norm(text: string): string {
  return text.replace(/\\/g, "/").normalize("NFC").toLowerCase();
}

function rank(a: string, b: string): number {
  return a.length - b.length || compareCodePoints(a, b);
}

export class LinkpathIndex {
  private readonly paths = new Map<string, string>(); // comparison form -> canonical path
  private readonly byName = new Map<string, string[]>(); // lower-case file name -> paths

  constructor(paths: Iterable<string>) {
    for (const raw of paths) {
      const path = raw.replace(/\\/g, "/").normalize("NFC").replace(/^\/+|\/+$/g, "");
      if (!path.toLowerCase().endsWith(NOTE_SUFFIX)) continue;
      const key = norm(path);
      if (this.paths.has(key)) continue;
      this.paths.set(key, path);
      const name = basename(key);
      this.byName.set(name, [...(this.byName.get(name) ?? []), path]);
    }
  }

  /** The note `linkpath` points to from `sourcePath`, or null. */
  resolve(linkpath: string, sourcePath: string): string | null {
    return this.resolveAll(linkpath, sourcePath)[0] ?? null;
  }

  resolveAll(rawLinkpath: string, sourcePath: string): string[] {
    const linkpath = rawLinkpath.trim();
    if (!linkpath) {
      const own = this.paths.get(norm(sourcePath));
      return own ? [own] : [];
    }
    let wanted = norm(linkpath);
    let candidates: string[] = [];
    if (fileExtension(linkpath) === "md") candidates = this.byName.get(basename(wanted)) ?? [];
    if (candidates.length === 0) {
      wanted = norm(linkpath + NOTE_SUFFIX);
      candidates = this.byName.get(basename(wanted)) ?? [];
    }
    if (candidates.length === 0) return [];
    if (!wanted.includes("/") && candidates.length === 1) return [...candidates];

    const sourceDir = norm(dirname(sourcePath));
    if (wanted.startsWith("./") || wanted.startsWith("../")) {
      const relative = joinRelative(sourceDir, wanted);
      const exact = candidates.filter((p) => norm(p) === relative);
      if (exact.length > 0) return exact;
    }
    const rooted = wanted.replace(/^\/+/, "");
    const exact = candidates.filter((p) => norm(p) === rooted);
    if (exact.length > 0) return exact;
    if (wanted.startsWith("/")) return [];

    const near: string[] = [];
    const far: string[] = [];
    for (const path of candidates) {
      const key = norm(path);
      if (key !== rooted && !key.endsWith(`/${rooted}`)) continue;
      const inside = !sourceDir || key.startsWith(`${sourceDir}/`);
      (inside ? near : far).push(path);
    }
    return [...near.sort(rank), ...far.sort(rank)];
  }
}

/** Resolve `./x` and `../x` against the (lower-case) folder of the source note. */
function joinRelative(sourceDir: string, wanted: string): string {
  let folder = sourceDir;
  let rest = wanted.startsWith("./../") ? wanted.slice(2) : wanted;
  if (rest.startsWith("./")) {
    rest = rest.slice(2);
  } else {
    while (rest.startsWith("../")) {
      rest = rest.slice(3);
      folder = dirname(folder);
    }
  }
  return folder ? `${folder}/${rest}` : rest;
}
