"""Hybrid retrieval: dense (an exact scan of the snapshot's vectors) and BM25, filtered
alike, fused by a convex combination (the share tuned per embedder) or weighted RRF."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from assistant.config import Settings
from assistant.errors import FilterError
from assistant.index.blocks import RowBlocks
from assistant.index.catalogue import Catalogue
from assistant.index.embed import Embedder
from assistant.index.lexical import LexicalIndex
from assistant.search.understand import QuestionReader, named_terms
from assistant.text import RESEMBLES, YEAR, name_parts, question_words
from assistant.types import Filters, Hit, SearchResult

WIDEN_LOOK = 5  # a comparison's part: how many papers are looked at for the top paper
WIDEN_SAME = 0.9  # the top paper matches a part "about as well" at this share of the best's (convex) score
# a question that speaks of several papers ("the two papers", "what does each identify?"; not
# "observes each agent's direction" nor a "two-player game"; "for each player" errs towards
# a comparison, as before)
_SEVERAL_PAPERS = re.compile(
    r"\b(?:papers|studies)\b|\bthe other\b|\bone another\b"
    r"|\b(?:two|both|other|another|these|those)\s+"
    r"(?:papers?|works?|studies|methods|approaches|ones?|of them)\b"
    r"|\b(?:does|do|did|for|of|from|in)\s+each\b|\beach\s+(?:one|of|paper|work|method|approach)\b"
)


@dataclass
class Ranked:
    """Candidate scores by paper index, before fusion."""

    dense: dict[int, float] = field(default_factory=dict)
    lexical: dict[int, float] = field(default_factory=dict)


class HybridRetriever:
    def __init__(
        self,
        settings: Settings,
        embedder: Embedder,
        catalogue: Catalogue,
        lexical: LexicalIndex,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.catalogue = catalogue
        self.lexical = lexical
        self.reader = QuestionReader(catalogue)

    @property
    def embedder_name(self) -> str:
        return self.settings.index_embedder if self.settings.embedder_path is None else self.embedder.name

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

        n = self.settings.candidates
        vector = self.embedder.encode_query(text)
        vectors = self.catalogue.vectors
        # An exact scan of the rows the filter keeps: faster than HNSW below a few hundred
        # thousand papers, exact, and it never reads the store while others write to it.
        rows = np.flatnonzero(mask) if not active.is_empty() else np.arange(self.catalogue.n)
        if vectors is None or not len(vectors):
            dense = np.zeros(0, dtype=np.float32)
        elif active.is_empty():
            dense = vectors @ vector
        elif len(rows) * 4 > len(vectors):
            # Copying a large share of the matrix costs more than scoring every row
            # (100k papers, half kept: 28 ms against 8 ms).
            dense = (vectors @ vector)[rows]
        else:
            dense = scan(vectors, rows, vector)
        ranked = candidates(dense, self.lexical.scores(text), rows, n)

        fused = self._fuse(ranked, topics)
        self._boost_names(fused, text, mask)
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
        dense_top = tuple(sorted(ranked.dense.values(), reverse=True)[:10])
        return SearchResult(query, hits, active, detected, topics, matching, tuple(notes), dense_top)

    def _boost_names(self, fused: dict[int, float], text: str, mask: np.ndarray) -> None:
        """A name the question uses that only a few papers use ("GRAPE", "PrivateSeal") pulls
        those papers up: the question is about them, whatever else it says."""
        boost = self.settings.name_boost
        if boost <= 0 or not fused:
            return
        top = max(fused.values())
        for term in named_terms(text):
            docs = self.lexical.docs_with(term)
            if 0 < len(docs) <= self.settings.name_max_papers:
                for i in docs:
                    i = int(i)
                    if mask[i] and defines(self.catalogue.papers[i].abstract, term):
                        fused[i] = fused.get(i, 0.0) + boost * top

    # --- helpers for answering -------------------------------------------------------
    def is_key_term(self, token: str) -> bool:
        """A word that names something specific: it occurs in only a few papers."""
        return 0 < self.lexical.df(token) <= 3

    def unknown_names(self, question: str) -> list[str]:
        """Names the question uses that no paper of the library mentions (`unknown_names`)."""
        return unknown_names(question, self.lexical)

    def rare_terms_of_top(self, result: SearchResult) -> Callable[[str], list[str]]:
        """Names in the question that the top hit coins or is about ("What is GRAPE?"):
        so short a question is on topic although its embedding is far from every abstract."""
        if not result.hits:
            return lambda text: []
        top = result.hits[0].paper
        position = self.catalogue.index[top.id]

        def names(text: str) -> list[str]:
            out = []
            for term in named_terms(text):
                docs = self.lexical.docs_with(term)
                specific = len(docs) <= self.settings.name_max_papers
                if specific and position in docs and defines(top.abstract, term):
                    out.append(term)
            return out

        return names

    def widen(
        self, result: SearchResult, parts: Sequence[str], question: str
    ) -> tuple[SearchResult, tuple[str, ...] | None]:
        """For a comparison: the best paper for each paper the question names or describes
        comes first, so the context holds every one of them. A comparison inside one paper
        ("… compared with the Nash and Kalai-Smorodinsky solutions?": the top paper is also
        about as good a match as any for every part, and the question speaks of no second
        paper) is no comparison of papers: None, a question about that paper."""
        if _names_two_values(question, self.catalogue.years):
            result = self.search(result.query, len(result.hits) or 5, Filters(), detect=False)
        top = result.hits[0].paper.id if result.hits else None
        cover: list[Hit] = []
        inside = top is not None  # does the top paper match every part about as well as the best?
        convex = self.settings.fusion == "convex"  # RRF's scores differ little from rank to rank

        def add(text: str) -> None:
            nonlocal inside
            sub = self.search(text, WIDEN_LOOK, result.filters, detect=False)
            if not sub.hits:
                return
            best = sub.hits[0]
            mine = next((h for h in sub.hits if h.paper.id == top), None)
            if mine is None or (mine is not best and not (convex and mine.score >= WIDEN_SAME * best.score)):
                inside = False
            if all(h.paper.id != best.paper.id for h in cover):
                cover.append(best)

        for term in named_terms(question):
            if self.is_key_term(term):
                add(term)
        if len(cover) < 2:
            for part in parts:
                if len(part.split()) >= 3:
                    add(part)
        if inside and cover and not _SEVERAL_PAPERS.search(question.lower()):
            return result, None
        ids = {h.paper.id for h in cover}
        hits = [*cover, *(h for h in result.hits if h.paper.id not in ids)]
        hits = [replace(h, rank=i + 1) for i, h in enumerate(hits[: max(len(result.hits), len(cover))])]
        return replace(result, hits=tuple(hits)), tuple(h.paper.id for h in cover)

    def _fuse(self, ranked: Ranked, topics: tuple[str, ...]) -> dict[int, float]:
        s = self.settings
        fused = fuse(ranked, Fusion.of(s, self.embedder.profile.dense_share))
        if topics and fused and s.topic_boost > 0:
            boost = s.topic_boost * max(fused.values())
            masks = [self.catalogue.topic_mask(t) for t in topics]
            for i in fused:
                if any(m[i] for m in masks):
                    fused[i] += boost
        return fused


@dataclass(frozen=True)
class Fusion:
    """How dense and BM25 candidates are combined (the same code serves search and tuning)."""

    method: str = "convex"
    dense_share: float = 0.6
    dense_weight: float = 1.0
    lexical_weight: float = 1.0
    rrf_k: int = 60

    @classmethod
    def of(cls, s: Settings, tuned_share: float) -> Fusion:
        """The settings' fusion; an unset dense_share is the one tuned for the embedder."""
        share = tuned_share if s.dense_share is None else s.dense_share
        return cls(s.fusion, share, s.dense_weight, s.lexical_weight, s.rrf_k)


