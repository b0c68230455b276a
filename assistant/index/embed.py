"""The sentence embedder, loaded from a local folder once per process, on first use."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from assistant.errors import ConfigError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from assistant.index.onnx_queries import OnnxQueries, QueryExport
    from assistant.index.openvino_documents import OpenVinoDocuments
    from assistant.types import Paper

log = logging.getLogger(__name__)

# A stray hub id must fail at once instead of retrying a download for a minute.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@dataclass(frozen=True)
class _FastEncoder:
    """One use of a bundled embedder's ONNX export instead of torch (see `Embedder._find_fast`)."""

    texts: str  # what it embeds
    runtime: str
    required: str  # the setting's value that requires it
    env: str  # the setting's environment variable
    missing: str  # what "no export ..." lacks
    fallback: str = "torch"  # what embeds them instead under auto


_CHECKED = "checked under this OpenVINO version"
_QUERIES = _FastEncoder(
    "questions", "ONNX Runtime", "onnx", "ASSISTANT_QUERY_ENCODER", "current for questions"
)
_QUERIES_OPENVINO = _FastEncoder(
    "questions", "OpenVINO", "openvino", "ASSISTANT_QUERY_ENCODER", _CHECKED, "ONNX Runtime or torch"
)
_DOCUMENTS = _FastEncoder("texts", "OpenVINO", "openvino", "ASSISTANT_DOCUMENT_ENCODER", _CHECKED)

_Fast = TypeVar("_Fast")


@dataclass(frozen=True)
class _Candidate:
    """One way to embed questions: its route name (`query_route`), its fast encoder's
    messages, when an export is usable for it, and how to load it."""

    route: str
    fast: _FastEncoder
    usable: Callable[[QueryExport], bool]
    load: Callable[[QueryExport, int], Any]


CACHE_SIZE = 50_000  # sentence vectors remembered (about 75 MB at 384 dimensions)


@dataclass(frozen=True)
class Profile:
    """How one embedder is used for search: the prompts it was trained with, the longest
    input read, and the share of its dense score in fusion (tuned per embedder: a stronger
    embedder needs less help from BM25)."""

    query_prompt: str = ""
    document_prompt: str = ""  # "{title}" is replaced by the paper's title ("none" without one)
    max_tokens: int | None = None  # None: the model's own limit
    dense_share: float = 0.6


# Values measured by `python -m benchmarks.embedders` (README, "Measured figures").
PROFILES: dict[str, Profile] = {
    # Convex share cross-validated over SciFact train and our questions (`python -m eval.tune`).
    "all-minilm-l6-v2": Profile(dense_share=0.6),
    "all-mpnet-base-v2": Profile(dense_share=0.6),
    # EmbeddingGemma's own task prompts (config_sentence_transformers.json); the share and
    # the token cap chosen on our paraphrase sets and SciFact train (eval.tune).
    "embeddinggemma-300m": Profile(
        query_prompt="task: search result | query: ",
        document_prompt="title: {title} | text: ",
        max_tokens=512,
        dense_share=0.8,
    ),
}


