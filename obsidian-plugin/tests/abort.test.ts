/** `anySignal`, the stand-in for `AbortSignal.any` (Chromium 116+) on older installers. */
import { describe, expect, it } from "vitest";

import { anySignal } from "../src/client/abort";

describe("anySignal", () => {
  it("aborts with the reason of the first input that aborts", () => {
    const a = new AbortController();
    const b = new AbortController();
    const { signal } = anySignal([a.signal, b.signal]);
    expect(signal.aborted).toBe(false);
    b.abort("timeout");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("timeout");
    a.abort("later");
    expect(signal.reason).toBe("timeout");
  });

  it("is aborted at once when an input already is", () => {
    const a = new AbortController();
    a.abort("gone");
    expect(anySignal([new AbortController().signal, a.signal]).signal.reason).toBe("gone");
  });

  it("no longer follows its inputs once disposed", () => {
    const a = new AbortController();
    const linked = anySignal([a.signal]);
    linked.dispose();
    a.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});
