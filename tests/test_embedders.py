"""The optional stronger embedder (all-mpnet-base-v2): its own index beside the bundled
one's, the same answers path, and a clear error when it is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant import Assistant, Settings
from assistant.corpus.readers import load_papers
from assistant.errors import ConfigError
from assistant.model_files import EMBEDDERS, models_dir
from tests.conftest import SEEDS

MPNET = "all-mpnet-base-v2"
INSTALLED = (models_dir() / EMBEDDERS[MPNET].folder / "model.safetensors").is_file()
needs_mpnet = pytest.mark.skipif(
    not INSTALLED, reason=f"run `python -m assistant.model_files install {MPNET}` (make install does)"
)


def test_each_embedder_has_its_own_index(tmp_path: Path) -> None:
    bundled = Settings(data_dir=tmp_path)
    mpnet = bundled.replace(embedder=MPNET)
    custom = bundled.replace(embedder_path=tmp_path / "my model")
    assert bundled.collection_name == "abstracts"
    names = {s.collection_name for s in (bundled, mpnet, custom)}
    folders = {(s.snapshot_dir, s.lexical_dir) for s in (bundled, mpnet, custom)}
    assert len(names) == 3 and len(folders) == 3


def test_missing_embedder_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(tmp_path / "empty"))
    bot = Assistant(data_dir=tmp_path / "data", corpus=[SEEDS], embedder=MPNET)
    with pytest.raises(ConfigError, match=f"python -m assistant.model_files install {MPNET}"):
        bot.search("graph neural networks")


@needs_mpnet
def test_mpnet_index_sits_beside_the_bundled_one_and_answers(tmp_path: Path) -> None:
    papers = load_papers([SEEDS])[0][:8]
    corpus = tmp_path / "eight.jsonl"
    corpus.write_text("".join(json.dumps({"abstract": p.abstract}) + "\n" for p in papers))
    data = tmp_path / "data"
    small = Assistant(data_dir=data, corpus=[corpus], backend="extractive")
    strong = Assistant(data_dir=data, corpus=[corpus], backend="extractive", embedder=MPNET)
    assert small.stats().papers == strong.stats().papers == 8
    # Two indexes of the same papers, one per embedder, in the same data folder.
    assert small.live.retriever().catalogue.vectors.shape[1] == 384
    assert strong.live.retriever().catalogue.vectors.shape[1] == 768
    # Sentences are still scored by the bundled embedder (the thresholds are calibrated on it).
    assert strong.embedder.name == MPNET and strong.sentence_embedder.name != MPNET
    target = papers[3]
    question = target.abstract.split(". ")[0]
    hits = strong.search(question, k=3)
    assert hits[0].paper.id == target.id
    answer = strong.ask(question + "?")
    assert not answer.refused and answer.citations[0].paper.id == target.id
