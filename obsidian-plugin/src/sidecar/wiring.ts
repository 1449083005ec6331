/**
 * The supervisor wired to the sidecar client, and the controls the views use: shared by the
 * plugin (`services.ts`) and the Chromium harness (`tests/browser/pane-entry.ts`), so both run
 * the same start-up path.
 */
import { SidecarAuthError, type SidecarClient } from "../client";
import type { SidecarLaunch } from "../view/indexStatus";
import { SidecarSupervisor, type SupervisorDeps } from "./supervisor";

/** A supervisor that asks `client` whether the sidecar answers, proves it holds the token
 * (a fresh challenge each time, `proof.ts`; a proven pair is what the client then sends the
 * token to) and takes the token. While no sidecar runs (starting, failed, stopped) the client
 * trusts none: whatever answers next proves itself first. */
export function supervisorFor(
  client: SidecarClient,
  deps: Omit<SupervisorDeps, "healthy" | "tokenState" | "proves" | "storedToken" | "url">,
): SidecarSupervisor {
  return new SidecarSupervisor({
    ...deps,
    onChange: (state) => {
      if (state.kind !== "running") client.forgetProof();
      deps.onChange?.(state);
    },
    healthy: () =>
      client.health({ timeoutMs: 3_000 }).then(
        () => true,
        () => false,
      ),
    proves: (token) => client.prove(token),
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
