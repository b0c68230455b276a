"""embedder=auto: the fast (MiniLM) index answers at once, the EmbeddingGemma index is
built beside it (resumable, in the background in the app) and answers once complete."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from assistant import Assistant
from assistant.config import STRONG_EMBEDDER
from assistant.corpus import strong_index as indexing
from assistant.corpus.readers import load_papers
from assistant.errors import ConfigError
from assistant.model_files import EMBEDDERS, models_dir
from tests.conftest import SEEDS

INSTALLED = (models_dir() / EMBEDDERS[STRONG_EMBEDDER].folder / "model.safetensors").is_file()
needs_gemma = pytest.mark.skipif(
    not INSTALLED,
    reason=f"run `python -m assistant.model_files install {STRONG_EMBEDDER}` (make install does)",
)
FAST = "all-minilm-l6-v2"


def small_corpus(tmp_path: Path, n: int, start: int = 0, name: str = "small.jsonl") -> Path:
    papers = load_papers([SEEDS])[0][start : start + n]
    path = tmp_path / name
    path.write_text("".join(json.dumps({"id": p.id, "abstract": p.abstract}) + "\n" for p in papers))
    return path


@needs_gemma
def test_fast_index_answers_until_the_strong_one_is_complete(tmp_path: Path) -> None:
    corpus = small_corpus(tmp_path, 6)
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")
    status = bot.index_status()
    assert (status.answering, status.strong, status.strong_papers, status.papers) == (
        FAST,
        STRONG_EMBEDDER,
        0,
        6,
    )
    assert status.line().endswith(
        "not complete: the app builds the rest while it serves, or run `assistant index`"
    )
    # A build running in another process (its marker, renewed every batch) is named as such.
    other = subprocess.Popen(["sleep", "60"])
    try:
        marker = bot.strong.settings.snapshot_dir.with_name(
            bot.strong.settings.snapshot_dir.name + ".building"
        )
        marker.write_text(str(other.pid))
        assert bot.index_status().line().endswith(f"being built by process {other.pid}")
    finally:
        other.kill()
        other.wait()
    assert bot.index_status().line().endswith("or run `assistant index`")  # that process is gone
    assert bot.live.retriever().catalogue.vectors.shape[1] == 384

    done: list[tuple[int, int]] = []
    assert bot.build_index(progress=lambda d, t: done.append((d, t))) == 6
    assert done[-1] == (6, 6)
    status = bot.index_status()
    assert status.complete and status.answering == STRONG_EMBEDDER
    assert status.line().startswith(f"search: {STRONG_EMBEDDER} index (6 papers)")
    assert status.line().endswith(f"(questions via {status.questions}, abstracts via {status.abstracts})")
    assert status.questions in ("openvino", "onnx", "torch") and status.abstracts in ("openvino", "torch")
    # Searches now go through EmbeddingGemma's 768-dimension vectors, with its query prompt.
    assert bot._ready().catalogue.vectors.shape[1] == 768
    target = load_papers([corpus])[0][4]
    assert bot.search(target.abstract.split(". ")[0], k=1)[0].paper.id == target.id
    assert bot.build_index() == 0  # nothing left to do

    # A paper added later: the fast index has it at once and answers until the strong one
    # catches up; nothing is ever missing from search.
    extra = small_corpus(tmp_path, 1, start=40, name="extra.jsonl")
    new = load_papers([extra])[0][0]
    bot.ingest([extra])
    status = bot.index_status()
    assert (status.answering, status.strong_papers, status.papers) == (FAST, 6, 7)
    assert bot.search(new.abstract.split(". ")[0], k=1)[0].paper.id == new.id
    assert bot.build_index() == 1
    assert bot.index_status().answering == STRONG_EMBEDDER
    assert bot.search(new.abstract.split(". ")[0], k=1)[0].paper.id == new.id

    # Another process opening the same folder uses the strong index straight away.
    again = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")
    assert again.index_status().answering == STRONG_EMBEDDER
    assert again.strong is not None and again.strong.store.count() == 7


@needs_gemma
def test_an_interrupted_build_resumes_without_embedding_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing, "BATCH", 2)
    corpus = small_corpus(tmp_path, 5)
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")
    stop = threading.Event()
    assert bot.build_index(progress=lambda done, total: stop.set(), stop=stop) == 2
    assert bot.index_status().strong_papers == 2
    assert bot.index_status().answering == FAST
    assert bot.build_index() == 3
    strong = bot.strong
    assert strong is not None and strong.store.count() == 5
    assert bot.index_status().answering == STRONG_EMBEDDER


@needs_gemma
def test_the_strong_index_follows_removals_and_edits_of_the_fast_one(tmp_path: Path) -> None:
    """A removed paper, or the old version of an edited one, is never returned by the strong
    index: it is deleted there too (nothing embedded), and an edited record's new version
    is searched in the fast index until the strong one has embedded it."""
    papers = load_papers([SEEDS])[0][:4]
    corpus = tmp_path / "lib.jsonl"
    records = [{"id": f"r{i}", "abstract": p.abstract} for i, p in enumerate(papers)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")
    assert bot.build_index() == 4 and bot.index_status().answering == STRONG_EMBEDDER
    strong = bot.strong
    assert strong is not None

    assert len(bot.remove(ids=["r0"]).removed) == 1
    assert strong.store.count() == 3 and papers[0].id not in {p.id for p in strong.catalogue.papers}
    status = bot.index_status()
    assert (status.answering, status.strong_papers, status.papers) == (STRONG_EMBEDDER, 3, 3)
    assert all(h.paper.id != papers[0].id for h in bot.search(papers[0].abstract[:200], k=3))

    records[1]["abstract"] = papers[1].abstract + " We also report a new result on snails."
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records[1:]))
    assert bot.ingest([corpus]).updated == 1
    assert papers[1].id not in {p.id for p in strong.catalogue.papers}
    assert bot.index_status().answering == FAST  # the new version is not embedded there yet
    top = bot.search(papers[1].abstract[:200], k=1)[0].paper
    assert top.abstract.endswith("new result on snails.")
    assert bot.build_index() == 1 and bot.index_status().answering == STRONG_EMBEDDER
    assert bot.search(papers[1].abstract[:200], k=1)[0].paper.abstract.endswith("new result on snails.")


@needs_gemma
def test_an_edit_the_strong_index_has_not_followed_is_searched_in_the_fast_one(tmp_path: Path) -> None:
    """An abstract edited by a writer that does not make the strong index follow (an ingest
    with the fast embedder only; on a Chroma server, another machine) keeps the count: the
    strong index, as many papers as the fast one, returned the old version. It answers
    again once it has followed the change."""
    papers = load_papers([SEEDS])[0][:4]
    corpus = tmp_path / "lib.jsonl"
    records = [{"id": f"r{i}", "abstract": p.abstract} for i, p in enumerate(papers)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive", refresh_s=0)
    assert bot.build_index() == 4 and bot.index_status().answering == STRONG_EMBEDDER

    records[2]["abstract"] = papers[2].abstract + " We also report a new result on snails."
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    fast_only = Assistant(data_dir=tmp_path / "data", embedder=FAST, backend="extractive")
    assert fast_only.ingest([corpus]).updated == 1
    # (the app loads the new fast snapshot beside the questions, then answers from it)
    assert indexing.wait_for(lambda: bot.index_status().answering == FAST, timeout_s=30)
    status = bot.index_status()
    assert (status.answering, status.strong_papers, status.papers) == (FAST, 4, 4)
    assert "to follow a change to the library first" in status.line()
    top = bot.search(papers[2].abstract[:200], k=1)[0].paper
    assert top.abstract.endswith("new result on snails.")
    assert bot.build_index() == 1 and bot.index_status().answering == STRONG_EMBEDDER
    assert bot.search(papers[2].abstract[:200], k=1)[0].paper.abstract.endswith("new result on snails.")


def write_records(path: Path, records: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@needs_gemma
def test_an_edit_or_removal_landing_during_a_build_never_reaches_the_strong_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process edits one paper and removes another between two batches of the
    build: the next batch, embedded from the list of papers read before, drops their old
    versions instead of storing them. (A walk, stop 60: while the app built the strong
    index, `assistant ingest` of an edited abstract made the app answer the old text once
    the strong index was complete, and a removal after it answered from both versions.)"""
    monkeypatch.setattr(indexing, "BATCH", 2)
    papers = load_papers([SEEDS])[0][:5]
    corpus = tmp_path / "lib.jsonl"
    records = [{"id": f"r{i}", "abstract": p.abstract} for i, p in enumerate(papers)]
    write_records(corpus, records)
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive", refresh_s=0)
    other = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")  # the CLI
    edited = papers[3].abstract + " We also report a new result on snails."

    def meanwhile(done: int, total: int) -> None:
        if done == 2:  # r0 and r1 are stored; r2 and r3 come next, from the list read before
            records[3]["abstract"] = edited
            write_records(corpus, records)
            assert other.ingest([corpus]).updated == 1
            assert len(other.remove(ids=["r2"]).removed) == 1

    assert bot.build_index(progress=meanwhile) == 3  # r0, r1, r4
    strong = bot.strong
    assert strong is not None
    held = {p.id for p in strong.catalogue.papers}
    assert papers[2].id not in held and papers[3].id not in held
    # (the app loads the other process's snapshot beside the questions, then answers from it)
    assert indexing.wait_for(lambda: bot.index_status().papers == 4, timeout_s=30)
    status = bot.index_status()
    assert (status.answering, status.strong_papers, status.papers) == (FAST, 3, 4)
    assert bot.search(papers[3].abstract[:200], k=1)[0].paper.abstract == edited
    assert bot.build_index() == 1 and bot.index_status().answering == STRONG_EMBEDDER
    assert strong.store.count() == 4
    hits = bot.search(papers[3].abstract[:200], k=4)
    versions = [h.paper.abstract for h in hits if h.paper.abstract.startswith(papers[3].abstract[:200])]
    assert versions == [edited]
    assert all(h.paper.abstract != papers[2].abstract for h in hits)


