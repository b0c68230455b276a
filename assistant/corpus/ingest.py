"""Incremental, resumable ingestion under a write lock.

Papers are streamed from the files, those already stored are skipped before
anything is embedded, and new ones are embedded and written in batches. Each
batch is acknowledged by Chroma as a whole, so an interrupted run loses at most
the batch in flight, and running the same command again picks up from there.

A paper's id is the hash of its abstract (the same abstract in two files is one
paper with two sources); a record's identity within its file is its id (BibTeX
key, JSONL/CSV/CSL `id`) or DOI. After the new papers are stored, each file read
is reconciled with what the store says came from it: an edited record (same key,
new abstract) replaces its old version, and with `sync` the papers no longer in the
file lose it as a source (and are deleted when no other file holds them).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

from assistant.config import Settings
from assistant.corpus.building import building_in, held_in_background, holder_note
from assistant.corpus.changes import Changes, apply, key_file, with_file_sources
from assistant.corpus.readers import find_corpus_files, iter_papers
from assistant.corpus.records import Problem, is_title_key, stored_keys
from assistant.errors import StoreBusyError, StoreError
from assistant.index import settled
from assistant.index.embed import Embedder
from assistant.index.lexical import LexicalIndex
from assistant.index.snapshot import Loaded, Manifest, Snapshot, SnapshotDamaged
from assistant.index.store import (
    MAX_AUTHORS,
    MAX_FIELD,
    Session,
    VectorStore,
    bounded,
    fill,
    paper_metadata,
)
from assistant.text import legacy_paper_id
from assistant.types import Paper, merge, source_file

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What an ingestion did."""

    seen: int = 0
    added: int = 0
    skipped: int = 0
    updated: int = 0  # records whose abstract changed: the new version replaced the old
    removed: int = 0  # papers deleted (sync: no longer in any file)
    sources_updated: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # fields cut to the bounds; files not synced
    seconds: float = 0.0
    load_seconds: float = 0.0  # loading the embedder (once per process): not part of the rate
    embed_seconds: float = 0.0
    store_seconds: float = 0.0

    @property
    def rate(self) -> float:
        """Papers added per second of ingestion, the embedder's loading left out."""
        working = self.seconds - self.load_seconds
        return self.added / working if working > 0 else 0.0

    @property
    def skipped_records(self) -> list[Problem]:
        """Problems that cost a record (or a file); the rest are notes on kept records."""
        return [p for p in self.problems if not p.kept]

    @property
    def refused_files(self) -> list[Problem]:
        """Files nothing was read from (unreadable, not decodable, empty, still being written)."""
        return [p for p in self.problems if not p.kept and p.line == 0]

    def summary(self) -> str:
        changed = f"{self.updated} updated, " if self.updated else ""
        changed += f"{self.removed} removed, " if self.removed else ""
        notes = len(self.problems) - len(self.skipped_records)
        line = (
            f"{self.added} added, {changed}{self.skipped} already stored, "
            f"{len(self.skipped_records)} problem(s)"
            + (f", {notes} note(s)" if notes else "")
            + f" in {self.seconds:.1f}s"
        )
        if self.added:
            load = f"loading the embedder {self.load_seconds:.1f}s, " if self.load_seconds >= 0.05 else ""
            line += (
                f" ({self.rate:.1f} papers/s; {load}embedding {self.embed_seconds:.1f}s, "
                f"store {self.store_seconds:.1f}s)"
            )
        return line


BUILD_WAIT_S = 60.0  # how long a writer waits for the app's background index build


def write_lock(settings: Settings, timeout: float | None = None) -> FileLock:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(str(settings.lock_path), timeout=settings.lock_timeout_s if timeout is None else timeout)


@contextmanager
def writing(
    settings: Settings, store: VectorStore, timeout: float | None = None, background: bool = False
) -> Iterator[None]:
    """Hold the write lock, with clear errors when it is taken or cannot be made.
    `background`: a short write of the app's own (a build's batch, a sync), which a person's
    ingestion waits for instead of failing (`building.holder_note`)."""
    try:
        lock = write_lock(settings, timeout)
        try:
            lock.acquire()
        except Timeout:
            # The app's background writers (a build's batch, the strong index following an
            # edit, a sync) hold the lock a second or two: a person's ingestion or removal
            # (no timeout of its own) landing then waits instead of failing (a walk: 1 and
            # 3 of 45 re-ingests 0.3 s apart failed while the app served).
            if (
                timeout is not None
                or settings.lock_timeout_s >= BUILD_WAIT_S
                or (held_in_background(settings) is None and building_in(settings.data_dir) is None)
            ):
                raise
            lock.acquire(timeout=BUILD_WAIT_S)
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
        # Readers serve the snapshot without opening Chroma only while a stamp says the last
        # writer finished cleanly: gone from here, back once this writer's body returns.
        others = settled.unsettle(settings)
    except OSError as exc:
        lock.release()
        raise StoreError(
            f"cannot write in {settings.data_dir}: {exc.strerror or exc}. The data folder must be "
            "writable (set ASSISTANT_DATA_DIR to a writable folder); nothing was changed."
        ) from exc
    note = holder_note(settings) if background else None
    if note is not None:
        with suppress(OSError):  # only tells a waiting person's ingestion to wait
            note.write_text(str(os.getpid()))
    try:
        yield
        settled.settle(settings, others)
    finally:
        if note is not None:
            with suppress(OSError):
                note.unlink()
        lock.release()


