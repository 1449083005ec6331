// A stand-in for the `vault-rag serve` / `vault-rag token` programs in the supervisor's unit
// tests (tests/supervisor.test.ts): a real process with a real HTTP server on 127.0.0.1 that
// speaks the two routes the supervisor uses (with the health proof the real sidecar gives:
// `?challenge=C` answers `proof`, its HMAC keyed by the token). The real sidecar is what the
// Chromium e2e starts.
//
//   node standInSidecar.mjs serve --vault DIR --port P   (STANDIN_TOKEN; STANDIN_DELAY_MS before it
//                                                         listens; STANDIN_EXIT=N exits with N first;
//                                                         P = 0: a free port, in the handshake)
//   node standInSidecar.mjs token --vault DIR            (prints STANDIN_TOKEN)
import { createHmac } from "node:crypto";
import http from "node:http";

const [command, ...args] = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const token = process.env.STANDIN_TOKEN ?? "";

if (command === "token") {
  process.stderr.write("new token saved in the data dir\n");
  process.stdout.write(`${token}\n`);
  process.exit(0);
}
if (command !== "serve") {
  process.stderr.write(`unknown command ${command}\n`);
  process.exit(2);
}
if (process.env.STANDIN_EXIT) {
  process.stderr.write("cannot listen on 127.0.0.1: address already in use\n");
  process.exit(Number(process.env.STANDIN_EXIT));
}
const asked = Number(option("--port"));
process.stdout.write(`${token}\n`); // a first start shows the token once, as vault-rag serve does
process.stderr.write(`pid ${process.pid}\n`);
const announce = (port) => {
  if (process.env.VAULT_RAG_HANDSHAKE === "1") {
    process.stdout.write(`vault-rag-handshake ${JSON.stringify({ url: `http://127.0.0.1:${port}`, token, version: "stand-in" })}\n`);
  }
  process.stderr.write(`vault ${option("--vault")} · http://127.0.0.1:${port}\n`);
};
if (asked !== 0) announce(asked); // --port 0: once the system has chosen one
const server = http.createServer((request, response) => {
  const send = (status, body) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const url = new URL(request.url ?? "/", "http://stand-in");
  if (url.pathname === "/v1/health") {
    const challenge = url.searchParams.get("challenge");
    const proof = challenge ? createHmac("sha256", token).update(`vault-rag/health/v1\n${challenge}`, "utf8").digest("hex") : null;
    return send(200, { status: "ok", version: "stand-in", api: "v1", proof });
  }
  if (request.headers.authorization !== `Bearer ${token}`) return send(401, { code: "unauthorized", message: "wrong token", detail: null });
  if (request.url?.startsWith("/v1/status")) return send(200, { notes: 3, chunks: 9, pending: 0, embedded: 9 });
  return send(404, { code: "not_found", message: "no route", detail: null });
});
setTimeout(
  () =>
    server.listen(asked, "127.0.0.1", () => {
      if (asked === 0) announce(server.address().port);
      process.stderr.write("INFO: Application startup complete.\n");
    }),
  Number(process.env.STANDIN_DELAY_MS ?? 0),
);
process.on("SIGTERM", () => {
  process.stderr.write("INFO: Shutting down\n");
  server.close();
  process.exit(0);
});
