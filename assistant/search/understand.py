"""Reading venues, years, authors and topics named in a question.

Names are matched against the values that exist in the corpus, so a question
never turns into a filter on something the corpus does not hold.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from assistant.index.catalogue import Catalogue
from assistant.text import YEAR, fold, name_like
from assistant.types import Filters

_KIND = re.compile(r"\b(papers?|works?|topic|area|track|articles?)\b")
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)


@dataclass(frozen=True)
class Understood:
    """Filters named in the question, topics to boost, and the question without them."""

    filters: Filters
    topics: tuple[str, ...]
    rest: str


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])")


class QuestionReader:
    """Finds corpus values named in plain words."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self.years = set(catalogue.years)
        surnames: dict[str, list[str]] = defaultdict(list)
        for key in catalogue.authors:
            parts = key.split()
            if len(parts) >= 2 and len(parts[-1]) >= 4:
                surnames[parts[-1]].append(key)
        # A surname names an author only when exactly one author has it.
        self.surnames = {s: keys[0] for s, keys in surnames.items() if len(keys) == 1}
        # Distinct names first, then folded: folding every paper's (a million) took 4.7 s.
        self.subareas = {fold(s) for s in catalogue.subarea_names}
        self.subareas -= {fold(a) for a in catalogue.area_names}
        self.topics = {
            key: _phrase_pattern(key)
            for key in catalogue.topics
            # Multi-word names only: a lone "theory" in a question is not a topic request.
            if "·" not in key and len(key.split()) >= 2
        }

    def read(self, question: str) -> Understood:
        folded = fold(question)
        spans: list[tuple[int, int]] = []
        venue = None
        year = None
        # Names are looked up by the question's word n-grams: one dict lookup per n-gram,
        # whatever the number of venues and authors (hundreds of thousands at scale).
        grams = _ngrams(folded)
        for key, span in grams:
            if key in self.catalogue.venues:
                venue = self.catalogue.venues[key]
                spans.append(span)
                break
        for m in YEAR.finditer(folded):
            if int(m.group(1)) in self.years:
                year = int(m.group(1))
                spans.append(m.span())
                break
        author = None
        for key, span in grams:
            if " " in key and key in self.catalogue.authors:
                author = self.catalogue.authors[key]
                spans.append(span)
                break
        if author is None:
            # A capitalised surname in the original question ("what has Bronstein done?").
            for m in _WORD.finditer(question):
                word = m.group(0)
                key = fold(word)
                if word[:1].isupper() and key in self.surnames:
                    author = self.catalogue.authors[self.surnames[key]]
                    spans.append(m.span())
                    break
        # A named subarea is specific enough to boost; a broad area ("reinforcement
        # learning") only when the question asks for papers of a kind.
        wants_kind = bool(_KIND.search(folded))
        topics = []
        for key, pattern in sorted(self.topics.items(), key=lambda kv: -len(kv[0])):
            if pattern.search(folded) and (wants_kind or key in self.subareas):
                topics.append(self.catalogue.topics[key])
        filters = Filters(venue=venue, year_from=year, year_to=year, author=author)
        rest = question
        if spans and len(fold(question)) == len(question):
            for start, end in sorted(spans, reverse=True):
                rest = rest[:start] + " " + rest[end:]
        rest = " ".join(rest.split())
        return Understood(filters=filters, topics=tuple(topics), rest=rest or question)


_GRAM_WORD = re.compile(r"[^\s,;:?!()\"]+")


def _ngrams(folded: str, longest: int = 6) -> list[tuple[str, tuple[int, int]]]:
    """Every run of 1..longest words of the (folded) question, longest first, with its span."""
    words = [(m.group(0).strip(".'’"), m.start(), m.end()) for m in _GRAM_WORD.finditer(folded)]
    out = []
    for n in range(min(longest, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            key = " ".join(w for w, _, _ in words[i : i + n])
            out.append((key, (words[i][1], words[i + n - 1][2])))
    return out


def named_terms(question: str) -> list[str]:
    """Name-like words of a question (PolySHAP, i-QN, ProjKAN): each may name one paper."""
    words = re.findall(r"(?<![\w-])([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)", question)
    return [w for w in words if name_like(w)]
