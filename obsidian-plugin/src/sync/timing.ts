/** Time as the sync engine and the status poller see it: injectable, so tests drive it. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The window's timers (vitest's fake timers replace these too; tests/setup.ts under Node). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => window.setTimeout(callback, ms),
  clearTimeout: (handle) => window.clearTimeout(handle as number),
};

/** Exponential backoff: `base`, 2×, 4×… capped at `max`; `attempt` counts from 1. */
export function backoffDelay(attempt: number, base: number, max: number): number {
  return Math.min(max, base * 2 ** Math.max(0, attempt - 1));
}
