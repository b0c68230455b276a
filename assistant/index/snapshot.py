"""The catalogue snapshot: every stored paper and its vector, kept beside the store.

Chroma is the store of record; the snapshot is what a running assistant searches.
Writers (ingestion, under the write lock) append one segment per batch once Chroma
has acknowledged it, then publish a new manifest with an atomic rename. Readers
load only the segments they have not seen. A removal is a segment too: the ids of
the papers removed (a tombstone), dropped by readers and by the next compaction.
So a serving app never reads Chroma while another process writes to it (Chroma's
embedded store is not safe for that),
sees new papers within seconds, and a restart loads the snapshot instead of reading
every record back from Chroma.

The manifest names the store it mirrors (Chroma's collection id) and how many
papers it holds; when either differs from the store, the snapshot is rebuilt from
Chroma under the write lock.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import msgspec
import numpy as np

from assistant.errors import StoreError
from assistant.index.blocks import RowBlocks
from assistant.types import Paper

VERSION = 1
REMOVAL = "-removed"  # a segment whose name ends so lists the ids of removed papers
COMPACT_AFTER = 48  # segments; then they are merged into one


class SnapshotDamaged(StoreError):
    """A segment cannot be read as written (a disk fault, a file cut short or edited by
    hand). Chroma is the store of record: rebuild the snapshot from it
    (`assistant.corpus.ingest.rebuild_damaged`)."""


@dataclass(frozen=True)
class Manifest:
    store_id: str
    generation: int
    count: int
    segments: tuple[str, ...] = ()
    version: int = VERSION

    @property
    def fingerprint(self) -> str:
        return f"{self.store_id}:{self.generation}:{self.count}"


@dataclass
class Loaded:
    """Papers and vectors in catalogue order (first seen first; later segments update).

    `vectors` is the segments' vectors stacked by rows (`RowBlocks`), memory-mapped and not
    joined: joining them read every vector at start (at a million papers 10 s of a 35 s
    cold start, and a second copy in memory). Every change makes new blocks and never
    writes into the old ones, so a copy (the catalogue being served while a new one is
    built beside it) shares them safely."""

    papers: list[Paper] = field(default_factory=list)
    vectors: RowBlocks = field(default_factory=lambda: RowBlocks([]))
    index: dict[str, int] = field(default_factory=dict)
    segments: tuple[str, ...] = ()

    def apply(self, papers: Sequence[Paper], vectors: np.ndarray | RowBlocks) -> None:
        """Add or update these papers. `vectors` may become part of this catalogue without
        a copy: the caller hands it over (a segment just read) and does not change it."""
        vectors = RowBlocks.of(vectors)
        if not self.papers:  # a start: every paper new unless one repeats (then row by row)
            index = {p.id: j for j, p in enumerate(papers)}
            if len(index) == len(papers):
                self.papers, self.index, self.vectors = list(papers), index, vectors
                return
        fresh: list[int] = []  # rows of `vectors` that are new papers
        updated: list[tuple[int, int]] = []  # (catalogue row, row of `vectors`)
        for j, paper in enumerate(papers):
            i = self.index.get(paper.id)
            if i is None:
                i = self.index[paper.id] = len(self.papers)
                self.papers.append(paper)
                fresh.append(j)
            else:
                self.papers[i] = paper
                updated.append((i, j))
        if not fresh and not updated:
            return
        matrix = self.vectors
        if fresh:
            more = vectors if len(fresh) == len(vectors) else vectors[fresh]
            matrix = RowBlocks((*matrix.blocks, *RowBlocks.of(more).blocks), vectors.shape[1])
        if updated:
            matrix = matrix.with_rows([i for i, _ in updated], vectors[[j for _, j in updated]])
        self.vectors = matrix

    def drop(self, ids: Iterable[str]) -> None:
        """Forget these papers (a removal segment)."""
        gone = {i for i in ids if i in self.index}
        if not gone:
            return
        rows = sorted(self.index[i] for i in gone)
        first = rows[0]  # rows before it keep their place: only the rest is renumbered
        tail = [p for p in self.papers[first:] if p.id not in gone]
        self.papers = self.papers[:first] + tail
        for pid in gone:
            del self.index[pid]
        for n, paper in enumerate(tail, first):
            self.index[paper.id] = n
        self.vectors = self.vectors.without(np.asarray(rows, dtype=np.int64))

    def copy(self) -> Loaded:
        return Loaded(list(self.papers), self.vectors, dict(self.index), self.segments)

    def matrix(self, dim: int = 0) -> RowBlocks:
        if not len(self.vectors):
            return RowBlocks([], dim or self.vectors.shape[1])
        return self.vectors


def paper_to_json(paper: Paper) -> str:
    return json.dumps(msgspec.structs.asdict(paper), ensure_ascii=False)


# msgspec decodes straight into `Paper` (types checked, lists made tuples), a whole segment
# per call: 7.7 µs a paper against 21.6 µs for orjson and `Paper(**fields)`, and every cold
# start reads every paper.
_PAPER = msgspec.json.Decoder(Paper)


def paper_from_json(line: str | bytes) -> Paper:
    """A paper from its line: types checked by msgspec, or, for a line msgspec refuses (a
    snapshot rebuilt from metadata another program wrote: a year as text, a null list), read
    as before msgspec, unchecked. Raises ValueError or TypeError for a line that is no paper."""
    try:
        return _PAPER.decode(line)
    except msgspec.ValidationError:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise
        for key in ("authors", "sources", "keys"):
            data[key] = tuple(data.get(key) or ())
        return Paper(**data)


class Snapshot:
    """The snapshot folder of one store."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()

    @property
    def manifest_path(self) -> Path:
        return self.folder / "manifest.json"

    # --- reading ---------------------------------------------------------------
    def manifest(self) -> Manifest | None:
        try:
            data = json.loads(self.manifest_path.read_text())
            manifest = Manifest(
                store_id=str(data["store_id"]),
                generation=int(data["generation"]),
                count=int(data["count"]),
                segments=tuple(data["segments"]),
                version=int(data.get("version", 0)),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return manifest if manifest.version == VERSION else None

    def stamp(self) -> tuple[int, int] | None:
        """A cheap change detector: the manifest's inode and mtime (a stat, no read)."""
        try:
            st = self.manifest_path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns

    def load(self, manifest: Manifest, known: Loaded | None = None) -> Loaded:
        """Everything `manifest` lists; with `known`, only the segments it lacks (when the
        manifest continues it), else from scratch. Raises OSError if a segment vanished
        (a compaction ran meanwhile): load again; SnapshotDamaged if one cannot be read as
        written: rebuild from the store."""
        if known is not None and manifest.segments[: len(known.segments)] == known.segments:
            loaded = known
            todo = manifest.segments[len(known.segments) :]
        else:
            loaded = Loaded()
            todo = manifest.segments
        # Consecutive segments of papers are applied together: one update of the index and
        # the blocks for all of them, not one per segment.
        papers: list[Paper] = []
        blocks: list[np.ndarray] = []
        for name in todo:
            if name.endswith(REMOVAL):
                if papers:
                    loaded.apply(papers, RowBlocks(blocks))
                    papers, blocks = [], []
                loaded.drop(self._removed(name))
            else:
                segment, vectors = self._segment(name)
                if segment:  # an empty store's rebuild writes an empty segment
                    shapes = [b.shape for b in blocks if len(b)] + [loaded.vectors.shape]
                    width = next((shape[1] for shape in shapes if shape[0]), 0)
                    if width and vectors.shape[1] != width:
                        raise SnapshotDamaged(
                            f"snapshot segment {name} in {self.folder} holds {vectors.shape[1]}-dimensional "
                            f"vectors, the segments before it {width}-dimensional"
                        )
                    papers += segment
                    blocks.append(vectors)
        if papers:
            loaded.apply(papers, RowBlocks(blocks))
        loaded.segments = (*loaded.segments, *todo)
        return loaded

    def _segment(self, name: str) -> tuple[list[Paper], np.ndarray]:
        """One segment's papers and vectors, checked: as many rows as papers, each a paper.
        A missing file raises OSError (a compaction removed it: load again); anything
        else unreadable raises SnapshotDamaged, so a paper is never paired with another
        paper's vector."""
        path = self.folder / f"{name}.jsonl"
        with open(path, "rb") as f:  # a missing file raises here, before anything is decoded
            size = os.fstat(f.fileno()).st_size
            # Decoded from the page cache, not from a copy of the file (a million papers:
            # 1.7 GB not copied, 15% of the decoding time).
            data: bytes | mmap.mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        try:
            # Memory-mapped and never copied (`RowBlocks`): searches read the rows from the
            # file, in the page cache; a process holds no vectors of its own.
            vectors = np.load(self.folder / f"{name}.npy", mmap_mode="r")
        except FileNotFoundError:
            raise
        except (OSError, ValueError, EOFError) as exc:
            raise SnapshotDamaged(
                f"snapshot segment {name}.npy in {self.folder} cannot be read ({exc})"
            ) from exc
        try:
            papers: list[Paper] = _PAPER.decode_lines(data)
        except msgspec.MsgspecError:
            papers = []
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
        if vectors.ndim == 2 and len(papers) == len(vectors):
            return papers, vectors  # every line a paper, one vector each (blank lines are skipped)
        # Something is wrong: count the lines (not done above: 0.6 s at a million papers).
        data = path.read_bytes()
        rows = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
        if vectors.ndim != 2 or len(vectors) != rows:
            raise SnapshotDamaged(
                f"snapshot segment {name} in {self.folder} lists {rows} papers but holds "
                f"{len(vectors) if vectors.ndim == 2 else 'no matrix of'} vectors"
            )
        if len(papers) != rows:  # a line that is not a paper (decode_lines skips blank ones): which?
            papers = []
            for n, line in enumerate(data.splitlines(), 1):
                try:
                    papers.append(paper_from_json(line))
                except (ValueError, TypeError) as exc:
                    raise SnapshotDamaged(
                        f"snapshot segment {name}.jsonl in {self.folder}, line {n}, is not a paper ({exc})"
                    ) from exc
            if len(papers) != rows:
                raise SnapshotDamaged(f"snapshot segment {name}.jsonl in {self.folder} has broken lines")
        return papers, vectors

    def _removed(self, name: str) -> list[str]:
        """The ids a removal segment lists."""
        try:
            ids = json.loads((self.folder / f"{name}.json").read_text())
        except ValueError as exc:
            raise SnapshotDamaged(
                f"snapshot segment {name}.json in {self.folder} cannot be read ({exc})"
            ) from exc
        if not isinstance(ids, list):
            raise SnapshotDamaged(f"snapshot segment {name}.json in {self.folder} is not a list of paper ids")
        return [str(i) for i in ids]

    # --- writing (callers hold the write lock) -----------------------------------
    def append(self, store_id: str, count: int, papers: Sequence[Paper], vectors: np.ndarray) -> Manifest:
        """Add a segment (new papers, or new versions of stored ones) and publish it."""
        with self._lock:
            current, generation = self._next(store_id)
            name = f"seg-{generation:08d}"
            if papers:
                self._write_segment(name, papers, vectors)
                segments = (*current.segments, name)
            else:
                segments = current.segments
            return self._publish_segments(Manifest(store_id, generation, count, segments))

    def remove(self, store_id: str, count: int, ids: Sequence[str]) -> Manifest:
        """Publish a removal segment: readers drop these papers (the store already did)."""
        with self._lock:
            current, generation = self._next(store_id)
            name = self._write_removal(f"seg-{generation:08d}{REMOVAL}", ids)
            return self._publish_segments(Manifest(store_id, generation, count, (*current.segments, name)))

    def _write_removal(self, name: str, ids: Sequence[str]) -> str:
        tmp = self.folder / f".{name}.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(sorted(ids)))
        os.replace(tmp, self.folder / f"{name}.json")
        return name

    def _next(self, store_id: str) -> tuple[Manifest, int]:
        """The manifest to continue (an empty one for another store) and the next generation."""
        self.folder.mkdir(parents=True, exist_ok=True)
        current = self.manifest()
        if current is None or current.store_id != store_id:
            current = Manifest(store_id, 0, 0)
        return current, current.generation + 1

    def _publish_segments(self, manifest: Manifest) -> Manifest:
        """Publish; merge the segments into one when there are many."""
        self._publish(manifest)
        return self.compact(manifest) if len(manifest.segments) > COMPACT_AFTER else manifest

    def rebuild(self, store_id: str, batches: Iterable[tuple[Sequence[Paper], np.ndarray]]) -> Manifest:
        """Replace the snapshot with these papers (read back from the store)."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            current = self.manifest()
            generation = (current.generation if current else 0) + 1
            names, count = [], 0
            for i, (papers, vectors) in enumerate(batches):
                name = f"seg-{generation:08d}-{i:04d}"
                self._write_segment(name, papers, vectors)
                names.append(name)
                count += len(papers)
            manifest = Manifest(store_id, generation, count, tuple(names))
            self._publish(manifest)
            self._remove_unlisted(manifest)
            return manifest

    def compact(self, manifest: Manifest) -> Manifest:
        """Merge the newest segments into one, leaving the older, larger ones as they are:
        the trailing run of segments is grown leftwards while the segment before it is no
        larger than the run (a binary counter's carries), so each paper is rewritten about
        log2(n / batch) times in all and a compaction holds only the run in memory, not the
        whole catalogue (at a million papers, compacting everything every 48 batches held
        gigabytes and rewrote the snapshot twenty times). Removals in the run that drop
        papers of older segments are kept, after the merged segment, as one removal
        segment (a removal used to merge everything: at a million papers 11 GB and
        minutes for removing three)."""
        start = self._run_start(manifest.segments)
        names = manifest.segments[start:]
        loaded = self.load(Manifest(manifest.store_id, manifest.generation, manifest.count, names))
        generation = manifest.generation + 1
        name = f"seg-{generation:08d}-c"
        self._write_segment(name, loaded.papers, loaded.matrix())
        segments: tuple[str, ...] = (*manifest.segments[:start], name)
        # Removed in the run and not added again after: papers of the older segments.
        removed = {i for n in names if n.endswith(REMOVAL) for i in self._removed(n)}
        gone = sorted(removed - set(loaded.index)) if start > 0 else []
        if gone:
            segments = (*segments, self._write_removal(f"seg-{generation:08d}-c{REMOVAL}", gone))
        compacted = Manifest(manifest.store_id, generation, manifest.count, segments)
        self._publish(compacted)
        self._remove_unlisted(compacted)
        return compacted

    def _run_start(self, segments: tuple[str, ...]) -> int:
        """Where the run of segments to merge starts (0: all of them)."""
        sizes = [self._bytes(name) for name in segments]
        start, run = len(segments) - 2, sizes[-1] + sizes[-2]
        while start > 0 and sizes[start - 1] <= run:
            start -= 1
            run += sizes[start]
        return start

    def _bytes(self, name: str) -> int:
        try:
            return (self.folder / f"{name}.json{'' if name.endswith(REMOVAL) else 'l'}").stat().st_size
        except OSError:
            return 0

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _write_segment(self, name: str, papers: Sequence[Paper], vectors: np.ndarray | RowBlocks) -> None:
        tmp = self.folder / f".{name}.tmp-{os.getpid()}"
        lines = "\n".join(paper_to_json(p) for p in papers)
        (tmp.with_suffix(".jsonl")).write_text(lines + ("\n" if lines else ""))
        matrix = RowBlocks.of(vectors)
        with open(tmp.with_suffix(".npy"), "wb") as f:
            # A block at a time, never joined in memory (a compaction's run); written, not
            # memory-mapped, so that a full disk raises OSError instead of killing the process.
            header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False}
            np.lib.format.write_array_header_1_0(f, {**header, "shape": matrix.shape})
            for block in matrix.blocks:
                f.write(np.ascontiguousarray(block, dtype=np.float32).data)
        os.replace(tmp.with_suffix(".npy"), self.folder / f"{name}.npy")
        os.replace(tmp.with_suffix(".jsonl"), self.folder / f"{name}.jsonl")

    def _publish(self, manifest: Manifest) -> None:
        tmp = self.folder / f".manifest.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(asdict(manifest)))
        os.replace(tmp, self.manifest_path)

    def _remove_unlisted(self, manifest: Manifest) -> None:
        keep = set(manifest.segments)
        for path in self.folder.glob("seg-*"):
            if path.name.split(".")[0] not in keep:
                path.unlink(missing_ok=True)
