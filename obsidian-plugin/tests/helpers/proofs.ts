/**
 * Stand-ins of the sidecar answer the health proof as the real one does (issue 31, defect 5):
 * `GET /v1/health?challenge=C` → `proof`, the HMAC of C keyed by the token they hold
 * (`src/sidecar/proof.ts`, shared vectors in shared-schemas/fixtures/health-proof.json). The
 * client sends the token to nothing that has not proven it holds it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

import { tokenProof } from "../../src/sidecar/proof";

/** The proof answer for a fetch stand-in (`SidecarClient`'s `fetchImpl`), or null when `input`
 * is not a challenge. */
export async function proofResponse(input: string, token: string): Promise<Response | null> {
  const url = new URL(input);
  const challenge = url.searchParams.get("challenge");
  if (url.pathname !== "/v1/health" || challenge === null) return null;
  const body = JSON.stringify({ status: "ok", proof: await tokenProof(token, challenge) });
  return new Response(body, { status: 200, headers: { "Content-Type": "application/json" } });
}

/** Answer a challenge on a node:http stand-in: true when `req` was one (it is answered). */
export function answeredProof(req: IncomingMessage, res: ServerResponse, token: string): boolean {
  const url = new URL(req.url ?? "/", "http://x");
  const challenge = url.searchParams.get("challenge");
  if (url.pathname !== "/v1/health" || challenge === null) return false;
  void tokenProof(token, challenge).then((proof) =>
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ status: "ok", proof })),
  );
  return true;
}