def ingest(
    paths: Iterable[Path | str],
    store: VectorStore,
    embedder: Embedder,
    settings: Settings,
    strict: bool = False,
    progress: bool = False,
    lock_timeout: float | None = None,
    sync: bool = False,
) -> IngestReport:
    """Add every paper of `paths` not yet in the store; replace records whose abstract
    changed; with `sync`, also drop the papers of these files that are no longer in them
    (a named file that no longer exists counts as empty). Safe to interrupt and re-run.

    Each batch goes to Chroma first, then to the snapshot, so a reader that sees a paper
    in the snapshot can rely on it being stored. The lexical index is saved at the end,
    so the next reader loads it instead of building it."""
    paths = list(paths)
    report = IngestReport()
    gone: list[str] = []
    if sync:
        gone = [Path(p).expanduser().name for p in paths if not Path(p).expanduser().exists()]
        paths = [p for p in paths if Path(p).expanduser().exists()]
    started = time.perf_counter()
    snapshot = Snapshot(settings.snapshot_dir)
    with writing(settings, store, lock_timeout):
        try:
            if strict:  # validate everything before writing anything
                for _ in iter_papers(paths, strict=True):
                    pass
            with store.session() as session:
                # What is stored, as the snapshot has it: papers seen again are compared with
                # it (no read-back from Chroma), and the files read are reconciled with it.
                existing, catalogue = synced(session, snapshot)
                stored_before = len(existing)
                files = [f.name for f in find_corpus_files(paths)]
                total = _count_new(paths, existing) if progress else None
                if total:  # loaded before the bar starts, so its rate and ETA are embedding's
                    loading = time.perf_counter()
                    embedder.load()
                    report.load_seconds += time.perf_counter() - loading
                writer = _Writer(
                    session, snapshot, embedder, existing, report, _progress(total) if progress else None
                )
                read = _read(paths, writer, settings.store_batch_size, catalogue)
                seen_again = read.seen_again
                if catalogue is not None:  # only those the record adds something to
                    seen_again = _adding(catalogue, seen_again)
                updated, vectors = session.enrich(seen_again)
                report.sources_updated = len(updated)
                if updated:
                    snapshot.append(session.store_id, len(existing), updated, vectors)
                if writer.bar is not None:
                    writer.bar.close()
                settled = _settled(report, files, gone, sync)
                if not stored_before:  # a first ingestion: nothing to reconcile with
                    settled = set()
                reconciled = reconcile(
                    session,
                    snapshot,
                    catalogue,
                    read.seen_in,
                    read.keys_in,
                    read.records,
                    settled,
                    sync,
                    existing,
                )
                if reconciled is not None:
                    report.updated = len(reconciled.replacing)
                    report.removed = len(reconciled.removed)
                    report.sources_updated += reconciled.updated
                    report.added -= len(reconciled.replacing & writer.added_ids)
            if report.added or report.sources_updated or report.updated or report.removed:
                del catalogue, read, writer  # freed before the snapshot is loaded again, whole
                save_lexical(settings, snapshot)
        except OSError as exc:
            raise StoreError(
                f"ingestion stopped: {exc.strerror or exc} ({settings.data_dir}); everything "
                "stored before this point is kept. Free disk space or fix permissions, then run "
                "the same command again to resume."
            ) from exc
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class _Writer:
    """Embeds and stores new papers a batch at a time: Chroma first, then the snapshot."""

    session: Session
    snapshot: Snapshot
    embedder: Embedder
    existing: set[str]
    report: IngestReport
    bar: Any = None
    pending: dict[str, Paper] = field(default_factory=dict)
    added_ids: set[str] = field(default_factory=set)

    def flush(self) -> None:
        if not self.pending:
            return
        batch = [bounded(p) for p in self.pending.values()]
        loading = time.perf_counter()
        self.embedder.load()  # at once when loaded: the first batch's wait is not embedding
        t0 = time.perf_counter()
        self.report.load_seconds += t0 - loading
        vectors = self.embedder.encode_documents(batch)
        t1 = time.perf_counter()
        self.session.add(batch, vectors)
        self.existing.update(self.pending)
        self.added_ids.update(self.pending)
        self.snapshot.append(self.session.store_id, len(self.existing), batch, vectors)
        t2 = time.perf_counter()
        self.report.embed_seconds += t1 - t0
        self.report.store_seconds += t2 - t1
        self.report.added += len(batch)
        if self.bar is not None:
            self.bar.update(len(batch))
        self.pending.clear()


