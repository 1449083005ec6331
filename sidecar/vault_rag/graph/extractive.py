"""The answer without a language model: quote the best passages, each with its citation.

Deterministic and faithful by construction: every quoted line is copied verbatim from a
document, so a citation always points at text that contains the quote. For each document the
excerpt is the window of consecutive lines that shares the most terms with the question
(same tokeniser as the lexical index, so Chinese and UE identifiers count properly).
"""

from __future__ import annotations

from vault_rag.graph.state import Doc
from vault_rag.index.tokenize import tokenize

NO_MODEL_NOTE = (
    "No language model is configured, so this answer quotes the most relevant passages of "
    "your notes instead of writing one (set VAULT_RAG_LLM_MODEL, and VAULT_RAG_LLM_BASE_URL "
    "for a local server, to get written answers)."
)
MAX_PASSAGES = 3
MAX_EXCERPT_CHARS = 420


def best_excerpt(text: str, question_terms: set[str], max_chars: int = MAX_EXCERPT_CHARS) -> str:
    """The run of consecutive non-empty lines, at most `max_chars` long, with the most
    question terms (ties: the earliest). Lines are kept whole unless a single line is longer
    than the limit, in which case it is cut at the limit."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    weights = [len(question_terms & set(tokenize(line))) for line in lines]
    best: tuple[int, int, int] = (-1, 0, 0)  # (score, start, end)
    for start in range(len(lines)):
        size, score = 0, 0
        for end in range(start, len(lines)):
            size += len(lines[end]) + 1
            if size > max_chars and end > start:
                break
            score += weights[end]
            if score > best[0]:
                best = (score, start, end + 1)
    _, start, end = best
    excerpt = "\n".join(lines[start:end])
    return excerpt if len(excerpt) <= max_chars else excerpt[:max_chars].rstrip() + " …"


def extractive_answer(
    question: str, docs: list[Doc], *, max_passages: int = MAX_PASSAGES, lead: str = ""
) -> tuple[str, list[str]]:
    """Markdown quoting the top documents (already in best-first order). Returns the text and
    the ids of the documents quoted."""
    terms = set(tokenize(question))
    parts: list[str] = [lead] if lead else []
    used: list[str] = []
    for doc in docs[:max_passages]:
        excerpt = best_excerpt(doc["text"], terms)
        if not excerpt:
            continue
        quoted = "\n".join(f"> {line}" for line in excerpt.splitlines())
        parts.append(f"{quoted}\n\n— {doc['cite']}")
        used.append(doc["id"])
    if not used:
        parts.append(f"Your notes have nothing that answers “{question}”.")
    return "\n\n".join(parts), used
