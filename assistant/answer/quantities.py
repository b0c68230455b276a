"""Quantities a sentence states, so a claim's numbers can be checked against its source.

A cosine cannot tell "reduces error by 12%" from "by 21%": the citation check asks, in
addition, that every quantity of an answer sentence is stated by the abstract it cites.
A quantity is a number written in digits ("12.4", "12.4 %", "1,024", "3×", "1.5M") or
in words ("two" … "twenty", "thirty" … "ninety", "1.5 million"); a range ("12–15")
is its two ends. Numbers that are part of a name are not quantities: "GPT-4",
"ResNet-50", "F1", "3D", "L2", "Qwen2.5" (a digit touching a letter, or joined to one
by a hyphen); nor is the base of a power ("$2^d$ evaluations" states no 2; "$180^\\circ$"
still states 180).

A sentence's number matches a source's number when they are equal at the sentence's
precision: "about 12%" is stated by an abstract that says "12.4%", "12.40" by "12.4";
"21%" is not.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90, "hundred": 100, "twice": 2, "twofold": 2, "threefold": 3, "fourfold": 4,
    "fivefold": 5, "tenfold": 10,
}  # fmt: skip
_SCALE = {
    "k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
    "t": 1e12, "trillion": 1e12,
}  # fmt: skip

# A number in digits: not part of a name ("GPT-4", "F1", "Qwen2.5", "3D"), thousands
# separators allowed, optional decimals, then optionally a scale: a word ("1.5 million",
# "2 bn") or a letter written against the digits ("1.5M", "7B", "10k"); a multiplication
# sign may follow ("3x", "3×").
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9.])(?<![A-Za-z]-)(?<![A-Za-z]_)(?<!\d,)"
    r"(\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(\d+))?"
    r"(?:\s?(thousand|million|billion|trillion|bn)|([kKmMbBtT]))?"
    r"(?![A-Za-z0-9](?<![xX])|\.\d|-[A-Za-z]|\s?\^\s?\{?[A-Za-z0-9]|,\d{3})"
)
_PERCENT = re.compile(r"(?:\$|\})*\s?(?:%|percent\b|per cent\b|pp\b|percentage points?\b)")
_CITATION = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_WORD_NUMBER = re.compile(
    r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b"
    r"(?:\s+(thousand|million|billion|trillion))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """A number as written: its value and the place value of its last digit ("12.4": 0.1)."""

    value: float
    step: float
    text: str
    percent: bool = False
    span: tuple[int, int] = field(default=(0, 0), compare=False)  # where, in the cleaned text

    @property
    def year(self) -> bool:
        """Written like a year ("2024"): four plain digits from 1900 to 2099."""
        return not self.percent and self.step == 1 and len(self.text) == 4 and 1900 <= self.value <= 2099

    @property
    def in_digits(self) -> bool:
        """Written in digits ("12"), not in words ("twelve")."""
        return self.text[:1].isdigit()

    def stated_by(self, other: Quantity) -> bool:
        """`other` says this at this quantity's precision: "12%" is stated by "12.4%", not by
        "12.6%" or "21%"; "12.40" only by 12.4 itself; "91%" by "0.91"."""
        if self.percent != other.percent:
            factor = 100.0 if self.percent else 0.01
            other = Quantity(other.value * factor, other.step * factor, other.text, self.percent)
        if abs(other.value - self.value) <= 1e-9 * max(1.0, abs(self.value)):
            return True
        return other.step < self.step and abs(other.value - self.value) <= self.step / 2 * (1 + 1e-9)


def cleaned(text: str) -> str:
    """The text as `quantities` reads it: the spans of its quantities index this."""
    text = unicodedata.normalize("NFKC", text)
    text = _CITATION.sub(" ", text.replace("\\%", "%").replace("\\,", " "))
    return re.sub(r"(?<=\d)[-\u2010-\u2015\u2212~](?=\d)", " ", text)  # a range: 12–15 -> 12 15


def quantities(text: str) -> list[Quantity]:
    """Every quantity of a text (years and counts included; names with digits excluded)."""
    text = cleaned(text)
    found: list[Quantity] = []
    for m in _NUMBER.finditer(text):
        whole, frac, word, letter = m.groups()
        scale = _SCALE[(word or letter or "").lower()] if (word or letter) else 1.0
        value = float(whole.replace(",", "") + ("." + frac if frac else ""))
        step = 10.0 ** -(len(frac) if frac else 0)
        percent = bool(_PERCENT.match(text, m.end()))
        found.append(Quantity(value * scale, step * scale, m.group(0).strip(), percent, m.span()))
    for m in _WORD_NUMBER.finditer(text):
        scale = _SCALE[m.group(2).lower()] if m.group(2) else 1.0
        percent = bool(_PERCENT.match(text, m.end()))
        found.append(Quantity(_WORDS[m.group(1).lower()] * scale, scale, m.group(0), percent, m.span()))
    return found


def unstated(mine: list[Quantity], theirs: list[Quantity]) -> list[Quantity]:
    """The quantities of `mine` that none of `theirs` states."""
    return [q for q in mine if not any(q.stated_by(t) for t in theirs)]


# Inline math: no space just before its closing dollar, so "costs $5 per call and $10 per
# batch" is money, not a formula.
_MATH_SEGMENT = re.compile(r"\$[^$]*(?<!\s)\$")
_LATEX_COMMAND = re.compile(r"\\[a-zA-Z]+")
_LATEX_UNIT = re.compile(r"\\(?:mathrm|text|textrm|mbox|rm)\s*\{[^{}]*\}")  # "$7\mathrm{B}$": a unit


def in_formula(text: str, quantity: Quantity) -> bool:
    """Is this quantity (found by `quantities(text)`) part of a formula rather than a figure:
    an exponent or index ("(N/M)^2", "d_0"), or inside `$…$` math that has a variable
    ("$O(T^{-1/4})$"; "$12$", "$2\\times$", "$7\\mathrm{B}$" and "$N = 12$" are figures)?"""
    clean = cleaned(text)
    start, end = quantity.span
    before = clean[:start].rstrip(" {(-")
    if before.endswith(("^", "_")):
        return True
    for m in _MATH_SEGMENT.finditer(clean):
        if m.start() <= start and end <= m.end():
            if clean[m.start() : start].rstrip(" {(").endswith("="):
                return False  # "$N = 12$": a value given, a figure like any other
            return any(c.isalpha() for c in _LATEX_COMMAND.sub("", _LATEX_UNIT.sub("", m.group(0))))
    return False


# Plural nouns that measure rather than name what is counted ("by 3 points", "two orders of
# magnitude", "12 times faster", "12 milliseconds", "3 pixels", "298 metres").
_UNITS = frozenset(
    "points times orders bits bytes digits decibels seconds milliseconds microseconds nanoseconds"
    " minutes hours days weeks months years degrees percentage folds pixels nats dollars flops"
    " gflops tflops kilobytes megabytes gigabytes terabytes metres meters kilometres kilometers"
    " centimetres centimeters millimetres millimeters micrometres micrometers nanometres nanometers"
    " miles feet inches grams kilograms milligrams tonnes tons litres liters millilitres milliliters"
    " watts kilowatts megawatts joules kilojoules volts amperes hertz calories kilocalories kelvins".split()
)
# Words that end the phrase a number counts ("85 on three benchmarks": 85 counts nothing), and
# comparatives: "4x fewer parameters", "twice as many tokens" are factors, not counts.
_PHRASE_END = frozenset(
    "of in on over than and or to at for with by from across per under within while when"
    " which that is are was were as fewer more less faster slower lower higher larger smaller"
    " better worse".split()
)
_LOOKS_PLURAL = frozenset("whereas thus always perhaps besides sometimes".split())
_FACTOR_WORDS = frozenset("twice twofold threefold fourfold fivefold tenfold".split())


def counts_things(text: str, quantity: Quantity) -> bool:
    """Is this quantity (found by `quantities(text)`) a count of things ("across 54 KGs",
    "these two measures", "22 state-of-the-art LLMs") rather than a measured figure: a whole
    number, not a percentage nor a factor ("3x", "twice"), whose phrase ends within three
    words in a plural noun that is not a unit ("by 3 points", "two orders of magnitude") nor
    a rate ("1,200 tokens per second")?"""
    if quantity.percent or quantity.step < 1 or quantity.value != int(quantity.value):
        return False
    if quantity.text.casefold() in _FACTOR_WORDS:
        return False
    after = cleaned(text)[quantity.span[1] :]
    if after[:1] in ("x", "X", "×") or after.lstrip()[:1] == "×" or "fold" in after.split(" ", 1)[0]:
        return False  # "3x speed-ups", "3 × faster", "10-fold"
    words = after.split()
    for i, word in enumerate(words[:3]):
        word = word.strip(".,;:()[]{}$\"'“”")
        if not word or not word[0].isalpha() or word.casefold() in _PHRASE_END:
            return False
        folded = word.casefold()
        if len(word) > 2 and folded.endswith("s") and not folded.endswith(("ss", "us", "is")):
            if folded in _UNITS or folded in _LOOKS_PLURAL:
                return False
            rate = i + 1 < len(words) and (words[i + 1].casefold() == "per" or words[i + 1].startswith("/"))
            return not (rate or "/" in word)
    return False


def words_after(text: str, quantity: Quantity, words: int) -> list[str]:
    """The `words` tokens that follow a quantity `quantities(text)` found, as written."""
    return cleaned(text)[quantity.span[1] :].split()[:words]


def around(text: str, quantity: Quantity, words: int) -> str:
    """The `words` words (tokens with a letter) either side of a quantity that
    `quantities(text)` found: what it measures ("on 12 benchmarks", "a notable $5.7\\%$
    improvement over TruthfulQA")."""
    clean = cleaned(text)
    start, end = quantity.span
    before = [w for w in clean[:start].split() if any(c.isalpha() for c in w)]
    after = [w for w in clean[end:].split() if any(c.isalpha() for c in w)]
    return " ".join(before[-words:] + after[:words])
