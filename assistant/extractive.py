"""The extractive backend: the most relevant sentences of the top abstracts, cited.

No LLM. It is always available and it is what `ask` falls back to (and says so)
when a model's answer fails the citation check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from assistant.embed import Embedder
from assistant.text import split_sentences
from assistant.types import REFUSAL, Answer, Citation, Hit, SentenceSupport


@dataclass(frozen=True)
class ScoredSentence:
    hit: Hit
    text: str
    score: float


def score_sentences(question: str, hits: list[Hit], embedder: Embedder) -> list[ScoredSentence]:
    """Every sentence of the hits' abstracts, scored by cosine with the question."""
    pairs = [(hit, s) for hit in hits for s in split_sentences(hit.paper.abstract)]
    if not pairs:
        return []
    vectors = embedder.encode([question] + [s for _, s in pairs])
    sims = vectors[1:] @ vectors[0]
    return [ScoredSentence(h, s, float(x)) for (h, s), x in zip(pairs, sims)]


def refusal(question: str, nearest: list[Hit], why: str, **extra: object) -> Answer:
    closest = "; ".join(f"“{h.paper.label}”" for h in nearest[:3])
    reason = why + (f" The closest papers are: {closest}." if closest else "")
    return Answer(question=question, text=REFUSAL, citations=(), refused=True, reason=reason, **extra)  # type: ignore[arg-type]


def extractive_answer(
    question: str,
    hits: list[Hit],
    embedder: Embedder,
    max_sentences: int,
    min_score: float,
    per_paper: int = 2,
    relative: float = 0.7,
    paper_share: float = 0.6,
) -> tuple[str, tuple[Citation, ...], tuple[SentenceSupport, ...]] | None:
    """Pick the best sentences (at most `per_paper` from one paper); None when none pass."""
    # Papers far behind the best in the fused ranking only add noise to so short an answer.
    top = max((h.score for h in hits), default=0.0)
    hits = [h for h in hits if h.score >= paper_share * top]
    scored = sorted(score_sentences(question, hits, embedder), key=lambda s: -s.score)
    chosen: list[ScoredSentence] = []
    used: dict[str, int] = {}
    # Sentences far below the best one are off the point even if above the floor.
    floor = max(min_score, relative * scored[0].score) if scored else min_score
    for s in scored:
        if s.score < floor or len(chosen) >= max_sentences:
            break
        if used.get(s.hit.paper.id, 0) >= per_paper:
            continue
        used[s.hit.paper.id] = used.get(s.hit.paper.id, 0) + 1
        chosen.append(s)
    if not chosen:
        return None
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    parts: list[str] = []
    support: list[SentenceSupport] = []
    for s in chosen:
        pid = s.hit.paper.id
        if pid not in numbers:
            numbers[pid] = len(numbers) + 1
            citations.append(Citation(numbers[pid], s.hit.paper, s.hit.score))
        n = numbers[pid]
        sentence = s.text.rstrip()
        parts.append(cite(sentence, (n,)))
        support.append(SentenceSupport(sentence, (n,), round(s.score, 4), s.text, True))
    return " ".join(parts), tuple(citations), tuple(support)


_BRACKETED_NUMBER = re.compile(r"\[(\d+(?:\s*[,;–-]\s*\d+)*)\]")


def cite(sentence: str, numbers: tuple[int, ...]) -> str:
    """'A claim.' -> 'A claim [1].' A bracketed number quoted from an abstract
    ('Arrow and Debreu [1954]') becomes '(1954)' so it cannot pass for a citation."""
    sentence = _BRACKETED_NUMBER.sub(r"(\1)", sentence)
    marks = "".join(f"[{n}]" for n in numbers)
    if not marks:
        return sentence
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} {marks}{sentence[-1]}"
    return f"{sentence} {marks}"


def best_dense(hits: list[Hit]) -> float:
    scores = [h.dense_score for h in hits if h.dense_score is not None]
    return float(np.max(scores)) if scores else -1.0
