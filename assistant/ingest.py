"""Incremental, resumable ingestion under a write lock.

Papers are streamed from the files, those already stored are skipped before
anything is embedded, and new ones are embedded and written in batches. Each
batch is acknowledged by Chroma as a whole, so an interrupted run loses at most
the batch in flight, and running the same command again picks up from there.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

from assistant.config import Settings
from assistant.corpus import Problem, iter_papers, merge
from assistant.embed import Embedder
from assistant.errors import StoreBusyError, StoreError
from assistant.lexical import LexicalIndex
from assistant.snapshot import Snapshot
from assistant.store import MAX_AUTHORS, MAX_FIELD, Session, VectorStore, bounded
from assistant.text import legacy_paper_id
from assistant.types import Paper

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What an ingestion did."""

    seen: int = 0
    added: int = 0
    skipped: int = 0
    sources_updated: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # records stored with a field cut to the bounds
    seconds: float = 0.0
    embed_seconds: float = 0.0
    store_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.added / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        line = (
            f"{self.added} added, {self.skipped} already stored, "
            f"{len(self.problems)} problem(s) in {self.seconds:.1f}s"
        )
        if self.added:
            line += (
                f" ({self.rate:.1f} papers/s; embedding {self.embed_seconds:.1f}s, "
                f"store {self.store_seconds:.1f}s)"
            )
        return line


def write_lock(settings: Settings, timeout: float | None = None) -> FileLock:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(settings.lock_path), timeout=settings.lock_timeout_s if timeout is None else timeout)


@contextmanager
def writing(settings: Settings, store: VectorStore, timeout: float | None = None) -> Iterator[None]:
    """Hold the write lock, with clear errors when it is taken or cannot be made."""
    try:
        lock = write_lock(settings, timeout)
        lock.acquire()
    except Timeout:
        raise StoreBusyError(
            f"another ingestion is writing to {store.location} (lock {settings.lock_path}); "
            "wait for it to finish, or set ASSISTANT_LOCK_TIMEOUT_S to wait automatically"
        ) from None
    except OSError as exc:
        raise StoreError(
            f"cannot take the write lock {settings.lock_path}: {exc.strerror or exc}. The data "
            "folder must be writable (set ASSISTANT_DATA_DIR to a writable folder); nothing was changed."
        ) from exc
    try:
        yield
    finally:
        lock.release()


def ingest(
    paths: Iterable[Path | str],
    store: VectorStore,
    embedder: Embedder,
    settings: Settings,
    strict: bool = False,
    progress: bool = False,
    lock_timeout: float | None = None,
) -> IngestReport:
    """Add every paper of `paths` not yet in the store. Safe to interrupt and re-run.

    Each batch goes to Chroma first, then to the snapshot, so a reader that sees a paper
    in the snapshot can rely on it being stored. The lexical index is saved at the end,
    so the next reader loads it instead of building it."""
    paths = list(paths)
    report = IngestReport()
    started = time.perf_counter()
    snapshot = Snapshot(settings.snapshot_dir)
    with writing(settings, store, lock_timeout):
        try:
            if strict:  # validate everything before writing anything
                for _ in iter_papers(paths, strict=True):
                    pass
            with store.session() as session:
                existing = sync_snapshot(session, snapshot)
                store_id = session.store_id
                total = _count_new(paths, existing) if progress else None
                bar = _progress(total) if progress else None
                pending: dict[str, Paper] = {}
                seen_again: dict[str, Paper] = {}  # papers already stored, seen again (their new sources)

                def flush() -> None:
                    if not pending:
                        return
                    batch = [bounded(p) for p in pending.values()]
                    t0 = time.perf_counter()
                    vectors = embedder.encode_documents(batch)
                    t1 = time.perf_counter()
                    session.add(batch, vectors)
                    existing.update(pending)
                    snapshot.append(store_id, len(existing), batch, vectors)
                    t2 = time.perf_counter()
                    report.embed_seconds += t1 - t0
                    report.store_seconds += t2 - t1
                    report.added += len(batch)
                    if bar is not None:
                        bar.update(len(batch))
                    pending.clear()

                for paper in iter_papers(paths, report.problems.append):
                    report.seen += 1
                    report.notes.extend(limits(paper))
                    stored = stored_id(paper, existing)
                    if paper.id in pending:
                        pending[paper.id] = merge(pending[paper.id], paper)
                    elif stored is not None:
                        report.skipped += 1
                        before = seen_again.get(stored)
                        seen_again[stored] = merge(before, paper) if before else paper
                    else:
                        pending[paper.id] = paper
                        if len(pending) >= settings.store_batch_size:
                            flush()
                flush()
                updated, vectors = session.enrich(seen_again)
                report.sources_updated = len(updated)
                if updated:
                    snapshot.append(store_id, len(existing), updated, vectors)
                if bar is not None:
                    bar.close()
            if report.added or report.sources_updated:
                save_lexical(settings, snapshot)
        except OSError as exc:
            raise StoreError(
                f"ingestion stopped: {exc.strerror or exc} ({settings.data_dir}); everything "
                "stored before this point is kept. Free disk space or fix permissions, then run "
                "the same command again to resume."
            ) from exc
    report.seconds = time.perf_counter() - started
    return report