@needs_gemma
def test_a_strong_index_holding_a_paper_the_library_no_longer_has_is_mended_by_the_next_build(
    tmp_path: Path,
) -> None:
    """A data folder left with a stale paper in the strong index (by the race above, before
    it was fixed) although it is recorded as following the fast snapshot: the next build
    deletes it, so the counts can match again and the strong index answers."""
    corpus = small_corpus(tmp_path, 4)
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive", refresh_s=0)
    assert bot.build_index() == 4
    gone = load_papers([corpus])[0][0]
    fast_only = Assistant(data_dir=tmp_path / "data", embedder=FAST, backend="extractive")
    assert len(fast_only.remove(ids=[gone.id]).removed) == 1
    bot.live.reload()
    fingerprint = bot.live.fingerprint
    assert fingerprint is not None
    indexing.record_followed(bot.settings, fingerprint)  # as the race left it
    assert bot.index_status().answering == FAST  # 4 papers there, 3 here
    strong = bot.strong
    assert strong is not None
    # the fast snapshot unreadable now (a compaction meanwhile): nothing deleted, nothing stored
    unreadable = indexing.build(
        bot.live.current()[0], strong.store, strong.embedder, strong.settings, fast_ids=lambda: None
    )
    assert unreadable == 0 and strong.store.count() == 4
    assert bot.build_index() == 0
    assert strong.store.count() == 3
    assert gone.id not in {p.id for p in strong.catalogue.papers}
    assert bot.index_status().answering == STRONG_EMBEDDER


