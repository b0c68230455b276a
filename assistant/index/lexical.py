"""BM25 over abstracts plus their metadata (bm25s + Snowball stemming).

The index is saved beside the store with a fingerprint of the ids it covers;
on open it is used only when the fingerprint matches the store, otherwise it is
rebuilt, so it is never silently stale.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from assistant.text import normalize, without_accents
from assistant.types import Paper

log = logging.getLogger(__name__)

INDEX_VERSION = 2


def fingerprint(ids: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for pid in sorted(ids):
        digest.update(pid.encode())
        digest.update(b"\n")
    return f"v{INDEX_VERSION}:{len(ids)}:{digest.hexdigest()[:32]}"


def lexical_text(paper: Paper) -> str:
    """What BM25 sees: title (twice, as field weight), abstract and metadata words."""
    parts = [paper.title or "", paper.title or "", paper.abstract]
    parts += list(paper.authors)
    parts += [paper.venue or "", str(paper.year or ""), paper.area or "", paper.subarea or ""]
    parts += [paper.comment or ""]
    return normalize(" ".join(p for p in parts if p))


def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


class LexicalIndex:
    """BM25 scores for every paper of a catalogue, in the catalogue's order."""

    def __init__(self, ids: list[str], retriever: object) -> None:
        self.ids = ids
        self._retriever = retriever
        self._stem = _stemmer()

    @classmethod
    def build(cls, papers: Sequence[Paper]) -> LexicalIndex:
        import bm25s

        retriever = bm25s.BM25(k1=0.9, b=0.4)
        if papers:
            tokens = bm25s.tokenize(
                [lexical_text(p) for p in papers],
                stopwords="en",
                stemmer=_stemmer(),
                show_progress=False,
            )
            retriever.index(tokens, show_progress=False)
        return cls([p.id for p in papers], retriever)

    @classmethod
    def open(cls, folder: Path, papers: Sequence[Paper]) -> LexicalIndex:
        """Load the saved index if it covers exactly these papers; else rebuild and save."""
        ids = [p.id for p in papers]
        meta_path = folder / "meta.json"
        if meta_path.is_file():
            try:
                meta = json.loads(meta_path.read_text())
                stored, found = meta.get("ids"), str(meta.get("fingerprint"))
                # The same ids in the same order (the common case) need no digest of them
                # (1.5 s at a million papers); any other order, the digest decides.
                if found.startswith(f"v{INDEX_VERSION}:{len(ids)}:") and (
                    stored == ids or found == fingerprint(ids)
                ):
                    import bm25s

                    # Memory-mapped: the score matrix stays in the page cache, and a
                    # question touches only the rows of its words.
                    retriever = bm25s.BM25.load(str(folder / "bm25"), mmap=True)
                    index = cls(list(stored), retriever)
                    return index.aligned_to(ids)
                log.info("lexical index is stale (%s != %s); rebuilding", found, fingerprint(ids))
            except Exception as exc:  # a damaged index is rebuilt, never trusted
                log.warning("lexical index in %s is unreadable (%s); rebuilding", folder, exc)
        index = cls.build(papers)
        try:
            index.save(folder)
        except OSError as exc:  # read-only or full disk: search still works from memory
            log.warning("cannot save the lexical index in %s (%s); it is rebuilt on next start", folder, exc)
        return index

    def aligned_to(self, ids: list[str]) -> LexicalIndex:
        if ids == self.ids:
            return self
        order = {pid: i for i, pid in enumerate(self.ids)}
        self._perm = np.array([order[pid] for pid in ids], dtype=np.int64)
        self._inverse = np.empty_like(self._perm)
        self._inverse[self._perm] = np.arange(len(self._perm))
        self.ids = ids
        return self

    def save(self, folder: Path) -> None:
        if not self.ids:
            return
        tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}-{threading.get_ident()}")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tmp.mkdir(parents=True)
            self._retriever.save(str(tmp / "bm25"), show_progress=False)  # type: ignore[attr-defined]
            (tmp / "meta.json").write_text(
                json.dumps({"fingerprint": fingerprint(self.ids), "ids": self.ids})
            )
        except BaseException:  # a full disk, an interrupt: leave nothing half-written behind
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        old = folder.with_name(f"{folder.name}.old-{os.getpid()}-{threading.get_ident()}")
        shutil.rmtree(old, ignore_errors=True)
        try:
            if folder.exists():
                folder.rename(old)
            tmp.rename(folder)
        except OSError:  # another process saved the same index at the same moment
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)

    def tokens(self, text: str) -> list[str]:
        import bm25s

        out = bm25s.tokenize(
            [normalize(text)],
            stopwords="en",
            stemmer=self._stem,
            return_ids=False,
            show_progress=False,
        )
        return list(out[0]) if out else []

    def docs_with(self, word: str) -> np.ndarray:
        """Catalogue positions of the papers whose text or metadata has this word (stemmed)."""
        retriever = self._retriever
        vocab = getattr(retriever, "vocab_dict", {})
        scores = getattr(retriever, "scores", None)
        tokens = self.tokens(word)
        if not scores or not tokens or tokens[0] not in vocab:
            return np.zeros(0, dtype=np.int64)
        t = vocab[tokens[0]]
        docs = np.asarray(scores["indices"][scores["indptr"][t] : scores["indptr"][t + 1]], dtype=np.int64)
        inverse = getattr(self, "_inverse", None)
        return inverse[docs] if inverse is not None else docs  # index order -> catalogue order

    def df(self, word: str) -> int:
        """In how many papers (text and metadata) a word occurs, after stemming."""
        retriever = self._retriever
        vocab = getattr(retriever, "vocab_dict", {})
        scores = getattr(retriever, "scores", None)
        if not scores:
            return 0
        tokens = self.tokens(word)
        if not tokens:
            return 0
        t = vocab.get(tokens[0])
        if t is None:
            return 0
        return int(scores["indptr"][t + 1] - scores["indptr"][t])

    def begins_a_word(self, token: str) -> bool:
        """Does some indexed word (stemmed, text or metadata) begin with this stemmed token?
        ('bay', from 'Bayes', begins 'bayesian'; accents aside: 'akgul' begins 'akgül')."""
        vocab = getattr(self._retriever, "vocab_dict", {})
        cached = getattr(self, "_words", None)
        if cached is None or cached[0] is not vocab:
            cached = self._words = (vocab, sorted({without_accents(w) for w in vocab}))
        words = cached[1]
        token = without_accents(token)
        i = bisect.bisect_left(words, token)
        return i < len(words) and words[i].startswith(token)

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every paper (0 where no query term occurs)."""
        if not self.ids:
            return np.zeros(0, dtype=np.float32)
        retriever = self._retriever
        vocab = getattr(retriever, "vocab_dict", {})
        tokens = [t for t in self.tokens(text) if t in vocab]
        if not tokens:
            return np.zeros(len(self.ids), dtype=np.float32)
        raw = np.asarray(retriever.get_scores(tokens), dtype=np.float32)  # type: ignore[attr-defined]
        perm = getattr(self, "_perm", None)
        return raw[perm] if perm is not None else raw
