"""BM25 for the few papers added or changed since a large lexical index was built.

Rebuilding the whole BM25 index for every change made adding one paper to a library of
100,000 take 25 s (tokenising every abstract again), and to a million about four minutes
with a 10 GB peak. A change that small is kept beside the saved index instead: its papers
are tokenised when the index is opened and scored here with the saved index's statistics
(number of papers, document frequencies, average length), so their scores sit on the
same scale as the others'. bm25s's default (Lucene) scoring, as `LexicalIndex.build`
configures it: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), and per term
tf / (tf + k1 · (1 - b + b · length / average length)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np


class DeltaScores:
    """Postings of the changed papers: token -> (catalogue rows, term frequencies)."""

    def __init__(
        self,
        rows: Sequence[int],
        documents: Sequence[Sequence[str]],
        n_docs: int,
        avgdl: float,
        base_df: Callable[[str], int],
        k1: float,
        b: float,
    ) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self.k1, self.b = k1, b
        self.n_docs = max(1, n_docs + len(documents))
        self.avgdl = avgdl if avgdl > 0 else max(1.0, float(np.mean([len(d) for d in documents] or [1])))
        self._base_df = base_df
        self._lengths = np.asarray([len(d) for d in documents], dtype=np.float32)
        postings: dict[str, dict[int, int]] = {}
        for j, tokens in enumerate(documents):
            for token in tokens:
                counts = postings.setdefault(token, {})
                counts[j] = counts.get(j, 0) + 1
        self._postings = {
            token: (np.fromiter(c.keys(), np.int64, len(c)), np.fromiter(c.values(), np.float32, len(c)))
            for token, c in postings.items()
        }

    @property
    def vocab(self) -> set[str]:
        return set(self._postings)

    def df(self, token: str) -> int:
        """Papers of the delta with this token."""
        found = self._postings.get(token)
        return 0 if found is None else len(found[0])

    def docs_with(self, token: str) -> np.ndarray:
        found = self._postings.get(token)
        return self.rows[found[0]] if found is not None else np.zeros(0, dtype=np.int64)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 of each delta paper (in `rows` order) for these query tokens."""
        out = np.zeros(len(self.rows), dtype=np.float32)
        norm = self.k1 * ((1 - self.b) + self.b * self._lengths / self.avgdl)
        for token in tokens:
            found = self._postings.get(token)
            if found is None:
                continue
            docs, tf = found
            df = self._base_df(token) + len(docs)
            idf = math.log(1 + (self.n_docs - df + 0.5) / (df + 0.5))
            out[docs] += idf * tf / (tf + norm[docs])
        return out
