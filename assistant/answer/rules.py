"""The seams where a learned component can replace a hand-written rule. Each rule the
pipeline consults before answering is a small Protocol; `Rules` bundles the ones an
`Assistant` uses, and the defaults are the lexicon-based rules of `route` and `evidence`.

    >>> class NoDetailRules:                       # e.g. a classifier instead of the lexicon
    ...     def requested(self, question): return []
    ...     def reported(self, question, detail, text): return True
    >>> bot = Assistant(rules=Rules(details=NoDetailRules()))

The instruction detector (`injection`) is not behind a seam yet: it runs wherever abstract
sentences are split into evidence, for the check and the context alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from assistant.answer import evidence, route
from assistant.answer.evidence import Detail, ScoredSentence
from assistant.answer.route import DocFreq, Route
from assistant.index.catalogue import Catalogue
from assistant.index.embed import Embedder
from assistant.types import Hit, SearchResult


class QuestionRouter(Protocol):
    """Decides how a question is answered: from one abstract, several, the listing, a comparison."""

    def decide(self, question: str, result: SearchResult, catalogue: Catalogue, df: DocFreq) -> Route: ...


class DetailRules(Protocol):
    """Which kinds of detail a question asks for, and whether a text reports one: a question
    asking for something the closest abstract does not report is refused, naming that paper."""

    def requested(self, question: str) -> Sequence[Detail]: ...

    def reported(self, question: str, detail: Detail, text: str) -> bool: ...


class EvidenceScorer(Protocol):
    """Scores the retrieved abstracts' sentences against the question (the evidence)."""

    def score(self, question: str, hits: Sequence[Hit], embedder: Embedder) -> list[ScoredSentence]: ...


@dataclass(frozen=True)
class LexiconRouter:
    """The router of `route.py`: patterns over the question and what retrieval found."""

    def decide(self, question: str, result: SearchResult, catalogue: Catalogue, df: DocFreq) -> Route:
        return route.decide(question, result, catalogue, df)


@dataclass(frozen=True)
class LexiconDetails:
    """The detail lexicon of `evidence.py` (`DETAILS`), or another table of `Detail`s."""

    details: tuple[Detail, ...] = evidence.DETAILS

    def requested(self, question: str) -> Sequence[Detail]:
        return evidence.requested_details(question, self.details)

    def reported(self, question: str, detail: Detail, text: str) -> bool:
        return evidence.detail_reported(question, detail, text)


@dataclass(frozen=True)
class EmbeddingScorer:
    """Cosine of each evidence sentence to the question, by the bundled sentence embedder."""

    def score(self, question: str, hits: Sequence[Hit], embedder: Embedder) -> list[ScoredSentence]:
        return evidence.score_sentences(question, hits, embedder)


@dataclass(frozen=True)
class Rules:
    """The rules an `Assistant` consults before answering (see the Protocols above)."""

    router: QuestionRouter = field(default_factory=LexiconRouter)
    details: DetailRules = field(default_factory=LexiconDetails)
    scorer: EvidenceScorer = field(default_factory=EmbeddingScorer)
