/**
 * Who embeds whom, kept up to date note by note (from `metadataCache`'s `resolve` events), so
 * a save finds the notes whose resolved text contains it without walking the vault.
 *
 * Edges are the resolved targets of each note's `![[embeds]]`; an embed whose target does not
 * exist (yet) is kept by its link path, so creating that note finds the notes waiting for it.
 */

export interface EmbedEdges {
  /** Vault paths of the notes the source's embeds resolve to. */
  resolved: readonly string[];
  /** Link paths of embeds that resolve to nothing (a note not created yet). */
  unresolved: readonly string[];
}

/** How an unresolved link path is looked up: lower case, without `.md`. */
function linkKey(linkpath: string): string {
  return linkpath
    .trim()
    .replace(/\.md$/i, "")
    .toLowerCase();
}

/** The keys a note path answers to: its name, and its full path (both without `.md`). */
function pathKeys(path: string): string[] {
  const full = linkKey(path);
  const name = full.slice(full.lastIndexOf("/") + 1);
  return name === full ? [full] : [name, full];
}

export class EmbedIndex {
  private readonly targets = new Map<string, EmbedEdges>();
  /** target path → sources embedding it. */
  private readonly sources = new Map<string, Set<string>>();
  /** unresolved link key → sources waiting for it. */
  private readonly waiting = new Map<string, Set<string>>();

  /** Replace the edges of `source`. */
  set(source: string, edges: EmbedEdges): void {
    this.remove(source);
    if (edges.resolved.length === 0 && edges.unresolved.length === 0) return;
    this.targets.set(source, edges);
    for (const target of edges.resolved) add(this.sources, target, source);
    for (const link of edges.unresolved) add(this.waiting, linkKey(link), source);
  }

  /** `source` is gone: drop its own edges (notes embedding it keep theirs until re-resolved). */
  remove(source: string): void {
    const edges = this.targets.get(source);
    if (edges === undefined) return;
    this.targets.delete(source);
    for (const target of edges.resolved) drop(this.sources, target, source);
    for (const link of edges.unresolved) drop(this.waiting, linkKey(link), source);
  }

  /** A note moved: as a source, and as the target of the notes embedding it. */
  rename(from: string, to: string): void {
    const edges = this.targets.get(from);
    if (edges !== undefined) {
      this.remove(from);
      this.set(to, edges);
    }
    const embedding = this.sources.get(from);
    if (embedding === undefined) return;
    for (const source of [...embedding]) {
      const own = this.targets.get(source);
      if (own === undefined) continue;
      this.set(source, { ...own, resolved: own.resolved.map((target) => (target === from ? to : target)) });
    }
  }

  /** The notes that embed `path` directly: resolved to it, or waiting for its name. */
  directEmbedders(path: string): string[] {
    const found = new Set(this.sources.get(path) ?? []);
    for (const key of pathKeys(path)) for (const source of this.waiting.get(key) ?? []) found.add(source);
    found.delete(path);
    return [...found];
  }

  /** The notes whose resolved text contains `path`: its embedders, theirs, and so on. */
  embedders(path: string, maxDepth = 10): string[] {
    const found = new Set<string>();
    let frontier = [path];
    for (let depth = 0; depth < maxDepth && frontier.length > 0; depth++) {
      const next: string[] = [];
      for (const target of frontier) {
        for (const source of this.directEmbedders(target)) {
          if (source === path || found.has(source)) continue;
          found.add(source);
          next.push(source);
        }
      }
      frontier = next;
    }
    return [...found];
  }

  /** Notes with at least one embed. */
  get size(): number {
    return this.targets.size;
  }
}

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (set === undefined) map.set(key, (set = new Set()));
  set.add(value);
}

function drop(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (set === undefined) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
