"""Incremental, resumable ingestion under a write lock.

Papers are streamed from the files, those already stored are skipped before
anything is embedded, and new ones are embedded and written in batches. Each
batch is acknowledged by Chroma as a whole, so an interrupted run loses at most
the batch in flight, and running the same command again picks up from there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from assistant.config import Settings
from assistant.corpus import Problem, iter_papers, merge
from assistant.embed import Embedder
from assistant.errors import StoreBusyError, StoreError
from assistant.store import VectorStore
from assistant.types import Paper


@dataclass
class IngestReport:
    """What an ingestion did."""

    seen: int = 0
    added: int = 0
    skipped: int = 0
    sources_updated: int = 0
    problems: list[Problem] = field(default_factory=list)
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


def write_lock(settings: Settings) -> FileLock:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(settings.lock_path), timeout=settings.lock_timeout_s)


def ingest(
    paths: Iterable[Path | str],
    store: VectorStore,
    embedder: Embedder,
    settings: Settings,
    strict: bool = False,
    progress: bool = False,
) -> IngestReport:
    """Add every paper of `paths` not yet in the store. Safe to interrupt and re-run."""
    paths = list(paths)
    report = IngestReport()
    started = time.perf_counter()
    try:
        lock = write_lock(settings)
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
        if strict:  # validate everything before writing anything
            for _ in iter_papers(paths, strict=True):
                pass
        existing = store.ids()
        total = _count_new(paths, existing) if progress else None
        bar = _progress(total) if progress else None
        pending: dict[str, Paper] = {}
        seen_again: dict[str, tuple[str, ...]] = {}  # sources of papers already stored

        def flush() -> None:
            if not pending:
                return
            batch = list(pending.values())
            t0 = time.perf_counter()
            vectors = embedder.encode([p.abstract for p in batch])
            t1 = time.perf_counter()
            store.add(batch, vectors)
            t2 = time.perf_counter()
            report.embed_seconds += t1 - t0
            report.store_seconds += t2 - t1
            report.added += len(batch)
            existing.update(pending)
            if bar is not None:
                bar.update(len(batch))
            pending.clear()

        for paper in iter_papers(paths, report.problems.append):
            report.seen += 1
            if paper.id in pending:
                pending[paper.id] = merge(pending[paper.id], paper)
            elif paper.id in existing:
                report.skipped += 1
                known = seen_again.get(paper.id, ())
                seen_again[paper.id] = known + tuple(s for s in paper.sources if s not in known)
            else:
                pending[paper.id] = paper
                if len(pending) >= settings.store_batch_size:
                    flush()
        flush()
        report.sources_updated = store.add_sources(seen_again)
        if bar is not None:
            bar.close()
    except OSError as exc:
        raise StoreError(
            f"ingestion stopped: {exc.strerror or exc} ({settings.data_dir}); everything "
            "stored before this point is kept. Free disk space or fix permissions, then run "
            "the same command again to resume."
        ) from exc
    finally:
        lock.release()
    report.seconds = time.perf_counter() - started
    return report


def _count_new(paths: list[Path | str], existing: set[str]) -> int:
    seen: set[str] = set()
    for paper in iter_papers(paths):
        if paper.id not in existing:
            seen.add(paper.id)
    return len(seen)


def _progress(total: int | None):  # type: ignore[no-untyped-def]
    from tqdm import tqdm

    return tqdm(total=total, unit="papers", desc="embedding", file=sys.stderr, smoothing=0.1)
