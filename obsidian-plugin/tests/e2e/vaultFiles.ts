/**
 * Files of the end-to-end tests: the vault copy's metadata for the page, its markdown files and
 * front matter, and the artifacts (screenshots, logs) kept in `test-output/e2e/`.
 */
import { execFile } from "node:child_process";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

import { ARTIFACT_DIR, REPO_ROOT } from "./environment";
import { sidecarEnv } from "./sidecarProcess";

const run = promisify(execFile);

// -- the vault's metadata for the page ------------------------------------------------------------

/**
 * What Obsidian's `metadataCache` would hold for the vault copy, for the page (`&metadata=`):
 * each note's headings (the repository's own CachedMetadata generator,
 * scripts/gen_cached_metadata.py, on the resolver's markdown-it parser), its mtime, and
 * `resolvedLinks` (its `[[links]]` resolved the way Obsidian does, the sidecar's `NoteIndex`).
 */
export async function vaultMetadata(python: string, vault: string, out: string): Promise<void> {
  const script = [
    "import json, os, sys",
    `sys.path.insert(0, ${JSON.stringify(path.join(REPO_ROOT, "scripts"))})`,
    "from gen_cached_metadata import note_metadata",
    "from vault_rag.vault.links import NoteIndex, parse_link",
    "from vault_rag.vault.listing import iter_note_paths",
    "from vault_rag.vault.reader import read_note",
    "vault = sys.argv[1]",
    "paths = list(iter_note_paths(__import__('pathlib').Path(vault)))",
    "index = NoteIndex(paths)",
    "notes, resolved = {}, {}",
    "for p in paths:",
    "    meta = note_metadata(read_note(__import__('pathlib').Path(vault), p).text)",
    "    notes[p] = {'mtime': int(os.stat(os.path.join(vault, p)).st_mtime * 1000),",
    "                'headings': [{'heading': h['heading'], 'level': h['level']} for h in meta.get('headings', [])]}",
    "    links = resolved.setdefault(p, {})",
    "    for link in meta.get('links', []):",
    "        target = index.resolve(parse_link(link['link'])[0], p) if parse_link(link['link'])[0] else None",
    "        if target: links[target] = links.get(target, 0) + 1",
    "json.dump({'notes': notes, 'resolvedLinks': resolved}, open(sys.argv[2], 'w', encoding='utf-8'), ensure_ascii=False)",
  ].join("\n");
  await run(python, ["-c", script, vault, out], { env: sidecarEnv({}) });
}

// -- files ----------------------------------------------------------------------------------------

/** Every `.md` file under `dir`, relative to it ("/"-separated); none when it does not exist. */
export async function markdownFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path.join(dir, sub), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(rel);
      else if (entry.name.endsWith(".md")) found.push(rel);
    }
  };
  await walk("");
  return found.sort();
}

/** Parse a note's YAML frontmatter with the sidecar's Python (PyYAML): the mapping, or an error. */
export async function parseFrontmatter(python: string, file: string): Promise<Record<string, unknown>> {
  const script = [
    "import json, sys, yaml",
    "text = open(sys.argv[1], encoding='utf-8').read()",
    "assert text.startswith('---\\n'), 'the note does not start with a --- line'",
    "end = text.find('\\n---\\n', 4)",
    "assert end > 0, 'the frontmatter has no closing --- line'",
    "data = yaml.safe_load(text[4:end + 1])",
    "assert isinstance(data, dict), 'the frontmatter is not a mapping'",
    "print(json.dumps(data, default=str, ensure_ascii=False))",
  ].join("\n");
  const { stdout } = await run(python, ["-c", script, file], { env: sidecarEnv({}) });
  return JSON.parse(stdout) as Record<string, unknown>;
}

export async function saveArtifact(name: string, content: string | Buffer): Promise<string> {
  await mkdir(ARTIFACT_DIR, { recursive: true });
  const file = path.join(ARTIFACT_DIR, name);
  await writeFile(file, content);
  return file;
}

/** Remove what an earlier run left in `test-output/e2e/`. */
export async function clearArtifacts(): Promise<void> {
  await rm(ARTIFACT_DIR, { recursive: true, force: true });
  await mkdir(ARTIFACT_DIR, { recursive: true });
}
