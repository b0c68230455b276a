"""Which figure of a "respectively" sentence belongs to which setting.

"Experiments on algorithmic and next-token-prediction tasks show that our regularizer …
accelerates training by approximately $35$\\% and $75$\\% respectively" gives 35% for the
algorithmic tasks and 75% for next-token prediction. A cosine sees both figures next to
both settings; `bindings` pairs them in order, so a claim of "35% on next-token
prediction" can be told from the abstract's own pairing.

The parse is deliberately narrow: a list of k figures (a range such as "1.6–2.1×" is one
figure) joined by "and", "or" or commas, and a list of k settings joined the same way,
between the figures and "respectively" or before the figures after a preposition ("on
the CIFAR-10 and ImageNet-1k datasets"). Anything else — a mismatch in counts, figures
inside parentheses ("0.309 (0.178, 0.439), respectively"), lists of names the figures do not
follow — binds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.answer.quantities import Quantity, cleaned, quantities
from assistant.text import fold

_RESPECTIVELY = re.compile(r"\brespectively\b", re.IGNORECASE)
# Between two figures of one list: units, then "and"/"or"/a comma, maybe "by"/"of"/"at"
_UNIT_CHARS = re.compile(r"(?:[\s%$\\{}×xX]|percent\b|per cent\b|pp\b)*")
_JOIN = re.compile(r",?\s*(?:and|or|vs\.?|versus)?\s*(?:by|of|at|to|in|on)?\s*[$\\{]*", re.IGNORECASE)
_PREPOSITIONS = r"on|for|in|across|of|to|with|over|at|under|from|between|among"
# A list of settings: a preposition (and maybe "the"), then items of one to three words joined
# by commas and a final "and"/"or"
_ITEM = r"[^\W\d_][\w\-.]*(?:\s+[^\W\d_][\w\-.]*){0,2}?"
_SETTINGS = re.compile(
    rf"\b(?:{_PREPOSITIONS})\s+(?:the\s+)?"
    # the last item is its first word, not followed by a preposition ("and fine-tuned on COCO"
    # coordinates verbs, not settings)
    rf"((?:{_ITEM}\s*,\s*)*{_ITEM}\s*,?\s+(?:and|or)\s+[\w\-.]+(?![\w\-.]))(?!\s+(?:{_PREPOSITIONS}|by)\b)",
    re.IGNORECASE,
)
_AFTER_PREPOSITION = re.compile(
    rf"\s+(?:{_PREPOSITIONS}|by)\s+(?:the\s+)?", re.IGNORECASE
)  # "ImageNet for ResNet-50"
_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.IGNORECASE)
_KEY = re.compile(r"[a-z][a-z0-9]*")
# Words that name no setting ("tasks", "datasets") and so tell none apart
_GENERIC = frozenset(
    "task tasks dataset datasets benchmark benchmarks setting settings model models case cases"
    " experiment experiments data the both all each other".split()
)


@dataclass(frozen=True)
class Binding:
    """One figure of a "respectively" list and the words that name its setting."""

    figures: tuple[Quantity, ...]  # one figure, or a range's two ends
    setting: str  # as the sentence writes it ("next-token-prediction")
    keys: frozenset[str]  # the setting's words no other setting of the list has


def bindings(sentence: str) -> list[Binding]:
    """Each figure of the sentence's "respectively" list with its setting (`Binding`); no
    bindings when the sentence has none that parses (module docstring)."""
    clean = cleaned(sentence)
    m = _RESPECTIVELY.search(clean)
    if m is None:
        return []
    groups = _figure_groups(clean, [q for q in quantities(sentence) if q.span[1] <= m.start()])
    if len(groups) < 2:
        return []
    first, last = groups[0][0].span[0], groups[-1][-1].span[1]
    tail = clean[last : m.start()]
    if ")" in tail.split("(")[0]:
        return []  # the figures sit inside parentheses ("0.309 (0.178, 0.439), respectively")
    between = [s for s in _settings(tail) if len(s) == len(groups)]
    before = [s for s in _settings(clean[:first]) if len(s) == len(groups)]
    items = between[0] if between else (before[-1] if before else None)
    if items is None:
        return []
    words = [_keys(item) for item in items]
    found = [
        Binding(tuple(group), item, frozenset(w - set().union(*(o for j, o in enumerate(words) if j != i))))
        for i, (group, item, w) in enumerate(zip(groups, items, words, strict=True))
    ]
    # a setting no word tells apart ("image classification and image segmentation": the last
    # item is read as its first word, "image"): the pairing cannot be checked
    return found if all(b.keys for b in found) else []


def names(text: str, binding: Binding) -> bool:
    """Does the text name the binding's setting?"""
    return bool(binding.keys & _keys(text))


def _figure_groups(clean: str, found: list[Quantity]) -> list[list[Quantity]]:
    """The list of figures that ends at the last one before "respectively", walking back
    while only units and a join ("and", "," , "and by") stand between two figures; a range's
    ends ("1.6 2.1" once cleaned) make one figure."""
    if not found:
        return []
    ordered = sorted(found, key=lambda q: q.span[0])
    groups = [[ordered[-1]]]
    for q in reversed(ordered[:-1]):
        gap = clean[q.span[1] : groups[0][0].span[0]]
        rest = gap[_UNIT_CHARS.match(gap).end() :]  # type: ignore[union-attr]
        if not rest.strip():
            groups[0].insert(0, q)  # a range
        elif _JOIN.fullmatch(rest):
            groups.insert(0, [q])
        else:
            break
    return groups


def _settings(text: str) -> list[list[str]]:
    """Each list of settings in the text, as its items."""
    return [
        [_AFTER_PREPOSITION.split(i)[-1] for i in _SPLIT.split(m.group(1)) if i.strip()]
        for m in _SETTINGS.finditer(text)
    ]


def _keys(text: str) -> set[str]:
    """The words (and the parts of hyphenated words, of three letters or more) of a text."""
    folded = fold(text)
    return {w for w in _KEY.findall(folded) if len(w) >= 3 and w not in _GENERIC}
