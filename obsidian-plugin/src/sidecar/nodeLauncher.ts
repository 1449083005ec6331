/**
 * The `Launcher` of the desktop app: Node's `child_process`, which Obsidian's Electron renderer
 * exposes through `require` (feature-detected: none on mobile, or wherever `require` or
 * `child_process` is missing). Programs run directly (no shell), with the app's environment
 * plus the supervisor's variables; `stop()` sends SIGTERM, then SIGKILL after a grace period.
 */
import { Platform } from "obsidian";

import { type FileProbe, type Located, type LocateEnv, locateProgram } from "./locate";
import type { Launcher, ProcessExit, ProcessHandle, RunResult } from "./supervisor";

const STOP_GRACE_MS = 8_000;

/** The parts of Node's `child_process` this uses. */
interface ChildProcessModule {
  spawn(command: string, args: string[], options: Record<string, unknown>): ChildLike;
  execFile(
    file: string,
    args: string[],
    options: Record<string, unknown>,
    callback: (error: (Error & { code?: unknown }) | null, stdout: string, stderr: string) => void,
  ): unknown;
}

interface ChildLike {
  stdout: { setEncoding(encoding: string): void; on(event: "data", listener: (chunk: string) => void): void } | null;
  stderr: { setEncoding(encoding: string): void; on(event: "data", listener: (chunk: string) => void): void } | null;
  exitCode: number | null;
  signalCode: string | null;
  kill(signal?: string): boolean;
  once(event: "exit", listener: (code: number | null, signal: string | null) => void): void;
  once(event: "error", listener: (error: Error) => void): void;
}

interface NodeProcessLike {
  env: Record<string, string | undefined>;
}

/** `child_process` when this app can start programs, else null. */
function childProcess(): ChildProcessModule | null {
  if (!Platform.isDesktopApp || typeof window === "undefined") return null;
  const load = (window as unknown as { require?: (id: string) => unknown }).require;
  if (typeof load !== "function") return null;
  try {
    const module = load("child_process") as Partial<ChildProcessModule>;
    return typeof module.spawn === "function" && typeof module.execFile === "function" ? (module as ChildProcessModule) : null;
  } catch {
    return null;
  }
}

function environment(extra: Record<string, string>): Record<string, string | undefined> {
  const node = (window as unknown as { process?: NodeProcessLike }).process; // Electron: the global process
  return { ...(node?.env ?? {}), ...extra };
}

/** The desktop launcher, or null where programs cannot be started (mobile). */
export function nodeLauncher(): Launcher | null {
  const cp = childProcess();
  if (cp === null) return null;
  return {
    spawn(argv, options, onOutput): ProcessHandle {
      const [program, ...args] = argv as [string, ...string[]];
      const child = cp.spawn(program, args, {
        cwd: options.cwd ?? undefined,
        env: environment(options.env),
        stdio: ["ignore", "pipe", "pipe"],
        windowsHide: true,
      });
      child.stdout?.setEncoding("utf8");
      child.stderr?.setEncoding("utf8");
      child.stdout?.on("data", (chunk) => onOutput("out", chunk));
      child.stderr?.on("data", (chunk) => onOutput("err", chunk));
      const exited = new Promise<ProcessExit>((resolve) => {
        child.once("exit", (code, signal) => resolve({ code, signal }));
        // Could not start at all (no such program, not executable): no "exit" follows.
        child.once("error", (error) => resolve({ code: null, signal: null, error: `could not be started: ${error.message}` }));
      });
      return {
        exited,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill("SIGTERM");
          const timer = window.setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
          await exited;
          window.clearTimeout(timer);
        },
      };
    },
    run(argv, options): Promise<RunResult> {
      const [program, ...args] = argv as [string, ...string[]];
      return new Promise((resolve, reject) => {
        cp.execFile(
          program,
          args,
          { cwd: options.cwd ?? undefined, env: environment(options.env), timeout: options.timeoutMs, windowsHide: true, encoding: "utf8" },
          (error, stdout, stderr) => {
            if (error !== null && typeof error.code !== "number") reject(error); // did not run (ENOENT, timeout)
            else resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
          },
        );
      });
    },
  };
}

/** The parts of Node's `fs/promises` the program search uses. */
interface FsPromises {
  stat(path: string): Promise<{ isFile(): boolean }>;
  readdir(path: string): Promise<string[]>;
}

/** Finding `vault-rag` on this computer (`locate.ts`), or null where programs cannot run. */
export function nodeLocator(programPath: () => string, version: string): ((argv: string[]) => Promise<Located>) | null {
  if (childProcess() === null) return null;
  const load = (window as unknown as { require: (id: string) => unknown }).require;
  let fs: FsPromises;
  try {
    fs = load("fs/promises") as FsPromises;
  } catch {
    return null;
  }
  const probe: FileProbe = {
    isFile: (path) => fs.stat(path).then((s) => s.isFile(), () => false),
    list: (path) => fs.readdir(path).catch(() => []),
  };
  const node = (window as unknown as { process?: NodeProcessLike & { platform?: string } }).process;
  const env = node?.env ?? {};
  const locateEnv: LocateEnv = {
    platform: node?.platform ?? "linux",
    home: env.HOME ?? env.USERPROFILE ?? "",
    path: env.PATH ?? env.Path ?? "",
    appData: env.APPDATA,
    localAppData: env.LOCALAPPDATA,
    pipxBinDir: env.PIPX_BIN_DIR,
  };
  return (argv) => locateProgram(argv, programPath(), locateEnv, probe, version);
}
