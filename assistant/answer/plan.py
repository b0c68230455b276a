"""Everything decided before an answer is written: the standalone question, what
retrieval found, the question's kind, the scored evidence and whether it supports
an answer. `Plan` also builds the `Answer`s, so every backend fills them alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from assistant.answer.asked import asked_head, asked_kind
from assistant.answer.evidence import (
    ScoredSentence,
    Verdict,
    best_dense,
    best_per_hit,
    missing_names,
    unmentioned_comparison,
)
from assistant.answer.route import Route
from assistant.answer.rules import DetailRules, LexiconDetails
from assistant.config import Settings
from assistant.search.questions import Standalone
from assistant.text import words_of
from assistant.types import REFUSAL, Answer, Citation, Hit, Paper, SearchResult, SentenceSupport, Sources


@dataclass(frozen=True)
class Plan:
    question: str  # as asked (cleaned)
    standalone: Standalone
    result: SearchResult
    route: Route
    scored: tuple[ScoredSentence, ...]
    verdict: Verdict
    cover: tuple[str, ...] = ()  # papers the answer must speak of (a comparison's papers)

    @property
    def hits(self) -> list:  # type: ignore[type-arg]
        return list(self.result.hits)

    def given(self, settings: Settings) -> list[Hit]:
        """The papers the model is given: at most `context_papers`; for a question about one
        paper (not a comparison), only those whose search score is at least
        `context_paper_share` of the top paper's (with another paper beside it, a small model
        often writes about that one)."""
        hits = self.hits[: settings.context_papers]
        if self.route.kind == "comparison" or not hits or hits[0].score <= 0:
            return hits
        return [h for h in hits if h.score >= settings.context_paper_share * hits[0].score]

    def sources(self, per_hit: int = 3) -> Sources:
        return Sources(
            hits=self.result.hits,
            evidence=best_per_hit(self.scored, self.result.hits, per_hit),
            kind=self.route.kind,
            standalone_question=self._standalone_shown(),
            filters=self.result.filters,
            matching=self.result.matching,
            notes=self.result.notes,
        )

    def _standalone_shown(self) -> str | None:
        return self.standalone.question if self.standalone.rewritten else None

    # --- the typed builder every answerer uses --------------------------------
    def answer(
        self,
        text: str,
        citations: tuple[Citation, ...],
        sentences: tuple[SentenceSupport, ...],
        backend: str,
        notes: tuple[str, ...] = (),
        **extra: object,
    ) -> Answer:
        return Answer(
            question=self.question,
            text=text,
            citations=citations,
            sentences=sentences,
            backend=backend,
            standalone_question=self._standalone_shown(),
            filters=self.result.filters,
            matching=self.result.matching,
            notes=(*self.result.notes, *notes),
            hits=self.result.hits,
            kind=self.route.kind,
            evidence=round(self.verdict.score, 4),
            **extra,  # type: ignore[arg-type]
        )

    def refusal(self, why: str, backend: str, **extra: object) -> Answer:
        """The one way to say no: the fixed phrase, and a reason naming the closest papers."""
        closest = "; ".join(f"“{h.paper.label}”" for h in self.result.hits[:3])
        named = self.verdict.names_closest and not self.verdict.answerable
        reason = why if named or not closest else f"{why} The closest papers are: {closest}."
        return self.answer(REFUSAL, (), (), backend, (), refused=True, reason=reason, **extra)


def evidence_score(result: SearchResult, scored: list[ScoredSentence], named: bool) -> float:
    """How well the retrieved abstracts match the question, on one scale: the best
    sentence's cosine, plus how far the best abstract stands out from the next nine
    (off-corpus questions match many papers a little, answerable ones one paper well),
    plus a bonus when the top paper coins a name the question uses."""
    sentence = max((s.score for s in scored), default=0.0)
    top = result.dense_top
    gap = top[0] - sum(top[:10]) / len(top[:10]) if top else 0.0
    return sentence + gap + (NAME_BONUS if named else 0.0)


NAME_BONUS = 0.3


def judge(
    standalone: str,
    result: SearchResult,
    route: Route,
    scored: list[ScoredSentence],
    settings: Settings,
    rare_terms: Callable[[str], list[str]],
    details: DetailRules | None = None,
    unknown_names: Callable[[str], list[str]] | None = None,
    continues: bool = False,
    switch: tuple[str, frozenset[str]] = ("", frozenset()),
) -> Verdict:
    """Does the evidence support an answer? Decided on scores, never on a model's wording.
    `continues`: the question points back at the previous answer, which was about the top
    paper ("And how much does removing them hurt?"): the conversation settled what it is
    about, so its few words need not match the abstract well. `switch`: the new subject a
    follow-up turns to and its words ("What about dueling bandits?", {"duel"}): one of the
    papers handed over must name them all, or the question is refused with the closest
    papers (retrieval reads both turns, and the previous turn's paper comes first)."""
    details = details or LexiconDetails()
    hits = list(result.hits)
    dense = best_dense(hits)
    sentence = max((s.score for s in scored), default=-1.0)
    if route.kind == "catalogue" and route.facet in ("list", "author_papers"):
        if route.papers:
            return Verdict(True, dense=dense, sentence=sentence, strong=True)
        return Verdict(False, f"No paper in the listing is {route.description}.", dense, sentence)
    if not hits:
        why = "No indexed abstract matches the question"
        if not result.filters.is_empty():
            why += f" with the filters {result.filters.describe()}"
        return Verdict(False, why + ".", dense, sentence)
    subject, words = switch
    naming = not words or any(names_all(h.paper, words) for h in hits[: settings.context_papers])
    # a switch asked of one paper's listing ("Who wrote it?" then "What about X?") needs it too
    of_one = route.kind != "catalogue" or route.facet in ("authors", "venue")
    if words and of_one and not _filtered(result) and not naming:
        return Verdict(False, f"None of the closest abstracts mentions “{subject}”.", dense, sentence)
    top = hits[0].paper
    text = f"{top.abstract} {_listing(top)}" if route.kind == "catalogue" else top.abstract
    asked = details.requested(standalone)
    for detail in asked:
        if not details.reported(standalone, detail, text):
            best = max((s for s in scored if s.hit is hits[0]), key=lambda s: s.score, default=None)
            reports = f" What it reports closest to the question: “{best.text}”" if best else ""
            return Verdict(
                False,
                f"The closest paper, “{top.label}”, does not report {detail.name}.{reports}",
                dense,
                sentence,
                missing=detail.name,
                names_closest=True,
            )
    # A name may be in a paper's listing rather than its abstract ("… in the NeurIPS 2025 listing").
    named = " ".join(f"{h.paper.title or ''} {h.paper.abstract} {_listing(h.paper)}" for h in hits[:3])
    compared = unmentioned_comparison(standalone, named)
    if compared is not None and route.kind != "catalogue":
        return Verdict(
            False,
            f"The closest paper, “{top.label}”, does not mention {compared}, so its abstract cannot "
            "say how the two compare.",
            dense,
            sentence,
            missing=compared,
            names_closest=True,
        )
    if (asked or asked_kind(standalone)) and route.kind != "catalogue":
        head = asked_head(standalone)  # "Which LLMs …?" asks for names, it names no LLM
        absent = [w for w in missing_names(standalone, named) if head is None or w not in head.split()]
        if absent:
            # words the question writes as one name are one name ("Direct Preference Optimization")
            phrase = " ".join(absent)
            listed = phrase if len(absent) > 1 and phrase in standalone else ", ".join(absent)
            return Verdict(
                False,
                f"The closest paper, “{top.label}”, does not mention {listed}.",
                dense,
                sentence,
                missing=", ".join(absent),
                names_closest=True,
            )
    named_author = result.detected.author is not None or result.filters.author is not None
    score = evidence_score(result, scored, bool(rare_terms(standalone)))
    strong = score >= settings.answer_above
    unknown = unknown_names(standalone) if unknown_names and route.kind != "catalogue" else []
    if unknown and not strong and settings.refuse_unknown_names:
        listed = " or ".join(f"“{name}”" for name in unknown)
        return Verdict(
            False,
            f"No paper in the library mentions {listed}, which the question names.",
            dense,
            sentence,
            missing=", ".join(unknown),
            score=score,
        )
    if not (named_author or continues or score >= settings.refuse_below):
        return Verdict(
            False,
            f"No abstract is close enough to the question (evidence {score:.2f}; answers need "
            f"{settings.refuse_below:.2f}: ASSISTANT_REFUSE_BELOW).",
            dense,
            sentence,
            score=score,
        )
    return Verdict(True, dense=dense, sentence=sentence, score=score, strong=strong, continues=continues)


def names_all(paper: Paper, words: frozenset[str]) -> bool:
    """Does the paper's title or abstract use each of these words ("bandit": "bandits";
    "dimension": "high-dimensional"), as a word's start (`switched_subject`)?"""
    terms = set(words_of(f"{paper.title or ''} {paper.abstract}"))
    return all(any(t.startswith(w) for t in terms) for w in words)


def naming_subject(result: SearchResult, words: frozenset[str]) -> SearchResult:
    """Only the hits that name every word of a new subject ("What about linear bandits?"
    after a question on another paper: retrieval reads both turns, so that paper comes
    first and its sentences fit the question best), in their search order; all of them when
    none does (`judge` then refuses, naming the closest)."""
    naming = (
        tuple(h for h in result.hits if names_all(h.paper, words)) if words and not _filtered(result) else ()
    )
    if not naming or len(naming) == len(result.hits):
        return result
    return replace(result, hits=tuple(replace(h, rank=i + 1) for i, h in enumerate(naming)))


def _filtered(result: SearchResult) -> bool:
    """A filter was given or found in the question ("And at ICLR?"): not a new subject."""
    return not (result.detected.is_empty() and result.filters.is_empty())


def _listing(paper: Paper) -> str:
    """What the listing says of a paper besides its abstract and title: comment, authors, venue, topic."""
    fields = (paper.comment, ", ".join(paper.authors), paper.venue_year, paper.topic)
    return " ".join(x for x in fields if x)
