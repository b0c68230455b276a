"""The Python API: `Assistant` ties the store, the retriever and the answerers together."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

from assistant.answer.plan import Plan, judge, naming_subject
from assistant.answer.rules import Rules
from assistant.answerers import answerer, backend_names
from assistant.config import BUNDLED_EMBEDDER, Settings
from assistant.corpus.building import built_elsewhere
from assistant.corpus.ingest import IngestReport, ingest
from assistant.corpus.removal import RemoveReport, remove
from assistant.corpus.strong_index import (
    BACKGROUND_BATCH,
    Builder,
    FastIds,
    IndexStatus,
    build,
    followed,
    index_embedder,
    mirror,
    record_followed,
    strong_count,
)
from assistant.errors import ConfigError
from assistant.index import known_stores
from assistant.index.catalogue import Catalogue, Stats
from assistant.index.embed import Embedder
from assistant.index.store import VectorStore
from assistant.search.live import Live
from assistant.search.questions import History, clean_question, continues, standalone
from assistant.search.retrieve import HybridRetriever, check_k
from assistant.types import Answer, Event, Filters, SearchResult

FilterInput = Mapping[str, Any] | Filters | None


class Assistant:
    """Search and question answering over the indexed abstracts.

    >>> bot = Assistant()                       # embedded store, seeds ingested on first use
    >>> bot.search("PPAD-hardness", k=5, filters={"venue": "NeurIPS 2025"})
    >>> bot.ask("How can small transformers simulate long-context ones?")
    """

    def __init__(
        self, settings: Settings | None = None, *, rules: Rules | None = None, **overrides: Any
    ) -> None:
        if settings is None:
            settings = Settings.load(**overrides)
        elif overrides:
            settings = settings.replace(**overrides)
        self.settings = settings
        self.rules = rules or Rules()  # the hand-written rules, each replaceable (answer/rules.py)
        self._lock = threading.RLock()
        self._store: VectorStore | None = None
        self._embedder: Embedder | None = None
        self._sentences: Embedder | None = None
        self._live: Live | None = None
        self._strong: Assistant | None = None
        self._strong_problem: str | None = None
        self._builder: Builder | None = None
        self._asking = 0  # questions being searched or answered now (the builder gives way)
        # (strong index papers, the fast snapshot it last followed, when read)
        self._built: tuple[int, str | None, float] | None = None

    # --- components, created on first use -------------------------------------
    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = index_embedder(self.settings)
            return self._embedder

    @property
    def sentence_embedder(self) -> Embedder:
        """The bundled embedder that scores sentences (evidence, checks): its thresholds are
        calibrated on it, whichever embedder the index uses."""
        with self._lock:
            if self._sentences is None:
                s = self.settings
                if s.embedder_tag:
                    path = s.bundled_embedder_path()
                    self._sentences = Embedder(
                        path,
                        s.embed_batch_size,
                        s.torch_threads,
                        export_name=BUNDLED_EMBEDDER,
                        query_encoder=s.query_encoder,
                        document_encoder=s.document_encoder,
                    )
                else:
                    self._sentences = self.embedder
            return self._sentences

    @property
    def store(self) -> VectorStore:
        with self._lock:
            if self._store is None:
                self._store = VectorStore(self.settings)
            return self._store

    @property
    def live(self) -> Live:
        with self._lock:
            if self._live is None:
                self._live = Live(self.settings, self.store, lambda: self.embedder)
            return self._live

    @property
    def strong(self) -> Assistant | None:
        """With embedder=auto: the assistant over the strong (EmbeddingGemma) index beside
        this one's; None otherwise."""
        with self._lock:
            if self._strong is None and (settings := self.settings.strong()) is not None:
                self._strong = Assistant(settings)
            return self._strong

    def _ready(self) -> HybridRetriever:
        fast = self.live.retriever()
        strong = self.strong
        if strong is None or not self._strong_usable():
            return fast
        if not self._strong_complete(len(fast.catalogue)):
            return fast
        return strong.live.retriever()

    def _strong_built(self) -> tuple[int, str | None]:
        """Papers in the strong index (its snapshot manifest) and the fast snapshot it last
        followed, read at most once per `refresh_s` (searches ask on every question)."""
        strong = self.strong
        if strong is None:
            return 0, None
        now = time.monotonic()
        if self._built is None or now - self._built[2] >= self.settings.refresh_s:
            self._built = (strong_count(strong.settings), followed(self.settings), now)
        return self._built[0], self._built[1]

    def _strong_complete(self, papers: int) -> bool:
        """The strong index answers when it holds as many papers as the fast one and has
        followed the fast snapshot loaded now: an abstract edited by a writer that did not
        make it follow (another machine on a Chroma server, an ingest with the fast embedder
        only) keeps the count, and the strong index would return the old version. (A data
        folder from before this was recorded: the count decides until the strong index
        follows a change.)"""
        if not (self._strong_usable() and papers > 0):
            return False
        built, follows = self._strong_built()
        return built == papers and follows in (None, self.live.fingerprint)

    def _strong_usable(self) -> bool:
        """Is the strong embedder installed? (Asked once; the reason is kept for `index_status`.)"""
        strong = self.strong
        if strong is None:
            return False
        if self._strong_problem is None:
            try:
                strong.settings.resolved_embedder_path()
                self._strong_problem = ""
            except ConfigError as exc:
                self._strong_problem = str(exc)
        return not self._strong_problem

    @property
    def catalogue(self) -> Catalogue:
        return self._ready().catalogue

    @property
    def notes(self) -> tuple[str, ...]:
        """Warnings about the store itself (deleted, replaced, server unreachable)."""
        return self.live.notes

    # --- public API -----------------------------------------------------------
    def ingest(
        self,
        paths: Iterable[Path | str],
        strict: bool = False,
        progress: bool = False,
        sync: bool = False,
    ) -> IngestReport:
        """Add the papers of these files or folders; already stored ones are skipped, and a
        record whose abstract changed (same id, key or DOI) replaces its old version. With
        `sync`, the papers of these files that are no longer in them are removed too (a
        named file that no longer exists counts as empty)."""
        first = self._first_use()
        report = ingest(list(paths), self.store, self.embedder, self.settings, strict, progress, sync=sync)
        if first:
            report.notes.insert(0, first)
        self._after_change()
        if report.added:
            known_stores.remember(
                self.settings.data_dir, self.settings.chroma_url, self.catalogue.n, own=True
            )
        return report

    def _first_use(self) -> str | None:
        """`corpus` is ingested when an empty store is first used, and ingesting files is a
        use too: the configured corpus goes in first, as `serve` or `ask` would have put it
        (otherwise a store begun with `assistant ingest` never gets it). Returns a note."""
        s = self.settings
        corpus = [str(p) for p in s.seed_corpus]
        if not corpus or self.store.count() != 0:
            return None
        if known_stores.held_own(s.data_dir, s.chroma_url):
            return None  # it held the user's papers: they start again with theirs, no seeds
        papers = len(self.live.retriever().catalogue)
        return (
            f"the store was empty, so the configured corpus ({', '.join(corpus)}; {papers} papers) "
            "was ingested first; set ASSISTANT_AUTO_INGEST=false (or ASSISTANT_CORPUS='[]') "
            "to begin with an empty store instead"
        )

    def remove(self, paths: Iterable[Path | str] = (), ids: Iterable[str] = ()) -> RemoveReport:
        """Remove the papers of these files (a paper also in another file keeps that source
        and stays) and the papers named by `ids` (paper id, record id or BibTeX key, DOI).
        A running app stops returning them within `refresh_s`."""
        report = remove(self.store, self.settings, paths, ids)
        self._after_change()
        return report

    def _after_change(self) -> None:
        """This process wrote the fast index: load it, and make the strong index follow."""
        self.live.reload()
        self._follow_fast()

    def _follow_fast(self) -> None:
        """The strong index drops what the fast one removed and copies changed metadata
        (nothing is embedded); done once per new fast snapshot."""
        strong = self.strong
        if strong is None:
            return
        papers, key = self.live.current()  # the caller reloaded: the newest fast snapshot
        if key is None or key == followed(self.settings):
            return
        if mirror(papers, strong.store, strong.settings):
            strong.live.reload()
        record_followed(self.settings, key)
        self._built = None

    def index_status(self) -> IndexStatus:
        """Which index answers searches now, and how far the strong index is built."""
        fast = self.live.retriever()
        n = len(fast.catalogue)
        strong = self.strong
        if strong is None:
            return IndexStatus(
                self.settings.index_embedder,
                n,
                questions=self._questions_via(self),
                abstracts=self.embedder.document_route,
            )
        usable = self._strong_usable()
        built, _ = self._strong_built()
        complete = self._strong_complete(n)
        answering = strong.settings.index_embedder if complete else fast.embedder_name
        building = self._builder is not None and self._builder.busy
        problem = (
            None if usable else "not installed: `python -m assistant.model_files install embeddinggemma-300m`"
        )
        elsewhere = None if building or built >= n else built_elsewhere(strong.settings)
        if usable and self._builder is not None and self._builder.error:
            problem = f"the last build failed: {self._builder.error}"
        questions = self._questions_via(strong if complete else self)
        abstracts = strong.embedder.document_route if usable else self.embedder.document_route
        return IndexStatus(
            answering,
            n,
            strong.settings.index_embedder,
            built,
            building,
            elsewhere,
            problem,
            questions,
            abstracts,
            follows=complete or not (usable and n > 0 and built == n),
        )

    @staticmethod
    def _questions_via(bot: Assistant) -> str:
        """'openvino', 'onnx' or 'torch': what embeds questions for `bot`'s index, without
        loading the encoder ('' if the required one is missing)."""
        return bot.embedder.query_route

    def build_index(
        self,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
        background: bool = False,
    ) -> int:
        """With embedder=auto: embed the papers the strong index lacks (resumable); returns how
        many were added. Search switches to the strong index once it holds every paper."""
        strong = self.strong
        if strong is None:
            raise ConfigError(
                f"there is no second index to build with embedder={self.settings.embedder}; "
                "set ASSISTANT_EMBEDDER=auto"
            )
        strong.settings.resolved_embedder_path()  # not installed: a ConfigError saying how to
        self.live.reload()  # the newest fast snapshot: the papers the strong index must hold
        self._follow_fast()
        papers, key = self.live.current()
        fast_ids = FastIds(self.settings.snapshot_dir, papers, key)
        if background:  # small batches, each started only while no question is in flight
            added = build(
                papers,
                strong.store,
                strong.embedder,
                strong.settings,
                stop,
                progress,
                before_batch=lambda: self._wait_for_quiet(stop),
                batch_size=BACKGROUND_BATCH,
                fast_ids=fast_ids,
            )
        else:
            added = build(
                papers, strong.store, strong.embedder, strong.settings, stop, progress, fast_ids=fast_ids
            )
        self._built = None  # count it again at the next question
        if added:
            strong.live.reload()
        if background and self._strong_complete(len(papers)):
            # Load its question encoder here, in the builder's thread, rather than in the
            # first question after the switch (the status line no longer loads it).
            with suppress(ConfigError):  # a required encoder missing: search says how to fix it
                strong.embedder.queries  # noqa: B018
        return added

    def start_indexing(self) -> bool:
        """With embedder=auto and `index_in_background`: keep the strong index built in a
        background thread of this process (the app does this). False when there is nothing
        to build (another embedder chosen, or EmbeddingGemma not installed)."""
        if not self.settings.index_in_background or self.strong is None or not self._strong_usable():
            return False
        with self._lock:
            if self._builder is None:
                self._builder = Builder(
                    lambda stop: self.build_index(stop=stop, background=True), self.settings.refresh_s
                )
            self._builder.start()
        return True

    def _wait_for_quiet(self, stop: threading.Event | None) -> None:
        """Questions come first: the background build waits while one is being answered."""
        while self._asking and not (stop is not None and stop.is_set()):
            time.sleep(0.1)

    @contextmanager
    def _question(self) -> Iterator[None]:
        with self._lock:
            self._asking += 1
        try:
            yield
        finally:
            with self._lock:
                self._asking -= 1

    def stop_indexing(self) -> None:
        if self._builder is not None:
            self._builder.stop()

    def as_retriever(self, k: int = 5, filters: FilterInput = None) -> Any:
        """A LlamaIndex `BaseRetriever` over this assistant's search (see assistant.llamaindex)."""
        from assistant.llamaindex import as_retriever

        return as_retriever(self, k=k, filters=filters)

    def as_query_engine(
        self, k: int | None = None, filters: FilterInput = None, backend: str | None = None
    ) -> Any:
        """A LlamaIndex query engine answering with this assistant's checked citations."""
        from assistant.llamaindex import as_query_engine

        return as_query_engine(self, k=k, filters=filters, backend=_backend(backend))

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
        return self._search(text, k, filters, detect)

    def _search(
        self, text: str, k: int | None, filters: FilterInput, detect: bool | None = None
    ) -> SearchResult:
        """`search` for a question already checked (a follow-up joined with its history)."""
        k = check_k(k, self.settings.k, self.settings.max_k)
        wanted = Filters.from_mapping(filters)
        with self._question():
            result = self._ready().search(text, k, wanted, detect)
        if self.live.notes:
            result = replace(result, notes=(*self.live.notes, *result.notes))
        return result

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
        for event in self.stream(question, k=k, filters=filters, history=history, backend=backend):
            if isinstance(event, Answer):
                final = event
        assert final is not None
        return final

    def stream(
        self,
        question: str,
        k: int | None = None,
        filters: FilterInput = None,
        history: History = None,
        backend: str | None = None,
    ) -> Iterator[Event]:
        """Yield `Sources` as soon as retrieval is done, then the model's `TextDelta`s as they
        are generated, a `SentenceChecked` per sentence, and finally the `Answer`."""
        text = clean_question(question, self.settings.max_question_chars)
        answering = answerer(self.settings, self.sentence_embedder, _backend(backend))
        with self._question():
            plan = self.plan(text, k=k, filters=filters, history=history)
            yield plan.sources()
            yield from answering.answer(plan)

    def plan(
        self, question: str, k: int | None = None, filters: FilterInput = None, history: History = None
    ) -> Plan:
        """Standalone question -> search -> route -> evidence -> verdict."""
        retriever = self._ready()
        question = clean_question(question, self.settings.max_question_chars)
        alone = standalone(question, history, retriever.is_key_term, self.settings.max_question_chars)
        result = naming_subject(self._search(alone.retrieval, k, filters), alone.switch_words)
        if alone.note:
            result = replace(result, notes=(*result.notes, alone.note))
        route = self.rules.router.decide(alone.question, result, retriever.catalogue, retriever.lexical.df)
        cover: tuple[str, ...] = ()
        if route.kind == "comparison":
            result, covered = retriever.widen(result, route.parts, alone.question)
            if covered is None:  # a comparison inside one paper: a question about it
                route = replace(route, kind="content", parts=())
            cover = covered or ()
        scored = self.rules.scorer.score(alone.question, list(result.hits), self.sentence_embedder)
        verdict = judge(
            alone.question,
            result,
            route,
            scored,
            self.settings,
            retriever.rare_terms_of_top(result),
            self.rules.details,
            retriever.unknown_names,
            continues=continues(alone.answer, [h.paper.abstract for h in result.hits]),
            switch=(alone.switch, alone.switch_words),
        )
        return Plan(question, alone, result, route, tuple(scored), verdict, cover)


def _backend(name: str | None) -> str | None:
    if name is not None and name not in backend_names():
        raise ConfigError(f"backend {name!r} is not one of: {', '.join(backend_names())}")
    return name
