"""The searchable view of the store, kept current while other processes write.

A `Live` view loads the catalogue snapshot (see `assistant.index.snapshot`), builds the
catalogue and lexical index from it, and on later questions checks (a stat, at most
once per `refresh_s`) whether a writer published more. If so, the new catalogue is
built beside the current one (only the new segments are read) and swapped in;
questions meanwhile go on with what is loaded. It never reads Chroma while another
process may be writing, so no question fails because of a write elsewhere. It also
notices a store that was deleted or replaced, and says so.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from assistant.config import Settings
from assistant.corpus.follow_server import pending, sync_with_server
from assistant.corpus.ingest import ingest, rebuild_damaged, save_lexical, writing
from assistant.errors import StoreBusyError, StoreError
from assistant.index import known_stores, settled
from assistant.index.catalogue import Catalogue
from assistant.index.embed import Embedder
from assistant.index.lexical import LexicalIndex
from assistant.index.snapshot import REMOVAL, Loaded, Manifest, Snapshot, SnapshotDamaged
from assistant.index.store import VectorStore
from assistant.search.retrieve import HybridRetriever
from assistant.types import Paper

log = logging.getLogger(__name__)

WAIT_FOR_WRITER_S = 900.0  # opening waits this long for another process's ingestion


class _Pause:
    """The collector's pause, counted: builds in two threads (the fast and the strong index's
    `Live`) overlap, and the first to finish must not switch the collector back on under the
    other, nor freeze its half-built catalogue; the last one out freezes and restores."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.was_enabled = False


