/**
 * Reading a stored conversation back when the pane opens: the sidecar may still be starting
 * (the plugin has just launched it) or restarting, so a failure that can be waited out is
 * retried (1, 2, 4… 15 s apart, about ten minutes in all) with a line saying so, instead of
 * the red "Could not load" that was never retried.
 */
import { isAbortError, SidecarHttpError, type ThreadMessage } from "../client";
import type { Clock } from "../sync/timing";
import { describeError, isWaitable, MAX_LOAD_ATTEMPTS, retryDelayMs } from "./conversation";

export interface ResumeDeps {
  load?: (threadId: string, signal: AbortSignal) => Promise<ThreadMessage[]>;
  clock: Clock;
  onError(error: unknown): void;
  /** Show `text` above the turns (null: nothing); `failed`: as an alert. */
  note(text: string | null, failed?: boolean): void;
}

/** The stored thread; null when there is none to show (unknown thread, cancelled, or a
 * failure, which has then been shown and reported). */
export async function loadPatiently(threadId: string, signal: AbortSignal, deps: ResumeDeps): Promise<ThreadMessage[] | null> {
  const load = deps.load;
  if (load === undefined) return null;
  for (let attempt = 0; ; attempt++) {
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
      if (!isWaitable(error) || attempt + 1 >= MAX_LOAD_ATTEMPTS) {
        deps.onError(error);
        deps.note(`Could not load the earlier conversation: ${describeError(error)}`, true);
        return null;
      }
      const delay = retryDelayMs(attempt);
      deps.note(`Waiting for the sidecar to load the earlier conversation (trying again in ${Math.round(delay / 1000)} s)…`);
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
