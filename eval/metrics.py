"""Retrieval and answer metrics (pure functions)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence


def recall_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & gold) / len(gold)


def mrr_at(ranked: Sequence[str], gold: set[str], k: int = 10) -> float:
    for i, pid in enumerate(ranked[:k], start=1):
        if pid in gold:
            return 1.0 / i
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: set[str], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 1) for i, pid in enumerate(ranked[:k], start=1) if pid in gold)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), k) + 1))
    return dcg / ideal if ideal else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def fact_hit(text: str, fact: str) -> bool:
    """A fact is 'a|b|c': any alternative found counts, case aside and written as plain
    text or as LaTeX alike ("by 5.7%" gives the fact "$5.7\\%$", "12 benchmarks" gives
    "$12$ benchmarks"); a bare number only as a whole number ("$0$" is not in "10")."""
    plain = _plain(text)
    for alt in (_plain(a) for a in fact.split("|")):
        if not alt:
            continue
        if re.fullmatch(r"[\d.,]+", alt):
            if re.search(rf"(?<![\w.]){re.escape(alt)}(?![\w]|\.\d)", plain):
                return True
        elif alt in plain:
            return True
    return False


def _plain(text: str) -> str:
    """Lower case, without LaTeX's math delimiters, escaped percent signs, thin spaces and
    ties, and with runs of white space as one space."""
    text = text.lower().replace("\\%", "%").replace("$", "").replace("\\,", "").replace("~", " ")
    return " ".join(text.split())


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")
