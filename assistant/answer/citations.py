"""Citations: numbering papers in order of first use, reading markers ("[1, 3]"), writing
them before a sentence's final stop, and telling a citation used as a noun ("[1] shows
that …") from one that closes a claim."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.types import Citation, Paper, SentenceSupport

MARKER = re.compile(r"\s*\[(\d+(?:\s*[,;]\s*\d+)*)\]")
PARTIAL_MARKER = re.compile(r"\[[\d,;\s]*$")


# "$\alpha \in [1,2]$": brackets inside a formula are an interval, never a citation. Not
# money: "$5 [1] and $10 [2]" (a digit after the "$", then a space before the next "$").
_MATH = re.compile(r"\$(?!\d[^$]*\s)[^$]+\$")


def _citations(text: str) -> list[re.Match[str]]:
    """The markers outside formulas."""
    spans = [m.span() for m in _MATH.finditer(text)]
    return [m for m in MARKER.finditer(text) if not any(a <= m.end() - 1 < b for a, b in spans)]


def _outside_math(pattern: re.Pattern[str], repl: str, text: str) -> str:
    out, last = [], 0
    for m in _MATH.finditer(text):
        out += [pattern.sub(repl, text[last : m.start()]), m.group(0)]
        last = m.end()
    return "".join(out) + pattern.sub(repl, text[last:])


def markers(text: str) -> tuple[list[int], str]:
    """'A claim [1, 3].' -> ([1, 3], 'A claim.')"""
    numbers = [int(n) for m in _citations(text) for n in re.split(r"[,;]", m.group(1))]
    return numbers, _outside_math(MARKER, "", text).strip()


# A citation used as a noun: "[1] shows that …", "as shown in [2], …", "unlike [3]".
_NOUN_AFTER = frozenset(
    "in by from see of to and with than cf cf. both unlike following like per versus vs vs.".split()
)
SLOT = re.compile("\ue000(\\d+)\ue001")


def noun_markers(text: str) -> tuple[str, list[int]]:
    """The sentence with each citation used as a noun replaced by a slot (the marker's first
    number), and those numbers. Other markers are left for `markers` to remove."""
    out, nouns, last = [], [], 0
    for m in _citations(text):
        before, after = text[: m.start()], text[m.end() :]
        words = before.split()
        starts = not words and re.match(r"\s+[a-z]", after) is not None
        if starts or (words and words[-1].lower() in _NOUN_AFTER):
            number = int(re.split(r"[,;]", m.group(1))[0])
            out.append(text[last : m.start()] + ("" if starts else " ") + f"\ue000{number}\ue001")
            nouns.append(number)
            last = m.end()
    return "".join(out) + text[last:], nouns


_BRACKETED_NUMBER = re.compile(r"\[(\d+(?:\s*[,;–-]\s*\d+)*)\]")


def cite(sentence: str, numbers: tuple[int, ...]) -> str:
    """'A claim.' -> 'A claim [1].' A bracketed number quoted from an abstract
    ('Arrow and Debreu [1954]') becomes '(1954)' so it cannot pass for a citation."""
    sentence = _outside_math(_BRACKETED_NUMBER, r"(\1)", sentence)
    marks = "".join(f"[{n}]" for n in numbers)
    if not marks:
        return sentence
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} {marks}{sentence[-1]}"
    return f"{sentence} {marks}"


def shown(sentence: SentenceSupport) -> str:
    """A checked sentence as its answer shows it. A citation kept in place ("described in
    [1]") is already in its text: citing that text again would show "described in (1) [1]"."""
    return sentence.shown if sentence.shown is not None else cite(sentence.text, sentence.citations)


@dataclass
class Numbering:
    """Citation numbers in order of first use: each paper gets the next number once."""

    citations: list[Citation] = field(default_factory=list)
    _numbers: dict[str, int] = field(default_factory=dict)

    def number(self, paper: Paper, score: float = 0.0) -> int:
        if paper.id not in self._numbers:
            self._numbers[paper.id] = len(self._numbers) + 1
            self.citations.append(Citation(self._numbers[paper.id], paper, score))
        return self._numbers[paper.id]
