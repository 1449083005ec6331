/**
 * The supervisor wired to the sidecar client, and the controls the views use: shared by the
 * plugin (`services.ts`) and the Chromium harness (`tests/browser/pane-entry.ts`), so both run
 * the same start-up path.
 */
import { SidecarAuthError, type SidecarClient } from "../client";
import type { SidecarLaunch } from "../view/indexStatus";
import { newChallenge, provesToken } from "./proof";
import { SidecarSupervisor, type SupervisorDeps } from "./supervisor";

/** A supervisor that asks `client` whether the sidecar answers, proves it holds the token
 * (a fresh challenge each time, `proof.ts`) and takes the token. */
export function supervisorFor(
  client: SidecarClient,
  deps: Omit<SupervisorDeps, "healthy" | "tokenState" | "proves" | "storedToken" | "url">,
): SidecarSupervisor {
  return new SidecarSupervisor({
    ...deps,
    healthy: () =>
      client.health({ timeoutMs: 3_000 }).then(
        () => true,
        () => false,
      ),
    proves: async (token) => {
      const challenge = newChallenge();
      const answer = await client.health({ timeoutMs: 3_000, challenge }).catch(() => null);
      return answer !== null && provesToken(token, challenge, answer.proof);
    },
    storedToken: () => client.token,
    url: () => client.url,
    tokenState: () =>
      client.status(undefined, { timeoutMs: 10_000 }).then(
        () => "ok" as const,
        (error: unknown) => (error instanceof SidecarAuthError ? ("unauthorized" as const) : ("unreachable" as const)),
      ),
  });
}

/** Listeners of the supervisor's state, for the views' `SidecarLaunch.onChange`. */
export class StateListeners {
  private readonly listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.listeners) listener();
  }
}

/** What the ask pane's empty state needs of the supervisor. */
export function launchControls(
  supervisor: SidecarSupervisor,
  listeners: StateListeners,
  command: () => string,
  showLog: () => void,
): SidecarLaunch {
  return {
    canStart: supervisor.canStart,
    state: () => supervisor.state,
    start: () => void supervisor.ensure(),
    showLog,
    command,
    onChange: (listener) => listeners.add(listener),
  };
}
