/**
 * Long loops on the UI thread (the start-up reconcile over every note) work in slices: after
 * `maxSteps` steps or `budgetMs` of work, whichever comes first, they wait for a macrotask so
 * Obsidian can paint and handle input.
 */
export type YieldToUi = () => Promise<void>;

/** A macrotask: the window's `setTimeout(0)` (queued behind input and rendering). */
export const macrotask: YieldToUi = () => new Promise((resolve) => window.setTimeout(resolve, 0));

export interface SliceStats {
  /** Times the loop yielded. */
  yields: number;
  /** Most steps done between two yields. */
  maxSteps: number;
}

export class Slicer {
  readonly stats: SliceStats = { yields: 0, maxSteps: 0 };
  private readonly maxSteps: number;
  private readonly budgetMs: number;
  private readonly yieldToUi: YieldToUi;
  private readonly now: () => number;
  private steps = 0;
  private sliceStart: number;

  constructor(options: { maxSteps?: number; budgetMs?: number; yieldToUi?: YieldToUi; now?: () => number } = {}) {
    this.maxSteps = options.maxSteps ?? 100;
    this.budgetMs = options.budgetMs ?? 10;
    this.yieldToUi = options.yieldToUi ?? macrotask;
    this.now = options.now ?? (() => Date.now());
    this.sliceStart = this.now();
  }

  /** Call before each step: yields first when the current slice is full. */
  async step(): Promise<void> {
    if (this.steps >= this.maxSteps || (this.steps > 0 && this.now() - this.sliceStart >= this.budgetMs)) {
      await this.yieldToUi();
      this.stats.yields += 1;
      this.steps = 0;
      this.sliceStart = this.now();
    }
    this.steps += 1;
    if (this.steps > this.stats.maxSteps) this.stats.maxSteps = this.steps;
  }
}
