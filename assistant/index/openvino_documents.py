"""Abstracts and abstract sentences embedded through OpenVINO instead of torch.

Indexing is batch work, where torch fp32 is slow on a small CPU: EmbeddingGemma embeds
about 1.2–1.7 abstracts/s on 2 cores. OpenVINO runs the same ONNX export that embeds
questions (`onnx_queries`), in bfloat16 where the CPU has it (AVX-512 BF16 or AMX; float32
elsewhere), as two single-threaded streams fed four texts at a time, longest first: about
3.5× torch's rate for EmbeddingGemma and 2.5× for MiniLM here, with vectors at cosine
≥ 0.9999 to torch's (`python -m benchmarks.encoders`).

Nothing new is exported: `make install` checks the export under OpenVINO against torch on
probe texts (cosine ≥ `MIN_COSINE`) and records the OpenVINO version that passed
(`openvino.json` beside the export). Without that record (another OpenVINO, a custom
`ASSISTANT_EMBEDDER_PATH`, no export) texts are embedded by torch as before;
`document_encoder="openvino"` makes it required, `"torch"` never uses it.

Questions go through the same checked export when OpenVINO has it (`query_encoder=auto`),
compiled for latency: one request on two threads embeds an EmbeddingGemma question in
41-60 ms here against onnxruntime's 68-107 ms, MiniLM's in 6 ms against 8 ms, the same
search results (`python -m benchmarks.search_latency`). The check at install covers both
builds: batches of four for abstracts, one text at a time for questions.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from assistant.errors import ConfigError
from assistant.index.onnx_queries import PROBES, QueryExport, tokenizer_for

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

FORMAT = 2  # 2: the latency build (questions) is checked too
MIN_COSINE = 0.999
BATCH = 4  # texts per request: little padding, and two requests keep both streams busy
RECORD = "openvino.json"
# Abstract-like probes (the question probes are short): long enough to reach the token cap.
_LONG = "We study retrieval-augmented generation for scientific question answering. " * 40
DOCUMENT_PROBES = (
    *PROBES,
    "title: none | text: " + _LONG,
    "Κβαντικοί υπολογιστές και μηχανική μάθηση: a bilingual abstract with 12.4% → 9.8% WER.",
)


# One read of each export per process, shared by every encoder compiled from it while any
# lives: the compiled models share its weights. EmbeddingGemma's question and abstract
# encoders took 2.2 GB together this way against 3.7 GB read twice (a probe); with its
# tokenizer and runtimes, 3.2 GB against 4.0 GB for onnxruntime questions beside OpenVINO
# abstracts (`python -m benchmarks.search_latency`).
_READ: weakref.WeakValueDictionary[tuple[str, int, int], Any] = weakref.WeakValueDictionary()
_READ_LOCK = threading.Lock()


def _read(core: Any, onnx: Path) -> Any:
    stat = onnx.stat()
    key = (str(onnx), stat.st_size, stat.st_mtime_ns)  # a remade export is read again
    with _READ_LOCK:
        model = _READ.get(key)
        if model is None:
            model = core.read_model(str(onnx))
            _READ[key] = model
        return model


def record_path(export: QueryExport) -> Path:
    return export.folder / RECORD


def verified(export: QueryExport, max_tokens: int | None) -> bool:
    """Is the ONNX export current, and was it checked under this OpenVINO version?"""
    try:
        import openvino
    except ImportError:
        return False
    try:
        recorded = json.loads(record_path(export).read_text())
    except (OSError, ValueError):
        return False
    return (
        recorded.get("format") == FORMAT
        and recorded.get("openvino") == openvino.__version__
        and export.current(max_tokens)
    )


class OpenVinoDocuments:
    """Embeds batches of texts with the exported pipeline under OpenVINO: the model's own
    tokenizer and token cap; L2-normalised float32 vectors in input order, like
    `Embedder.encode`. One call at a time (calls from several threads wait their turn).

    Compiled for throughput (a stream per thread, batches of abstracts) or, with
    `latency=True`, for one short text at a time on all threads (questions)."""

    def __init__(self, export: QueryExport, threads: int = 2, latency: bool = False) -> None:
        import openvino as ov

        self.export = export
        self.tokenizer, self.cap = tokenizer_for(export)
        core = ov.Core()
        model = self._model = _read(core, export.onnx)  # held: later encoders share it
        streams = 2 if threads >= 2 and not latency else 1
        self.compiled = core.compile_model(
            model,
            "CPU",
            {
                "PERFORMANCE_HINT": "LATENCY" if latency else "THROUGHPUT",
                "NUM_STREAMS": streams,
                "INFERENCE_NUM_THREADS": max(1, threads),
            },
        )
        self.precision = self.compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
        self.inputs = [i.get_any_name() for i in model.inputs]
        self.dim = int(model.outputs[0].get_partial_shape()[1].get_length())
        self._queue = ov.AsyncInferQueue(self.compiled, streams)
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def done(request, rows: np.ndarray) -> None:  # type: ignore[no-untyped-def]
            out[rows] = request.get_output_tensor(0).data

        with self._lock:
            self._queue.set_callback(done)
            for start in range(0, len(texts), BATCH):
                rows = order[start : start + BATCH]
                tok = self.tokenizer.encode([texts[i] for i in rows])
                feeds = {k: tok[k] for k in self.inputs}
                self._queue.start_async(feeds, rows)
            self._queue.wait_all()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def verify(model: SentenceTransformer, export: QueryExport, max_tokens: int | None) -> float:
    """Check the export under OpenVINO against `model` (torch) on probe texts and record the
    OpenVINO version that passed; raises ConfigError (nothing recorded) when it does not."""
    import openvino

    if max_tokens:
        model.max_seq_length = max_tokens
    record_path(export).unlink(missing_ok=True)
    reference = np.asarray(
        model.encode(list(DOCUMENT_PROBES), normalize_embeddings=True, convert_to_numpy=True)
    )
    encoder = OpenVinoDocuments(export)  # abstracts: batches
    single = OpenVinoDocuments(export, latency=True)  # questions: one at a time
    batched = encoder.encode(list(DOCUMENT_PROBES))
    one = np.stack([single.encode([text])[0] for text in DOCUMENT_PROBES])
    cosine = float(min((reference * batched).sum(1).min(), (reference * one).sum(1).min()))
    if not cosine >= MIN_COSINE:
        raise ConfigError(
            f"{export.model_folder.name} under OpenVINO ({encoder.precision}) does not match torch "
            f"(cosine {cosine:.5f} < {MIN_COSINE}); abstracts stay on torch and questions on "
            "onnxruntime (ASSISTANT_DOCUMENT_ENCODER=torch, ASSISTANT_QUERY_ENCODER=onnx)"
        )
    entry = {
        "format": FORMAT,
        "openvino": openvino.__version__,
        "precision": encoder.precision,
        "min_cosine": cosine,
    }
    record_path(export).write_text(json.dumps(entry, indent=1))
    log.info(
        "%s checked under OpenVINO (%s, cosine >= %.5f)", export.model_folder.name, encoder.precision, cosine
    )
    return cosine
