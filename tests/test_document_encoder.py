"""Abstracts and sentences embedded through OpenVINO (the question encoder's ONNX export,
bfloat16 where the CPU has it): the same vectors as torch in the same order, an index built
through it that searches like one built by torch, one call at a time from several threads,
and an export not checked under this OpenVINO never used silently. Real MiniLM export in a
private models folder (`models`, in conftest)."""

from __future__ import annotations

import json
import logging
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from assistant import Assistant, Settings
from assistant.config import BUNDLED_EMBEDDER
from assistant.corpus.readers import load_papers
from assistant.errors import ConfigError
from assistant.index.embed import PROFILES, Embedder
from assistant.index.onnx_queries import export_for
from assistant.index.openvino_documents import record_path
from assistant.model_files import EMBEDDERS, models_dir
from tests.conftest import SEEDS

ODD = [
    "privacy " * 600,  # past the cap: truncated alike
    "Ünïcödé, emoji 🚀 and math ∑ x² in an abstract",
    "Κβαντικοί υπολογιστές και μηχανική μάθηση.",
    "x",
]


def minilm(document_encoder: str) -> Embedder:
    return Embedder(
        Settings.bundled_embedder_path(), export_name=BUNDLED_EMBEDDER, document_encoder=document_encoder
    )


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    return [p.abstract for p in load_papers([SEEDS])[0]] + ODD


def test_openvino_abstracts_match_torch_in_order(
    models: Path, abstracts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(models))
    fast, torch = minilm("auto"), minilm("torch")
    assert fast.document_route == "openvino" and torch.document_route == "torch"
    assert fast.document_backend.startswith("openvino (") and torch.document_backend == "torch"
    a, b = fast.encode(abstracts), torch.encode(abstracts)
    assert a.dtype == np.float32 and a.shape == b.shape == (len(abstracts), 384) and fast.dim == 384
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(1).min() >= 0.999
    # rows follow the input, whatever order the batches ran in (longest first); other batch
    # neighbours change the padding, hence the last digits of bfloat16 sums
    again = fast.encode(abstracts[::-1])[::-1]
    assert (again * a).sum(1).min() >= 0.9999
    assert fast.encode([]).shape == (0, 384)


def test_calls_from_several_threads_get_their_own_vectors(
    models: Path, abstracts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(models))
    fast = minilm("auto")
    parts = [abstracts[i::3] for i in range(3)]
    alone = [fast.encode(p) for p in parts]
    got: dict[int, np.ndarray] = {}
    threads = [
        threading.Thread(target=lambda i=i: got.__setitem__(i, fast.encode(parts[i]))) for i in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(3):
        np.testing.assert_allclose(got[i], alone[i], atol=1e-6)  # same batches: same vectors


def test_index_built_through_openvino_searches_like_torch(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(models))
    common = dict(corpus=[SEEDS], embedder=BUNDLED_EMBEDDER, backend="extractive")
    fast = Assistant(data_dir=tmp_path / "fast", **common)
    slow = Assistant(data_dir=tmp_path / "slow", document_encoder="torch", **common)
    assert "abstracts via openvino" in fast.index_status().line()
    assert "abstracts via torch" in slow.index_status().line()
    for question in [
        "Which paper compares sparse attention with linear attention?",
        "graph neural networks for molecules",
        "How much does the method reduce word error rate?",
        "dueling bandits",
    ]:
        a = [(h.paper.id, h.score) for h in fast.search(question, k=5)]
        b = [(h.paper.id, h.score) for h in slow.search(question, k=5)]
        assert [i for i, _ in a] == [i for i, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], atol=5e-3)
    # the answer quotes the same sentences (scored by the sentence embedder, also OpenVINO)
    question = "What does the paper on sparse attention find?"
    assert fast.ask(question).text == slow.ask(question).text


def test_export_not_checked_under_this_openvino_is_not_used(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    copy = tmp_path / "models"
    shutil.copytree(models, copy)
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(copy))
    export = export_for(Settings.bundled_embedder_path(), BUNDLED_EMBEDDER, copy)
    record = json.loads(record_path(export).read_text())
    assert record["min_cosine"] >= 0.999
    # checked under another OpenVINO: torch, and `openvino` says how to check it again
    record_path(export).write_text(json.dumps(record | {"openvino": "2020.1"}))
    assert minilm("auto").document_route == "torch" and minilm("auto").document_backend == "torch"
    with pytest.raises(ConfigError, match="python -m assistant.index.export_queries all-minilm-l6-v2"):
        minilm("openvino").encode(["anything"])
    # no record at all (an export made before OpenVINO was used): the same
    record_path(export).unlink()
    assert minilm("auto").document_backend == "torch"
    # a custom model folder has no export: torch
    assert Embedder(Settings.bundled_embedder_path()).document_backend == "torch"
    # a damaged graph: auto warns and uses torch; openvino says how to repair it
    record_path(export).write_text(json.dumps(record))
    export.onnx.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING):
        assert minilm("auto").document_backend == "torch"
    assert "not loaded" in caplog.text
    with pytest.raises(ConfigError, match="cannot load"):
        minilm("openvino").encode(["anything"])


GEMMA = "embeddinggemma-300m"


@pytest.mark.skipif(
    not (models_dir() / EMBEDDERS[GEMMA].folder / "model.safetensors").is_file()
    or not record_path(export_for(models_dir() / EMBEDDERS[GEMMA].folder, GEMMA, models_dir())).is_file(),
    reason="EmbeddingGemma and its checked export come from `make install`",
)
def test_installed_gemma_abstracts_match_torch(abstracts: list[str]) -> None:
    folder = models_dir() / EMBEDDERS[GEMMA].folder
    fast = Embedder(folder, profile=PROFILES[GEMMA], export_name=GEMMA)
    torch = Embedder(folder, profile=PROFILES[GEMMA], export_name=GEMMA, document_encoder="torch")
    assert fast.document_route == "openvino" and fast.dim == 768
    sample = abstracts[:6] + ODD
    assert (fast.encode(sample) * torch.encode(sample)).sum(1).min() >= 0.999
