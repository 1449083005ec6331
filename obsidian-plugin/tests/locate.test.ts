/**
 * Finding the vault-rag program when PATH lacks it (`sidecar/locate.ts`): the folders searched
 * per platform with a probe over a set of files, and, with real files and processes, the
 * supervisor starting a program found in ~/.local/bin with an empty PATH, and saying what to
 * install when it is nowhere.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterEach, beforeAll, describe, expect, it } from "vitest";

import { SidecarClient } from "../src/client";
import { candidateFolders, type FileProbe, installCommand, type LocateEnv, locateProgram } from "../src/sidecar/locate";
import { nodeLauncher, nodeLocator } from "../src/sidecar/nodeLauncher";
import { supervisorFor } from "../src/sidecar/wiring";

const ARGV = ["vault-rag", "serve", "--vault", "/v", "--port", "0"];

/** A file system of these files (and the folders above them). */
function probe(files: string[]): FileProbe {
  return {
    isFile: async (p) => files.includes(p),
    list: async (dir) => [...new Set(files.filter((f) => f.startsWith(`${dir}/`) || f.startsWith(`${dir}\\`)).map((f) => f.slice(dir.length + 1).split(/[\\/]/)[0] as string))],
  };
}

const LINUX: LocateEnv = { platform: "linux", home: "/home/me", path: "/usr/bin:/bin" };
const MAC: LocateEnv = { platform: "darwin", home: "/Users/me", path: "/usr/bin:/bin" };
const WIN: LocateEnv = {
  platform: "win32",
  home: "C:\\Users\\me",
  path: "C:\\Windows\\system32",
  appData: "C:\\Users\\me\\AppData\\Roaming",
  localAppData: "C:\\Users\\me\\AppData\\Local",
};

describe("locateProgram", () => {
  it.each([
    ["PATH", LINUX, "/bin/vault-rag"],
    ["pipx / pip --user on Linux", LINUX, "/home/me/.local/bin/vault-rag"],
    ["Homebrew on Apple silicon", MAC, "/opt/homebrew/bin/vault-rag"],
    ["pip --user on macOS", MAC, "/Users/me/Library/Python/3.12/bin/vault-rag"],
    ["/usr/local/bin", MAC, "/usr/local/bin/vault-rag"],
    ["pip --user on Windows", WIN, "C:\\Users\\me\\AppData\\Roaming\\Python\\Python312\\Scripts\\vault-rag.exe"],
    ["pipx on Windows", WIN, "C:\\Users\\me\\.local\\bin\\vault-rag.exe"],
    ["python.org Python on Windows", WIN, "C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python313\\Scripts\\vault-rag.exe"],
  ])("finds it through %s", async (_where, env, file) => {
    const located = await locateProgram(ARGV, "", env, probe([file]), "0.1.0");
    expect(located).toEqual({ argv: [file, ...ARGV.slice(1)], found: file });
  });

  it("prefers PATH, then the per-user folders, in order", async () => {
    const files = ["/home/me/.local/bin/vault-rag", "/usr/local/bin/vault-rag", "/usr/bin/vault-rag"];
    expect(await locateProgram(ARGV, "", LINUX, probe(files), "0.1.0")).toMatchObject({ found: "/usr/bin/vault-rag" });
    expect(await candidateFolders(LINUX, probe([]))).toEqual(["/usr/bin", "/bin", "/home/me/.local/bin", "/opt/homebrew/bin", "/usr/local/bin"]);
  });

  it("takes the path from the settings first, and says so when that file is gone", async () => {
    const chosen = "/srv/venv/bin/vault-rag";
    expect(await locateProgram(ARGV, chosen, LINUX, probe([chosen, "/bin/vault-rag"]), "0.1.0")).toMatchObject({ found: chosen });
    const gone = await locateProgram(ARGV, chosen, LINUX, probe(["/bin/vault-rag"]), "0.1.0");
    expect(gone).toEqual({ missing: expect.stringContaining(`(${chosen}) does not exist`) });
  });

  it("runs another program or a path as written", async () => {
    const own = ["python3", "-m", "vault_rag", "serve"];
    expect(await locateProgram(own, "/x/vault-rag", LINUX, probe([]), "0.1.0")).toEqual({ argv: own, found: null });
    const full = ["/opt/v/bin/vault-rag", "serve"];
    expect(await locateProgram(full, "", LINUX, probe([]), "0.1.0")).toEqual({ argv: full, found: null });
  });

  it("says what is missing and what to run when it is nowhere", async () => {
    const located = await locateProgram(ARGV, "", LINUX, probe([]), "0.2.0");
    expect(located).toEqual({ missing: expect.stringContaining("is not installed") });
    const message = "missing" in located ? located.missing : "";
    expect(message).toContain(installCommand("0.2.0"));
    expect(message).toContain("pipx install vault_rag-0.2.0-py3-none-any.whl");
    expect(message).toContain("Settings → Vault RAG → vault-rag program");
  });
});

const STAND_IN = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers/standInSidecar.mjs");
const TOKEN = "locate-token-0123456789abcdef";

describe("the supervisor with a program found off PATH (real files and processes)", () => {
  const saved = { HOME: process.env.HOME, PATH: process.env.PATH, USERPROFILE: process.env.USERPROFILE };
  const cleanups: (() => Promise<unknown> | void)[] = [];

  beforeAll(() => {
    const g = globalThis as unknown as { window?: unknown };
    g.window ??= globalThis;
    (g.window as { require?: unknown }).require = createRequire(import.meta.url);
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    Object.assign(process.env, saved);
    delete process.env.STANDIN_TOKEN;
  });

  async function home(withProgram: boolean) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "vault-rag-home-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    if (withProgram) {
      await mkdir(path.join(dir, ".local", "bin"), { recursive: true });
      const program = path.join(dir, ".local", "bin", "vault-rag");
      await writeFile(program, `#!/bin/sh\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`);
      await chmod(program, 0o755);
    }
    process.env.HOME = dir;
    process.env.PATH = path.join(dir, "no-such-dir"); // as Obsidian started from a desktop menu
    let url = "http://127.0.0.1:9";
    const client = new SidecarClient(() => ({ url, token: "" }));
    const locate = nodeLocator(() => "", "0.1.0");
    expect(locate).not.toBeNull();
    const supervisor = supervisorFor(client, {
      launcher: nodeLauncher(),
      locate: locate ?? undefined,
      command: () => `vault-rag serve --vault ${dir} --port 0`,
      cwd: () => dir,
      saveToken: async () => undefined,
      useUrl: (found) => void (url = found ?? url),
      pollMs: 50,
      startTimeoutMs: 20_000,
    });
    cleanups.push(() => supervisor.stop());
    return { dir, supervisor, client };
  }

  it.skipIf(process.platform === "win32")("starts vault-rag from ~/.local/bin when PATH lacks it", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const { dir, supervisor } = await home(true);
    await supervisor.ensure();
    expect(supervisor.state).toMatchObject({ kind: "running", ours: true });
    expect(supervisor.log.text).toContain(`found vault-rag at ${path.join(dir, ".local", "bin", "vault-rag")}`);
  });

  it.skipIf(process.platform === "win32")("says what to install when vault-rag is nowhere", async () => {
    const { supervisor } = await home(false);
    await supervisor.ensure();
    expect(supervisor.state).toEqual({ kind: "failed", message: expect.stringContaining("pipx install vault_rag-0.1.0-py3-none-any.whl") });
  });
});
