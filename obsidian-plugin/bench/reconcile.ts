/**
 * The plugin's start-up reconcile, timed: the real sync code (`SyncEngine`,
 * `obsidianNoteSource`, `ObsidianEmbedIndex`, the `SidecarClient` over HTTP) on a vault folder
 * on disk (`diskVault.ts`) against a running `vault-rag serve` of the same vault.
 *
 *   node bench/reconcile.mjs --vault DIR --metadata FILE --url URL --token TOKEN
 *                            [--known-in FILE] [--known-out FILE] [--concurrency N]
 *
 * `--known-in`: the in-sync map a previous start saved (the plugin's data), so this is a
 * second start; `--known-out`: save this start's map; `--concurrency`: the engine's
 * `reconcileConcurrency` (default: the engine's own). Prints one JSON line: wall time, the
 * requests by route, notes read, how the loop sliced, and the event loop's longest blocks —
 * `perf_hooks.monitorEventLoopDelay` (a 1 ms timer's worst lateness) and the longest gap
 * between two macrotask ticks.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

import { SidecarClient } from "../src/client";
import { resolveSubpathLike } from "../src/resolver/subpath";
import { isExcluded, ObsidianEmbedIndex, obsidianNoteSource, type PersistedSync, SyncEngine } from "../src/sync";
import { DiskVault } from "./diskVault";

const { values } = parseArgs({
  options: {
    vault: { type: "string" },
    metadata: { type: "string" },
    url: { type: "string" },
    token: { type: "string" },
    "known-in": { type: "string" },
    "known-out": { type: "string" },
    concurrency: { type: "string" },
  },
});
const need = (name: string): string => {
  const value = values[name as keyof typeof values];
  if (typeof value !== "string") throw new Error(`--${name} is required`);
  return value;
};

const requests = new Map<string, number>();
const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  const key = `${init?.method ?? "GET"} ${url.pathname}`;
  requests.set(key, (requests.get(key) ?? 0) + 1);
  return realFetch(input, init);
}) as typeof fetch;

async function main(): Promise<void> {
  const loaded = performance.now();
  const vault = new DiskVault(need("vault"), need("metadata"));
  const loadMs = performance.now() - loaded;
  const client = new SidecarClient(() => ({ url: need("url"), token: need("token") }));
  const persisted = values["known-in"]
    ? (JSON.parse(readFileSync(values["known-in"], "utf8")) as PersistedSync)
    : null;
  const embeds = new ObsidianEmbedIndex(vault.app);
  const source = obsidianNoteSource(vault.app, resolveSubpathLike, embeds);
  const concurrency = values.concurrency === undefined ? {} : { reconcileConcurrency: Number(values.concurrency) };
  const engine = new SyncEngine(client, source, { isExcluded: (p) => isExcluded(p, []), persisted, ...concurrency });

  // Node's fetch (undici) compiles itself on first use, which Obsidian's requestUrl does not
  // do: one request before the clock starts, not counted.
  await client.health();
  requests.clear();

  // The probes run only while the reconcile does. On a loaded machine the wall-clock gaps
  // include time this process was not scheduled; the CPU gap (this process's CPU time between
  // two ticks, all threads: an upper bound of the work done without yielding) does not.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let longestTick = 0;
  let longestCpu = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let running = true;
  const tick = () => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    longestTick = Math.max(longestTick, now - last);
    longestCpu = Math.max(longestCpu, (cpu.user + cpu.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
    if (running) setTimeout(tick, 0);
  };
  delay.enable();
  setTimeout(tick, 0);
  const started = performance.now();
  const startedCpu = process.cpuUsage();
  await engine.reconcile();
  const wallMs = performance.now() - started;
  const cpuUsed = process.cpuUsage(startedCpu);
  running = false;
  delay.disable();
  if (values["known-out"]) writeFileSync(values["known-out"], JSON.stringify(engine.persisted));
  const state = engine.state;
  const stats = engine.lastReconcile;
  engine.stop();
  console.log(
    JSON.stringify({
      notes: vault.files.size,
      second_start: persisted !== null,
      concurrency: values.concurrency ?? "default",
      wall_ms: wallMs,
      cpu_ms: (cpuUsed.user + cpuUsed.system) / 1000,
      vault_load_ms: loadMs,
      requests: Object.fromEntries(requests),
      request_count: [...requests.values()].reduce((a, b) => a + b, 0),
      reads: vault.reads,
      read: stats?.read ?? null,
      yields: stats?.yields ?? null,
      max_steps: stats?.maxSteps ?? null,
      pending_after: state.pending,
      last_error: state.lastError === null ? null : String(state.lastError),
      loop_delay_max_ms: delay.max / 1e6,
      loop_delay_p99_ms: delay.percentile(99) / 1e6,
      longest_tick_gap_ms: longestTick,
      longest_tick_cpu_ms: longestCpu,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