@needs_gemma
def test_the_app_builds_the_strong_index_in_the_background(tmp_path: Path) -> None:
    corpus = small_corpus(tmp_path, 4)
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive", refresh_s=0.2)
    # A question in flight (its sources shown, its answer not yet read) comes first: the
    # build does not start a batch until it is done.
    answering = bot.stream("Which papers study equilibria in games?")
    assert type(next(answering)).__name__ == "Sources"
    assert bot.start_indexing()
    try:
        assert not indexing.wait_for(lambda: bot.index_status().strong_papers > 0, timeout_s=4)
        assert bot.index_status().building
        answering.close()
        assert indexing.wait_for(lambda: bot.index_status().complete, timeout_s=300)
        assert bot.index_status().answering == STRONG_EMBEDDER
        # the builder, not the first question after the switch, loads its question encoder
        strong = bot.strong
        assert strong is not None
        assert indexing.wait_for(lambda: strong.embedder._queries is not False, timeout_s=120)
        assert strong.embedder.query_backend == bot.index_status().questions
        # Papers ingested while it runs are picked up by the next round.
        bot.ingest([small_corpus(tmp_path, 1, start=50, name="late.jsonl")])
        assert indexing.wait_for(lambda: bot.index_status().strong_papers == 5, timeout_s=300)
    finally:
        bot.stop_indexing()


