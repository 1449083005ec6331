/**
 * "Test connection" in the settings: `GET /v1/health` (does anything answer, and is it the
 * Vault RAG sidecar), then `GET /v1/status` with the token (is it accepted, how much is
 * indexed), said in one line. The client sends the token only to a server that proves it holds
 * it (`client/proofGate.ts`); one that cannot is `unproven`.
 */
import { SidecarAuthError, type SidecarClient, SidecarUnprovenError, SidecarUnreachableError } from "../client";

export type ConnectionResult =
  | { kind: "ok"; version: string; notes: number | null; pending: number | null }
  | { kind: "unreachable"; url: string }
  | { kind: "unauthorized"; version: string }
  | { kind: "unproven"; message: string }
  | { kind: "error"; message: string };

export async function testConnection(client: Pick<SidecarClient, "health" | "status" | "url">): Promise<ConnectionResult> {
  let version = "";
  try {
    const health = await client.health({ timeoutMs: 5_000 });
    version = typeof health.version === "string" ? health.version : "";
  } catch (error) {
    if (error instanceof SidecarUnreachableError) return { kind: "unreachable", url: client.url };
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  }
  try {
    const status = await client.status(undefined, { timeoutMs: 10_000 });
    return { kind: "ok", version, notes: status.notes, pending: status.pending };
  } catch (error) {
    if (error instanceof SidecarAuthError) return { kind: "unauthorized", version };
    if (error instanceof SidecarUnprovenError) return { kind: "unproven", message: error.message };
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  }
}

export function describeConnection(result: ConnectionResult, startCommand: string): string {
  switch (result.kind) {
    case "ok": {
      const notes = result.notes ?? 0;
      const pending = result.pending ? ` (${result.pending} passages still waiting for vectors)` : "";
      return `Connected to the Vault RAG sidecar ${result.version}: ${notes} note${notes === 1 ? "" : "s"} indexed${pending}.`;
    }
    case "unreachable":
      return `Nothing answers at ${result.url}. Start the sidecar (${startCommand}), or turn on "Start the sidecar with Obsidian".`;
    case "unauthorized":
      return `The sidecar ${result.version} answers, but refuses the token: copy the one "vault-rag token" prints, or let the plugin start the sidecar.`;
    case "unproven":
      return result.message;
    case "error":
      return `The sidecar answered, but: ${result.message}`;
  }
}
