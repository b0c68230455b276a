"""BM25 over abstracts plus their metadata (bm25s + Snowball stemming).

The index is saved beside the store with a fingerprint of the ids it covers;
on open it is used only when the fingerprint matches the store, otherwise it is
rebuilt, so it is never silently stale. A large index that a few papers changed since
it was built is not rebuilt: `save_for` records the change beside it (`delta.json`:
the papers added or edited, the ones gone), and `open` scores the changed papers with
`lexical_delta` (see there).
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

from assistant.index.lexical_delta import DeltaScores
from assistant.text import normalize, without_accents
from assistant.types import Paper

log = logging.getLogger(__name__)

INDEX_VERSION = 2
K1, B = 0.9, 0.4
# A change is kept beside the saved index, not rebuilt into it, when the index covers at
# least DELTA_FROM papers and the change (papers added, edited or removed) is at most
# DELTA_MAX of them: the changed papers are tokenised at every open (5,000: about 1 s).
DELTA_FROM = 20_000
DELTA_MAX = 5_000
DELTA = "delta.json"


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


def paper_digest(paper: Paper) -> int:
    """A stable 64-bit digest of what `lexical_text` reads: a paper whose digest differs
    from the one its id had when the index was built was edited since."""
    parts = [paper.title or "", paper.abstract, *paper.authors, paper.venue or "", str(paper.year or "")]
    parts += [paper.area or "", paper.subarea or "", paper.comment or ""]
    raw = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little")


def _digests(papers: Sequence[Paper]) -> np.ndarray:
    return np.fromiter(map(paper_digest, papers), dtype=np.uint64, count=len(papers))


def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


class LexicalIndex:
    """BM25 scores for every paper of a catalogue, in the catalogue's order."""

    def __init__(self, ids: list[str], retriever: object, avgdl: float = 0.0) -> None:
        self.ids = ids
        self._retriever = retriever
        self._stem = _stemmer()
        self.avgdl = avgdl  # the indexed papers' mean length in tokens (a delta scores with it)
        # Catalogue row <-> indexed row, when they differ (None: the same order, all indexed).
        self._map: tuple[np.ndarray, np.ndarray] | None = None  # (catalogue rows, indexed rows)
        self._inverse: np.ndarray | None = None  # indexed row -> catalogue row, -1: not served
        self._delta: DeltaScores | None = None
        self._digests: np.ndarray | None = None  # per indexed row (`paper_digest`), when built here

    @classmethod
    def build(cls, papers: Sequence[Paper]) -> LexicalIndex:
        import bm25s

        retriever = bm25s.BM25(k1=K1, b=B)
        avgdl = 0.0
        if papers:
            tokens = bm25s.tokenize(
                [lexical_text(p) for p in papers],
                stopwords="en",
                stemmer=_stemmer(),
                show_progress=False,
            )
            avgdl = float(np.mean([len(doc) for doc in tokens.ids]))
            retriever.index(tokens, show_progress=False)
        index = cls([p.id for p in papers], retriever, avgdl)
        index._digests = _digests(papers)
        return index

    @classmethod
    def open(cls, folder: Path, papers: Sequence[Paper]) -> LexicalIndex:
        """Load the saved index if it covers exactly these papers (itself, or with the
        change saved beside it); else rebuild and save."""
        ids = [p.id for p in papers]
        meta_path = folder / "meta.json"
        if meta_path.is_file():
            try:
                meta = json.loads(meta_path.read_text())
                stored, found = meta.get("ids"), str(meta.get("fingerprint"))
                delta = _read_delta(folder, found)
                index = cls(list(stored), cls._load_bm25(folder), float(meta.get("avgdl") or 0.0))
                # The same ids in the same order (the common case) need no digest of them
                # (1.5 s at a million papers); any other order, the digest decides.
                if (
                    delta is None
                    and found.startswith(f"v{INDEX_VERSION}:{len(ids)}:")
                    and (stored == ids or found == fingerprint(ids))
                ):
                    return index.aligned_to(ids)
                if delta is not None and index._with_delta(papers, delta):
                    return index
                # Papers the saved index has not met yet (a writer between publishing them
                # and saving their BM25 change, or its change not saved): a small change is
                # scored beside the saved index in memory, as a saved one would be, not a
                # rebuild (a million papers: four minutes and 9 GB in the serving app).
                # (`_with_delta` changes nothing when it answers False.)
                change = _change(folder, papers)
                if change is not None:
                    now = {"changed": list(change["changed"]), "hidden": list(change["hidden"])}
                    if index._with_delta(papers, now):
                        return index
                log.info("lexical index is stale (%s != %s); rebuilding", found, fingerprint(ids))
            except Exception as exc:  # a damaged index is rebuilt, never trusted
                log.warning("lexical index in %s is unreadable (%s); rebuilding", folder, exc)
        index = cls.build(papers)
        try:
            index.save(folder)
        except OSError as exc:  # read-only or full disk: search still works from memory
            log.warning("cannot save the lexical index in %s (%s); it is rebuilt on next start", folder, exc)
        return index

    @staticmethod
    def _load_bm25(folder: Path) -> object:
        import bm25s

        # Memory-mapped: the score matrix stays in the page cache, and a question touches
        # only the rows of its words.
        return bm25s.BM25.load(str(folder / "bm25"), mmap=True)

    @classmethod
    def save_for(cls, folder: Path, papers: Sequence[Paper]) -> None:
        """Save an index of these papers: the change since the saved index, beside it, when
        the saved one is large and the change small (see DELTA_FROM); else a new index."""
        change = _change(folder, papers)
        if change is None:
            cls.build(papers).save(folder)
            return
        if not change["changed"] and not change["hidden"]:  # the saved index is current
            (folder / DELTA).unlink(missing_ok=True)
            return
        tmp = folder / f".{DELTA}.tmp-{os.getpid()}-{threading.get_ident()}"
        try:
            tmp.write_text(json.dumps(change))
            os.replace(tmp, folder / DELTA)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def _with_delta(self, papers: Sequence[Paper], delta: dict[str, list[str]]) -> bool:
        """Serve `papers` from this (saved) index and the change beside it; False when the
        change does not describe these papers (then rebuild)."""
        import bm25s

        changed, hidden = set(delta["changed"]), set(delta["hidden"])
        order = {pid: i for i, pid in enumerate(self.ids)}
        cat_rows, base_rows, delta_rows = [], [], []
        for i, paper in enumerate(papers):
            if paper.id in changed:
                delta_rows.append(i)
            else:
                row = order.get(paper.id)
                if row is None or paper.id in hidden:
                    return False
                cat_rows.append(i)
                base_rows.append(row)
        inverse = np.full(len(self.ids), -1, dtype=np.int64)
        inverse[base_rows] = cat_rows
        self._map = (np.asarray(cat_rows, dtype=np.int64), np.asarray(base_rows, dtype=np.int64))
        self._inverse = inverse
        documents = (
            bm25s.tokenize(
                [lexical_text(papers[i]) for i in delta_rows],
                stopwords="en",
                stemmer=self._stem,
                return_ids=False,
                show_progress=False,
            )
            if delta_rows
            else []
        )
        scores = getattr(self._retriever, "scores", None) or {}
        self._delta = DeltaScores(
            delta_rows,
            [list(d) for d in documents],
            int(scores.get("num_docs", len(self.ids))),
            self.avgdl,
            self._base_df,
            K1,
            B,
        )
        self.ids = [p.id for p in papers]
        return True

    def aligned_to(self, ids: list[str]) -> LexicalIndex:
        if ids == self.ids:
            return self
        order = {pid: i for i, pid in enumerate(self.ids)}
        perm = np.array([order[pid] for pid in ids], dtype=np.int64)
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(len(perm))
        self._map, self._inverse = (np.arange(len(perm), dtype=np.int64), perm), inverse
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
            if self._digests is not None:
                np.save(tmp / "digests.npy", self._digests)
            (tmp / "meta.json").write_text(
                json.dumps({"fingerprint": fingerprint(self.ids), "ids": self.ids, "avgdl": self.avgdl})
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
        tokens = self.tokens(word)
        if not tokens:
            return np.zeros(0, dtype=np.int64)
        return self._docs_with_token(tokens[0])

    def _docs_with_token(self, token: str) -> np.ndarray:
        retriever = self._retriever
        vocab = getattr(retriever, "vocab_dict", {})
        scores = getattr(retriever, "scores", None)
        docs = np.zeros(0, dtype=np.int64)
        if scores and token in vocab:
            t = vocab[token]
            docs = np.asarray(
                scores["indices"][scores["indptr"][t] : scores["indptr"][t + 1]], dtype=np.int64
            )
            if self._inverse is not None:  # index order -> catalogue order, papers not served dropped
                docs = self._inverse[docs]
                docs = docs[docs >= 0]
        if self._delta is not None:
            docs = np.concatenate([docs, self._delta.docs_with(token)])
        return docs

    def _base_df(self, token: str) -> int:
        """Papers of the saved index with this token (served or not)."""
        vocab = getattr(self._retriever, "vocab_dict", {})
        scores = getattr(self._retriever, "scores", None)
        t = vocab.get(token)
        if not scores or t is None:
            return 0
        return int(scores["indptr"][t + 1] - scores["indptr"][t])

    def df(self, word: str) -> int:
        """In how many papers (text and metadata) a word occurs, after stemming."""
        tokens = self.tokens(word)
        if not tokens:
            return 0
        if self._delta is None and self._inverse is None:
            return self._base_df(tokens[0])
        return len(self._docs_with_token(tokens[0]))

    def begins_a_word(self, token: str) -> bool:
        """Does some indexed word (stemmed, text or metadata) begin with this stemmed token?
        ('bay', from 'Bayes', begins 'bayesian'; accents aside: 'akgul' begins 'akgül')."""
        vocab = getattr(self._retriever, "vocab_dict", {})
        cached = getattr(self, "_words", None)
        if cached is None or cached[0] is not vocab:
            found = {without_accents(w) for w in vocab}
            if self._delta is not None:
                found |= {without_accents(w) for w in self._delta.vocab}
            cached = self._words = (vocab, sorted(found))
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
        tokens = self.tokens(text)
        indexed = [t for t in tokens if t in vocab]
        raw = np.asarray(retriever.get_scores(indexed), dtype=np.float32) if indexed else None  # type: ignore[attr-defined]
        if raw is not None and self._map is None:
            out = raw  # the catalogue's order, every paper indexed: no second array per question
        else:
            out = np.zeros(len(self.ids), dtype=np.float32)
            if raw is not None and self._map is not None:
                cat_rows, base_rows = self._map
                out[cat_rows] = raw[base_rows]
        if self._delta is not None and tokens:
            out[self._delta.rows] = self._delta.scores(tokens)
        return out


def _read_delta(folder: Path, base: str) -> dict[str, list[str]] | None:
    """The change saved beside the index `base` (its fingerprint), or None."""
    try:
        data = json.loads((folder / DELTA).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("base") != base:
        return None
    return {
        "changed": [str(i) for i in data.get("changed", [])],
        "hidden": [str(i) for i in data.get("hidden", [])],
    }


def _change(folder: Path, papers: Sequence[Paper]) -> dict[str, list[str] | str] | None:
    """What changed since the saved index, when small enough to keep beside it (see
    DELTA_FROM): the papers new or edited (`changed`) and the indexed ones gone or
    edited (`hidden`). None: build a new index."""
    try:
        meta = json.loads((folder / "meta.json").read_text())
        stored = [str(i) for i in meta["ids"]]
        digests = np.load(folder / "digests.npy")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if len(stored) < DELTA_FROM or len(digests) != len(stored) or not meta.get("avgdl"):
        return None
    order = {pid: i for i, pid in enumerate(stored)}
    current, indexed = _digests(papers), digests.tolist()
    changed: list[str] = []
    served = np.zeros(len(stored), dtype=bool)  # indexed rows still served as indexed
    for paper, digest in zip(papers, current.tolist()):
        row = order.get(paper.id)
        if row is not None and indexed[row] == digest:
            served[row] = True
        else:  # new, or edited since it was indexed
            changed.append(paper.id)
            if len(changed) > DELTA_MAX:
                return None
    hidden = [stored[i] for i in np.flatnonzero(~served)]  # gone, or edited
    if len(changed) + len(hidden) > DELTA_MAX:
        return None
    return {"base": str(meta.get("fingerprint")), "changed": changed, "hidden": hidden}
