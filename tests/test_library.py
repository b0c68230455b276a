"""A library that changes: edited records replace their old version, papers are removed
(by file or by id), `--sync` follows a file, and a running view follows all of it.
Real store, real files, the real bundled embedder."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import pytest

from assistant import Assistant
from assistant.cli import main
from assistant.corpus.strong_index import wait_for
from tests.conftest import SEEDS

SNAIL = (
    "We measure the speed of garden snails crawling on glass plates and find that they move "
    "{} centimetres per minute on average across two hundred trials in spring and summer."
)
BEE = (
    "Honeybee waggle dances encode the distance and direction to food sources; we decode three "
    "thousand dances recorded over one summer with a new video tracker and a small neural network."
)
MOTH = (
    "Moths navigate by the moon: we track forty moths in a flight arena under a moving light "
    "source and show that their heading error grows with the angular speed of the light."
)


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def snails(bot: Assistant) -> list[str]:
    """The snail abstracts search returns (the store of record says the same)."""
    return [
        h.paper.abstract
        for h in bot.search("garden snails crawling on glass speed", k=5)
        if "snails" in h.paper.abstract
    ]


def stored(bot: Assistant, fragment: str) -> list[str]:
    return [p.abstract for p in bot.store.papers() if fragment in p.abstract]


def test_an_edited_abstract_replaces_its_old_version(seeded, tmp_path: Path) -> None:
    library = tmp_path / "library.jsonl"
    write_jsonl(library, [{"id": "snail", "title": "Snail speed", "abstract": SNAIL.format("4.1")}])
    assert seeded.ingest([library]).added == 1
    watcher = Assistant(
        data_dir=seeded.settings.data_dir, corpus=[SEEDS], backend="extractive", refresh_s=0.2
    )
    assert snails(watcher) == [SNAIL.format("4.1")]

    write_jsonl(library, [{"id": "snail", "title": "Snail speed", "abstract": SNAIL.format("2.7")}])
    report = seeded.ingest([library])
    assert (report.added, report.updated, report.skipped) == (0, 1, 0)
    assert "0 added, 1 updated" in report.summary()
    assert stored(seeded, "garden snails") == [SNAIL.format("2.7")]  # Chroma
    assert snails(seeded) == [SNAIL.format("2.7")]  # the snapshot and the lexical index
    answer = seeded.ask("How fast do garden snails crawl on glass?")
    assert "2.7" in answer.text and "4.1" not in answer.text
    # Another process's view (an app serving meanwhile) stops returning the old text.
    assert wait_for(lambda: snails(watcher) == [SNAIL.format("2.7")], timeout_s=30)
    assert seeded.store.count() == 88


def test_the_first_search_after_another_process_edits_or_removes_a_paper_never_returns_it(
    seeded, tmp_path: Path
) -> None:
    """A running view loads another process's changes beside its questions and answers from
    what it had meanwhile: a paper added elsewhere may come a moment late, but a replaced or
    removed one must not be answered from. (A walk, stop 61: the question asked 3 s after
    `assistant remove` in another terminal was answered from the removed paper.) The first
    search after such a change waits for the reload; after an addition it does not."""
    library = tmp_path / "library.jsonl"
    write_jsonl(library, [{"id": "snail", "abstract": SNAIL.format("4.1")}, {"id": "bee", "abstract": BEE}])
    assert seeded.ingest([library]).added == 2
    watcher = Assistant(data_dir=seeded.settings.data_dir, corpus=[SEEDS], backend="extractive", refresh_s=0)
    assert snails(watcher) == [SNAIL.format("4.1")]

    write_jsonl(library, [{"id": "snail", "abstract": SNAIL.format("2.7")}, {"id": "bee", "abstract": BEE}])
    assert seeded.ingest([library]).updated == 1
    assert snails(watcher) == [SNAIL.format("2.7")]  # the first search after the edit
    assert len(seeded.remove(ids=["snail"]).removed) == 1
    assert snails(watcher) == []  # the first search after the removal
    assert len(watcher.catalogue) == 88


def test_a_record_without_id_or_doi_edited_under_its_title_is_updated(seeded, tmp_path: Path) -> None:
    """A CSV or JSONL listing often has no ids: the title is then the record's identity, so
    an edited abstract replaces the old one even without --sync, and is reported as updated."""
    library = tmp_path / "listing.jsonl"
    moth = {"title": "Moths and the moon", "abstract": MOTH}
    write_jsonl(library, [{"title": "Snail speed", "abstract": SNAIL.format("4.1")}, moth])
    assert seeded.ingest([library]).added == 2

    write_jsonl(library, [{"title": "Snail Speed.", "abstract": SNAIL.format("2.7")}, moth])
    report = seeded.ingest([library])
    assert (report.added, report.updated, report.removed) == (0, 1, 0), report.summary()
    assert stored(seeded, "garden snails") == [SNAIL.format("2.7")]
    assert snails(seeded) == [SNAIL.format("2.7")]
    assert seeded.store.count() == 89
    # A new title is a new paper: without --sync the old one stays (it may be another paper).
    write_jsonl(library, [{"title": "Snail speed on glass", "abstract": SNAIL.format("3.3")}, moth])
    assert (seeded.ingest([library]).added, seeded.store.count()) == (1, 90)
    # A title two records share says neither which one was edited nor which one left.
    shared = tmp_path / "shared.jsonl"
    write_jsonl(
        shared, [{"title": "Introduction", "abstract": BEE}, {"title": "Introduction", "abstract": MOTH}]
    )
    assert seeded.ingest([shared]).added == 1  # the moth paper is stored already (listing.jsonl)
    write_jsonl(shared, [{"title": "Introduction", "abstract": MOTH}])
    report = seeded.ingest([shared])
    assert (report.added, report.updated, report.removed) == (0, 0, 0), report.summary()
    assert len(stored(seeded, "waggle")) == 1  # without --sync the bee paper stays
    # A title names no paper for `remove` (two papers may share one); ids and DOIs do.
    report = seeded.remove(ids=["snail speed on glass"])
    assert (report.removed, report.unknown) == ([], ["snail speed on glass"])


def test_a_bibtex_entry_edited_under_the_same_key_is_updated_and_keeps_percent_signs(
    seeded, tmp_path: Path
) -> None:
    bib = tmp_path / "zotero.bib"
    entry = (
        "% exported by Better BibTeX\n"
        "@article{snail2024,\n  title = {Pruning 90% of Snail Trials},\n"
        "  abstract = {ABSTRACT},\n  doi = {10.1000/Snail.2024},\n  url = {https://example.org/snail},\n"
        "  year = {2024},\n}\n"
    )
    bib.write_text(entry.replace("ABSTRACT", SNAIL.format("90% and 95% of the time 4.1")))
    assert seeded.ingest([bib]).added == 1
    (paper,) = [p for p in seeded.catalogue.papers if p.external_id == "snail2024"]
    assert paper.title == "Pruning 90% of Snail Trials"
    assert "move 90% and 95% of the time 4.1 centimetres" in paper.abstract
    assert (paper.doi, paper.url) == ("10.1000/snail.2024", "https://example.org/snail")

    bib.write_text(entry.replace("ABSTRACT", SNAIL.format("90% and 95% of the time 2.7")))
    assert seeded.ingest([bib]).updated == 1
    (paper,) = [p for p in seeded.catalogue.papers if p.external_id == "snail2024"]
    assert "2.7" in paper.abstract and paper.doi == "10.1000/snail.2024"
    # The DOI reaches every output: JSON, Markdown references, BibTeX export.
    hit = seeded.search("snails crawling on glass plates", k=1)[0]
    assert hit.paper.to_dict()["doi_url"] == "https://doi.org/10.1000/snail.2024"
    answer = seeded.ask("How fast do garden snails crawl on glass plates?")
    assert "[doi:10.1000/snail.2024](https://doi.org/10.1000/snail.2024)" in answer.markdown()
    assert "https://example.org/snail" in answer.markdown()
    from assistant.corpus.bibtex import to_bibtex

    assert "doi = {10.1000/snail.2024}" in to_bibtex([paper])


def test_remove_a_file_keeps_papers_another_file_holds(seeded, tmp_path: Path) -> None:
    one = write_jsonl(tmp_path / "one.jsonl", [{"id": "a", "abstract": BEE}, {"id": "b", "abstract": MOTH}])
    two = write_jsonl(tmp_path / "two.jsonl", [{"id": "x", "abstract": BEE}])
    assert seeded.ingest([one, two]).added == 2
    watcher = Assistant(
        data_dir=seeded.settings.data_dir, corpus=[SEEDS], backend="extractive", refresh_s=0.2
    )
    assert watcher.search("moths navigate by the moon", k=1)[0].paper.abstract == MOTH

    one.unlink()  # the file need not exist any more
    report = seeded.remove(paths=[one])
    assert (len(report.removed), report.kept) == (1, 1)
    assert stored(seeded, "Moths navigate") == [] and len(stored(seeded, "waggle")) == 1
    bee = next(p for p in seeded.catalogue.papers if p.abstract == BEE)
    assert bee.sources == ("two.jsonl:1",) and bee.keys == ("two.jsonl#id:x",)
    assert all(h.paper.abstract != MOTH for h in seeded.search("moths navigate by the moon", k=10))
    assert wait_for(
        lambda: all(h.paper.abstract != MOTH for h in watcher.search("moths navigate by the moon", k=10)), 30
    )
    assert seeded.store.count() == 88


def test_remove_by_id_key_or_doi(seeded, tmp_path: Path) -> None:
    lib = write_jsonl(
        tmp_path / "lib.jsonl",
        [
            {"id": "bee-1", "abstract": BEE},
            {"id": "moth-1", "abstract": MOTH, "doi": "doi:10.5555/MOTH"},
            {"abstract": SNAIL.format("3.3")},
        ],
    )
    assert seeded.ingest([lib]).added == 3
    snail_id = next(p.id for p in seeded.catalogue.papers if "snails" in p.abstract)
    report = seeded.remove(ids=["bee-1", "https://doi.org/10.5555/moth", snail_id, "nothing-here"])
    assert len(report.removed) == 3 and report.unknown == ["nothing-here"]
    assert seeded.store.count() == len(seeded.catalogue.papers) == 87


def test_sync_drops_what_left_the_file_and_a_deleted_file(seeded, tmp_path: Path) -> None:
    lib = write_jsonl(tmp_path / "lib.txt.jsonl", [{"abstract": BEE}, {"abstract": MOTH}])
    other = write_jsonl(tmp_path / "other.jsonl", [{"abstract": SNAIL.format("1.0")}])
    assert seeded.ingest([lib, other]).added == 3
    write_jsonl(lib, [{"abstract": MOTH}])  # the bee entry was deleted from the file
    assert seeded.ingest([lib]).removed == 0  # a plain ingest never removes
    report = seeded.ingest([lib], sync=True)
    assert report.removed == 1 and stored(seeded, "waggle") == []
    moth = next(p for p in seeded.catalogue.papers if p.abstract == MOTH)
    assert moth.sources == ("lib.txt.jsonl:2",)  # the line where it was first read
    other.unlink()
    report = seeded.ingest([other], sync=True)
    assert report.removed == 1 and any("no longer exists" in n for n in report.notes)
    assert stored(seeded, "snails") == []


def test_sync_of_a_file_with_problems_removes_nothing(seeded, tmp_path: Path) -> None:
    lib = write_jsonl(tmp_path / "lib.jsonl", [{"abstract": BEE}, {"abstract": MOTH}])
    assert seeded.ingest([lib]).added == 2
    lib.write_text(json.dumps({"abstract": BEE}) + "\n{broken json\n")  # the moth line got damaged
    report = seeded.ingest([lib], sync=True)
    assert report.removed == 0 and any("not synced" in n for n in report.notes)
    assert len(stored(seeded, "Moths navigate")) == 1


def test_remove_and_sync_on_the_command_line(
    seeded_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(seeded_dir, data)
    monkeypatch.setenv("ASSISTANT_DATA_DIR", str(data))
    monkeypatch.setenv("ASSISTANT_CORPUS", json.dumps([str(SEEDS)]))
    monkeypatch.setenv("ASSISTANT_INDEX_IN_BACKGROUND", "false")
    lib = write_jsonl(tmp_path / "lib.jsonl", [{"id": "m", "abstract": MOTH}, {"id": "b", "abstract": BEE}])
    assert main(["ingest", "--quiet", str(lib)]) == 0
    assert "2 added" in capsys.readouterr().out
    write_jsonl(lib, [{"id": "m", "abstract": MOTH}])
    assert main(["ingest", "--quiet", "--sync", str(lib)]) == 0
    assert "1 removed" in capsys.readouterr().out
    assert main(["remove", "--id", "m"]) == 0
    out = capsys.readouterr().out
    assert "removed: Moths navigate" in out and "87 abstracts" in out
    assert main(["remove", "--id", "no-such-paper"]) == 2
    assert "no stored paper comes from or is named 'no-such-paper'" in capsys.readouterr().out
    assert main(["remove"]) == 2
    assert capsys.readouterr().err.startswith("error: name the files")


def test_ingesting_into_an_empty_store_puts_the_configured_corpus_in_first(tmp_path: Path) -> None:
    """`assistant ingest` before anything else: the store ends with the configured corpus
    *and* the files (the corpus is not lost for good because ingest was the first use), and
    the report says so and how to begin empty instead."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"abstract": BEE}, {"abstract": MOTH}])
    mine = write_jsonl(tmp_path / "mine.jsonl", [{"abstract": SNAIL.format(7)}])
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")
    report = bot.ingest([mine])
    assert report.added == 1 and "was ingested first" in report.notes[0]
    assert "2 papers" in report.notes[0] and "ASSISTANT_AUTO_INGEST=false" in report.notes[0]
    assert bot.store.count() == 3
    assert "waggle" in bot.search("honeybee waggle dances", k=1)[0].paper.abstract
    assert not bot.ingest([mine]).notes  # only on first use

    empty = Assistant(data_dir=tmp_path / "empty", corpus=[corpus], auto_ingest=False, backend="extractive")
    assert not empty.ingest([mine]).notes and empty.store.count() == 1


def test_a_dropped_assistant_and_a_replaced_catalogue_are_freed(tmp_path: Path) -> None:
    """A catalogue build freezes what exists for the collector's sake (`gc.freeze`). What it
    froze must not stay for good: an assistant dropped after its build (it holds its models:
    the test run grew by 1.1 GB per assistant), or the catalogue an ingest replaced, is freed
    once a later build has run."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"abstract": BEE}, {"abstract": MOTH}])
    bot = Assistant(data_dir=tmp_path / "one", corpus=[corpus], backend="extractive")
    assert "waggle" in bot.search("honeybee waggle dances", k=1)[0].paper.abstract
    dropped = weakref.ref(bot)
    old = weakref.ref(bot.live.retriever())
    bot.ingest([write_jsonl(tmp_path / "mine.jsonl", [{"abstract": SNAIL.format(7)}])])
    assert snails(bot) and bot.live.retriever() is not old()
    del bot

    other = Assistant(data_dir=tmp_path / "two", corpus=[corpus], backend="extractive")
    assert "Moths" in other.search("moths navigate by the moon", k=1)[0].paper.abstract
    gc.collect()
    assert old() is None, "the catalogue an ingest replaced is kept for good"
    assert dropped() is None, "a dropped assistant is kept for good, with its models"