@dataclass
class _Read:
    """What one pass over the files found, for reconciling them with the store. A first
    ingestion (`catalogue` None: nothing stored) has nothing to reconcile and keeps none
    of it; otherwise a record is kept only when it would change its stored paper's fields,
    and a stored paper seen again only when its record adds something to it, so memory
    does not grow with the files (at a million records, keeping them all was gigabytes)."""

    catalogue: Loaded | None = None
    seen_in: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # file -> id -> its sources
    keys_in: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # file -> id -> its keys
    records: dict[str, Paper] = field(default_factory=dict)  # id -> its first record, if it edits
    first: set[str] = field(default_factory=set)  # ids whose first record was seen
    seen_again: dict[str, Paper] = field(default_factory=dict)  # stored papers seen again

    def note(self, paper: Paper) -> None:
        """Remember where `paper` was read and, for its first record, what it edits."""
        if self.catalogue is None:
            return
        for source in paper.sources:
            self.seen_in.setdefault(source_file(source), {}).setdefault(paper.id, []).append(source)
        for key in paper.keys:
            self.keys_in.setdefault(key_file(key), {}).setdefault(paper.id, []).append(key)
        if paper.id in self.first:
            return
        self.first.add(paper.id)
        i = self.catalogue.index.get(paper.id)
        if i is not None and with_fields_of(self.catalogue.papers[i], paper) != self.catalogue.papers[i]:
            self.records[paper.id] = paper


def _read(paths: list[Path | str], writer: _Writer, batch_size: int, catalogue: Loaded | None) -> _Read:
    """Every record of the files: new papers written in batches, stored ones collected."""
    read, report, pending = _Read(catalogue), writer.report, writer.pending
    for paper in iter_papers(paths, report.problems.append):
        report.seen += 1
        read.note(paper)
        report.notes.extend(limits(paper))
        stored = stored_id(paper, writer.existing)
        if paper.id in pending:
            pending[paper.id] = merge(pending[paper.id], paper)
        elif stored is not None:
            report.skipped += 1
            before = read.seen_again.get(stored)
            if before is not None:
                read.seen_again[stored] = merge(before, paper)
            elif catalogue is None or _adds(catalogue, stored, paper) is not None:
                read.seen_again[stored] = paper
        else:
            pending[paper.id] = paper
            if len(pending) >= batch_size:
                writer.flush()
    writer.flush()
    return read


def _settled(report: IngestReport, files: list[str], gone: list[str], sync: bool) -> set[str]:
    """The files read whole (no problems) or gone: only their papers may be reconciled."""
    problem_files = {Path(p.file).name for p in report.skipped_records}
    if sync:
        for name in sorted(set(files) & problem_files):
            report.notes.append(
                f"{name}: not synced (it has problems, listed above): no paper was removed "
                "for it; fix them and run the same command again"
            )
        for name in gone:
            report.notes.append(f"{name} no longer exists: its papers are removed")
    return {f for f in files if f not in problem_files} | set(gone)


@dataclass(frozen=True)
class Reconciled:
    replacing: set[str]  # papers that replaced an old version of their record
    removed: set[str]  # papers deleted because no file holds them any more
    updated: int  # papers whose sources or keys changed


def _adding(catalogue: Loaded, seen_again: dict[str, Paper]) -> dict[str, Paper]:
    """The papers seen again whose record adds something to the stored one (a source in a
    new file, a field filled), judged on the snapshot."""
    out = {}
    for sid, seen in seen_again.items():
        adding = _adds(catalogue, sid, seen)
        if adding is not None:
            out[sid] = adding
    return out


def _adds(catalogue: Loaded, sid: str, seen: Paper) -> Paper | None:
    """`seen` without the sources in files its stored paper already has, if it still adds
    something to that paper (a source, a field filled; everything, for a paper not in the
    snapshot), else None. The same record on another line of a file the paper already
    has is not a new source."""
    i = catalogue.index.get(sid)
    if i is None:
        return seen
    stored = catalogue.papers[i]
    files = set(stored.files)
    seen = seen.replace(sources=tuple(s for s in seen.sources if source_file(s) not in files))
    return seen if bounded(fill(stored, seen)) != stored else None