def candidates(dense: np.ndarray, lexical: np.ndarray, rows: np.ndarray, n: int) -> Ranked:
    """The n best of each side among `rows` (BM25 only where a query term occurs).
    `dense` holds the cosines of `rows` only (a filtered search scans just those);
    `lexical` holds the BM25 score of every paper."""
    ranked = Ranked()
    if len(dense):
        ranked.dense = {int(rows[j]): float(dense[j]) for j in _top(dense, n)}
    if len(lexical):
        lex = lexical[rows]
        ranked.lexical = {int(rows[j]): float(lex[j]) for j in _top(lex, n) if lex[j] > 0}
    return ranked


def fuse(ranked: Ranked, f: Fusion) -> dict[int, float]:
    """convex: share × min-max(dense) + (1 − share) × min-max(BM25), each over its own
    candidates; rrf: weighted reciprocal ranks. A zero weight gives one side alone."""
    fused: dict[int, float] = {}
    if f.method == "convex" and f.dense_weight > 0 and f.lexical_weight > 0:
        for weight, scores in ((f.dense_share, ranked.dense), (1 - f.dense_share, ranked.lexical)):
            for i, value in _minmax(scores).items():
                fused[i] = fused.get(i, 0.0) + weight * value
    else:  # RRF; also what a zero weight (dense only, BM25 only) means
        for weight, scores in ((f.dense_weight, ranked.dense), (f.lexical_weight, ranked.lexical)):
            if weight <= 0:
                continue
            for rank, i in enumerate(sorted(scores, key=lambda i: -scores[i]), start=1):
                fused[i] = fused.get(i, 0.0) + weight / (f.rrf_k + rank)
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


