/**
 * Where the end-to-end tests run: the repository, Python and Chromium, a free port, and a
 * static server for `test-output/` (the page bundles). Node only.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
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
