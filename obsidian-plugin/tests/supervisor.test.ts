/**
 * The sidecar's supervisor (`sidecar/supervisor.ts`) with the desktop launcher itself
 * (`sidecar/nodeLauncher.ts`, Node's child_process as Obsidian's `require` gives it) starting
 * real processes: a stand-in of the sidecar program (tests/helpers/standInSidecar.mjs, a real
 * HTTP server on 127.0.0.1 answering /v1/health and /v1/status) and the real client talking to
 * it. The real `vault-rag serve` is what the Chromium e2e starts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterEach, beforeAll, describe, expect, it } from "vitest";

import { SidecarClient } from "../src/client";
import { quoteArg } from "../src/sidecar/command";
import { nodeLauncher } from "../src/sidecar/nodeLauncher";
import { type Launcher, type SupervisorState } from "../src/sidecar/supervisor";
import { supervisorFor } from "../src/sidecar/wiring";

const STAND_IN = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers/standInSidecar.mjs");
const TOKEN = "stand-in-token-0123456789abcdef";

beforeAll(() => {
  // What Obsidian's renderer has: a window with Node's require and process.
  const g = globalThis as unknown as { window?: unknown; require?: unknown };
  g.window ??= globalThis;
  (g.window as { require?: unknown }).require = createRequire(import.meta.url);
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  delete process.env.STANDIN_TOKEN;
  delete process.env.STANDIN_DELAY_MS;
  delete process.env.STANDIN_EXIT;
});

async function setup(
  options: {
    command?: (vault: string, port: number) => string;
    launcher?: Launcher | null;
    startTimeoutMs?: number;
    port?: number;
    token?: string;
  } = {},
) {
  const port = options.port ?? (await freePort());
  const configured = `http://127.0.0.1:${port}`;
  let url = configured;
  const urls: (string | null)[] = [];
  const vault = await mkdtemp(path.join(os.tmpdir(), "vault-rag-supervisor-"));
  cleanups.push(() => rm(vault, { recursive: true, force: true }));
  const settings = { token: options.token ?? "" };
  const saved: string[] = [];
  const states: SupervisorState["kind"][] = [];
  const client = new SidecarClient(() => ({ url, token: settings.token }));
  const command =
    options.command?.(vault, port) ?? `${quoteArg(process.execPath)} ${quoteArg(STAND_IN)} serve --vault ${quoteArg(vault)} --port ${port}`;
  // The plugin's own wiring: health, the proof and the token state asked through the client.
  const supervisor = supervisorFor(client, {
    launcher: options.launcher === undefined ? nodeLauncher() : options.launcher,
    command: () => command,
    cwd: () => vault,
    saveToken: async (token) => {
      saved.push(token);
      settings.token = token;
    },
    onChange: (state) => states.push(state.kind),
    useUrl: (found) => {
      urls.push(found);
      url = found ?? configured;
    },
    restartBaseMs: 200,
    pollMs: 50,
    startTimeoutMs: options.startTimeoutMs ?? 20_000,
  });
  cleanups.push(() => supervisor.stop());
  const answers = () => client.health({ timeoutMs: 1_000 }).then(() => true, () => false);
  return { port, url, vault, supervisor, saved, states, settings, client, answers, urls, current: () => url };
}

/** A sidecar started by someone else (a terminal), with the stand-in's token. */
async function external(vault: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [STAND_IN, "serve", "--vault", vault, "--port", String(port)], {
    env: { ...process.env, STANDIN_TOKEN: TOKEN },
    stdio: "ignore",
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  );
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/v1/health`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the external stand-in did not start");
}

/** Another program holding the port first (issue 31, defect 5): 200 `{"status":"ok"}` to
 * /v1/health, 200 to anything else, and every Authorization header it receives kept. */
async function squatter(port: number): Promise<{ auth: string[]; requests: string[] }> {
  const seen = { auth: [] as string[], requests: [] as string[] };
  const server = http.createServer((request, response) => {
    seen.requests.push(request.url ?? "");
    if (request.headers.authorization !== undefined) seen.auth.push(request.headers.authorization);
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return seen;
}

describe("the supervisor with real processes", () => {
  it("starts the command, takes the token from the handshake, and stops what it started", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    process.env.STANDIN_DELAY_MS = "300"; // bound late, as a first start loading the model
    const ctx = await setup();
    expect(nodeLauncher()).not.toBeNull();
    expect(await ctx.answers()).toBe(false);
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toEqual({ kind: "running", ours: true, tokenProblem: null });
    expect(ctx.states).toEqual(["starting", "running"]);
    expect(ctx.saved).toEqual([TOKEN]); // from the handshake: nobody pasted it
    expect((await ctx.client.status()).notes).toBe(3); // and the sidecar takes it
    expect(ctx.supervisor.owns).toBe(true);

    // The log has the program's output, the token never.
    const log = ctx.supervisor.log.text;
    expect(log).toContain("starting: ");
    expect(log).toContain(`vault ${ctx.vault} · ${ctx.url}`);
    expect(log).toContain("vault-rag-handshake [received]");
    expect(log).toContain("[token]"); // the first-start line that showed it
    expect(log).not.toContain(TOKEN);

    await ctx.supervisor.stop();
    expect(ctx.supervisor.state.kind).toBe("stopped");
    expect(await ctx.answers()).toBe(false);
    expect(ctx.supervisor.log.text).toContain("stopping the sidecar this plugin started");
  });

  it("uses one already running, reads the token with vault-rag token, and leaves it running", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const ctx = await setup();
    await external(ctx.vault, ctx.port);
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toEqual({ kind: "running", ours: false, tokenProblem: null });
    expect(ctx.saved).toEqual([TOKEN]);
    expect(ctx.supervisor.log.text).toContain(`reading the token: ${process.execPath} ${STAND_IN} token --vault ${ctx.vault}`);
    expect(ctx.supervisor.owns).toBe(false);
    await ctx.supervisor.stop(); // not ours: nothing is stopped
    expect(await ctx.answers()).toBe(true);

    // With the right token already, nothing is run at all.
    const again = ctx.saved.length;
    await ctx.supervisor.ensure();
    expect(ctx.saved.length).toBe(again);
  });

  it("says when the sidecar at the URL cannot prove it holds this vault's token (another vault's), and sends it no token", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const ctx = await setup();
    await external(ctx.vault, ctx.port);
    process.env.STANDIN_TOKEN = "another-vaults-token-0123456789"; // what `token` prints for this vault
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toMatchObject({ kind: "running", ours: false, tokenProblem: expect.stringMatching(/cannot prove it is this vault's sidecar \(another vault's/) });
  });

  it("reports a process that exits before it answers, with the port-in-use hint for code 4", async () => {
    process.env.STANDIN_EXIT = "4";
    const ctx = await setup();
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toEqual({
      kind: "failed",
      message: "The sidecar exited with code 4 (its port is in use: another program, or another sidecar, listens there). See its log.",
    });
    expect(ctx.supervisor.log.text).toContain("cannot listen on 127.0.0.1: address already in use");
    expect(ctx.supervisor.owns).toBe(false);
  });

  it("reports a program that does not exist", async () => {
    const ctx = await setup({ command: (vault) => `/nonexistent/vault-rag serve --vault ${quoteArg(vault)}` });
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toMatchObject({ kind: "failed", message: expect.stringMatching(/^The sidecar could not be started: .*ENOENT/) });
  });

  it("stops a sidecar that does not answer in time", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    process.env.STANDIN_DELAY_MS = "60000";
    const ctx = await setup({ startTimeoutMs: 700 });
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toEqual({ kind: "failed", message: "The sidecar did not answer within 1 s; stopped it (see its log)." });
    expect(ctx.supervisor.owns).toBe(false);
    expect(ctx.supervisor.log.text).toContain("INFO: Shutting down"); // it got SIGTERM
  });

  it("cannot start anything without a launcher, or with a command it cannot read", async () => {
    const mobile = await setup({ launcher: null });
    await mobile.supervisor.ensure();
    expect(mobile.supervisor.state).toMatchObject({ kind: "failed", message: expect.stringMatching(/^Obsidian cannot start programs here \(desktop only\)/) });
    expect(mobile.supervisor.canStart).toBe(false);
    const broken = await setup({ command: () => 'vault-rag serve --vault "/unclosed' });
    await broken.supervisor.ensure();
    expect(broken.supervisor.state).toEqual({ kind: "failed", message: 'The sidecar command cannot be read: a " quote is not closed.' });
  });

  it("--port 0: two vaults side by side, each on the port its sidecar chose, past another vault's at the URL", async () => {
    process.env.STANDIN_TOKEN = "vault-a-token-0123456789abcdef";
    const free = (vault: string) => `${quoteArg(process.execPath)} ${quoteArg(STAND_IN)} serve --vault ${quoteArg(vault)} --port 0`;
    const a = await setup({ command: free });
    await external(a.vault, a.port); // someone's sidecar at the configured URL, with another token
    process.env.STANDIN_TOKEN = "vault-b-token-0123456789abcdef";
    const b = await setup({ command: free, port: a.port });
    await Promise.all([a.supervisor.ensure(), b.supervisor.ensure()]);
    for (const ctx of [a, b]) {
      expect(ctx.supervisor.state).toEqual({ kind: "running", ours: true, tokenProblem: null });
      expect(ctx.current()).not.toBe(`http://127.0.0.1:${a.port}`);
      expect((await ctx.client.status()).notes).toBe(3);
    }
    expect(a.current()).not.toBe(b.current());
    expect(b.supervisor.log.text).toContain("cannot prove it is this vault's sidecar; starting this vault's own on a free port");
    expect(b.saved).toEqual(["vault-b-token-0123456789abcdef"]); // read but unproven at the URL: only the handshake's
  });

  it("a squatter on the port never gets the token: with --port 0 this vault's own is started", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const free = (vault: string) => `${quoteArg(process.execPath)} ${quoteArg(STAND_IN)} serve --vault ${quoteArg(vault)} --port 0`;
    const port = await freePort();
    const seen = await squatter(port);
    const ctx = await setup({ command: free, port, token: TOKEN }); // the right token, already in the settings
    await ctx.supervisor.ensure();
    expect(ctx.supervisor.state).toEqual({ kind: "running", ours: true, tokenProblem: null });
    expect(ctx.current()).not.toBe(`http://127.0.0.1:${port}`);
    expect((await ctx.client.status()).notes).toBe(3);
    expect(seen.requests.some((url) => url.startsWith("/v1/health?challenge="))).toBe(true); // it was asked to prove
    expect(seen.auth).toEqual([]); // and never given the token
    expect(ctx.supervisor.log.text).toContain("cannot prove it is this vault's sidecar; starting this vault's own on a free port");
  });

  it("a squatter on the configured port never gets the token: without --port 0 it is reported", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const port = await freePort();
    const seen = await squatter(port);
    for (const stored of [TOKEN, ""]) {
      const ctx = await setup({ port, token: stored });
      await ctx.supervisor.ensure();
      expect(ctx.supervisor.state).toEqual({
        kind: "running",
        ours: false,
        tokenProblem: `Something else answers at http://127.0.0.1:${port} and cannot prove it is this vault's sidecar (another vault's, or another program); the token was not sent.`,
      });
      expect(ctx.supervisor.log.text).toContain("reading the token: "); // read, then not sent
      expect(ctx.saved).toEqual([]);
    }
    expect(seen.requests.filter((url) => url.startsWith("/v1/health?challenge="))).toHaveLength(3); // stored, read, read
    expect(seen.requests.some((url) => !url.startsWith("/v1/health"))).toBe(false);
    expect(seen.auth).toEqual([]);
  });

  it("starts a sidecar that died again, with back-off, and stops trying once stopped", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const ctx = await setup();
    await ctx.supervisor.ensure();
    const pidOf = () => Number(/pid (\d+)\n(?![\s\S]*pid \d+)/.exec(ctx.supervisor.log.text + "\n")?.[1]);
    const first = pidOf();
    process.kill(first, "SIGKILL");
    for (let i = 0; i < 200 && !(ctx.supervisor.state.kind === "running" && pidOf() !== first); i++) await new Promise((r) => setTimeout(r, 50));
    expect(ctx.supervisor.state).toEqual({ kind: "running", ours: true, tokenProblem: null });
    expect(pidOf()).not.toBe(first);
    expect(ctx.states).toEqual(["starting", "running", "failed", "starting", "running"]);
    expect(ctx.supervisor.log.text).toContain("restarting in 0.2 s (attempt 1 of 5)");
    expect(await ctx.answers()).toBe(true);
    await ctx.supervisor.stop();
    expect(await ctx.answers()).toBe(false);
  });

  it("one ensure at a time: a second call waits for the first", async () => {
    process.env.STANDIN_TOKEN = TOKEN;
    const ctx = await setup();
    await Promise.all([ctx.supervisor.ensure(), ctx.supervisor.ensure()]);
    expect(ctx.states.filter((s) => s === "starting")).toHaveLength(1);
  });
});
