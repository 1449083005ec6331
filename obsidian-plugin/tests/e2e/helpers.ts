/**
 * Helpers of the real-browser end-to-end test (`pane.e2e.test.ts`, `npm run test:e2e`): find the
 * Python sidecar and Chromium, start `vault-rag serve` on a copy of the sample vault, serve
 * `test-output/` over HTTP, and stop everything again. Node only; nothing here imports the plugin.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export const PLUGIN_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const REPO_ROOT = path.resolve(PLUGIN_ROOT, "..");
/** What `npm run build:browser-test` writes, served as the page's origin. */
export const PAGE_DIR = path.join(PLUGIN_ROOT, "test-output");
/** Screenshot, and on failure the page HTML and the sidecar's log. */
export const ARTIFACT_DIR = path.join(PAGE_DIR, "e2e");
export const CHROMIUM = process.env.VAULT_RAG_CHROMIUM || "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export interface Environment {
  python: string;
  chromium: string;
  /** Set when the test cannot run here (no sidecar venv, no Chromium, no browser bundle). */
  skipReason: string | null;
}

/** The sidecar's Python (`VAULT_RAG_PYTHON`, else the repository's `.venv`) and Chromium. */
export function findEnvironment(): Environment {
  const python = process.env.VAULT_RAG_PYTHON || path.join(REPO_ROOT, ".venv/bin/python");
  const missing: string[] = [];
  if (!existsSync(python)) {
    missing.push(`no Python sidecar at ${python} (set VAULT_RAG_PYTHON, or create ../.venv with the sidecar installed)`);
  }
  if (!existsSync(CHROMIUM)) {
    missing.push(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set VAULT_RAG_CHROMIUM)`);
  }
  if (missing.length === 0 && !existsSync(path.join(PAGE_DIR, "pane.js"))) {
    missing.push(`no browser bundle in ${PAGE_DIR} (run "npm run build:browser-test", or "npm run test:e2e")`);
  }
  return { python, chromium: CHROMIUM, skipReason: missing.length ? missing.join("; ") : null };
}

/** A TCP port nobody listens on right now (on 127.0.0.1). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// -- the page server ------------------------------------------------------------------------------

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".map": "application/json",
};

export interface PageServer {
  port: number;
  /** `http://localhost:<port>`: the origin the sidecar must allow. */
  origin: string;
  close(): Promise<void>;
}

/** A static file server for `root` on 127.0.0.1 (a free port), reached as `http://localhost:<port>`. */
export async function servePages(root: string): Promise<PageServer> {
  const server = http.createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? "/", "http://localhost");
      if (url.pathname === "/favicon.ico") {
        response.writeHead(204).end(); // no console error for the icon the browser asks for
        return;
      }
      const file = path.resolve(root, `.${decodeURIComponent(url.pathname)}`);
      if (request.method !== "GET" || !file.startsWith(root + path.sep)) {
        response.writeHead(request.method === "GET" ? 403 : 405).end();
        return;
      }
      try {
        const body = await readFile(file);
        response.writeHead(200, {
          "content-type": TYPES[path.extname(file)] ?? "application/octet-stream",
          "cache-control": "no-store",
        });
        response.end(body);
      } catch {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("the page server has no port");
  return {
    port: address.port,
    origin: `http://localhost:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// -- the sidecar ----------------------------------------------------------------------------------

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
  const args = ["-m", "vault_rag", "serve", "--vault", vault, "--data-dir", dataDir, "--port", String(port)];
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

// -- in the page ----------------------------------------------------------------------------------

/**
 * Runs in the page before its own scripts (`page.addInitScript`): records every state the
 * progress line and the answer of the latest turn go through (a MutationObserver sees each
 * change the pane makes, however fast the stream ends), with times. Plain JavaScript in a
 * string, so no transpiler helper leaks into the page.
 */
export const RECORDER_SCRIPT = `
(() => {
  const e2e = { progress: [], answers: [], events: [], final: null, t0: performance.now() };
  window.__e2e = e2e;
  const last = (list) => (list.length ? list[list.length - 1].text : null);
  const take = () => {
    const turns = document.querySelectorAll('[data-testid="turn"]');
    const turn = turns[turns.length - 1];
    if (!turn) return;
    const t = Math.round(performance.now() - e2e.t0);
    const progress = turn.querySelector('[data-testid="progress"]');
    const answer = turn.querySelector('[data-testid="answer"]');
    const p = progress ? progress.textContent : "";
    const a = answer ? answer.textContent : "";
    if (p !== last(e2e.progress)) e2e.progress.push({ t, text: p });
    if (a !== last(e2e.answers)) e2e.answers.push({ t, text: a });
  };
  new MutationObserver(take).observe(document, { subtree: true, childList: true, characterData: true });
})();
`;

/**
 * Runs in the page once it is mounted (again after a reload: a new page has a new client): wraps
 * the pane's client so every request (in \`requests\`) and every stream event the pane receives
 * is also recorded (type, time, delta length, the final answer and its id).
 */
export const STREAM_TAP_SCRIPT = `
(() => {
  const e2e = window.__e2e;
  const client = window.vaultRag.client;
  if (client.__tapped) return true;
  client.__tapped = true;
  e2e.requests = e2e.requests || [];
  const ask = client.ask.bind(client);
  client.ask = async function* (request, signal) {
    e2e.requests.push(JSON.parse(JSON.stringify(request)));
    for await (const event of ask(request, signal)) {
      const t = Math.round(performance.now() - e2e.t0);
      const entry = { type: event.type, t };
      if (event.type === "delta") entry.chars = event.text.length;
      if (event.type === "progress") entry.node = event.node;
      if (event.type === "final") e2e.final = { answer: event.answer, answerId: event.answerId, citations: event.citations };
      if (event.type === "error") entry.message = event.message;
      e2e.events.push(entry);
      yield event;
    }
  };
  return true;
})()
`;
