/**
 * The health proof (`sidecar/proof.ts`) against the vectors the sidecar's own test checks too
 * (shared-schemas/fixtures/health-proof.json, tests/test_health_proof.py): same token and
 * challenge, same proof, or the plugin would refuse its own sidecar.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

import { newChallenge, PROOF_CONTEXT, provesToken, tokenProof } from "../src/sidecar/proof";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../shared-schemas/fixtures/health-proof.json");
const vectors = JSON.parse(readFileSync(FIXTURE, "utf8")) as {
  context: string;
  cases: { token: string; challenge: string; proof: string }[];
};

describe("the sidecar's health proof", () => {
  it("uses the fixture's context", () => {
    expect(PROOF_CONTEXT).toBe(vectors.context);
    expect(vectors.cases.length).toBeGreaterThanOrEqual(2);
  });

  it.each(vectors.cases)("gives the shared proof for token $token", async ({ token, challenge, proof }) => {
    expect(await tokenProof(token, challenge)).toBe(proof);
    expect(await provesToken(token, challenge, proof)).toBe(true);
  });

  it("refuses a proof by another token, for another challenge, or none", async () => {
    const [first, second] = vectors.cases as [(typeof vectors.cases)[0], (typeof vectors.cases)[0]];
    expect(await provesToken(second.token, first.challenge, first.proof)).toBe(false);
    expect(await provesToken(first.token, second.challenge, first.proof)).toBe(false);
    expect(await provesToken(first.token, first.challenge, first.proof.toUpperCase())).toBe(false);
    expect(await provesToken(first.token, first.challenge, first.proof.slice(1))).toBe(false);
    expect(await provesToken(first.token, first.challenge, undefined)).toBe(false);
    expect(await provesToken(first.token, first.challenge, null)).toBe(false);
    expect(await provesToken("", first.challenge, first.proof)).toBe(false); // no token: nothing to prove
  });

  it("makes fresh 32-hex-character challenges", () => {
    const seen = new Set(Array.from({ length: 50 }, () => newChallenge()));
    expect(seen.size).toBe(50);
    for (const c of seen) expect(c).toMatch(/^[0-9a-f]{32}$/);
  });
});
