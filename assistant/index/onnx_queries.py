"""Questions embedded through onnxruntime instead of torch.

A question is one short text, and there torch's per-call overhead dominates: EmbeddingGemma
embeds one in about 250 ms through sentence-transformers in the serving process (where
`OMP_WAIT_POLICY=PASSIVE` is set for llama.cpp), the same network exported to ONNX in
about 50 ms (`python -m benchmarks.search_latency`). In batches onnxruntime is slower than
torch: abstracts go through the same export under OpenVINO (`openvino_documents`).

The whole sentence-transformers pipeline (network, pooling, dense layers, normalisation)
is exported once, at install time (`python -m assistant.model_files install NAME`, run by
`make install`), from the verified local weights: nothing is downloaded. An export is kept
only if its vectors match torch's (cosine >= `MIN_COSINE` on probe questions), and it is
tied to the weights and the torch version that made it (`onnx-query.json`); when it is
missing or stale, questions are embedded by torch as before and `stats` says so.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.errors import ConfigError
from assistant.model_files import sha256_file

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

FORMAT = 3  # bump when the exported graph changes (3: saved optimised, extended level)
MIN_COSINE = 0.9999
PROBES = (
    "Which paper compares sparse attention with linear attention on long documents?",
    "How much does the method reduce word error rate?",
    "dueling bandits",
    "A study of protein folding with graph neural networks trained on cryo-EM maps, evaluated "
    "against AlphaFold on 120 targets, reporting TM-score and RMSD improvements of 0.04 and 1.2 Å.",
    "privacy " * 600,  # longer than any cap: truncated alike
)


@dataclass(frozen=True)
class QueryExport:
    """Where the export of one model folder lives, and what it was made from."""

    model_folder: Path
    folder: Path  # <models dir>/onnx/<name>

    @property
    def onnx(self) -> Path:
        return self.folder / "model.onnx"

    @property
    def manifest(self) -> Path:
        return self.folder / "onnx-query.json"

    def record(self, max_tokens: int | None) -> dict[str, object]:
        """What the export depends on: the weights, torch and onnxruntime, the token cap."""
        return {
            "format": FORMAT,
            "torch": _version("torch"),
            "onnxruntime": _version(*ONNXRUNTIMES),
            "max_tokens": max_tokens,
            "weights": [_weights_entry(p) for p in self._weights()],
        }

    def current(self, max_tokens: int | None) -> bool:
        """Is the export there, and made from these weights by this torch and onnxruntime?
        Weights are re-hashed only when their size or time changed (another checkout's copy).
        Versions are read from the installed packages' metadata: importing torch to ask would
        add 2 s and 300 MB to every start that searches through OpenVINO."""
        try:
            recorded = json.loads(self.manifest.read_text())
        except (OSError, ValueError):
            return False
        if not self.onnx.is_file() or recorded.get("format") != FORMAT:
            return False
        if recorded.get("torch") != _version("torch") or recorded.get("max_tokens") != max_tokens:
            return False
        if recorded.get("onnxruntime") != _version(*ONNXRUNTIMES):
            return False
        entries = {e["name"]: e for e in recorded.get("weights", [])}
        weights = self._weights()
        if sorted(entries) != sorted(p.name for p in weights):
            return False
        for path in weights:
            entry, stat = entries[path.name], path.stat()
            if entry["size"] != stat.st_size:
                return False
            if entry["mtime_ns"] != stat.st_mtime_ns and entry["sha256"] != sha256_file(path):
                return False
        return True

    def _weights(self) -> list[Path]:
        return [p for p in sorted(self.model_folder.iterdir()) if p.suffix in (".safetensors", ".bin")]


# The distributions that install the `onnxruntime` module: the plain one, or a variant.
ONNXRUNTIMES = ("onnxruntime", "onnxruntime-openvino", "onnxruntime-gpu", "onnxruntime-directml")


def _version(*packages: str) -> str | None:
    """The version of the first of these distributions installed (torch's is "2.13.0+cpu",
    as `torch.__version__`)."""
    from importlib.metadata import PackageNotFoundError, version

    for package in packages:
        try:
            return version(package)
        except PackageNotFoundError:
            continue
    return None


def _weights_entry(path: Path) -> dict[str, object]:
    stat = path.stat()
    return {
        "name": path.name,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": sha256_file(path),
    }


def export_for(model_folder: Path, name: str, models: Path) -> QueryExport:
    """The export of the bundled embedder `name` (folder `model_folder`) under `models`."""
    return QueryExport(Path(model_folder), models / "onnx" / name)


class Tokens:
    """The model's own tokenizer (its `tokenizer.json`, run by the `tokenizers` library), with
    the padding and truncation sentence-transformers applies: the same ids, masks and type
    ids as transformers' tokenizer for the bundled embedders (tests/test_query_encoder.py).
    Loading it through transformers imported torch: about 4 s and 475 MB more for every
    process that searches through the export."""

    def __init__(self, folder: Path, cap: int) -> None:
        from tokenizers import Tokenizer

        config = _json(folder / "tokenizer_config.json")
        # transformers reads the pad token from either file (older exports: the map only)
        pad = config.get("pad_token") or _json(folder / "special_tokens_map.json").get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        self._tokenizer = tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=cap, direction=config.get("truncation_side") or "right")
        pad_id = tokenizer.token_to_id(pad) if isinstance(pad, str) else None
        if pad_id is None:
            raise ConfigError(
                f"the tokenizer in {folder} names no padding token; reinstall the embedder "
                "(python -m assistant.model_files install NAME)"
            )
        side = config.get("padding_side") or "right"
        tokenizer.enable_padding(pad_id=pad_id, pad_token=pad, direction=side)

    def encode(self, texts: list[str]) -> dict[str, np.ndarray]:
        """input_ids, attention_mask and token_type_ids of a batch, padded to its longest."""
        batch = self._tokenizer.encode_batch(texts)
        return {
            "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in batch], dtype=np.int64),
        }


def _json(path: Path) -> dict:  # type: ignore[type-arg]
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def tokenizer_for(export: QueryExport) -> tuple[Tokens, int]:
    """The model's own tokenizer, and the token cap sentence-transformers applied when the
    pipeline was exported (its max_seq_length)."""
    cap = int(json.loads(export.manifest.read_text())["cap"])
    return Tokens(export.model_folder, cap), cap


class OnnxQueries:
    """Embeds questions with an exported pipeline: the model's own tokenizer, one
    onnxruntime session; L2-normalised float32 vectors like `Embedder.encode`."""

    def __init__(self, export: QueryExport, threads: int = 2) -> None:
        import onnxruntime as ort

        self.export = export
        self.tokenizer, self.cap = tokenizer_for(export)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        # Do not spin idle threads: the LLM runs on the same two cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # The graph was optimised for this machine when exported (`build`): loading it again
        # without optimising takes EmbeddingGemma's session from ~6 s to ~4 s.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.session = ort.InferenceSession(str(export.onnx), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str]) -> np.ndarray:
        tok = self.tokenizer.encode(texts)
        feeds = {k: tok[k] for k in self.inputs}
        vectors = np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def build(model: SentenceTransformer, export: QueryExport, max_tokens: int | None) -> QueryExport:
    """Export `model`'s whole pipeline to ONNX, check it against torch on `PROBES`, and
    install it atomically; raises ConfigError (nothing installed) when it does not match."""
    import torch

    class Pipeline(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor | None = None,
        ) -> torch.Tensor:
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                features["token_type_ids"] = token_type_ids
            return self.inner(features)["sentence_embedding"]

    if max_tokens:
        model.max_seq_length = max_tokens
    sample = model.tokenize(list(PROBES[:2]))
    names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in sample]
    axes = {n: {0: "batch", 1: "tokens"} for n in names} | {"query_vector": {0: "batch"}}
    export.folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=export.folder.parent) as tmp:
        staged = QueryExport(export.model_folder, Path(tmp) / "export")
        staged.folder.mkdir()
        raw = staged.folder / "exported.onnx"
        with torch.no_grad():
            torch.onnx.export(
                Pipeline(model.eval()),
                tuple(sample[n] for n in names),
                str(raw),
                input_names=names,
                output_names=["query_vector"],
                dynamic_axes=axes,
                opset_version=18,
                dynamo=True,
                external_data=False,
            )
        _optimise(raw, staged.onnx)
        raw.unlink()
        record = staged.record(max_tokens) | {"cap": model.max_seq_length}
        staged.manifest.write_text(json.dumps(record, indent=1))
        reference = model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
        exported = OnnxQueries(staged).encode(list(PROBES))
        cosine = float((np.asarray(reference) * exported).sum(1).min())
        if not cosine >= MIN_COSINE:
            raise ConfigError(
                f"the ONNX export of {export.model_folder.name} does not match torch (cosine "
                f"{cosine:.5f} < {MIN_COSINE}); questions stay on torch (ASSISTANT_QUERY_ENCODER=torch)"
            )
        staged.manifest.write_text(json.dumps(record | {"min_cosine": cosine}, indent=1))
        if export.folder.exists():
            shutil.rmtree(export.folder)
        staged.folder.replace(export.folder)
    log.info("exported %s for questions (cosine to torch >= %.5f)", export.model_folder.name, cosine)
    return export


def _optimise(source: Path, target: Path) -> None:
    """onnxruntime's graph optimisations, done once and saved: the extended level (fused
    attention, layer norm, GELU), not the layout ones that tie a graph to one CPU."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
