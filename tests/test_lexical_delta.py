"""A large lexical index that a few papers changed is not rebuilt: the change is saved
beside it and its papers are scored with the index's own statistics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from assistant.corpus.readers import load_papers
from assistant.index import lexical
from assistant.index.lexical import LexicalIndex
from assistant.types import Paper
from tests.conftest import SEEDS


@pytest.fixture()
def papers(monkeypatch: pytest.MonkeyPatch) -> list[Paper]:
    monkeypatch.setattr(lexical, "DELTA_FROM", 20)  # the seeds count as a large index
    return list(load_papers([SEEDS])[0])


def _top(index: LexicalIndex, papers: list[Paper], text: str) -> str:
    scores = index.scores(text)
    assert len(scores) == len(papers)
    return papers[int(np.argmax(scores))].id


def test_a_small_change_is_saved_beside_the_index_and_served_like_a_rebuild(
    tmp_path: Path, papers: list[Paper]
) -> None:
    folder = tmp_path / "lexical"
    LexicalIndex.save_for(folder, papers)
    bm25_files = {p.name: p.stat().st_ino for p in (folder / "bm25").iterdir()}
    LexicalIndex.save_for(folder, papers)  # nothing changed: nothing written
    assert not (folder / lexical.DELTA).exists()
    assert {p.name: p.stat().st_ino for p in (folder / "bm25").iterdir()} == bm25_files

    added = Paper(id="kelp-1", label="Kelp", title="Kelp forests", abstract="Sea urchins graze kelp forests.")
    edited = papers[3].replace(abstract="Mycorrhizal fungi trade phosphorus with orchids.")
    old_words = papers[3].abstract
    removed = papers[5]
    changed = [p for p in papers if p.id != removed.id]
    changed[changed.index(papers[3])] = edited
    changed.insert(10, added)

    LexicalIndex.save_for(folder, changed)
    assert (folder / lexical.DELTA).exists()
    assert {p.name: p.stat().st_ino for p in (folder / "bm25").iterdir()} == bm25_files  # not rebuilt

    served = LexicalIndex.open(folder, changed)
    assert served._delta is not None and served.ids == [p.id for p in changed]
    rebuilt = LexicalIndex.build(changed)
    assert _top(served, changed, "sea urchins grazing kelp") == "kelp-1"
    assert _top(served, changed, "mycorrhizal fungi phosphorus orchids") == edited.id
    assert served.df("urchins") == 1 and served.df("mycorrhizal") == 1
    assert changed[int(served.docs_with("orchids")[0])].id == edited.id
    assert served.begins_a_word("mycorrh")
    # The edited paper's old text is gone; the removed paper is never scored.
    first_sentence = old_words.split(".")[0]
    assert served.scores(first_sentence)[changed.index(edited)] == 0.0
    assert removed.id not in {p.id for p in changed}
    # Other questions rank as after a full rebuild: the same paper first, scores close
    # (the statistics are the saved index's: 87 papers, 2 of them changed).
    for paper in papers[20:40]:
        question = (paper.title or paper.abstract)[:80]
        a, b = served.scores(question), rebuilt.scores(question)
        assert np.argmax(a) == np.argmax(b)
        assert np.allclose(a, b, rtol=0.15, atol=0.3)
    for question in ("sea urchins grazing kelp", "orchids and fungi"):
        a, b = served.scores(question), rebuilt.scores(question)
        assert np.allclose(a, b, rtol=0.15, atol=0.3)


def test_a_large_change_or_a_small_index_is_rebuilt(
    tmp_path: Path, papers: list[Paper], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "lexical"
    LexicalIndex.save_for(folder, papers)
    monkeypatch.setattr(lexical, "DELTA_MAX", 2)
    LexicalIndex.save_for(folder, papers[:-3])  # three gone: more than the delta may hold
    assert not (folder / lexical.DELTA).exists()
    assert LexicalIndex.open(folder, papers[:-3])._delta is None
    monkeypatch.setattr(lexical, "DELTA_FROM", 1000)
    LexicalIndex.save_for(folder, papers[:-4])
    assert not (folder / lexical.DELTA).exists()


def test_a_change_that_does_not_describe_the_papers_is_not_trusted(
    tmp_path: Path, papers: list[Paper]
) -> None:
    folder = tmp_path / "lexical"
    LexicalIndex.save_for(folder, papers)
    LexicalIndex.save_for(folder, papers[1:])  # the first paper removed: a delta
    assert (folder / lexical.DELTA).exists()
    bm25_files = {p.name: p.stat().st_ino for p in (folder / "bm25").iterdir()}
    # A reader whose catalogue still has the first paper (the delta hides it): the saved
    # delta is not applied to it; its own papers are compared with the saved index and
    # served from it, and neither the index nor the writer's delta is touched.
    index = LexicalIndex.open(folder, papers)
    assert _top(index, papers, papers[0].title or papers[0].abstract[:80]) == papers[0].id
    assert (folder / lexical.DELTA).exists()
    assert {p.name: p.stat().st_ino for p in (folder / "bm25").iterdir()} == bm25_files


def test_a_reader_that_meets_papers_before_their_bm25_change_is_saved_does_not_rebuild(
    tmp_path: Path, papers: list[Paper]
) -> None:
    """A writer publishes its papers, then saves their BM25 change; a serving app that
    loads the papers in between scores the new ones beside the saved index, in memory,
    instead of rebuilding BM25 (a million papers: four minutes and 9 GB)."""
    folder = tmp_path / "lexical"
    LexicalIndex.save_for(folder, papers)
    meta = (folder / "meta.json").stat().st_ino
    added = Paper(
        id="kelp-2", label="Kelp", title="Kelp holdfasts", abstract="Otters protect kelp holdfasts."
    )
    now = [*papers[:40], added, *papers[40:]]
    index = LexicalIndex.open(folder, now)
    assert index._delta is not None and index.ids == [p.id for p in now]
    assert _top(index, now, "otters protecting kelp holdfasts") == "kelp-2"
    assert (folder / "meta.json").stat().st_ino == meta and not (folder / lexical.DELTA).exists()
