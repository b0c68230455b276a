"""The snapshot's catalogue: one vector matrix, shared by copies and never written into."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assistant.index.catalogue import Catalogue
from assistant.index.snapshot import Loaded, Snapshot, SnapshotDamaged
from assistant.types import Filters, Paper


def paper(n: int, authors: tuple[str, ...] = (), area: str | None = None) -> Paper:
    return Paper(id=f"p{n}", label=f"P{n}", abstract=f"abstract {n}", authors=authors, area=area)


def rows(*values: float) -> np.ndarray:
    return np.array([[v, 0.0] for v in values], dtype=np.float32)


def test_updates_and_removals_leave_a_served_copy_as_it_was(tmp_path: Path) -> None:
    snapshot = Snapshot(tmp_path / "snap")
    snapshot.append("store", 3, [paper(1), paper(2), paper(3)], rows(1, 2, 3))
    served = snapshot.load(snapshot.manifest())  # type: ignore[arg-type]
    before = served.vectors.copy()
    snapshot.append("store", 4, [paper(2), paper(4)], rows(20, 4))  # p2 edited, p4 new
    snapshot.remove("store", 3, ["p1"])
    manifest = snapshot.manifest()
    assert manifest is not None
    newer = snapshot.load(manifest, served.copy())  # only the two new segments are read
    assert [p.id for p in newer.papers] == ["p2", "p3", "p4"]
    assert newer.vectors[:, 0].tolist() == [20, 3, 4]
    assert newer.index == {"p2": 0, "p3": 1, "p4": 2}
    # The catalogue being served meanwhile saw none of it.
    assert [p.id for p in served.papers] == ["p1", "p2", "p3"] and served.index == {"p1": 0, "p2": 1, "p3": 2}
    assert np.array_equal(served.vectors, before)
    # Loading from scratch gives the same as following segment by segment.
    fresh = snapshot.load(manifest)
    assert [p.id for p in fresh.papers] == ["p2", "p3", "p4"] and np.array_equal(fresh.vectors, newer.vectors)


def test_a_compaction_merges_the_newest_segments_and_leaves_the_large_old_ones(tmp_path: Path) -> None:
    """Merging everything every COMPACT_AFTER batches held the whole catalogue and rewrote
    it each time; the run of newest segments is merged instead, and the catalogue loads
    the same. A removal among them that drops older papers stays, after the merged run."""
    from assistant.index import snapshot as snap

    snapshot = Snapshot(tmp_path / "snap")
    snapshot.append("store", 300, [paper(n) for n in range(300)], rows(*range(300)))
    for n in range(300, 300 + snap.COMPACT_AFTER):  # small batches after a large one
        snapshot.append("store", n + 1, [paper(n), paper(5)], rows(n, 5.5))  # p5 updated each time
    manifest = snapshot.manifest()
    assert manifest is not None and len(manifest.segments) == 2  # compacted once
    first = manifest.segments[0]
    assert first == "seg-00000001"  # the large segment was not rewritten
    loaded = snapshot.load(manifest)
    assert [p.id for p in loaded.papers] == [f"p{n}" for n in range(300 + snap.COMPACT_AFTER)]
    assert loaded.vectors[5, 0] == 5.5 and loaded.vectors[320, 0] == 320
    assert sorted(f.name for f in (tmp_path / "snap").glob("seg-*")) == sorted(
        f"{name}.{ext}" for name in manifest.segments for ext in ("jsonl", "npy")
    )
    snapshot.remove("store", 347, ["p0", "p320", "p399"])  # old, newer, and not (yet) stored
    snapshot.append("store", 348, [paper(399)], rows(399))  # removed, then added again
    for n in range(400, 400 + snap.COMPACT_AFTER):
        snapshot.append("store", n, [paper(n)], rows(n))
    manifest = snapshot.manifest()
    assert manifest is not None and manifest.segments[0] == first  # the large segment stays
    kept = [n for n in manifest.segments if n.endswith("-removed")]
    assert len(kept) == 1 and kept[0].endswith("-c-removed")  # compacted: only older papers' removals
    assert json.loads((tmp_path / "snap" / f"{kept[0]}.json").read_text()) == ["p0", "p320"]
    loaded = snapshot.load(manifest)
    ids = [p.id for p in loaded.papers]
    assert "p0" not in ids and "p320" not in ids and ids[0] == "p1" and "p399" in ids
    assert len(ids) == 298 + snap.COMPACT_AFTER * 2 + 1
    assert loaded.vectors[ids.index("p399"), 0] == 399 and loaded.vectors[ids.index("p5"), 0] == 5.5


def test_a_segment_that_repeats_a_paper_keeps_its_last_version() -> None:
    loaded = Loaded()
    loaded.apply([paper(1), paper(2), paper(1)], rows(1, 2, 10))
    assert [p.id for p in loaded.papers] == ["p1", "p2"]
    assert loaded.vectors[:, 0].tolist() == [10, 2]


def test_author_and_topic_filters_keep_exactly_their_papers() -> None:
    papers = [
        paper(1, ("Ana Kim", "Ben Ito"), "Theory"),
        paper(2, ("Ben Ito", "Ben Ito"), None),  # a name twice in one record
        paper(3, (), "Theory"),
        paper(4, ("Ana Kim",), "Applications"),
    ]
    catalogue = Catalogue(papers)
    assert catalogue.mask(Filters(author="ben ito")).tolist() == [True, True, False, False]
    assert catalogue.mask(Filters(topic="theory")).tolist() == [True, False, True, False]
    assert catalogue.mask(Filters(author="Ana Kim", topic="Theory")).tolist() == [True, False, False, False]
    assert catalogue.papers_with_author_part("ito") == 2
    assert not Catalogue([]).mask(Filters(author="Ana Kim")).any()


def test_spellings_that_fold_alike_are_one_name_to_every_filter() -> None:
    papers = [
        Paper(id="a", label="A", abstract="a", authors=("José Núñez",), venue="NeurIPS", year=2025),
        Paper(
            id="b", label="B", abstract="b", authors=("Jose  Nunez", "Ana Kim"), venue="neurips", year=2026
        ),
        Paper(id="c", label="C", abstract="c", authors=("Ana Kim",), venue="ICLR", subarea="Theory"),
    ]
    catalogue = Catalogue(papers)
    assert catalogue.mask(Filters(author="jose nunez")).tolist() == [True, True, False]
    assert catalogue.mask(Filters(venue="NEURIPS")).tolist() == [True, True, False]
    assert catalogue.mask(Filters(topic="theory")).tolist() == [False, False, True]
    assert catalogue.mask(Filters(venue="NeurIPS", year_from=2026)).tolist() == [False, True, False]
    assert catalogue.mask(Filters(author="Ana Kim", venue="ICLR")).tolist() == [False, False, True]


def test_a_paper_reads_back_exactly_as_written(tmp_path: Path) -> None:
    """Every field, non-ASCII text and characters JSON must escape survive the snapshot."""
    full = Paper(
        id="p9",
        label="Zoë’s “quoted” label",
        abstract='A line\nbreak, a tab\t, a quote " and a separator \u2028 in one abstract.',
        title="Über alles",
        authors=("Ana Kim", "Zoë Ørsted"),
        venue="ICLR",
        year=2026,
        area="ML",
        subarea="Theory",
        comment="12 pages",
        url="https://example.org/p9",
        external_id="2601.00001",
        sources=("listing.txt:3", "more.bib:1"),
        doi="10.1234/p9",
        keys=("more.bib#id:kim2026",),
    )
    snapshot = Snapshot(tmp_path / "snap")
    snapshot.append("store", 2, [full, paper(1)], rows(1, 2))
    loaded = snapshot.load(snapshot.manifest())  # type: ignore[arg-type]
    assert loaded.papers == [full, paper(1)]
    assert isinstance(loaded.papers[0].authors, tuple) and isinstance(loaded.papers[0].keys, tuple)


def test_a_line_with_loose_types_is_read_as_before_not_refused(tmp_path: Path) -> None:
    """A snapshot rebuilt from metadata another program wrote (a year as text, a null list)
    is read as it was before msgspec, not taken for damage and rebuilt at every start."""
    import json

    snapshot = Snapshot(tmp_path / "snap")
    snapshot.append("store", 2, [paper(1), paper(2)], rows(1, 2))
    segment = next((tmp_path / "snap").glob("seg-*.jsonl"))
    lines = segment.read_text().splitlines()
    loose = json.loads(lines[1]) | {"year": "2024", "authors": None}
    segment.write_text("\n".join([lines[0], json.dumps(loose)]) + "\n")
    loaded = snapshot.load(snapshot.manifest())  # type: ignore[arg-type]
    assert [p.id for p in loaded.papers] == ["p1", "p2"] and loaded.papers[1].authors == ()


@pytest.mark.parametrize("damage", ["line cut", "not json", "npy cut", "wrong width", "removal garbled"])
def test_a_damaged_segment_is_refused_not_misread(tmp_path: Path, damage: str) -> None:
    """Papers and vectors are paired by row: a segment that cannot be read as written is
    reported (SnapshotDamaged, which says to rebuild from the store), never half-used."""
    snapshot = Snapshot(tmp_path / "snap")
    snapshot.append("store", 3, [paper(1), paper(2), paper(3)], rows(1, 2, 3))
    snapshot.append("store", 4, [paper(4)], rows(4))
    snapshot.remove("store", 3, ["p4"])
    first, second, removal = snapshot.manifest().segments  # type: ignore[union-attr]
    jsonl, npy = (tmp_path / "snap" / f"{first}.jsonl"), (tmp_path / "snap" / f"{first}.npy")
    if damage == "line cut":
        jsonl.write_bytes(b"".join(jsonl.read_bytes().splitlines(keepends=True)[1:]))
    elif damage == "not json":
        jsonl.write_bytes(jsonl.read_bytes().replace(b'"abstract 2"', b"abstract 2"))
    elif damage == "npy cut":
        npy.write_bytes(npy.read_bytes()[:-5])
    elif damage == "wrong width":
        np.save(tmp_path / "snap" / f"{second}.npy", np.ones((1, 3), dtype=np.float32))
    else:
        (tmp_path / "snap" / f"{removal}.json").write_text('["p4"')
    with pytest.raises(SnapshotDamaged, match="snapshot segment seg-") as caught:
        snapshot.load(snapshot.manifest())  # type: ignore[arg-type]
    assert str(tmp_path / "snap") in str(caught.value)
