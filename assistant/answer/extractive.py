"""The extractive answer: the abstract sentences closest to the question, cited.

No LLM. It is always available; model answerers fall back to it (and say so) when
the model refuses although the evidence supports an answer, or when the model's
sentences fail the citation check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from assistant.answer.citations import Numbering, cite
from assistant.types import Citation, SentenceSupport

if TYPE_CHECKING:
    from assistant.answer.evidence import ScoredSentence


def pick(
    scored: Sequence[ScoredSentence],
    max_sentences: int,
    min_score: float,
    per_paper: int = 2,
    relative: float = 0.7,
    paper_share: float = 0.6,
    must_cover: Sequence[str] = (),
) -> list[ScoredSentence]:
    """The best sentences (at most `per_paper` from one paper), best first.

    Papers far behind the best in the fused ranking, and sentences far below the best
    sentence, only add noise to so short an answer. `must_cover` (paper ids) each get
    their best sentence first: a comparison answer speaks of every paper it compares.
    """
    if not scored:
        return []
    top = max(s.hit.score for s in scored)
    ordered = sorted(scored, key=lambda s: -s.score)
    chosen: list[ScoredSentence] = []
    used: dict[str, int] = {}
    for pid in must_cover:
        first = next((s for s in ordered if s.hit.paper.id == pid), None)
        if first is not None and first.score >= min_score:
            chosen.append(first)
            used[pid] = 1
    eligible = [s for s in ordered if s.hit.score >= paper_share * top]
    floor = max(min_score, relative * eligible[0].score) if eligible else min_score
    for s in eligible:
        if s.score < floor or len(chosen) >= max(max_sentences, len(must_cover)):
            break
        if s in chosen or used.get(s.hit.paper.id, 0) >= per_paper:
            continue
        used[s.hit.paper.id] = used.get(s.hit.paper.id, 0) + 1
        chosen.append(s)
    return chosen


ANSWER_FROM = 4  # the top paper's sentences closest to the question, searched for the answer


def answer_first(
    chosen: Sequence[ScoredSentence],
    scored: Sequence[ScoredSentence],
    gives: Callable[[str], bool],
    most: int,
    min_score: float,
    closest: int | None = ANSWER_FROM,
) -> list[ScoredSentence]:
    """`chosen` with, first, the sentence that gives what the question asks for (`gives`: a
    figure, names, a number) when none of them does: of the first paper's `closest`
    sentences closest to the question (None: all of them, for "how many …?", whose count is
    often last: "… across 54 KGs"), at `min_score` at least ("NP-hardness already for
    networks with one hidden layer" for "… even for how many hidden layers?", ranked below
    two sentences that restate the question's subject). At most `most` sentences: the
    first paper's last one makes way for it, so another paper's sentence stays."""
    if not chosen or any(gives(s.text) for s in chosen):
        return list(chosen)
    paper = chosen[0].hit.paper.id
    ranked = sorted((s for s in scored if s.hit.paper.id == paper), key=lambda s: -s.score)[:closest]
    stating = next((s for s in ranked if s.score >= min_score and gives(s.text)), None)
    if stating is None:
        return list(chosen)
    rest = list(chosen)
    if len(rest) >= max(most, 1):
        mine = [i for i, s in enumerate(rest) if s.hit.paper.id == paper]
        del rest[mine[-1] if mine else -1]
    return [stating, *rest]


def compose(
    chosen: Sequence[ScoredSentence],
) -> tuple[str, tuple[Citation, ...], tuple[SentenceSupport, ...]]:
    """Cited text from chosen sentences, numbered by paper in order of first use."""
    numbering = Numbering()
    parts: list[str] = []
    support: list[SentenceSupport] = []
    for s in chosen:
        n = numbering.number(s.hit.paper, s.hit.score)
        sentence = s.text.rstrip()
        parts.append(cite(sentence, (n,)))
        support.append(SentenceSupport(sentence, (n,), round(s.score, 4), s.text, True))
    return " ".join(parts), tuple(numbering.citations), tuple(support)