def stored_id(paper: Paper, existing: set[str]) -> str | None:
    """The id under which this paper is already stored (its own, or the one stores made
    before ids kept LaTeX), or None."""
    if paper.id in existing:
        return paper.id
    legacy = legacy_paper_id(paper.abstract)
    return legacy if legacy in existing else None


def sync_snapshot(session: Session, snapshot: Snapshot) -> set[str]:
    """Make the snapshot mirror the store (the caller holds the write lock) and return the
    stored ids. Cheap when it already does; after a crash between a batch reaching Chroma
    and the snapshot, only the missing papers are read back."""
    ids = session.ids()
    manifest = snapshot.manifest()
    if manifest is not None and manifest.store_id == session.store_id and manifest.count == len(ids):
        return ids
    if manifest is not None and manifest.store_id == session.store_id and manifest.count < len(ids):
        known = set(snapshot.load(manifest).index)
        if known <= ids:
            missing = sorted(ids - known)
            for papers, vectors in session.batches(missing):
                snapshot.append(session.store_id, len(ids), papers, vectors)
            if not missing:
                snapshot.append(session.store_id, len(ids), [], np.zeros((0, 0), dtype=np.float32))
            return ids
    snapshot.rebuild(session.store_id, session.batches())
    return ids


def save_lexical(settings: Settings, snapshot: Snapshot) -> None:
    """Build and save the lexical index for what the snapshot now holds."""
    manifest = snapshot.manifest()
    if manifest is None:
        return
    papers = snapshot.load(manifest).papers
    try:
        LexicalIndex.build(papers).save(settings.lexical_dir)
    except OSError as exc:  # a reader will build it itself
        log.warning("cannot save the lexical index in %s (%s)", settings.lexical_dir, exc)


def limits(paper: Paper) -> list[str]:
    """What the store's bounds cut from this paper, said once per paper."""
    notes = []
    where = paper.sources[0] if paper.sources else paper.id
    if len(paper.authors) > MAX_AUTHORS:
        notes.append(
            f"{where}: {len(paper.authors):,} authors; the store keeps the first {MAX_AUTHORS} "
            "for search and display (et al.), the snapshot keeps them all"
        )
    for name, limit in (("title", MAX_FIELD["title"]), ("comment", MAX_FIELD["comment"])):
        value = getattr(paper, name)
        if value and len(value) > limit:
            notes.append(f"{where}: the {name} has {len(value):,} characters; it is cut to {limit:,}")
    return notes


def _count_new(paths: list[Path | str], existing: set[str]) -> int:
    seen: set[str] = set()
    for paper in iter_papers(paths):
        if stored_id(paper, existing) is None:
            seen.add(paper.id)
    return len(seen)


def _progress(total: int | None):  # type: ignore[no-untyped-def]
    from tqdm import tqdm

    return tqdm(total=total, unit="papers", desc="embedding", file=sys.stderr, smoothing=0.1)