_PAUSE = _Pause()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a catalogue is built: it made the build
    quadratic, each full pass walking every paper made so far (300k papers: 16 s with it,
    11 s without). The papers and their fields hold no cycles; refcounting frees them.
    Afterwards what exists is frozen (`gc.freeze`): else each full pass after the build
    walks every paper again.

    What an earlier build froze is thawed and collected when a pause begins: a frozen
    cycle is never freed, and what was alive then may be garbage now (an assistant the
    caller dropped, holding its models: the test run grew by 1.1 GB per assistant until
    this). Before the build, not after, so the pass never walks what it makes (the tuples
    of a new catalogue's papers); `python -m benchmarks.gc_pass` measures it. A build that
    starts while another's pause holds joins it: nothing is thawed under a build."""
    with _PAUSE.lock:
        if _PAUSE.depth == 0:
            _PAUSE.was_enabled = gc.isenabled()
            gc.disable()
            gc.unfreeze()
            try:
                gc.collect()
            except BaseException:
                if _PAUSE.was_enabled:
                    gc.enable()
                raise
        _PAUSE.depth += 1
    try:
        yield
    finally:
        with _PAUSE.lock:
            _PAUSE.depth -= 1
            if _PAUSE.depth == 0:
                gc.freeze()
                if _PAUSE.was_enabled:
                    gc.enable()


REMOVAL_WAIT_S = 30.0  # the longest a search waits for another process's removal to be loaded


class Live:
    def __init__(self, settings: Settings, store: VectorStore, embedder: Callable[[], Embedder]) -> None:
        self.settings = settings
        self.store = store
        self._embedder = embedder
        self.snapshot = Snapshot(settings.snapshot_dir)
        self._lock = threading.RLock()  # guards the fields below
        self._build_lock = threading.Lock()  # one build at a time
        self._retriever: HybridRetriever | None = None
        self._loaded: Loaded | None = None
        self._manifest: Manifest | None = None
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        self._server_checked = 0.0
        self._worker: threading.Thread | None = None
        # (store id, generation) of a snapshot another process published that removes or
        # replaces papers, not loaded yet: searches wait for it (`retriever`)
        self._removal: tuple[str, int] | None = None
        self._syncing: threading.Thread | None = None
        self.notes: tuple[str, ...] = ()

    # --- the current retriever --------------------------------------------------------
    def retriever(self) -> HybridRetriever:
        """The retriever to answer from. Another process's new papers are loaded beside the
        questions (they come a moment late); when it removed or replaced papers, the search
        waits for the reload (at most REMOVAL_WAIT_S), so a removed or old abstract is never
        answered from."""
        deadline = time.monotonic() + REMOVAL_WAIT_S
        looked_again = False
        while True:
            with self._lock:
                if self._retriever is None:
                    self._open()
                else:
                    self._follow()
                assert self._retriever is not None
                worker = self._worker
                if self._removal is None or worker is None or time.monotonic() >= deadline:
                    return self._retriever
                if not worker.is_alive():
                    if looked_again:  # the reload failed, or cannot start now: answer from what is loaded
                        return self._retriever
                    looked_again = True  # it loaded an earlier snapshot: look again, once
                    self._checked = 0.0
                    continue
            worker.join(max(0.0, deadline - time.monotonic()))

    def current(self) -> tuple[list[Paper], str | None]:
        """The papers loaded now and the fingerprint of the snapshot they come from."""
        self.retriever()
        with self._lock:
            retriever, manifest = self._retriever, self._manifest
            assert retriever is not None
            return retriever.catalogue.papers, manifest.fingerprint if manifest is not None else None

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the snapshot loaded now (None: nothing loaded yet)."""
        with self._lock:
            return self._manifest.fingerprint if self._manifest is not None else None

    def reload(self) -> None:
        """After this process wrote: load what it published, now."""
        with self._lock:
            if self._retriever is not None:
                self._follow(force=True)

    # --- opening ---------------------------------------------------------------------------
    def _open(self) -> None:
        s = self.settings
        if self._open_settled():
            return
        try:
            with self.store.session() as session:
                count, store_id = session.count(), session.store_id
                edited = pending(session, s)
        except StoreError as exc:
            manifest = self.snapshot.manifest()
            if manifest is None or s.chroma_url:
                raise
            self._swap(manifest, *self._build(manifest, None))
            self.notes = (f"the store cannot be opened ({exc}); answering from its snapshot",)
            return
        if count == 0 and (corpus := s.seed_corpus):
            known_stores.check_reseed(s.data_dir, s.chroma_url)
            ingest(corpus, self.store, self._embedder(), s, lock_timeout=WAIT_FOR_WRITER_S)
        manifest = self.snapshot.manifest()
        if (
            manifest is None
            or manifest.store_id != store_id
            or manifest.count != count
            or count == 0
            or edited
        ):
            with (
                writing(s, self.store, timeout=WAIT_FOR_WRITER_S, background=True),
                self.store.session() as session,
            ):
                before = self.snapshot.manifest()
                sync_with_server(session, self.snapshot, s)
                if self.snapshot.manifest() != before or not s.lexical_dir.exists():
                    save_lexical(s, self.snapshot)
            manifest = self.snapshot.manifest()
        assert manifest is not None
        try:
            built = self._build(manifest, None)
        except SnapshotDamaged as exc:
            manifest = self._repair(exc)
            built = self._build(manifest, None)
            self._swap(manifest, *built)
            self.notes = (f"{exc}; rebuilt the snapshot from the store, nothing was lost",)
            return
        self._swap(manifest, *built)

    def _open_settled(self) -> bool:
        """Serve the snapshot as its last writer left it, without opening Chroma, when that
        writer finished cleanly and nothing changed Chroma since (see `settled`)."""
        s = self.settings
        if not (settled.holds(s) and s.lexical_dir.exists()):
            return False
        manifest = self.snapshot.manifest()
        if manifest is None or manifest.count == 0:
            return False
        try:
            built = self._build(manifest, None)
        except (SnapshotDamaged, OSError):  # damaged, or compacted meanwhile: as any other start
            return False
        self._swap(manifest, *built)
        return True

    def _repair(self, damage: SnapshotDamaged) -> Manifest:
        """Rebuild a damaged snapshot from Chroma (the store of record) under the write lock."""
        s = self.settings
        with (
            writing(s, self.store, timeout=WAIT_FOR_WRITER_S, background=True),
            self.store.session() as session,
        ):
            manifest = rebuild_damaged(session, self.snapshot, damage)
            save_lexical(s, self.snapshot)
        return manifest

    def _build(self, manifest: Manifest, known: Loaded | None) -> tuple[HybridRetriever, Loaded]:
        """A retriever for what `manifest` lists; with `known`, only new segments are read."""
        with _collector_paused():
            loaded = self.snapshot.load(manifest, known)
            catalogue = Catalogue(loaded.papers, loaded.matrix(), loaded.index)
            lexical = LexicalIndex.open(self.settings.lexical_dir, catalogue.papers)
        return HybridRetriever(self.settings, self._embedder(), catalogue, lexical), loaded

    def _swap(
        self,
        manifest: Manifest,
        retriever: HybridRetriever,
        loaded: Loaded,
        stamp: tuple[int, int] | None = None,
    ) -> None:
        """Answer from `retriever` from now on. `stamp` is the snapshot's stamp read *before*
        `manifest` was: a writer that published meanwhile changed the stamp again, so the
        next check loads its papers (the stamp read here, after, could hide them for good)."""
        with self._lock:
            replaced = self._manifest is not None and manifest.store_id != self._manifest.store_id
            if (
                not replaced
                and self._manifest is not None
                and manifest.generation < self._manifest.generation
            ):
                return  # a newer snapshot was loaded while this one was built
            self._retriever, self._loaded, self._manifest = retriever, loaded, manifest
            if self._removal is not None and (
                self._removal[0] != manifest.store_id or self._removal[1] <= manifest.generation
            ):
                self._removal = None
            self._stamp = stamp
            self._checked = time.monotonic()
            self.notes = (
                (f"the store was replaced while this app was running; it now holds {manifest.count} papers",)
                if replaced
                else ()
            )
        known_stores.remember(self.settings.data_dir, self.settings.chroma_url, len(retriever.catalogue))

    # --- following other writers -------------------------------------------------------------
    def _follow(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < self.settings.refresh_s:
            return
        self._checked = now
        if self.settings.chroma_url:
            self._follow_server(now, force)
            if not force and self._syncing is not None and self._syncing.is_alive():
                # The sync loads what it wrote when done; a build now could meet its new
                # papers before their BM25 entries (and rebuild BM25 from scratch).
                return
        stamp = self.snapshot.stamp()
        if stamp is None or (not self.settings.chroma_url and not self.settings.chroma_dir.exists()):
            papers = len(self._retriever.catalogue) if self._retriever else 0
            self.notes = (
                f"the store in {self.settings.data_dir} was deleted or moved while this app was running: "
                f"answers come from the {papers} papers loaded before; restore it, or restart to start anew",
            )
            return
        if stamp == self._stamp and not force:
            return
        manifest = self.snapshot.manifest()
        if manifest is None or manifest == self._manifest:
            self._stamp = stamp
            return
        if force:  # this process wrote: its caller waits for its own papers
            self._update(manifest, stamp)
        else:
            if self._removes(manifest):
                self._removal = (manifest.store_id, manifest.generation)
            if self._worker is None or not self._worker.is_alive():
                # Another process wrote: questions go on with what is loaded while the new
                # catalogue and lexical index are built beside it, then swapped in.
                self._worker = threading.Thread(target=self._update, args=(manifest, stamp), daemon=True)
                self._worker.start()

    def _removes(self, manifest: Manifest) -> bool:
        """Does `manifest` drop papers the loaded snapshot holds (a removal segment after
        the loaded ones: a removal, or an edit's old version), or not continue it at all (a
        compaction, a rebuild, another store)?"""
        known = self._manifest
        if known is None:
            return False
        if manifest.store_id != known.store_id:
            return True
        if manifest.segments[: len(known.segments)] != known.segments:
            # compacted: only a snapshot that did not grow can have dropped papers (a large
            # ingestion elsewhere compacts now and then; its questions need not wait)
            return manifest.count <= known.count
        return any(name.endswith(REMOVAL) for name in manifest.segments[len(known.segments) :])

    def _update(self, manifest: Manifest, stamp: tuple[int, int] | None = None) -> None:
        # The swap comes after the build lock is released: a caller of `reload` holds
        # `self._lock` while it waits for the build lock, and a worker holding the build
        # lock while it waited for `self._lock` would deadlock with it. `_swap` drops a
        # build older than the one loaded meanwhile.
        with self._build_lock:
            current = self._manifest
            same_store = current is not None and manifest.store_id == current.store_id
            if same_store and current is not None and manifest.generation <= current.generation:
                return
            known = self._loaded.copy() if same_store and self._loaded is not None else None
            try:
                built, manifest, stamp = self._load(manifest, known, stamp)
            except Exception:  # never let a background build take the app down
                log.exception("could not load the new papers; will try again")
                return
        self._swap(manifest, *built, stamp)

    def _load(
        self, manifest: Manifest, known: Loaded | None, stamp: tuple[int, int] | None
    ) -> tuple[tuple[HybridRetriever, Loaded], Manifest, tuple[int, int] | None]:
        """`_build`, and what to do when it fails: segments removed by a compaction meanwhile
        mean loading the latest snapshot from scratch; a damaged one is rebuilt from Chroma
        first. The reload can meet either in turn (a compaction that left a damaged
        segment), so it is handled the same way; a third failure is the caller's."""
        for _ in range(2):
            try:
                return self._build(manifest, known), manifest, stamp
            except SnapshotDamaged as exc:
                manifest = self._repair(exc)
            except OSError:
                manifest = self.snapshot.manifest() or manifest
            known, stamp = None, None  # from scratch after either
        return self._build(manifest, None), manifest, None

    def _follow_server(self, now: float, force: bool) -> None:
        """A Chroma server may be written by other machines: compare its count, and look for
        change entries this app has not applied (an edit keeps the count), now and then.
        When it changed, this app's snapshot is brought up to date beside the questions (at
        a million papers that takes tens of seconds, and questions waited for it), unless
        this process wrote (`force`: its caller waits for its own papers)."""
        if not force and now - self._server_checked < 5 * self.settings.refresh_s:
            return
        self._server_checked = now
        try:
            with self.store.session() as session:
                count = session.count()
                edited = pending(session, self.settings)
        except StoreError as exc:
            self._server_note(exc)
            return
        self.notes = ()
        if self._manifest is not None and count == self._manifest.count and not edited:
            return
        if force:
            self._sync_from_server()
        elif self._syncing is None or not self._syncing.is_alive():
            self._syncing = threading.Thread(target=self._sync_from_server, name="server-sync", daemon=True)
            self._syncing.start()

    def _server_note(self, exc: StoreError) -> None:
        papers = len(self._retriever.catalogue) if self._retriever else 0
        self.notes = (f"{exc} Answering from the {papers} papers known before.",)

    def _sync_from_server(self) -> None:
        """Make this app's snapshot mirror the server (the new papers read back, BM25 brought
        up to date), then load what it now lists."""
        try:
            with (
                self.store.session() as session,
                writing(self.settings, self.store, timeout=0, background=True),
            ):
                with self._lock:
                    # What this app loaded is brought up to date instead of loading the
                    # whole snapshot twice (a million papers: about 20 s more per sync).
                    same = self._manifest is not None and self._manifest.store_id == session.store_id
                    known = self._loaded.copy() if same and self._loaded is not None else None
                before = self.snapshot.manifest()
                sync_with_server(session, self.snapshot, self.settings, known)
                if self.snapshot.manifest() != before:  # else whoever wrote it saved BM25 too
                    save_lexical(self.settings, self.snapshot, known)
        except StoreBusyError:  # another process of ours is syncing it: look again later
            return
        except StoreError as exc:
            self._server_note(exc)
            return
        except Exception:  # never let a background sync take the app down
            log.exception("could not read the server's new papers; will try again")
            return
        stamp = self.snapshot.stamp()
        manifest = self.snapshot.manifest()
        if manifest is not None:
            self._update(manifest, stamp)
