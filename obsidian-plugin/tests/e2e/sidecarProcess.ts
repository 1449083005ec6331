/**
 * The real sidecar of the end-to-end tests: `vault-rag serve` on a copy of the sample vault, the
 * launcher the page starts its own with, waiting for the index, and stopping it all again.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { freePort, REPO_ROOT, sleep } from "./environment";

const run = promisify(execFile);

export interface Sidecar {
  url: string;
  port: number;
  token: string;
  /** The copy of the sample vault the sidecar indexes (and "Save as note" writes into). */
  vault: string;
  dataDir: string;
  /** Everything the sidecar printed, stdout and stderr interleaved, with stream tags. */
  log(): string;
  /** Authenticated JSON request to the sidecar (no `Origin`, so CORS does not apply). */
  request(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** End the process, keeping the vault copy and the data dir (a plugin-started sidecar reuses them). */
  kill(): Promise<void>;
  /** The environment the sidecar ran with (its settings file, CORS origins). */
  env: NodeJS.ProcessEnv;
  /** The arguments after the Python executable (`-m vault_rag serve --vault … --data-dir … --port …`). */
  args: string[];
  stop(): Promise<void>;
}

/** The sidecar did not start; `log` is what it printed. */
export class SidecarStartError extends Error {
  constructor(
    message: string,
    readonly log: string,
  ) {
    super(message);
    this.name = "SidecarStartError";
  }
}

export interface SidecarOptions {
  python: string;
  /** Browser origins the sidecar answers (`VAULT_RAG_SERVER_CORS_ORIGINS`). */
  origins: string[];
  /** How long to wait for `/v1/health` (ms). */
  startTimeoutMs?: number;
  /** More `VAULT_RAG_*` settings for the sidecar (e.g. `VAULT_RAG_EMBEDDINGS=hash`). */
  env?: Record<string, string>;
  /** More arguments of `serve` (e.g. `--remote-listen 127.0.0.2:PORT`). */
  serveArgs?: string[];
}

/** The sample vault bundled with the sidecar (`vault_rag.serving.sample.sample_vault_path()`). */
export async function sampleVaultPath(python: string): Promise<string> {
  const { stdout } = await run(python, ["-c", "from vault_rag.serving.sample import sample_vault_path; print(sample_vault_path())"], {
    env: sidecarEnv({}),
  });
  return stdout.trim();
}

/** The environment of every sidecar process: no language model, no web search, no user settings. */
export function sidecarEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // The answer must be the graph's extractive no-LLM answer, whatever the machine configures.
    if (key.startsWith("VAULT_RAG_") || key.startsWith("OPENAI_") || key.startsWith("TAVILY_")) continue;
    env[key] = value;
  }
  return { ...env, PYTHONUNBUFFERED: "1", PYTHONIOENCODING: "utf-8", NO_COLOR: "1", TERM: "dumb", COLUMNS: "200", ...extra };
}

/**
 * Copy the sample vault to a temp dir and start `python -m vault_rag serve` on it (fresh data dir,
 * free port), wait for `/v1/health`, and read the token (the first line of stdout on a first
 * start, else `vault-rag token`).
 */
export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const { python } = options;
  const tmp = await mkdtemp(path.join(os.tmpdir(), "vault-rag-e2e-"));
  const vault = path.join(tmp, "vault");
  const dataDir = path.join(tmp, "data");
  const config = path.join(tmp, "vault-rag.toml");
  await cp(await sampleVaultPath(python), vault, { recursive: true });
  await writeFile(config, "# empty: defaults and the environment only\n");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = sidecarEnv({
    VAULT_RAG_CONFIG: config,
    VAULT_RAG_SERVER_CORS_ORIGINS: JSON.stringify(options.origins),
    ...options.env,
  });
  const args = ["-m", "vault_rag", "serve", "--vault", vault, "--data-dir", dataDir, "--port", String(port), ...(options.serveArgs ?? [])];
  const child: ChildProcess = spawn(python, args, { env, cwd: tmp, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  const lines: string[] = [];
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    lines.push(...chunk.split(/(?<=\n)/).map((line) => `[out] ${line}`));
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    lines.push(...chunk.split(/(?<=\n)/).map((line) => `[err] ${line}`));
  });
  let exited: string | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = `exited with ${signal ?? `code ${code}`}`;
      resolve();
    }),
  );
  const emergencyKill = () => killGroup(child, "SIGKILL");
  process.once("exit", emergencyKill);

  let killed: Promise<void> | null = null;
  const kill = () =>
    (killed ??= (async () => {
      process.removeListener("exit", emergencyKill);
      if (exited === null) {
        killGroup(child, "SIGTERM");
        const timedOut = await Promise.race([exit.then(() => false), sleep(15_000).then(() => true)]);
        if (timedOut) {
          killGroup(child, "SIGKILL");
          await exit;
        }
      }
    })());
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      await kill();
      await rm(tmp, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    })());

  const log = () => lines.join("");
  let token = "";
  const request = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed };
  };

  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 180_000);
    for (;;) {
      if (exited !== null) throw new Error(`the sidecar ${exited} before it answered /v1/health`);
      if (Date.now() > deadline) throw new Error("the sidecar did not answer /v1/health in time");
      try {
        const response = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(2_000) });
        if (response.ok) break;
      } catch {
        // not listening yet
      }
      await sleep(250);
    }
    token = stdout.split("\n")[0]?.trim() ?? "";
    if (!/^[\w-]{20,}$/.test(token)) {
      // Not a first start (or the token line was not first): ask the CLI.
      const result = await run(python, ["-m", "vault_rag", "token", "--vault", vault, "--data-dir", dataDir], { env });
      token = result.stdout.trim().split("\n").pop()?.trim() ?? "";
    }
    if (!token) throw new Error("could not read the sidecar's token");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const logged = log();
    await stop();
    throw new SidecarStartError(`${message}\n--- sidecar log ---\n${logged}`, logged);
  }
  return { url, port, token, vault, dataDir, log, request, kill, env, args, stop };
}

