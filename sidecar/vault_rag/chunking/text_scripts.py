"""Which writing system a text is in: Han, Latin, Cyrillic, … (issue 28, cross-language search).

The search translates a question only when its script differs from most of the vault's text,
so both sides are counted the same way, cheaply and without a language model:

* Scripts written without spaces (Han, kana, Hangul, Thai) count one unit per character, the
  others one unit per word: a Chinese sentence and its English translation then weigh about
  the same, where counting letters would make any English term outweigh the Chinese around it.
* Fenced code blocks and inline code are left out: identifiers in a Chinese note's C++ say
  nothing about the language its reader writes in.
* Kana makes Han text Japanese (Japanese mixes both): when kana is at least a tenth of the
  two, they count together as `japanese`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

# One unit per character
_CHARS: dict[str, re.Pattern[str]] = {
    "han": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "kana": re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]"),
    "hangul": re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
    "thai": re.compile(r"[\u0e00-\u0e7f]"),
}
# One unit per word
_WORDS: dict[str, re.Pattern[str]] = {
    "latin": re.compile(r"[A-Za-z\u00c0-\u024f]+"),
    "cyrillic": re.compile(r"[\u0400-\u04ff]+"),
    "greek": re.compile(r"[\u0370-\u03ff]+"),
    "arabic": re.compile(r"[\u0600-\u06ff]+"),
    "hebrew": re.compile(r"[\u0590-\u05ff]+"),
    "devanagari": re.compile(r"[\u0900-\u097f]+"),
}
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[^\n]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
KANA_SHARE = 0.1  # kana at least this share of Han + kana: the text is Japanese

# The language a translation is asked for, per script (a Latin-script vault is taken to be
# English unless the `translate_to` setting names its language).
LANGUAGES: dict[str, str] = {
    "han": "Chinese",
    "japanese": "Japanese",
    "hangul": "Korean",
    "thai": "Thai",
    "latin": "English",
    "cyrillic": "Russian",
    "greek": "Greek",
    "arabic": "Arabic",
    "hebrew": "Hebrew",
    "devanagari": "Hindi",
}


def script_counts(text: str) -> Counter[str]:
    """Units of text per script (see the module docstring), code left out."""
    prose = _INLINE_CODE.sub(" ", _FENCED.sub("\n", text))
    counts: Counter[str] = Counter()
    for name, pattern in _CHARS.items():
        found = len(pattern.findall(prose))
        if found:
            counts[name] = found
    for name, pattern in _WORDS.items():
        found = len(pattern.findall(prose))
        if found:
            counts[name] = found
    return counts


def merged(counts: Mapping[str, int]) -> Counter[str]:
    """`counts` with Han and kana joined into `japanese` when the kana says so."""
    out = Counter({k: int(v) for k, v in counts.items() if v})
    han, kana = out.get("han", 0), out.get("kana", 0)
    if kana and kana >= KANA_SHARE * (han + kana):
        out["japanese"] = han + kana
        out.pop("han", None)
        out.pop("kana", None)
    return out


def dominant_script(counts: Mapping[str, int], share: float = 0.5) -> str | None:
    """The script holding more than `share` of the units, or None (no text, or mixed)."""
    joined = merged(counts)
    total = sum(joined.values())
    if not total:
        return None
    script, units = joined.most_common(1)[0]
    return script if units > share * total else None


def script_of(text: str) -> str | None:
    """The script most of `text` is written in (a question: more than half its units)."""
    return dominant_script(script_counts(text))
