"""The Python API: `Assistant` ties the store, the retriever and the answerers together."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from assistant.catalogue import Catalogue, Stats
from assistant.config import Settings
from assistant.embed import Embedder
from assistant.extractive import best_dense, extractive_answer, refusal
from assistant.ingest import IngestReport, ingest
from assistant.lexical import LexicalIndex
from assistant.questions import History, clean_question, rule_standalone
from assistant.retrieve import HybridRetriever, check_k
from assistant.store import VectorStore
from assistant.types import Answer, Filters, SearchResult

FilterInput = Mapping[str, Any] | Filters | None


class Assistant:
    """Search and question answering over the indexed abstracts.

    >>> bot = Assistant()                       # embedded store, seeds ingested on first use
    >>> bot.search("PPAD-hardness", k=5, filters={"venue": "NeurIPS 2025"})
    >>> bot.ask("How can small transformers simulate long-context ones?")
    """

    def __init__(self, settings: Settings | None = None, **overrides: Any) -> None:
        if settings is not None and overrides:
            settings = settings.model_copy(update=overrides)
        self.settings = settings or Settings(**overrides)
        self._lock = threading.RLock()
        self._store: VectorStore | None = None
        self._embedder: Embedder | None = None
        self._retriever: HybridRetriever | None = None

    # --- components, created on first use -------------------------------------
    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                s = self.settings
                self._embedder = Embedder(s.resolved_embedder_path(), s.embed_batch_size, s.torch_threads)
            return self._embedder

    @property
    def store(self) -> VectorStore:
        with self._lock:
            if self._store is None:
                self._store = VectorStore(self.settings)
            return self._store

    def _ready(self) -> HybridRetriever:
        with self._lock:
            store = self.store
            if self._retriever is None and store.count() == 0 and self.settings.auto_ingest:
                corpus = [p for p in self.settings.corpus if Path(p).exists()]
                if corpus:
                    ingest(corpus, store, self.embedder, self.settings)
            if self._retriever is None or len(self._retriever.catalogue) != store.count():
                self._refresh()
            assert self._retriever is not None
            return self._retriever

    def _refresh(self) -> None:
        catalogue = Catalogue(self.store.papers())
        lexical = LexicalIndex.open(self.settings.lexical_dir, catalogue.papers)
        self._retriever = HybridRetriever(self.settings, self.store, self.embedder, catalogue, lexical)

    @property
    def catalogue(self) -> Catalogue:
        return self._ready().catalogue

    # --- public API -----------------------------------------------------------
    def ingest(
        self, paths: Iterable[Path | str], strict: bool = False, progress: bool = False
    ) -> IngestReport:
        """Add the papers of these files or folders; already stored ones are skipped."""
        report = ingest(list(paths), self.store, self.embedder, self.settings, strict, progress)
        with self._lock:
            self._refresh()
        return report

    def stats(self) -> Stats:
        return self.catalogue.stats()

    def search(
        self,
        question: str,
        k: int | None = None,
        filters: FilterInput = None,
        detect: bool | None = None,
    ) -> SearchResult:
        """The k best papers for a question, with filters from `filters` and the question."""
        text = clean_question(question, self.settings.max_question_chars)
        k = check_k(k, self.settings.k, self.settings.max_k)
        wanted = Filters.from_mapping(filters)
        return self._ready().search(text, k, wanted, detect)

    def ask(
        self,
        question: str,
        k: int | None = None,
        filters: FilterInput = None,
        history: History = None,
    ) -> Answer:
        """Answer from the indexed abstracts, citing them as [n]; a refusal is an Answer too."""
        final: Answer | None = None
        for item in self.stream(question, k=k, filters=filters, history=history):
            if isinstance(item, Answer):
                final = item
        assert final is not None
        return final

    def stream(
        self,
        question: str,
        k: int | None = None,
        filters: FilterInput = None,
        history: History = None,
    ) -> Iterator[str | Answer]:
        """Yield pieces of text as they are produced, then the final checked Answer."""
        text = clean_question(question, self.settings.max_question_chars)
        standalone = rule_standalone(text, history)
        result = self.search(standalone, k=k, filters=filters)
        answer = self._extractive(text, standalone, result)
        yield answer.text
        yield answer

    def _extractive(self, question: str, standalone: str, result: SearchResult) -> Answer:
        hits = list(result.hits)
        common: dict[str, Any] = {
            "standalone_question": standalone if standalone != question else None,
            "filters": result.filters,
            "matching": result.matching,
            "notes": result.notes,
            "hits": result.hits,
            "backend": "extractive",
        }
        s = self.settings
        if not hits:
            why = "No indexed abstract matches the question"
            if not result.filters.is_empty():
                why += f" with the filters {result.filters.describe()}"
            return refusal(question, hits, why + ".", **common)
        if best_dense(hits) < s.min_dense_score and not _named(result):
            return refusal(question, hits, "No abstract is close enough to the question.", **common)
        picked = extractive_answer(standalone, hits, self.embedder, s.answer_sentences, s.min_sentence_score)
        if picked is None:
            return refusal(
                question, hits, "No sentence of the top abstracts addresses the question.", **common
            )
        body, citations, sentences = picked
        return Answer(question=question, text=body, citations=citations, sentences=sentences, **common)


def _named(result: SearchResult) -> bool:
    """Questions such as 'what has Bronstein worked on?' are answered by the filter itself."""
    return result.detected.author is not None or result.filters.author is not None
