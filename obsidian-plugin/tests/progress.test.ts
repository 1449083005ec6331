/**
 * The progress line of a turn (issue 43): a search over several collections says where it
 * searched, with the weight routing gave each (`retrieve_vault`'s `searched`), and the done
 * line keeps it; a vault-only search reads as before.
 */
import { describe, expect, it } from "vitest";

import type { AskEvent } from "../src/client";
import { describeDone, describeProgress, describeSearched, type ProgressContext } from "../src/view/progress";

type Progress = Extract<AskEvent, { type: "progress" }>;
const retrieved = (data: Record<string, unknown>): Progress => ({
  type: "progress",
  node: "retrieve_vault",
  aspect: 0,
  reset: false,
  data,
});

describe("searched: the collections of a routed search", () => {
  it("names each collection, with its weight when routing raised it", () => {
    const searched = [
      { name: "vault", weight: 1, reasons: [] },
      { name: "engine-code", weight: 3, reasons: ["identifier UObject::BeginDestroy", "code words"] },
    ];
    expect(describeSearched(searched)).toBe("searched: vault, engine-code ×3");
    const context: ProgressContext = { aspects: 1 };
    expect(describeProgress(retrieved({ found: 8, searched }), context)).toBe(
      "found 8 passages · searched: vault, engine-code ×3…",
    );
    expect(describeDone(2, context.aspects, context.searched)).toBe("done · 2 sources · searched: vault, engine-code ×3");
  });

  it("says nothing more for one collection or a malformed field", () => {
    expect(describeSearched(undefined)).toBeNull();
    expect(describeSearched([{ name: "vault", weight: 1 }])).toBeNull();
    expect(describeSearched("vault")).toBeNull();
    expect(describeSearched([{ weight: 2 }, { nope: true }])).toBeNull();
    const context: ProgressContext = { aspects: null };
    expect(describeProgress(retrieved({ found: 1 }), context)).toBe("found 1 passage in the vault…");
    expect(describeDone(1, null, context.searched)).toBe("done · 1 source");
  });
});