def _names_two_values(question: str, years: Sequence[int]) -> bool:
    """'The NeurIPS 2025 and ICLR 2026 papers': two years named, so no single filter applies."""
    found = {int(y) for y in YEAR.findall(question)}
    return len(found & set(years)) >= 2


def defines(abstract: str, term: str) -> bool:
    """Is `term` a name this abstract coins or is about (used twice, or introduced:
    "we present GRAPE", "... (GRAPE)", "GRAPE, a ...")? A passing mention ("modern GPUs")
    is not."""
    t = re.escape(term.rstrip("s"))
    if len(re.findall(rf"(?<![\w-]){t}s?(?![\w-])", abstract)) >= 2:
        return True
    introduced = (
        rf"(?:propose|present|introduce|call|called|named|dub|term)s?\w*\s+(?:\w+\s+){{0,2}}{t}"
        rf"|\(\s*{t}s?\s*\)|(?<![\w-]){t}s?\s*(?:,\s*an?\b|\(|:)"
    )
    return re.search(introduced, abstract, re.IGNORECASE) is not None


# A capitalised word before a word for people describes who did the work ("two Soviet
# mathematicians", "Google researchers"), which abstracts seldom say: it names no subject.
_DESCRIBES_PEOPLE = re.compile(
    r"(?<![\w-])((?:[A-Z][\w-]*\s+){0,2}[A-Z][\w-]*)(?=\s+(?:mathematicians?|researchers?|scientists?"
    r"|authors?|engineers?|physicists?|economists?|statisticians?|scholars?|teams?|labs?"
    r"|laborator(?:y|ies)|colleagues|collaborators)\b)"
)


_EPONYMOUS_ADJECTIVE = re.compile(
    r"(?:Hermit|Euclid|Gauss|Riemann|Lipschitz|Hess|Laplac|Lagrang|Hamilton|Jacob|Markov|Bayes|Boole|Cartes"
    r"|Newton|Abel|Darwin|Pareto|Kolmogorov|Wiener|Poisson|Dirichlet|Sobolev|Banach|Hilbert)(?:ian|ean|e?an)s?"
)


def unknown_names(question: str, lexical: LexicalIndex) -> list[str]:
    """Names the question uses that no indexed paper mentions, in its text or its listing
    ("ScanNet", "Condorcet"): the question is about something else. A name is known when an
    indexed word begins with it ("Bayes": "Bayesian"). An adjective made from a
    mathematician's name ("Hermitian", "Euclidean"; `_EPONYMOUS_ADJECTIVE`) is a property an
    abstract may state in other words ("symmetric", "self-adjoint"), not a name to look up;
    so is a likeness ("GPT-style", "DeGroot-type"; `RESEMBLES`): a paper about something like
    it need not name it."""
    out = []
    describers = {word for run in _DESCRIBES_PEOPLE.findall(question) for word in run.split()}
    for word in question_words(question):
        if word in describers or _EPONYMOUS_ADJECTIVE.fullmatch(word) or RESEMBLES.search(word):
            continue
        tokens = [lexical.tokens(part) for part in name_parts(word)]  # [] for a stop word
        if any(t and not all(lexical.begins_a_word(x) for x in t) for t in tokens):
            out.append(word)
    return out


SCAN_ROWS = 8192  # rows copied at a time by a filtered scan


def scan(vectors: np.ndarray | RowBlocks, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """`vectors[rows] @ vector` for ascending `rows`, a block of rows at a time: one copy of
    every kept row is a large fresh allocation whose first touch is slow (a million papers, a 16.6% filter:
    p50 80 ms but worst of 15 1.5 s; in blocks 55 / 93 ms; 100k papers: 6.0 / 195 ms
    against 5.6 / 6.2 ms)."""
    if isinstance(vectors, RowBlocks):  # segment by segment (rows ascend: a mask's)
        parts = [scan(block, local, vector) for block, local in vectors.split(rows)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    if len(rows) <= SCAN_ROWS:
        return np.asarray(vectors[rows] @ vector)
    return np.concatenate([vectors[rows[i : i + SCAN_ROWS]] @ vector for i in range(0, len(rows), SCAN_ROWS)])
