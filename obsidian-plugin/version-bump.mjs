// Keeps the release files in step (as obsidian-sample-plugin's version-bump.mjs does):
//   npm version 0.2.0          package.json's "version" → manifest.json here and at the
//                              repository root, and a "0.2.0": minAppVersion entry in both
//                              versions.json files (npm runs this as the "version" script)
//   node version-bump.mjs --check
//                              exit 1 when they disagree (CI, the release workflow)
// Obsidian's community-plugin process reads the root manifest.json and versions.json; the
// release assets are built from obsidian-plugin/.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const read = (path) => JSON.parse(readFileSync(path, "utf8"));
const write = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, "\t")}\n`);

const files = {
  pkg: join(here, "package.json"),
  manifest: join(here, "manifest.json"),
  versions: join(here, "versions.json"),
  rootManifest: join(root, "manifest.json"),
  rootVersions: join(root, "versions.json"),
};

function problems() {
  const out = [];
  const pkg = read(files.pkg);
  const manifest = read(files.manifest);
  const versions = read(files.versions);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (manifest.version !== pkg.version) out.push(`manifest.json version ${manifest.version} ≠ package.json ${pkg.version}`);
  if (versions[manifest.version] !== manifest.minAppVersion) {
    out.push(`versions.json has no "${manifest.version}": "${manifest.minAppVersion}" entry`);
  }
  try {
    if (!same(read(files.rootManifest), manifest)) out.push("../manifest.json differs from obsidian-plugin/manifest.json");
    if (!same(read(files.rootVersions), versions)) out.push("../versions.json differs from obsidian-plugin/versions.json");
  } catch (error) {
    out.push(`root release files: ${error.message}`);
  }
  // What the community directory's review (eslint-plugin-obsidianmd's manifest rules) checks.
  if (/obsidian/i.test(manifest.description)) out.push('manifest description must not contain "Obsidian"');
  // authorUrl is optional (the directory shows none): left out until the project has a public home,
  // rather than a made-up address; when present it must be https.
  if (manifest.authorUrl !== undefined && !/^https:\/\//.test(manifest.authorUrl)) out.push("manifest authorUrl must be an https URL");
  if (!/^\d+\.\d+\.\d+$/.test(manifest.version)) out.push(`version ${manifest.version} is not x.y.z`);
  return out;
}

if (process.argv.includes("--check")) {
  const found = problems();
  for (const problem of found) console.error(`release files: ${problem}`);
  process.exit(found.length === 0 ? 0 : 1);
}

const version = process.env.npm_package_version ?? read(files.pkg).version;
const manifest = read(files.manifest);
manifest.version = version;
const versions = read(files.versions);
versions[version] = manifest.minAppVersion;
for (const path of [files.manifest, files.rootManifest]) write(path, manifest);
for (const path of [files.versions, files.rootVersions]) write(path, versions);
console.log(`release files: ${version} (minAppVersion ${manifest.minAppVersion})`);
