/**
 * The client's rule for the bearer token (issue 31, defect 5): it goes only to a server that
 * has proven it holds it. Before the first request with a token to a URL, the server is asked
 * `GET /v1/health?challenge=C` (a fresh random C, no token) and must answer `proof` = the
 * token's HMAC of C (`sidecar/proof.ts`); then that exact (URL, token) pair is trusted until a
 * connection to it fails, the sidecar is restarted (`forget()`), or the URL or token changes.
 * Requests made meanwhile share one proof. A server that answers without the proof gets
 * nothing: the request fails with `SidecarUnprovenError`, and the next one asks again.
 */
import { newChallenge, provesToken } from "../sidecar/proof";
import { SidecarUnprovenError } from "./errors";

/** Ask `url` for its proof of `challenge` (the health answer's `proof`, whatever it is); any
 * failure to get an answer is thrown as is (unreachable, timeout, abort). */
export type AskProof = (url: string, challenge: string) => Promise<unknown>;

export class ProofGate {
  /** The (URL, token) pair last proven, as `key()`. */
  private proven: string | null = null;
  /** The proof under way, shared by every request that waits for it. */
  private pending: { key: string; result: Promise<boolean> } | null = null;
  /** Bumped by `forget()`: a proof begun before it proves nothing after it. */
  private generation = 0;

  constructor(private readonly ask: AskProof) {}

  /** Resolves once `token` may be sent to `url`; rejects with `SidecarUnprovenError` when
   * what answers there cannot prove it holds it, or with the health request's error. */
  async admit(url: string, token: string): Promise<void> {
    if (!(await this.prove(url, token))) throw new SidecarUnprovenError(url);
  }

  /** Whether the server at `url` proves it holds `token`: asked now unless this pair is
   * proven (`fresh`: asked now even then, and a failure un-proves it); a proven pair is kept for
   * the requests that follow. Never sends the token. */
  prove(url: string, token: string, fresh = false): Promise<boolean> {
    if (token === "") return Promise.resolve(false);
    const key = pairKey(url, token);
    if (this.proven === key && !fresh) return Promise.resolve(true);
    if (this.proven !== key) this.proven = null; // another URL or token: the old pair is over
    if (this.pending?.key === key) return this.pending.result;
    const generation = this.generation;
    const result = this.challenge(url, token).then((ok) => {
      if (generation === this.generation) {
        if (ok) this.proven = key;
        else if (this.proven === key) this.proven = null;
      }
      return ok;
    });
    const pending = { key, result };
    this.pending = pending;
    const clear = () => {
      if (this.pending === pending) this.pending = null;
    };
    result.then(clear, clear);
    return result;
  }

  /** Whether `url` with `token` is proven now (no request). */
  isProven(url: string, token: string): boolean {
    return token !== "" && this.proven === pairKey(url, token);
  }

  /** Trust nothing until the next proof: a connection failed, or the sidecar (re)started. */
  forget(): void {
    this.proven = null;
    this.pending = null;
    this.generation++;
  }

  private async challenge(url: string, token: string): Promise<boolean> {
    const challenge = newChallenge();
    return provesToken(token, challenge, await this.ask(url, challenge));
  }
}

function pairKey(url: string, token: string): string {
  return `${url}\n${token}`;
}