// -- the launcher the plugin gets in the page ------------------------------------------------------

/** The page calls these (`tests/browser/pane-entry.ts` `exposedLauncher`). */
interface PageLike {
  exposeFunction(name: string, callback: (...args: never[]) => unknown): Promise<unknown>;
  evaluate(script: string): Promise<unknown>;
}

/**
 * Give the page's plugin a launcher that starts real processes here (the supervisor's
 * `Launcher`, over playwright's `exposeFunction`): `__vaultRagSpawn` starts `argv` with `env`
 * added to `baseEnv` (own process group), its output and exit are delivered to
 * `window.__vaultRagLauncher`; `__vaultRagStop` ends one (SIGTERM, SIGKILL after 15 s);
 * `__vaultRagRun` runs one to the end. Returns what is still running, to end after the test.
 */
export async function exposeLauncher(page: PageLike, baseEnv: NodeJS.ProcessEnv): Promise<{ running: Map<string, ChildProcess>; stopAll(): Promise<void> }> {
  const running = new Map<string, ChildProcess>();
  const deliver = (call: string) => page.evaluate(call).catch(() => undefined); // the page may be gone
  const ended = new Map<string, Promise<void>>();
  await page.exposeFunction("__vaultRagSpawn", ((id: string, argv: string[], cwd: string | null, env: Record<string, string>) => {
    const [program, ...args] = argv as [string, ...string[]];
    const child = spawn(program, args, { cwd: cwd ?? undefined, env: { ...baseEnv, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    running.set(id, child);
    const emergencyKill = () => killGroup(child, "SIGKILL");
    process.once("exit", emergencyKill);
    for (const [stream, name] of [[child.stdout, "out"], [child.stderr, "err"]] as const) {
      stream?.setEncoding("utf8").on("data", (text: string) => {
        void deliver(`window.__vaultRagLauncher?.output(${JSON.stringify(id)}, ${JSON.stringify(name)}, ${JSON.stringify(text)})`);
      });
    }
    ended.set(
      id,
      new Promise<void>((resolve) => {
        const finish = (exit: { code: number | null; signal: string | null; error?: string }) => {
          process.removeListener("exit", emergencyKill);
          running.delete(id);
          void deliver(`window.__vaultRagLauncher?.exit(${JSON.stringify(id)}, ${JSON.stringify(exit)})`).finally(resolve);
        };
        child.once("exit", (code, signal) => finish({ code, signal }));
        child.once("error", (error) => finish({ code: null, signal: null, error: `could not be started: ${error.message}` }));
      }),
    );
  }) as never);
  const stopOne = async (id: string) => {
    const child = running.get(id);
    if (child !== undefined) {
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), 15_000);
      await ended.get(id);
      clearTimeout(timer);
    }
  };
  await page.exposeFunction("__vaultRagStop", ((id: string) => stopOne(id)) as never);
  await page.exposeFunction("__vaultRagRun", (async (argv: string[], cwd: string | null, env: Record<string, string>, timeoutMs: number) => {
    const [program, ...args] = argv as [string, ...string[]];
    try {
      const { stdout, stderr } = await run(program, args, { cwd: cwd ?? undefined, env: { ...baseEnv, ...env }, timeout: timeoutMs });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      return { code: typeof failed.code === "number" ? failed.code : null, stdout: failed.stdout ?? "", stderr: failed.stderr ?? String(error) };
    }
  }) as never);
  return { running, stopAll: async () => void (await Promise.all([...running.keys()].map(stopOne))) };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal); // the sidecar's own process group (spawned detached)
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

export interface IndexStatus {
  notes: number;
  chunks: number;
  embedded: number;
  pending: number;
  last_error: string | null;
  writer: { state: string; queued: number; reconciled: boolean; done: number; total: number };
}

/** Poll `/v1/status` until the start-up scan is applied and nothing is left to embed. */
export async function waitForIndex(sidecar: Sidecar, timeoutMs: number): Promise<IndexStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: IndexStatus | null = null;
  for (;;) {
    const { status, body } = await sidecar.request("GET", "/v1/status");
    if (status !== 200) throw new Error(`/v1/status answered ${status}: ${JSON.stringify(body)}`);
    last = body as IndexStatus;
    const { writer } = last;
    if (last.notes > 0 && last.pending === 0 && writer.reconciled && writer.queued === 0 && writer.state === "idle") {
      return last;
    }
    if (Date.now() > deadline) {
      throw new Error(`the sample vault was not indexed within ${timeoutMs / 1000} s: ${JSON.stringify(last)}`);
    }
    await sleep(2_000);
  }
}

/**
 * Whether a `POST` route of the sidecar exists: a `GET` on it answers 405 (the route is there,
 * for other methods) or 404 (no such route). Neither runs the route itself.
 */
export async function postRouteExists(sidecar: Sidecar, route: string): Promise<boolean> {
  const { status } = await sidecar.request("GET", route);
  if (status === 405) return true;
  if (status === 404) return false;
  throw new Error(`GET ${route} answered ${status}, expected 404 or 405`);
}
