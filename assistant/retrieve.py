"""Hybrid retrieval: dense (Chroma) and BM25, filtered alike, fused by weighted RRF."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from assistant.catalogue import Catalogue
from assistant.config import Settings
from assistant.embed import Embedder
from assistant.errors import FilterError
from assistant.lexical import LexicalIndex
from assistant.store import VectorStore
from assistant.types import Filters, Hit, SearchResult
from assistant.understand import QuestionReader


@dataclass
class Ranked:
    """Candidate scores by paper index, before fusion."""

    dense: dict[int, float] = field(default_factory=dict)
    lexical: dict[int, float] = field(default_factory=dict)


class HybridRetriever:
    def __init__(
        self,
        settings: Settings,
        store: VectorStore,
        embedder: Embedder,
        catalogue: Catalogue,
        lexical: LexicalIndex,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.catalogue = catalogue
        self.lexical = lexical
        self.reader = QuestionReader(catalogue)

    def search(
        self,
        query: str,
        k: int,
        filters: Filters,
        detect: bool | None = None,
    ) -> SearchResult:
        detect = self.settings.detect_filters if detect is None else detect
        explicit = self.catalogue.resolve(filters)
        notes: list[str] = []
        detected = Filters()
        topics: tuple[str, ...] = ()
        text = query
        if detect:
            understood = self.reader.read(query)
            detected = _only_new(understood.filters, explicit)
            topics = () if explicit.topic else understood.topics
            if not detected.is_empty():
                text = understood.rest
        active = explicit.merged(detected)
        mask = self.catalogue.mask(active)
        if not mask.any() and not detected.is_empty():
            notes.append(
                f"no paper matches {detected.describe()} as read from the question "
                f"together with the other filters; searched without it"
            )
            active, detected, text = explicit, Filters(), query
            mask = self.catalogue.mask(active)
        if topics and not detected.is_empty():
            named = np.zeros_like(mask)
            for topic in topics:
                named |= self.catalogue.topic_mask(topic)
            if named.any() and not (mask & named).any():
                notes.append(
                    f"no {' / '.join(topics)} paper matches {detected.describe()} as read from "
                    "the question; searched without it"
                )
                active, detected, text = explicit, Filters(), query
                mask = self.catalogue.mask(active)
        matching = int(mask.sum())
        if matching == 0:
            if not active.is_empty():
                notes.append(f"no paper matches {active.describe()}")
            return SearchResult(query, (), active, detected, topics, 0, tuple(notes))

        ranked = Ranked()
        n = self.settings.candidates
        vector = self.embedder.encode_one(text)
        vectors = self.catalogue.vectors
        if not active.is_empty() and vectors is not None and self.settings.filter_mode != "chroma":
            rows = np.flatnonzero(mask)
            sims = vectors[rows] @ vector
            best = _top(sims, n)
            ranked.dense = {int(rows[j]): float(sims[j]) for j in best}
        else:
            where = None if active.is_empty() else self.catalogue.where(active)
            for match in self.store.query(vector, n=min(n, matching), where=where):
                i = self.catalogue.index.get(match.id)
                if i is not None and mask[i]:
                    ranked.dense[i] = match.score
        lex = self.lexical.scores(text)
        if lex.size:
            lex = np.where(mask, lex, 0.0)
            top = _top(lex, n)
            ranked.lexical = {int(i): float(lex[i]) for i in top if lex[i] > 0}

        fused = self._fuse(ranked, topics)
        order = sorted(fused, key=lambda i: -fused[i])[:k]
        hits = tuple(
            Hit(
                paper=self.catalogue.papers[i],
                score=fused[i],
                dense_score=ranked.dense.get(i),
                lexical_score=ranked.lexical.get(i),
                rank=r + 1,
            )
            for r, i in enumerate(order)
        )
        return SearchResult(query, hits, active, detected, topics, matching, tuple(notes))

    def _fuse(self, ranked: Ranked, topics: tuple[str, ...]) -> dict[int, float]:
        s = self.settings
        fused: dict[int, float] = {}
        if s.fusion == "convex" and s.dense_weight > 0 and s.lexical_weight > 0:
            for weight, scores in ((s.dense_share, ranked.dense), (1 - s.dense_share, ranked.lexical)):
                for i, value in _minmax(scores).items():
                    fused[i] = fused.get(i, 0.0) + weight * value
        else:  # RRF; also what a zero weight (dense only, BM25 only) means
            for weight, scores in ((s.dense_weight, ranked.dense), (s.lexical_weight, ranked.lexical)):
                if weight <= 0:
                    continue
                for rank, i in enumerate(sorted(scores, key=lambda i: -scores[i]), start=1):
                    fused[i] = fused.get(i, 0.0) + weight / (s.rrf_k + rank)
        if topics and fused and s.topic_boost > 0:
            boost = s.topic_boost * max(fused.values())
            masks = [self.catalogue.topic_mask(t) for t in topics]
            for i in fused:
                if any(m[i] for m in masks):
                    fused[i] += boost
        return fused


def _minmax(scores: dict[int, float]) -> dict[int, float]:
    """Scores rescaled to 0..1 over the candidates (the weakest candidate gets 0)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    if span <= 1e-9:
        return dict.fromkeys(scores, 1.0)
    return {i: (v - lo) / span for i, v in scores.items()}


def _top(values: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n largest values, best first (argpartition: O(N), not a full sort)."""
    if len(values) <= n:
        return np.argsort(-values)
    part = np.argpartition(-values, n)[:n]
    return part[np.argsort(-values[part])]


def _only_new(found: Filters, explicit: Filters) -> Filters:
    """Detected values for the fields the caller left empty."""
    years_set = explicit.year_from is not None or explicit.year_to is not None
    return Filters(
        venue=None if explicit.venue else found.venue,
        year_from=None if years_set else found.year_from,
        year_to=None if years_set else found.year_to,
        author=None if explicit.author else found.author,
    )


def check_k(k: int | None, default: int, largest: int) -> int:
    if k is None:
        return default
    if not isinstance(k, int) or isinstance(k, bool):
        raise FilterError(f"k must be a whole number, not {k!r}")
    if k < 1:
        raise FilterError(f"k must be at least 1 (got {k})")
    if k > largest:
        raise FilterError(f"k must be at most {largest} (got {k}); raise ASSISTANT_MAX_K to allow more")
    return k