def reconcile(
    session: Session,
    snapshot: Snapshot,
    known: Loaded | None,
    seen_in: dict[str, dict[str, list[str]]],
    keys_in: dict[str, dict[str, list[str]]],
    records: dict[str, Paper],
    settled: set[str],
    sync: bool,
    existing: set[str],
) -> Reconciled | None:
    """Bring what the store says about the files just read in line with them (the caller
    holds the write lock; new papers are stored). `settled`: the files read without
    problems (and, with `sync`, named files that are gone). None when nothing changed."""
    manifest = snapshot.manifest()
    if manifest is None or not settled:
        return None
    # Before `load`, which brings `known` up to date in place (new papers would count too).
    shared = shared_titles(keys_in, known.papers if known is not None else ())
    loaded: Loaded = snapshot.load(manifest, known)  # only the segments written since `known`
    holder: dict[str, str] = {}  # key now in a file -> the paper that holds it now
    for by_paper in keys_in.values():
        for pid, keys in by_paper.items():
            for key in keys:
                holder[key] = pid
    for key in shared:
        holder.pop(key, None)
    changes = Changes()
    replacing: set[str] = set()  # new versions
    superseded: set[str] = set()  # old versions
    for paper in loaded.papers:
        touched = {f for f in paper.files if f in settled}
        if not touched:
            continue
        current = paper
        for file in sorted(touched):
            now = seen_in.get(file, {})
            if paper.id in now:
                if paper.files[:1] == (file,) and paper.id in records:  # its first file: edits apply
                    current = with_fields_of(current, records[paper.id])
                keys = keys_in.get(file, {}).get(paper.id, [])
                there = [src for src in current.sources if source_file(src) == file]
                # Line numbers are those of the record's first reading: renumbering every paper
                # below an edit would rewrite most of a large store (`remove` + `ingest` renumbers).
                lines = there if len(there) == len(now[paper.id]) else now[paper.id]
                current = with_file_sources(current, file, lines, keys)
                continue
            successors = {
                holder[k]
                for k in stored_keys(paper)
                if key_file(k) == file and holder.get(k, paper.id) != paper.id
            }
            if successors or sync:
                replacing.update(successors)
                if successors:
                    superseded.add(paper.id)
                changes.drop_files(current, {file})
                current = changes.updates.get(paper.id, current)
                if paper.id in changes.deletions:
                    break
        if paper.id not in changes.deletions and current != paper:
            changes.updates[paper.id] = current
    if not changes:
        return None
    apply(session, snapshot, loaded, changes)
    existing.difference_update(changes.deletions)
    return Reconciled(replacing, changes.deletions - superseded, len(changes.updates))


def shared_titles(keys_in: dict[str, dict[str, list[str]]], before: Iterable[Paper]) -> set[str]:
    """Title keys (records with neither id nor DOI) held by two papers, in the files just
    read or in the store as it was before this run: such a title ("Introduction") does
    not say which record was edited, so neither replaces the other."""
    read = Counter(key for by_paper in keys_in.values() for keys in by_paper.values() for key in set(keys))
    stored = Counter(key for paper in before for key in set(stored_keys(paper)))
    return {key for counted in (read, stored) for key, n in counted.items() if n > 1 and is_title_key(key)}


EDITABLE = ("title", "authors", "venue", "year", "area", "subarea", "comment", "url", "external_id", "doi")


def with_fields_of(stored: Paper, record: Paper) -> Paper:
    """The stored paper with the metadata its first file gives now (a corrected title, a
    year added); a field the record leaves empty keeps the stored value (another file may
    have filled it). The abstract and id stay (same abstract)."""
    values = {name: getattr(record, name) for name in EDITABLE if getattr(record, name) not in (None, (), "")}
    updated = stored.replace(**values)
    return updated.replace(label=updated.title or stored.label)


def stored_id(paper: Paper, existing: set[str]) -> str | None:
    """The id under which this paper is already stored (its own, or the one stores made
    before ids kept LaTeX), or None."""
    if paper.id in existing:
        return paper.id
    legacy = legacy_paper_id(paper.abstract)
    return legacy if legacy in existing else None


