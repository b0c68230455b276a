"""The Python API: `Assistant` ties the store, the retriever and the answerers together."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from assistant.catalogue import Catalogue, Stats
from assistant.checker import Checker
from assistant.config import Settings
from assistant.embed import Embedder
from assistant.extractive import best_dense, extractive_answer, refusal
from assistant.generate import answer_messages, build_context, checked_stream, condense, is_refusal
from assistant.ingest import IngestReport, ingest
from assistant.lexical import LexicalIndex
from assistant.llms import chat_model
from assistant.questions import History, clean_question, is_follow_up, rule_standalone
from assistant.retrieve import HybridRetriever, check_k
from assistant.store import VectorStore
from assistant.types import REFUSAL, Answer, Filters, SearchResult

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
        exact = self.settings.filter_mode != "chroma"
        catalogue = Catalogue(*self.store.papers_and_vectors(with_vectors=exact))
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
        backend: str | None = None,
    ) -> Answer:
        """Answer from the indexed abstracts, citing them as [n]; a refusal is an Answer too."""
        final: Answer | None = None
        for item in self.stream(question, k=k, filters=filters, history=history, backend=backend):
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
        backend: str | None = None,
    ) -> Iterator[str | Answer]:
        """Yield the answer's text as checked sentences are produced, then the final Answer.

        The text pieces add up to `Answer.text`, except when the model's answer fails
        the citation check: then `Answer.fallback` is True and `Answer.text` is the
        extractive answer that replaces it.
        """
        text = clean_question(question, self.settings.max_question_chars)
        backend = backend or self.settings.backend
        if backend == "extractive":
            standalone = rule_standalone(text, history)
            answer = self._extractive(text, standalone, self.search(standalone, k=k, filters=filters))
            yield answer.text
            yield answer
            return
        model = chat_model(self.settings, backend)
        standalone = text
        if history and is_follow_up(text):
            standalone = condense(text, history, model, self.settings)
        result = self.search(standalone, k=k, filters=filters)
        hits = list(result.hits)
        if not hits or not self._on_topic(standalone, result):
            answer = self._extractive(text, standalone, result)  # the refusal, with its reason
            yield answer.text
            yield answer
            return
        s = self.settings
        context = build_context(standalone, hits, self.embedder, s)
        checker = Checker(context.sources, self.embedder, s.support_threshold, s.recite_margin)
        raw: list[str] = []

        def tap(pieces: Iterator[str]) -> Iterator[str]:
            for piece in pieces:
                raw.append(piece)
                yield piece

        shown: list[str] = []
        generated = model.stream(answer_messages(standalone, context, s), s.llm_max_tokens)
        for piece in checked_stream(tap(generated), checker):
            shown.append(piece)
            yield piece
        model_text = "".join(raw)
        common = self._common(text, standalone, result, model.name)
        if is_refusal(model_text) and not checker.numbering:
            closest = "; ".join(f"“{h.paper.label}”" for h in hits[:3])
            yield Answer(
                question=text,
                text=REFUSAL,
                citations=(),
                refused=True,
                model_text=model_text,
                reason=f"The model found no answer in the given abstracts. Closest papers: {closest}.",
                **common,
            )
            return
        if not checker.numbering or checker.supported_share < 0.5:
            fallback = self._extractive(text, standalone, result)
            why = (
                f"the {model.name} answer failed the citation check "
                f"({sum(r.supported for r in checker.results)} of {len(checker.results)} sentences "
                "supported by the abstract they cite); this is the extractive answer instead"
            )
            yield replace(fallback, fallback=True, model_text=model_text, notes=(*fallback.notes, why))
            return
        notes = list(result.notes)
        if checker.removed or checker.recited:
            notes.append(
                f"citation check: {checker.removed} citation(s) to sources not given removed, "
                f"{checker.recited} re-cited to the abstract that supports the sentence"
            )
        common["notes"] = tuple(notes)
        yield Answer(
            question=text,
            text="".join(shown),
            citations=checker.citations(),
            sentences=tuple(checker.results),
            model_text=model_text,
            **common,
        )

    def _on_topic(self, question: str, result: SearchResult) -> bool:
        """Relevant enough to answer: close in meaning, a rare term in common, or a named author."""
        if not result.hits:
            return False
        if best_dense(list(result.hits)) >= self.settings.min_dense_score or _named(result):
            return True
        retriever = self._ready()
        position = retriever.catalogue.index[result.hits[0].paper.id]
        return bool(retriever.lexical.rare_hits(question, position))

    def _common(self, question: str, standalone: str, result: SearchResult, backend: str) -> dict[str, Any]:
        return {
            "standalone_question": standalone if standalone != question else None,
            "filters": result.filters,
            "matching": result.matching,
            "notes": result.notes,
            "hits": result.hits,
            "backend": backend,
        }

    def _extractive(self, question: str, standalone: str, result: SearchResult) -> Answer:
        hits = list(result.hits)
        common = self._common(question, standalone, result, "extractive")
        s = self.settings
        if not hits:
            why = "No indexed abstract matches the question"
            if not result.filters.is_empty():
                why += f" with the filters {result.filters.describe()}"
            return refusal(question, hits, why + ".", **common)
        if not self._on_topic(standalone, result):
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
