/**
 * Reading a stored conversation back when the pane opens: the sidecar may still be starting
 * (the plugin has just launched it) or restarting, so a failure that can be waited out is
 * retried (1, 2, 4… 15 s apart, about ten minutes in all) with a line saying so, instead of
 * the red "Could not load" that was never retried. A busy sidecar's `Retry-After` sets the wait.
 * A refused or unproven token is waited out too while the plugin's own sidecar is still
 * starting (`sidecarStarting`): the stored token is the last run's until the new one's handshake
 * hands over its own, and the first load can go out in between (issue 29).
 */
import { isAbortError, SidecarAuthError, SidecarHttpError, SidecarUnprovenError, type ThreadMessage } from "../client";
import type { Clock } from "../sync/timing";
import { describeError, isWaitable, MAX_LOAD_ATTEMPTS, readyIn, retryDelayMs } from "./conversation";

export interface ResumeDeps {
  load?: (threadId: string, signal: AbortSignal) => Promise<ThreadMessage[]>;
  clock: Clock;
  onError(error: unknown): void;
  /** Show `text` above the turns (null: nothing); `failed`: as an alert. */
  note(text: string | null, failed?: boolean): void;
  /** Whether the plugin is starting its own sidecar (its token may not be taken yet). */
  sidecarStarting?(): boolean;
}

/** A token refused (401) or not sent (unproven) for a request made, or answered, while the
 * plugin's own sidecar was starting: the new token is on its way, so try again with it. */
function tokenOnItsWay(error: unknown, deps: ResumeDeps, sentWhileStarting: boolean): boolean {
  if (!(error instanceof SidecarAuthError || error instanceof SidecarUnprovenError)) return false;
  return sentWhileStarting || deps.sidecarStarting?.() === true;
}

/** The stored thread; null when there is none to show (unknown thread, cancelled, or a
 * failure, which has then been shown and reported). */
export async function loadPatiently(threadId: string, signal: AbortSignal, deps: ResumeDeps): Promise<ThreadMessage[] | null> {
  const load = deps.load;
  if (load === undefined) return null;
  for (let attempt = 0; ; attempt++) {
    const sentWhileStarting = deps.sidecarStarting?.() === true;
    try {
      const messages = await load(threadId, signal);
      deps.note(null);
      return messages;
    } catch (error) {
      if (signal.aborted || isAbortError(error)) return null;
      if (error instanceof SidecarHttpError && error.status === 404) {
        deps.note(null);
        return null;
      }
      const retryToken = tokenOnItsWay(error, deps, sentWhileStarting);
      if (!(isWaitable(error) || retryToken) || attempt + 1 >= MAX_LOAD_ATTEMPTS) {
        deps.onError(error);
        deps.note(`Could not load the earlier conversation: ${describeError(error)}`, true);
        return null;
      }
      const delay = retryToken ? Math.min(retryDelayMs(attempt), 2_000) : retryDelayMs(attempt, error);
      // A busy sidecar said when it will be ready (its Retry-After): say that, not just the wait.
      const when = error instanceof SidecarHttpError && error.retryAfterS !== null ? `ready ${readyIn(error, "")}; ` : "";
      deps.note(`Waiting for the sidecar to load the earlier conversation (${when}trying again in ${Math.round(delay / 1000)} s)…`);
      await new Promise<void>((resolve) => {
        const timer = deps.clock.setTimeout(resolve, delay);
        signal.addEventListener("abort", () => {
          deps.clock.clearTimeout(timer);
          resolve();
        });
      });
      if (signal.aborted) return null;
    }
  }
}
