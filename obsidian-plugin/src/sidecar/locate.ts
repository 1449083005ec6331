/**
 * Finding the `vault-rag` program when Obsidian's PATH lacks it (an app started from a desktop
 * menu often has no login-shell PATH): the path set in the settings first, then PATH, then the
 * usual per-user install folders (pipx's and pip `--user`'s bin folders, Homebrew's, Python's
 * user Scripts folders on Windows). Pure: the file system comes in as a `FileProbe`.
 */

export interface LocateEnv {
  platform: string; // process.platform: "win32", "darwin", "linux"…
  home: string;
  path: string;
  appData?: string; // %APPDATA%
  localAppData?: string; // %LOCALAPPDATA%
  pipxBinDir?: string; // $PIPX_BIN_DIR
}

export interface FileProbe {
  /** Whether `path` is an existing file. */
  isFile(path: string): Promise<boolean>;
  /** The names in folder `path` ([] when it cannot be read). */
  list(path: string): Promise<string[]>;
}

export type Located = { argv: string[]; found: string | null } | { missing: string };

export const PROGRAM = "vault-rag";

/** The one line that installs the sidecar with no checkout (the wheel of this release). */
export function installCommand(version: string): string {
  return `pipx install vault_rag-${version}-py3-none-any.whl`;
}

export function programFile(platform: string): string {
  return platform === "win32" ? `${PROGRAM}.exe` : PROGRAM;
}

function join(platform: string, ...parts: string[]): string {
  const sep = platform === "win32" ? "\\" : "/";
  return parts.map((p, i) => (i === 0 ? p.replace(/[\\/]+$/, "") : p.replace(/^[\\/]+|[\\/]+$/g, ""))).join(sep);
}

/** The folders searched, in order: PATH, then the usual per-user and Homebrew bin folders. */
export async function candidateFolders(env: LocateEnv, probe: FileProbe): Promise<string[]> {
  const win = env.platform === "win32";
  const folders = env.path.split(win ? ";" : ":").filter((dir) => dir.trim() !== "");
  if (env.pipxBinDir) folders.push(env.pipxBinDir);
  if (env.home) folders.push(join(env.platform, env.home, ".local", "bin")); // pipx; pip --user (Linux)
  if (win) {
    // pip --user: %APPDATA%\Python\Python312\Scripts; python.org installs: %LOCALAPPDATA%\Programs\Python\Python312\Scripts
    for (const root of [env.appData && join(env.platform, env.appData, "Python"), env.localAppData && join(env.platform, env.localAppData, "Programs", "Python")]) {
      if (!root) continue;
      const versions = (await probe.list(root)).filter((name) => /^Python3\d+/i.test(name)).sort().reverse();
      for (const version of versions) folders.push(join(env.platform, root, version, "Scripts"));
      folders.push(join(env.platform, root, "Scripts"));
    }
  } else {
    if (env.platform === "darwin" && env.home) {
      // pip --user on macOS: ~/Library/Python/3.12/bin
      const root = join(env.platform, env.home, "Library", "Python");
      const versions = (await probe.list(root)).filter((name) => /^3\.\d+$/.test(name)).sort().reverse();
      for (const version of versions) folders.push(join(env.platform, root, version, "bin"));
    }
    folders.push("/opt/homebrew/bin", "/usr/local/bin");
  }
  return [...new Set(folders)];
}

/**
 * The command to run with its program found. Only a bare `vault-rag` is looked for (a command
 * naming another program or a path is the user's and runs as written); `programPath` (the
 * setting) wins over any search. `missing`: what is missing and what to run, in plain words.
 */
export async function locateProgram(argv: string[], programPath: string, env: LocateEnv, probe: FileProbe, version: string): Promise<Located> {
  const [first, ...rest] = argv;
  if (first !== PROGRAM && first !== programFile(env.platform)) return { argv, found: null };
  const chosen = programPath.trim();
  if (chosen !== "") {
    if (await probe.isFile(chosen)) return { argv: [chosen, ...rest], found: chosen };
    return { missing: `The vault-rag program set in Settings → Vault RAG (${chosen}) does not exist. Choose the right file, or clear the setting.` };
  }
  const folders = await candidateFolders(env, probe);
  for (const folder of folders) {
    const path = join(env.platform, folder, programFile(env.platform));
    if (await probe.isFile(path)) return { argv: [path, ...rest], found: path };
  }
  return { missing: missingMessage(version, folders.length) };
}

/** What the first-run screen says when the program is nowhere to be found. */
export function missingMessage(version: string, searched: number): string {
  return (
    `The Vault RAG sidecar (the vault-rag program) is not installed, or not where Obsidian looks (PATH and ${searched} folders searched). ` +
    `Install it with Python 3.11+: ${installCommand(version)} (the wheel from this plugin's release; pip install --user works too), ` +
    `then start it again, or choose the program in Settings → Vault RAG → vault-rag program.`
  );
}
