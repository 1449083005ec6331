"""`vault-rag eval --translate`: the search as the answer graph runs it for a question in another
script than the vault's, the question and its translation (`retrieval/translate.py`).

Each query is searched on its own, exactly as `IndexSystem` searches; the two result lists are
merged the way the graph's `documents` reducer merges its queries' results (one entry per
passage, its best score kept) and ranked by score, the original question's results first on a
tie. A question that gets no translation is searched alone, so it scores as `ours` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vault_rag.evaluation.metrics import Hit
from vault_rag.evaluation.retrieval import SIDES
from vault_rag.index.vault_index import VaultIndex
from vault_rag.retrieval.hybrid import SearchOptions, SearchResult, hybrid_search
from vault_rag.retrieval.translate import QueryTranslator, Translation, translate_question


def merge_best_score(lists: list[list[SearchResult]]) -> list[SearchResult]:
    """One result per passage (its best score), best first; earlier lists win ties."""
    best: dict[str, tuple[float, int, SearchResult]] = {}
    order = 0
    for results in lists:
        for result in results:
            kept = best.get(result.chunk_id)
            if kept is None or result.score > kept[0]:
                position = kept[1] if kept is not None else order
                best[result.chunk_id] = (result.score, position, result)
            order += 1
    return [r for _, _, r in sorted(best.values(), key=lambda v: (-v[0], v[1]))]


@dataclass
class TranslatedSystem:
    index: VaultIndex
    options: SearchOptions
    translator: QueryTranslator
    relevance_bar: float
    name: str = "ours+translate"
    # question -> its outcome: each question is translated once per run
    translations: dict[str, Translation] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.options = replace(self.options, retrievers=SIDES["fused"], prior=None)
        self.script = self.index.vault_script()

    def translation(self, question: str) -> Translation:
        if question not in self.translations:
            self.translations[question] = translate_question(
                question, self.script, self.translator, self.index.provider, self.relevance_bar
            )
        return self.translations[question]

    def search(self, question: str) -> list[Hit]:
        lists = [hybrid_search(self.index, question, self.options)]
        translated = self.translation(question).text
        if translated:
            lists.append(hybrid_search(self.index, translated, self.options))
        return [
            Hit(r.note_path, r.heading_path, tuple(r.embedded_in), r.chunk_id, r.page, r.page_end)
            for r in merge_best_score(lists)[: self.options.k]
        ]

    def summary(self) -> dict[str, Any]:
        """How many questions were sent, translated, and why the others were not."""
        reasons: dict[str, int] = {}
        for outcome in self.translations.values():
            if outcome.text is None:
                reason = outcome.reason.split(" (")[0]
                reasons[reason] = reasons.get(reason, 0) + 1
        return {
            "vault_script": self.script,
            "model": self.translator.label,
            "questions": len(self.translations),
            "asked": sum(1 for t in self.translations.values() if t.asked),
            "translated": sum(1 for t in self.translations.values() if t.text),
            "not_translated": reasons,
            "pairs": [
                {"question": q, **t.as_dict()} for q, t in self.translations.items() if t.asked
            ],
        }
