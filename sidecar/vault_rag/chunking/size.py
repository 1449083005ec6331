"""Chunk size in "size units": one CJK character or one Latin-style word counts one.

Why not characters or bytes: a chunk of 1000 Chinese characters and one of 1000 English words
carry roughly the same amount of meaning, and both sit comfortably inside the context of common
embedding models. Characters would make English chunks tiny; whitespace words would make a
Chinese paragraph (no spaces) count as one.

Rules:
- Each Han ideograph, kana and hangul character counts one (plus 々 〆 〇, which behave like
  ideographs). CJK punctuation (。，、「」…) and all other punctuation count zero: they carry no
  content of their own.
- Every run of word characters (letters, digits, underscore, combining marks) counts one, with a
  directly attached `+`/`#` suffix kept in the word, so `UPrimitiveComponent`, `snake_case`,
  `C++`, `C#` and `3` are one unit each; `don't` and `3.14` are two.
- Scripts written without spaces other than CJK (Thai, Lao, Khmer, Myanmar) count one per
  whitespace-separated run: an underestimate, acceptable for targeting sizes.
"""

from __future__ import annotations

import re

# Code point ranges counted one unit per character. Kept as a regex class body so both the
# word pattern (which must exclude them) and the CJK pattern share one definition.
_CJK_CLASS = (
    "\u3005-\u3007"  # 々 〆 〇
    "\u3041-\u309f"  # hiragana
    "\u30a0-\u30fa\u30fc-\u30ff"  # katakana (without the ・ middle dot)
    "\u3100-\u312f\u31a0-\u31bf"  # bopomofo
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # halfwidth katakana
    "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff\uffa0-\uffdc"  # hangul
    "\U00020000-\U0002fa1f"  # CJK extensions B-F, I and compatibility supplement
    "\U00030000-\U000323af"  # CJK extensions G-H
)
# Combining marks and joiners do not match \w in Python; without them "é" written as e + U+0301
# or a Devanagari word would count as several words.
_WORD_EXTRA = "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u200c\u200d"  # noqa: E501

CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")
_UNITS = re.compile(f"(?:[^\\W{_CJK_CLASS}]|[{_WORD_EXTRA}])+[+#]*|[{_CJK_CLASS}]")


def is_cjk(char: str) -> bool:
    """True for a single character that counts as one CJK unit."""
    return CJK_CHAR.fullmatch(char) is not None


def text_size(text: str) -> int:
    """Size of `text` in size units (see module docstring)."""
    return len(_UNITS.findall(text))


def unit_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) offsets of every size unit of `text[start:end]`, in order.

    The splitter cuts between units, so a cut never lands inside a word or splits `C++`.
    """
    stop = len(text) if end is None else end
    return [m.span() for m in _UNITS.finditer(text, start, stop)]