def sync_snapshot(
    session: Session, snapshot: Snapshot, known: Loaded | None = None, reread: Collection[str] | None = None
) -> set[str]:
    """Make the snapshot mirror the store (the caller holds the write lock) and return the
    stored ids. Cheap when it already does; after a crash between a batch reaching Chroma
    and the snapshot, or when another machine wrote to a Chroma server, only the missing
    papers are read back, and the papers no longer stored are dropped. `known`: what the
    caller loaded of the snapshot before (a copy it gives up: it is brought up to date in
    place), so only segments written since are read. `reread`: a Chroma server's change
    entries said that another machine wrote (`server_changes`): the ids are compared even
    when the count is the same (an edited abstract replaces a paper), and these papers,
    updated in place there, are read back and kept where they differ."""
    ids = session.ids()
    manifest = snapshot.manifest()
    same_store = manifest is not None and manifest.store_id == session.store_id
    if same_store and manifest is not None and manifest.count == len(ids) and reread is None:
        return ids
    if same_store and manifest is not None:
        loaded = _readable(snapshot, manifest, known)
        if loaded is not None:
            readable = set(loaded.index)
            # Papers removed from the store (by another machine, or a removal cut short
            # between the store and the snapshot) become a removal segment, not a rebuild
            # of the whole snapshot from the store (a million papers: every vector read back).
            gone = sorted(readable - ids)
            if gone:
                snapshot.remove(session.store_id, len(readable) - len(gone), gone)
            missing = sorted(ids - readable)
            for papers, vectors in session.batches(missing):
                snapshot.append(session.store_id, len(ids), papers, vectors)
            edited = 0
            for papers, vectors in session.batches(sorted(set(reread or ()) & readable & ids)):
                keep = [
                    j
                    for j, paper in enumerate(papers)
                    if _as_stored(paper) != _as_stored(loaded.papers[loaded.index[paper.id]])
                ]
                if keep:
                    snapshot.append(session.store_id, len(ids), [papers[j] for j in keep], vectors[keep])
                    edited += len(keep)
            if not (missing or gone or edited) and manifest.count != len(ids):
                snapshot.append(session.store_id, len(ids), [], np.zeros((0, 0), dtype=np.float32))
            return ids
    snapshot.rebuild(session.store_id, session.batches())
    return ids


def synced(session: Session, snapshot: Snapshot) -> tuple[set[str], Loaded | None]:
    """The stored ids and the snapshot loaded (None when nothing is stored), the snapshot
    made to mirror the store first (the caller holds the write lock). When it already does
    (same store, same count: `sync_snapshot`'s test) the ids are the snapshot's, not read
    from Chroma a page at a time (at a million papers that read took minutes)."""
    manifest = snapshot.manifest()
    if manifest is not None and manifest.store_id == session.store_id and manifest.count == session.count():
        loaded = load_checked(session, snapshot)
        if loaded is not None and len(loaded.index) == manifest.count:
            return set(loaded.index), loaded if loaded.index else None
    existing = sync_snapshot(session, snapshot)
    return existing, load_checked(session, snapshot) if existing else None


def _as_stored(paper: Paper) -> dict[str, Any]:
    """What the store keeps of a paper's metadata, as read back (a long author list's
    total is not: the snapshot keeps every name)."""
    meta = paper_metadata(paper)
    meta.pop("authors_total", None)
    return meta


def _readable(snapshot: Snapshot, manifest: Manifest, known: Loaded | None = None) -> Loaded | None:
    """What `manifest` lists, or None when a segment is damaged (rebuild it all)."""
    try:
        return snapshot.load(manifest, known)
    except SnapshotDamaged as exc:
        log.warning("%s; rebuilding the snapshot from the store", exc)
        return None


def load_checked(session: Session, snapshot: Snapshot) -> Loaded | None:
    """What the snapshot holds (the caller holds the write lock and `session`). A damaged
    snapshot is rebuilt from the store, the store of record, and loaded again."""
    manifest = snapshot.manifest()
    if manifest is None:
        return None
    try:
        return snapshot.load(manifest)
    except SnapshotDamaged as exc:
        return snapshot.load(rebuild_damaged(session, snapshot, exc))


def rebuild_damaged(session: Session, snapshot: Snapshot, damage: SnapshotDamaged) -> Manifest:
    """Rebuild a damaged snapshot from the store (the caller holds the write lock)."""
    log.warning("%s; rebuilding the snapshot from the store", damage)
    return snapshot.rebuild(session.store_id, session.batches())


def save_lexical(settings: Settings, snapshot: Snapshot, known: Loaded | None = None) -> None:
    """Build and save the lexical index for what the snapshot now holds (`known`: as in
    `sync_snapshot`)."""
    manifest = snapshot.manifest()
    if manifest is None:
        return
    papers = snapshot.load(manifest, known).papers
    try:
        LexicalIndex.save_for(settings.lexical_dir, papers)
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