@needs_gemma
def test_gemma_uses_its_query_and_document_prompts() -> None:
    bot = Assistant(embedder=STRONG_EMBEDDER)
    embedder = bot.embedder
    assert embedder.profile.query_prompt == "task: search result | query: "
    question = "Which papers study equilibria in games?"
    with_prompt = embedder.encode([embedder.profile.query_prompt + question])[0]
    # the question's vector is the prompted text's (two OpenVINO builds, bf16: cosine)
    assert float(embedder.encode_query(question) @ with_prompt) >= 0.9999
    assert float(embedder.encode_one(question) @ with_prompt) < 0.99


def test_without_gemma_the_fast_index_answers_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(tmp_path / "no-models"))
    corpus = small_corpus(tmp_path, 3)
    bot = Assistant(data_dir=tmp_path / "data", corpus=[corpus], backend="extractive")
    status = bot.index_status()
    assert status.answering == FAST and status.problem is not None
    assert f"python -m assistant.model_files install {STRONG_EMBEDDER}" in status.line()
    assert not bot.start_indexing()
    with pytest.raises(ConfigError, match=f"python -m assistant.model_files install {STRONG_EMBEDDER}"):
        bot.build_index()
    assert len(bot.search("equilibria", k=3)) == 3


def test_only_auto_has_a_second_index(tmp_path: Path) -> None:
    bot = Assistant(data_dir=tmp_path / "data", corpus=[small_corpus(tmp_path, 2)], embedder=FAST)
    assert bot.strong is None and bot.index_status().line().startswith(f"search: {FAST} index")
    with pytest.raises(ConfigError, match="ASSISTANT_EMBEDDER=auto"):
        bot.build_index()


@needs_gemma
@pytest.mark.browser
def test_the_served_app_switches_to_the_strong_index_and_says_so(tmp_path: Path) -> None:
    """`assistant serve` with the default settings: the page says the fast index answers
    while EmbeddingGemma's is built, then that the strong one does; questions answer all along."""
    import os
    import sys

    from gradio_client import Client

    from benchmarks.servers import free_port, start, stop
    from tests.test_ui import ask, browser_page

    corpus = small_corpus(tmp_path, 6)
    env = dict(
        os.environ,
        ASSISTANT_DATA_DIR=str(tmp_path / "data"),
        ASSISTANT_BACKEND="extractive",
        ASSISTANT_CORPUS=json.dumps([str(corpus)]),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    env.pop("ASSISTANT_INDEX_IN_BACKGROUND", None)
    assistant = str(Path(sys.executable).with_name("assistant"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(
        [assistant, "serve", "--port", str(port)], url, env=env, timeout=240, log=tmp_path / "app.log"
    )
    try:
        client = Client(url, verbose=False)
        target = load_papers([corpus])[0][2]
        question = target.abstract.split(". ")[0] + "?"
        first = client.predict(question, "(any)", 3, api_name="/ask")
        assert first["ok"] and not first["refused"], first
        assert indexing.wait_for(
            lambda: client.predict(api_name="/stats")["index"]["answering"] == STRONG_EMBEDDER, timeout_s=300
        ), client.predict(api_name="/stats")
        with browser_page(url) as page:
            page.wait_for_function(
                "t => document.querySelector('#index-status').innerText.includes(t)",
                arg=f"{STRONG_EMBEDDER} index (6 papers)",
                timeout=30_000,
            )
            answer = ask(page, question)
            assert "[1]" in answer
        later = client.predict(question, "(any)", 3, api_name="/ask")
        assert later["ok"] and later["citations"][0]["paper"]["id"] == target.id, later
    finally:
        stop(proc)
    stats = subprocess.run([assistant, "stats"], env=env, capture_output=True, text=True, check=True)
    assert f"search: {STRONG_EMBEDDER} index (6 papers)" in stats.stdout
