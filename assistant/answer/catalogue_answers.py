"""Answers made from the listing itself: catalogue questions (who wrote what, which
papers have a venue, comment or research area, how many) and "which papers ..."
questions. Every line names its paper and cites it; nothing is generated."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from assistant.answer.citations import Numbering, cite
from assistant.answer.evidence import ScoredSentence, evidence_sentences
from assistant.answer.plan import Plan
from assistant.index.embed import Embedder
from assistant.text import fold
from assistant.types import Answer, Hit, Paper, SentenceSupport

MAX_LISTED = 10  # papers shown with a sentence each; the rest are counted


def names(authors: Sequence[str], limit: int = 12) -> str:
    """'A', 'A and B', 'A, B and C'; long lists end in 'et al. (n authors)'."""
    authors = list(authors)
    if len(authors) > limit:
        return f"{', '.join(authors[:limit])} et al. ({len(authors)} authors)"
    if len(authors) <= 1:
        return "".join(authors)
    return f"{', '.join(authors[:-1])} and {authors[-1]}"


def _where(p: Paper) -> str:
    bits = [b for b in (p.venue_year, p.topic) if b]
    return "; ".join(bits)


def representative(paper: Paper, embedder: Embedder) -> str:
    """The sentence that best stands for the paper: closest to the abstract as a whole,
    never the label's own sentence twice."""
    sentences = evidence_sentences(paper.abstract)
    if not sentences:
        return paper.label
    vectors = embedder.encode_cached(sentences)
    order = np.argsort(-(vectors @ vectors.mean(axis=0)))
    label = fold(paper.label.rstrip("…"))
    for i in order:
        if not fold(sentences[int(i)]).startswith(label[:40]) or len(sentences) == 1:
            return sentences[int(i)]
    return sentences[int(order[0])]


class _Lines:
    """Answer text built line by line, each line a cited, supported sentence."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.sentences: list[SentenceSupport] = []
        self.numbering = Numbering()
        self.citations = self.numbering.citations
        self.number = self.numbering.number

    def header(self, text: str) -> None:
        self.parts.append(text)

    def line(self, text: str, paper: Paper, evidence: str, bullet: bool = True, score: float = 1.0) -> None:
        n = self.number(paper)
        self.parts.append(("- " if bullet else "") + cite(text, (n,)))
        self.sentences.append(SentenceSupport(text, (n,), score, evidence, True))

    def text(self) -> str:
        out = ""
        for part in self.parts:
            sep = "\n" if part.startswith("- ") or (out and out.rstrip().endswith(":")) else " "
            out = f"{out}{sep}{part}" if out else part
        return out


def catalogue_answer(plan: Plan, embedder: Embedder, backend: str) -> Answer:
    route = plan.route
    lines = _Lines()
    if route.facet in ("authors", "venue"):
        paper = route.papers[0]
        if route.facet == "authors":
            if paper.authors:
                lines.line(
                    f"“{paper.label}”{_paren(paper)} is by {names(paper.authors)}.", paper, paper.label, False
                )
            else:
                lines.line(
                    f"The listing gives no authors for “{paper.label}”{_paren(paper)}.",
                    paper,
                    paper.label,
                    False,
                )
        else:
            if paper.venue_year:
                lines.line(f"“{paper.label}” is listed under {paper.venue_year}.", paper, paper.label, False)
            else:
                lines.line(f"The listing gives no venue for “{paper.label}”.", paper, paper.label, False)
            if paper.comment:
                lines.line(f"Its listing comment reads: “{paper.comment}”.", paper, paper.comment, False)
        return plan.answer(lines.text(), tuple(lines.citations), tuple(lines.sentences), backend)
    papers = list(route.papers)
    if plan.result.hits:
        # Order by relevance to the question when it says more than the selection.
        rank = {h.paper.id: i for i, h in enumerate(plan.result.hits)}
        papers.sort(key=lambda p: rank.get(p.id, len(rank)))
    n = len(papers)
    head = f"{n} paper{'s' if n != 1 else ''} {route.description}"
    if route.facet == "author_papers":
        head = f"{n} paper{'s' if n != 1 else ''} in the collection {route.description}"
    shown = papers[:MAX_LISTED]
    lines.header(head + (":" if shown else "."))
    for paper in shown:
        sentence = representative(paper, embedder)
        about = _where(paper)
        who = f" by {names(paper.authors, 4)}" if paper.authors else ""
        text = f"“{paper.label}”{who}" + (f" ({about})" if about else "") + f": {sentence}"
        lines.line(text, paper, sentence)
    if n > len(shown):
        lines.header(f"…and {n - len(shown)} more (narrow the question or use the filters to see them).")
    return plan.answer(lines.text(), tuple(lines.citations), tuple(lines.sentences), backend)


def several_answer(plan: Plan, backend: str, min_score: float, paper_share: float = 0.55) -> Answer | None:
    """'Which papers ...': every retrieved paper that addresses the question, each with
    the sentence of its abstract that does; None when none does."""
    hits = plan.hits
    if not hits:
        return None
    top = hits[0].score
    best: dict[str, ScoredSentence] = {}
    for sentence in plan.scored:
        pid = sentence.hit.paper.id
        if pid not in best or sentence.score > best[pid].score:
            best[pid] = sentence
    chosen: list[tuple[Hit, ScoredSentence]] = []
    for i, hit in enumerate(hits):
        found = best.get(hit.paper.id)
        if found is None:
            continue
        if i == 0 or (hit.score >= paper_share * top and found.score >= min_score):
            chosen.append((hit, found))
    if not chosen or chosen[0][1].score < min_score:
        return None
    lines = _Lines()
    n = len(chosen)
    lines.header(
        f"{n} of the {plan.result.matching} papers searched address this:"
        if n > 1
        else "One paper addresses this:"
    )
    for hit, s in chosen:
        about = hit.paper.venue_year
        text = s.text.rstrip()
        if about:
            text = f"{text.rstrip('.')} ({about})."
        lines.line(text, hit.paper, s.text, score=round(s.score, 4))
    return plan.answer(lines.text(), tuple(lines.citations), tuple(lines.sentences), backend)


def _paren(p: Paper) -> str:
    return f" ({p.venue_year})" if p.venue_year else ""
