// Math helpers.
import { pi } from "./consts.js";

/** A counter. */
export class Counter {
  #count = 0;
  /** Adds one. */
  increment() {
    this.#count += 1;
    return this.#count;
  }
  static zero() { return new Counter(); }
}

/** Sum of a list. */
export function sum(values) {
  return values.reduce((a, b) => a + b, 0);
}

const square = (x) => x * x;
module.exports = { sum };
