/** The progress line: one short sentence per `progress` event of the answer graph. */
import type { AskEvent } from "../client";

type Progress = Extract<AskEvent, { type: "progress" }>;

export interface ProgressContext {
  /** Aspects of the plan, once `plan` has reported them. */
  aspects: number | null;
  /** The last search's collections (`describeSearched`), kept for the done line. */
  searched?: string | null;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function describeProgress(event: Progress, context: ProgressContext): string {
  const d = event.data;
  const count = (key: string): number | null => (typeof d[key] === "number" ? d[key] : null);
  const ofAspect =
    event.aspect !== null && (context.aspects ?? 0) > 1 ? ` (aspect ${event.aspect + 1} of ${context.aspects})` : "";
  if (event.reset) return "the model stopped mid-answer; using the extracted answer instead…";
  switch (event.node) {
    case "take_question":
      return "reading the question…";
    case "focus": {
      const note = typeof d.note === "string" ? d.note : "";
      const name = note.slice(note.lastIndexOf("/") + 1).replace(/\.md$/i, "");
      return d.indexed === false ? `“${name}” is not indexed yet: searching the whole vault…` : `reading “${name}” and its links…`;
    }
    case "classify_intent":
      return "understanding the question…";
    case "condense":
      return "putting the follow-up in context…";
    case "small_talk":
    case "decline":
      return "answering…";
    case "plan": {
      const aspects = count("aspects") ?? 1;
      return `searching ${plural(aspects, "aspect")}…`;
    }
    case "retrieve_vault": {
      const found = count("found");
      const searched = describeSearched(d.searched);
      if (searched) context.searched = searched;
      if (found === null) return `searching the vault${ofAspect}…`;
      return searched
        ? `found ${plural(found, "passage")}${ofAspect} · ${searched}…`
        : `found ${plural(found, "passage")} in the vault${ofAspect}…`;
    }
    case "check_evidence": {
      const weak = Array.isArray(d.web_for) ? d.web_for.length : 0;
      return weak > 0 ? `searching the web for ${plural(weak, "aspect")}…` : "checking the evidence…";
    }
    case "web_search": {
      const found = count("found");
      return found === null ? `searching the web${ofAspect}…` : `found ${plural(found, "web page")}${ofAspect}…`;
    }
    case "grade": {
      const kept = count("kept");
      const of = count("of");
      return kept !== null && of !== null ? `kept ${kept} of ${plural(of, "source")}${ofAspect}…` : "grading sources…";
    }
    case "deduplicate":
      return "merging duplicate sources…";
    case "answer_aspect":
      return `writing the answer${ofAspect}…`;
    case "synthesize":
      return "putting the answer together…";
    case "finish":
      return "finishing…";
    default:
      return event.node ? `${event.node.replace(/_/g, " ")}…` : "working…";
  }
}

/** A search over several collections: `searched: vault, engine-code ×3` (the collections in
 * order, with the weight routing gave each when above 1); null for one collection. */
export function describeSearched(searched: unknown): string | null {
  if (!Array.isArray(searched) || searched.length < 2) return null;
  const names = (searched as unknown[])
    .filter((c): c is { name: string; weight?: unknown } => typeof (c as { name?: unknown } | null)?.name === "string")
    .map((c) => (typeof c.weight === "number" && c.weight > 1 ? `${c.name} ×${c.weight}` : c.name));
  return names.length ? `searched: ${names.join(", ")}` : null;
}

/** The progress line once the answer is complete. */
export function describeDone(citations: number, aspects: number | null, searched?: string | null): string {
  const parts = ["done", plural(citations, "source")];
  if (aspects !== null && aspects > 1) parts.push(plural(aspects, "aspect"));
  if (searched) parts.push(searched);
  return parts.join(" · ");
}
