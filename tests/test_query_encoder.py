"""Questions embedded through the ONNX export of the embedder, under OpenVINO (auto, when
the export was checked there) or onnxruntime: the same vectors as torch, the same search
results, a stale or damaged export never used silently, and `stats` saying which encoder
answers. The export is made for real (MiniLM, about 20 s) into a private
models folder (`models`, in conftest)."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from assistant import Assistant, Settings
from assistant.config import BUNDLED_EMBEDDER
from assistant.corpus.readers import load_papers
from assistant.errors import ConfigError
from assistant.index.embed import PROFILES, Embedder
from assistant.index.onnx_queries import export_for
from assistant.index.openvino_documents import OpenVinoDocuments
from assistant.model_files import EMBEDDERS, models_dir
from tests.conftest import SEEDS

QUESTIONS = [
    "Which paper compares sparse attention with linear attention?",
    "dueling bandits",
    "What word error rate does the federated conformer reach on LibriSpeech?",
    "privacy " * 400,  # longer than the model's cap: truncated alike
    "Ünïcödé, emoji 🚀 and math ∑ x² in a question",
]


def minilm(query_encoder: str) -> Embedder:
    return Embedder(
        Settings.bundled_embedder_path(), export_name=BUNDLED_EMBEDDER, query_encoder=query_encoder
    )


@pytest.mark.parametrize(
    ("choice", "runtime", "cosine"), [("onnx", "onnx", 0.9999), ("auto", "openvino", 0.999)]
)
def test_exported_questions_match_torch(
    models: Path, monkeypatch: pytest.MonkeyPatch, choice: str, runtime: str, cosine: float
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(models))
    fast, torch = minilm(choice), minilm("torch")
    assert fast.query_backend == runtime and torch.query_backend == "torch"
    a = np.stack([fast.encode_query(q) for q in QUESTIONS])
    b = np.stack([torch.encode_query(q) for q in QUESTIONS])
    assert a.dtype == np.float32 and a.shape == b.shape
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(1).min() >= cosine  # OpenVINO: bfloat16 where the CPU has it
    # one question at a time, and the same question gives the same vector again
    np.testing.assert_allclose(fast.encode_query(QUESTIONS[0]), a[0], atol=1e-6)
    assert fast.encode(["a sentence"]).shape == (1, 384)


def test_questions_and_abstracts_share_one_read_of_the_export(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "models"  # its export is touched below
    shutil.copytree(models, copy)
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(copy))
    embedder = minilm("auto")
    queries, documents = embedder.queries, embedder.documents
    assert isinstance(queries, OpenVinoDocuments) and isinstance(documents, OpenVinoDocuments)
    assert queries is not documents
    assert queries._model is documents._model  # the compiled models share its weights
    assert minilm("auto").documents._model is queries._model  # type: ignore[union-attr]
    assert str(queries.compiled.get_property("PERFORMANCE_HINT")) == "LATENCY"
    assert str(documents.compiled.get_property("PERFORMANCE_HINT")) == "THROUGHPUT"
    # an export remade in place (a new file time) is read again, not served from the old read
    export = export_for(Settings.bundled_embedder_path(), BUNDLED_EMBEDDER, copy)
    stat = export.onnx.stat()
    os.utime(export.onnx, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert minilm("auto").queries._model is not queries._model  # type: ignore[union-attr]


@pytest.mark.parametrize(("choice", "runtime"), [("auto", "openvino"), ("onnx", "onnx"), ("torch", "torch")])
def test_status_names_the_question_encoder_without_loading_it(
    models: Path, monkeypatch: pytest.MonkeyPatch, choice: str, runtime: str
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(models))
    embedder = minilm(choice)
    assert embedder.query_route == runtime
    assert embedder._queries is False  # nothing loaded for `stats`
    assert embedder.query_backend == runtime == embedder.query_route  # what was loaded


def test_auto_questions_fall_back_to_onnxruntime_without_the_openvino_check(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "models"
    shutil.copytree(models, copy)
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(copy))
    export = export_for(Settings.bundled_embedder_path(), BUNDLED_EMBEDDER, copy)
    (export.folder / "openvino.json").unlink()  # checked under no OpenVINO (or another version)
    assert minilm("auto").query_route == "onnx" == minilm("auto").query_backend
    assert minilm("openvino").query_route == ""  # required and missing: search would raise
    with pytest.raises(ConfigError, match="checked under this OpenVINO version"):
        minilm("openvino").encode_query("anything")


def test_search_is_the_same_and_stats_say_openvino(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(models))
    data = tmp_path / "data"
    fast = Assistant(data_dir=data, corpus=[SEEDS], embedder=BUNDLED_EMBEDDER, backend="extractive")
    slow = Assistant(
        data_dir=data, corpus=[SEEDS], embedder=BUNDLED_EMBEDDER, backend="extractive", query_encoder="torch"
    )
    assert "questions via openvino" in fast.index_status().line()
    assert "questions via torch" in slow.index_status().line()
    for question in [*QUESTIONS[:3], "graph neural networks for molecules", "Who wrote about diffusion?"]:
        a = [(h.paper.id, round(h.score, 4)) for h in fast.search(question, k=5)]
        b = [(h.paper.id, round(h.score, 4)) for h in slow.search(question, k=5)]
        assert [i for i, _ in a] == [i for i, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], atol=2e-3)


def test_required_export_missing_says_how_to_make_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(tmp_path / "empty"))
    assert minilm("auto").query_backend == "torch" == minilm("auto").query_route  # as before
    assert minilm("onnx").query_route == ""
    with pytest.raises(ConfigError, match="python -m assistant.index.export_queries all-minilm-l6-v2"):
        minilm("onnx").encode_query("anything")
    # a custom model folder has no export: torch
    custom = Embedder(Settings.bundled_embedder_path(), query_encoder="auto")
    assert custom.query_backend == "torch"


def test_stale_or_damaged_export_is_not_used(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    copy = tmp_path / "models"
    shutil.copytree(models, copy)
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(copy))
    export = export_for(Settings.bundled_embedder_path(), BUNDLED_EMBEDDER, copy)
    cap = PROFILES[BUNDLED_EMBEDDER].max_tokens
    assert export.current(cap)
    # made by another torch: stale, questions go through torch
    record = json.loads(export.manifest.read_text())
    export.manifest.write_text(json.dumps(record | {"torch": "0.0.1"}))
    assert not export.current(cap) and minilm("auto").query_backend == "torch"
    # weights that changed since the export (size differs): stale
    changed = record["weights"][0] | {"size": 1}
    export.manifest.write_text(json.dumps(record | {"weights": [changed]}))
    assert not export.current(cap)
    # the same weights copied elsewhere (new file time, same bytes): still current
    moved = record["weights"][0] | {"mtime_ns": 1}
    export.manifest.write_text(json.dumps(record | {"weights": [moved]}))
    assert export.current(cap)
    # a damaged file: auto warns and uses torch; onnx says how to repair it
    export.onnx.write_bytes(b"not an onnx graph")
    damaged = minilm("auto")
    assert damaged.query_route == "openvino"  # not loaded yet: the records say it should work
    with caplog.at_level(logging.WARNING):
        assert damaged.query_backend == "torch" == damaged.query_route  # once loaded, the truth
    assert "not loaded" in caplog.text and "embedded by ONNX Runtime or torch" in caplog.text
    with pytest.raises(ConfigError, match="cannot load"):
        minilm("onnx").encode_query("anything")


GEMMA = "embeddinggemma-300m"


@pytest.mark.skipif(
    not (models_dir() / EMBEDDERS[GEMMA].folder / "model.safetensors").is_file()
    or not export_for(models_dir() / EMBEDDERS[GEMMA].folder, GEMMA, models_dir()).onnx.is_file(),
    reason="EmbeddingGemma and its export come from `make install`",
)
def test_installed_gemma_export_matches_torch() -> None:
    folder = models_dir() / EMBEDDERS[GEMMA].folder
    onnx = Embedder(folder, profile=PROFILES[GEMMA], export_name=GEMMA, query_encoder="onnx")
    auto = Embedder(folder, profile=PROFILES[GEMMA], export_name=GEMMA)
    torch = Embedder(folder, profile=PROFILES[GEMMA], export_name=GEMMA, query_encoder="torch")
    assert onnx.query_backend == "onnx" and auto.query_backend == "openvino"
    a = np.stack([onnx.encode_query(q) for q in QUESTIONS])
    b = np.stack([torch.encode_query(q) for q in QUESTIONS])
    c = np.stack([auto.encode_query(q) for q in QUESTIONS])
    assert (a * b).sum(1).min() >= 0.9999 and (c * b).sum(1).min() >= 0.999


def _tokenizer_folders() -> list[Path]:
    folders = [Settings.bundled_embedder_path()]
    folders += [models_dir() / spec.folder for spec in EMBEDDERS.values()]
    return [f for f in folders if (f / "tokenizer.json").is_file()]


@pytest.mark.parametrize("folder", _tokenizer_folders(), ids=lambda f: f.parent.name)
def test_the_light_tokenizer_gives_transformers_ids(folder: Path) -> None:
    """The exports tokenize with `tokenizers` alone (no torch import at start): ids, masks and
    type ids must be transformers' own, batch padding and truncation at the cap included."""
    from transformers import AutoTokenizer

    from assistant.index.onnx_queries import Tokens

    texts = [p.abstract for p in load_papers([SEEDS])[0]] + QUESTIONS + ["", "  ", "中文 😀 ½ 10⁻³ α-β"]
    reference = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    for cap in (16, 256):
        light = Tokens(folder, cap)
        for start in range(0, len(texts), 8):
            batch = texts[start : start + 8]
            want = reference(
                batch, padding=True, truncation="longest_first", max_length=cap, return_tensors="np"
            )
            got = light.encode(batch)
            for key in want:
                assert np.array_equal(got[key], want[key]), (key, cap, batch[0][:40])


def test_the_light_tokenizer_reads_the_pad_token_and_sides_as_transformers_does(tmp_path: Path) -> None:
    """An older export names its pad token only in special_tokens_map.json, and a tokenizer
    may pad or truncate on the left: transformers honours both, so must we."""
    import json
    import shutil

    from transformers import AutoTokenizer

    from assistant.index.onnx_queries import Tokens

    source = Settings.bundled_embedder_path()
    folder = tmp_path / "tok"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        if (source / name).is_file():
            shutil.copy(source / name, folder / name)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    pad = config.pop("pad_token")
    config.update(padding_side="left", truncation_side="left")
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "special_tokens_map.json").write_text(json.dumps({"pad_token": pad}))
    reference = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    batch = ["a short one", "a much longer question about sparse attention in long documents " * 3]
    want = reference(batch, padding=True, truncation="longest_first", max_length=16, return_tensors="np")
    got = Tokens(folder, 16).encode(batch)
    assert want["input_ids"][0][0] == reference.pad_token_id  # left padding, as configured
    for key in want:
        assert np.array_equal(got[key], want[key]), key
