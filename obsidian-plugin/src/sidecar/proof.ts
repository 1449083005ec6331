/**
 * The sidecar's proof that it holds this vault's token, checked before the plugin sends the
 * token to a sidecar it did not start itself (issue 31, defect 5): `GET /v1/health?challenge=C`
 * answers `proof` = hex HMAC-SHA256 keyed by the token (UTF-8) over
 * `"vault-rag/health/v1\n" + C` (the sidecar's `server_token.token_proof`; shared vectors in
 * shared-schemas/fixtures/health-proof.json). Whatever else holds the port cannot compute it.
 * Pure, over WebCrypto (the global `crypto.subtle`: Obsidian's Electron and Node 20 alike).
 */

export const PROOF_CONTEXT = "vault-rag/health/v1\n";

/** A fresh random challenge: 32 hex characters (16 random bytes). */
export function newChallenge(): string {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

/** The proof a sidecar holding `token` gives for `challenge` (lower-case hex). */
export async function tokenProof(token: string, challenge: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(PROOF_CONTEXT + challenge))));
}

/** Whether `proof` (from the health answer, anything) is the proof of `token` for `challenge`. */
export async function provesToken(token: string, challenge: string, proof: unknown): Promise<boolean> {
  if (token === "" || typeof proof !== "string") return false;
  const expected = await tokenProof(token, challenge);
  if (proof.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ proof.charCodeAt(i);
  return diff === 0;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
