"""The strong index, built beside the fast one from the papers the fast one holds.

With `embedder=auto`, ingestion embeds with the bundled all-MiniLM-L6-v2 (fast), so
search works at once; EmbeddingGemma's index is then built from the papers already
stored. Batches are embedded outside the write lock, so an ingestion never waits
minutes for the build, and each batch is written under the lock (Chroma first, then
the snapshot, as ingestion does): interrupted, even by `kill -9`, the build resumes
where it stopped. Search switches to the strong index once it holds every paper.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from assistant.config import Settings
from assistant.corpus.building import marker as building_marker
from assistant.corpus.changes import Changes, apply
from assistant.corpus.ingest import load_checked, save_lexical, sync_snapshot, writing
from assistant.index.embed import PROFILES, Embedder, Profile
from assistant.index.snapshot import Loaded, Snapshot, SnapshotDamaged
from assistant.index.store import VectorStore, bounded
from assistant.types import Paper

log = logging.getLogger(__name__)

BATCH = 32  # papers embedded per batch: the most work lost to an interruption
BACKGROUND_BATCH = 8  # in the app: a question waits at most one such batch (a few seconds)
LOCK_WAIT_S = 120.0  # a batch waits this long for another process's ingestion


@dataclass(frozen=True)
class IndexStatus:
    """Which index answers searches, and how far the strong one is."""

    answering: str  # the embedder whose index answers now
    papers: int  # papers in the fast index (the store of record)
    strong: str | None = None  # the strong index's embedder (embedder=auto), else None
    strong_papers: int = 0  # papers in the strong index so far
    building: bool = False  # a build runs in this process
    elsewhere: int | None = None  # the process id of another process building it now
    problem: str | None = None  # why the strong index cannot be used (not installed, …)
    questions: str = ""  # what embeds questions for the answering index: "openvino", "onnx" or "torch"
    abstracts: str = ""  # what embeds abstracts for the index being built: "openvino" or "torch"
    follows: bool = True  # the strong index followed the fast snapshot answering now

    @property
    def complete(self) -> bool:
        return (
            self.strong is not None and self.papers > 0 and self.strong_papers == self.papers and self.follows
        )

    def line(self) -> str:
        parts = [f"questions via {self.questions}"] if self.questions else []
        parts += [f"abstracts via {self.abstracts}"] if self.abstracts else []
        via = f" ({', '.join(parts)})" if parts else ""
        if self.strong is None:
            return f"search: {self.answering} index{via}"
        if self.problem:
            return f"search: {self.answering} index{via} ({self.strong}: {self.problem})"
        if self.complete:
            return f"search: {self.strong} index ({self.strong_papers} papers){via}"
        if self.building:
            state = "building"
        elif self.elsewhere is not None:
            state = f"being built by process {self.elsewhere}"
        else:
            state = "not complete: the app builds the rest while it serves, or run `assistant index`"
        if self.strong_papers == self.papers and not self.follows:
            state = f"to follow a change to the library first; {state}"
        return (
            f"search: {self.answering} index{via}; {self.strong} index {self.strong_papers}/{self.papers} "
            f"papers, {state}"
        )


def index_embedder(settings: Settings) -> Embedder:
    """The embedder of the index of `settings`, with its search profile (a custom model
    folder gets no prompts and the default share)."""
    custom = settings.embedder_path is not None
    return Embedder(
        settings.resolved_embedder_path(),
        settings.embed_batch_size,
        settings.torch_threads,
        Profile() if custom else PROFILES[settings.index_embedder],
        export_name=None if custom else settings.index_embedder,
        query_encoder=settings.query_encoder,
        document_encoder=settings.document_encoder,
    )


def strong_count(settings: Settings) -> int:
    """Papers in the index of `settings` according to its snapshot (no store read)."""
    manifest = Snapshot(settings.snapshot_dir).manifest()
    return manifest.count if manifest is not None else 0


def followed(settings: Settings) -> str | None:
    """The fingerprint of the fast snapshot that the strong index beside it last followed
    (`settings`: the fast index's). None: never, as far as this data folder knows."""
    try:
        return settings.strong_follows_path.read_text().strip() or None
    except OSError:
        return None


def record_followed(settings: Settings, fingerprint: str) -> None:
    """The strong index now follows the fast snapshot `fingerprint` (see `mirror`)."""
    path = settings.strong_follows_path
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(fingerprint)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk: the fast index answers until it can be written
        log.warning("cannot save %s (%s)", path, exc)
        tmp.unlink(missing_ok=True)


def mirror(papers: Sequence[Paper], store: VectorStore, settings: Settings) -> int:
    """Make the index of `settings` follow the fast one's `papers`: papers removed there (or
    replaced by a new version) are deleted here, changed metadata (sources, a DOI filled in)
    is copied. Nothing is embedded. Returns how many papers were deleted or changed."""
    want = {p.id: bounded(p) for p in papers}

    def changes(loaded: Loaded) -> Changes:
        out = Changes()
        for paper in loaded.papers:
            fresh = want.get(paper.id)
            if fresh is None:
                out.deletions.add(paper.id)
            elif fresh != paper:
                out.updates[paper.id] = fresh
        return out

    return _change(store, settings, changes)


def forget(ids: set[str], store: VectorStore, settings: Settings) -> int:
    """Delete these papers from the index of `settings` (nothing else changes)."""
    return _change(store, settings, lambda loaded: Changes(deletions=ids & loaded.index.keys()))


def _change(store: VectorStore, settings: Settings, changes_of: Callable[[Loaded], Changes]) -> int:
    snapshot = Snapshot(settings.snapshot_dir)
    if snapshot.manifest() is None:
        return 0
    with writing(settings, store, timeout=LOCK_WAIT_S, background=True), store.session() as session:
        sync_snapshot(session, snapshot)
        loaded = load_checked(session, snapshot)
        if loaded is None:
            return 0
        changes = changes_of(loaded)
        if not changes:
            return 0
        apply(session, snapshot, loaded, changes)
    save_lexical(settings, snapshot)
    return len(changes.deletions) + len(changes.updates)


class FastIds:
    """The ids of the papers the fast index holds now, by its snapshot on disk: read again
    only when its manifest changed since `papers` (of the snapshot `fingerprint`) were
    read. Asked under the write lock, before each batch of a build is stored."""

    def __init__(self, folder: Path, papers: Sequence[Paper], fingerprint: str | None) -> None:
        self._snapshot = Snapshot(folder)
        self._fingerprint = fingerprint
        self._ids: set[str] = {p.id for p in papers}

    def __call__(self) -> set[str] | None:
        """The ids; None when the changed snapshot cannot be read now (a compaction
        meanwhile): nothing may be stored, and nothing deleted, on its account."""
        manifest = self._snapshot.manifest()
        if manifest is None or manifest.fingerprint == self._fingerprint:
            return self._ids
        try:
            loaded = self._snapshot.load(manifest)
        except (OSError, SnapshotDamaged) as exc:
            log.warning("cannot read the fast index's snapshot (%s); this batch waits", exc)
            return None
        self._fingerprint, self._ids = manifest.fingerprint, set(loaded.index)
        return self._ids


def build(
    papers: Sequence[Paper],
    store: VectorStore,
    embedder: Embedder,
    settings: Settings,
    stop: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    before_batch: Callable[[], None] | None = None,
    batch_size: int = 0,
    fast_ids: Callable[[], set[str] | None] | None = None,
) -> int:
    """Embed and store the papers the index of `settings` lacks; returns how many were added.
    `progress(done, total)` is called after each batch; `stop` ends the build between batches;
    `before_batch` may wait (the app: until no question is being answered). `fast_ids`: the
    ids the fast index holds now, asked under the write lock before each batch is stored: a
    paper removed or replaced there while the batch was embedded (another process's
    ingestion or removal) is not stored. Papers held here that the fast index lacks are
    deleted first."""
    size = batch_size or BATCH
    snapshot = Snapshot(settings.snapshot_dir)
    with writing(settings, store, timeout=LOCK_WAIT_S, background=True), store.session() as session:
        existing = sync_snapshot(session, snapshot)
    held_now = fast_ids() if fast_ids is not None else {p.id for p in papers}
    stale = existing - held_now if held_now is not None and not settings.chroma_url else set()
    if stale:
        # Left by a batch stored after the paper was removed or replaced (before `fast_ids`
        # guarded it): the counts would match with a stale abstract among them, or never.
        # (Not on a Chroma server: another machine's papers may not be in this snapshot yet.)
        forget(stale, store, settings)
        with writing(settings, store, timeout=LOCK_WAIT_S, background=True), store.session() as session:
            existing = sync_snapshot(session, snapshot)
    todo = [p for p in papers if p.id not in existing]
    added = 0
    marker = building_marker(settings)
    try:
        for start in range(0, len(todo), size):
            with suppress(OSError):  # only a status line depends on it
                marker.write_text(str(os.getpid()))
            if before_batch is not None:
                before_batch()
            if stop is not None and stop.is_set():
                break
            batch = [bounded(p) for p in todo[start : start + size]]
            vectors = embedder.encode_documents(batch)  # outside the lock: this is the slow part
            with writing(settings, store, timeout=LOCK_WAIT_S, background=True), store.session() as session:
                manifest = snapshot.manifest()
                if manifest is None or manifest.count != len(existing):  # another builder wrote
                    existing = sync_snapshot(session, snapshot)
                held = fast_ids() if fast_ids is not None else {p.id for p in batch}
                keep = [i for i, p in enumerate(batch) if p.id not in existing and p.id in (held or ())]
                if keep:
                    fresh = [batch[i] for i in keep]
                    session.add(fresh, vectors[keep])
                    existing.update(p.id for p in fresh)
                    snapshot.append(session.store_id, len(existing), fresh, vectors[keep])
                    added += len(fresh)
            if progress is not None:
                progress(min(start + size, len(todo)), len(todo))
    finally:
        with suppress(OSError, ValueError):
            if int(marker.read_text()) == os.getpid():
                marker.unlink()
    if added:
        save_lexical(settings, snapshot)
    return added


class Builder:
    """Keeps the strong index up to date in a background thread: builds what is missing,
    then looks again every few seconds (papers another process ingested)."""

    def __init__(self, step: Callable[[threading.Event], int], every_s: float) -> None:
        self._step = step
        self._every_s = max(every_s, 2.0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.busy = False
        self.error: str | None = None

    def start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="strong-index", daemon=True)
            self._thread.start()

    def stop(self, wait_s: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(wait_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.busy = True
            try:
                self._step(self._stop)
                self.error = None
            except Exception as exc:  # never take the app down; say it and try again later
                log.exception("building the strong index failed; trying again later")
                self.error = str(exc)
            finally:
                self.busy = False
            self._stop.wait(self._every_s)


def wait_for(condition: Callable[[], bool], timeout_s: float, every_s: float = 0.5) -> bool:
    """Poll `condition` until it holds or `timeout_s` passes (tests and benchmarks)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every_s)
    return condition()