class Embedder:
    """Encodes texts into L2-normalised float32 vectors (cosine = dot product).

    `encode` embeds text as it is (sentences compared with sentences); `encode_query` and
    `encode_documents` add the embedder's search prompts (`Profile`)."""

    def __init__(
        self,
        path: Path,
        batch_size: int = 64,
        threads: int = 0,
        profile: Profile | None = None,
        export_name: str | None = None,
        query_encoder: str = "auto",
        document_encoder: str = "auto",
    ) -> None:
        self.path = Path(path)
        self.batch_size = batch_size
        self.threads = threads
        self.profile = profile or Profile()
        self.export_name = export_name  # a bundled embedder's name: its ONNX export for questions
        # auto | openvino | onnx | torch (see `onnx_queries`, `openvino_documents`)
        self.query_encoder = query_encoder
        self.document_encoder = document_encoder  # auto | openvino | torch (`openvino_documents`)
        self._model: SentenceTransformer | None = None
        self._queries: OnnxQueries | OpenVinoDocuments | bool | None = False  # False: not looked up
        self._documents: OpenVinoDocuments | bool | None = False
        self._lock = threading.Lock()
        self._cache: dict[str, np.ndarray] = {}

    @property
    def model(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                self._model = _load(str(self.path), self.threads)
                if self.profile.max_tokens:
                    self._model.max_seq_length = self.profile.max_tokens
            return self._model

    @property
    def dim(self) -> int:
        documents = self.documents
        if documents is not None:
            return documents.dim
        dim = self.model.get_sentence_embedding_dimension()
        assert dim is not None
        return int(dim)

    @property
    def name(self) -> str:
        return self.path.name if self.path.name != "model" else self.path.parent.name

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        documents = self.documents
        if documents is not None:
            return documents.encode(texts)
        return self._torch_encode(texts)

    def _torch_encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def load(self) -> None:
        """Load what embeds abstracts now (OpenVINO, else torch), so its cost is not counted
        as embedding time (`IngestReport`)."""
        if self.documents is None:
            _ = self.model

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def encode_query(self, text: str) -> np.ndarray:
        """A search question, with the embedder's query prompt; through the ONNX export
        (under OpenVINO, else onnxruntime) when there is one: the same vectors in a fraction
        of torch's time for one short text."""
        queries = self.queries
        if queries is not None:
            return queries.encode([self.profile.query_prompt + text])[0]
        return self._torch_encode([self.profile.query_prompt + text])[0]

    @property
    def queries(self) -> OnnxQueries | OpenVinoDocuments | None:
        """The question encoder of the export, or None when questions go through torch."""
        with self._lock:
            if self._queries is False:
                self._queries = self._find_queries()
            return self._queries  # type: ignore[return-value]

    @property
    def query_backend(self) -> str:
        """'openvino', 'onnx' or 'torch': what embeds questions (shown by `stats`)."""
        from assistant.index.openvino_documents import OpenVinoDocuments

        queries = self.queries
        if queries is None:
            return "torch"
        return "openvino" if isinstance(queries, OpenVinoDocuments) else "onnx"

    @property
    def query_route(self) -> str:
        """'openvino', 'onnx' or 'torch': what embeds (or will embed) questions, without
        loading it ('' when the required runtime has no usable export: search would raise).
        It walks the same candidates as `_find_queries`, in the same order."""
        if self._queries is not False:
            return self.query_backend
        candidates = self._query_candidates()
        export = self._export() if candidates else None
        if export is not None:
            for candidate in candidates:
                if candidate.usable(export):
                    return candidate.route
        return "torch" if self.query_encoder in ("auto", "torch") else ""

    def _export(self) -> QueryExport | None:
        """Where this bundled embedder's ONNX export lives (None for a custom folder)."""
        from assistant.index.onnx_queries import export_for
        from assistant.model_files import models_dir

        return export_for(self.path, self.export_name, models_dir()) if self.export_name else None

    def _find_queries(self) -> OnnxQueries | OpenVinoDocuments | None:
        """The first candidate of `_query_candidates` that loads; None: torch."""
        for candidate in self._query_candidates():
            found = self._find_fast(candidate.fast, self.query_encoder, candidate.usable, candidate.load)
            if found is not None:
                return found
        return None

    def _query_candidates(self) -> list[_Candidate]:
        """The question encoders `query_encoder` allows, best first. auto: the export under
        OpenVINO when it was checked there (fastest for one question), else under
        onnxruntime, else torch; openvino or onnx: that one only; torch: none."""
        from assistant.index.onnx_queries import OnnxQueries
        from assistant.index.openvino_documents import OpenVinoDocuments, verified

        cap = self.profile.max_tokens
        openvino = _Candidate(
            "openvino",
            _QUERIES_OPENVINO,
            lambda export: verified(export, cap),
            lambda export, threads: OpenVinoDocuments(export, threads, latency=True),
        )
        onnx = _Candidate("onnx", _QUERIES, lambda export: export.current(cap), OnnxQueries)
        return {"auto": [openvino, onnx], "openvino": [openvino], "onnx": [onnx]}.get(self.query_encoder, [])

    @property
    def documents(self) -> OpenVinoDocuments | None:
        """The OpenVINO encoder of abstracts and sentences, or None when torch embeds them."""
        with self._lock:
            if self._documents is False:
                self._documents = self._find_documents()
            return self._documents  # type: ignore[return-value]

    @property
    def document_backend(self) -> str:
        """'openvino (bf16)', 'openvino (f32)' or 'torch': what embeds abstracts (`stats`)."""
        documents = self.documents
        return f"openvino ({documents.precision})" if documents is not None else "torch"

    @property
    def document_route(self) -> str:
        """'openvino' or 'torch': what embeds (or will embed) abstracts, without loading it."""
        if self._documents is not False:
            return "openvino" if self._documents is not None else "torch"
        export = self._export() if self.document_encoder != "torch" else None
        if export is None:
            return "torch"
        from assistant.index.openvino_documents import verified

        return "openvino" if verified(export, self.profile.max_tokens) else "torch"

    def _find_documents(self) -> OpenVinoDocuments | None:
        from assistant.index.openvino_documents import OpenVinoDocuments, verified

        return self._find_fast(
            _DOCUMENTS,
            self.document_encoder,
            lambda export: verified(export, self.profile.max_tokens),
            OpenVinoDocuments,
        )

    def _find_fast(
        self,
        fast: _FastEncoder,
        choice: str,
        usable: Callable[[QueryExport], bool],
        load: Callable[[QueryExport, int], _Fast],
    ) -> _Fast | None:
        """The fast encoder `fast` of this embedder's ONNX export, or None for torch.
        `choice` is its setting: torch never uses it; `fast.required` needs it, and says how
        to make or mend it when it is missing or broken; auto uses it when `usable`."""
        if choice == "torch":
            return None
        export = self._export()
        remake = f"`python -m assistant.index.export_queries {self.export_name or 'NAME'}`"
        if export is not None and usable(export):
            try:
                return load(export, self.threads or 2)
            except Exception as exc:  # a damaged export or runtime: say so, fall back (auto)
                if choice == fast.required:
                    raise ConfigError(
                        f"{fast.runtime} cannot load {export.onnx} ({exc}): delete {export.folder} "
                        f"and run {remake}, or set {fast.env}=torch"
                    ) from exc
                log.warning(
                    "%s export %s not loaded (%s): %s embedded by %s",
                    fast.runtime,
                    export.onnx,
                    exc,
                    fast.texts,
                    fast.fallback,
                )
        if choice == fast.required:
            raise ConfigError(
                f"no export of {self.export_name or self.path} {fast.missing}: run {remake} (`make "
                f"install` does; exports are made for the bundled embedders only), or set {fast.env}=torch"
            )
        return None

    def encode_documents(self, papers: Sequence[Paper]) -> np.ndarray:
        """Abstracts to index, with the embedder's document prompt (and the title, if any)."""
        template = self.profile.document_prompt
        if not template:
            return self.encode([p.abstract for p in papers])
        return self.encode(
            [template.replace("{title}", _one_line(p.title) or "none") + p.abstract for p in papers]
        )

    def encode_cached(self, texts: list[str]) -> np.ndarray:
        """Like `encode`, remembering vectors of texts seen before (abstract sentences are
        scored again and again: by the evidence, the extractive answer and the checker)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found = {t: self._cache.get(t) for t in texts}
        missing = [t for t, v in found.items() if v is None]
        if missing:
            vectors = self.encode(missing)
            found.update(zip(missing, vectors))
            with self._lock:
                if len(self._cache) + len(missing) > CACHE_SIZE:
                    self._cache.clear()
                self._cache.update(zip(missing, vectors))
        return np.stack([found[t] for t in texts])  # type: ignore[misc]


def _one_line(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


@lru_cache(maxsize=4)
def _load(path: str, threads: int) -> SentenceTransformer:
    if not (Path(path) / "config.json").is_file() and not (Path(path) / "modules.json").is_file():
        raise ConfigError(
            f"no sentence-transformers model in {path}: set ASSISTANT_EMBEDDER_PATH to a local "
            "model folder, or unset it to use the bundled all-MiniLM-L6-v2"
        )
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    return SentenceTransformer(path, device="cpu", local_files_only=True)
