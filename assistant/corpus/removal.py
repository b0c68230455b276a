"""Removing papers: those of a file (`assistant remove refs.bib`), or named ones
(`assistant remove --id smith2024`), under the write lock, as ingestion writes."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from assistant.config import Settings
from assistant.corpus.changes import Changes, apply, matching
from assistant.corpus.ingest import save_lexical, synced, writing
from assistant.errors import CorpusError, StoreError
from assistant.index.snapshot import Snapshot
from assistant.index.store import VectorStore


@dataclass
class RemoveReport:
    """What a removal did."""

    removed: list[str] = field(default_factory=list)  # labels of the papers deleted
    kept: int = 0  # papers of these files kept because another file holds them too
    unknown: list[str] = field(default_factory=list)  # files or ids that matched no paper
    seconds: float = 0.0

    def summary(self) -> str:
        line = f"{len(self.removed)} removed"
        if self.kept:
            line += f", {self.kept} kept (also in other files; those sources remain)"
        line += f" in {self.seconds:.1f}s"
        if self.unknown:
            line += f"; no stored paper comes from or is named {', '.join(map(repr, self.unknown))}"
        return line


def remove(
    store: VectorStore,
    settings: Settings,
    paths: Iterable[Path | str] = (),
    ids: Iterable[str] = (),
) -> RemoveReport:
    """Remove the papers read from `paths` (a paper also read from another file keeps that
    source and stays) and the papers named by `ids` (paper id, record id/BibTeX key, or DOI:
    removed whatever their sources). The files need not exist any more."""
    files = {Path(p).expanduser().name for p in paths}
    wanted = [str(i) for i in ids]
    if not files and not wanted:
        raise CorpusError("name the files whose papers to remove, or --id with paper ids, keys or DOIs")
    report = RemoveReport()
    started = time.perf_counter()
    snapshot = Snapshot(settings.snapshot_dir)
    with writing(settings, store), store.session() as session:
        try:
            # The stored ids from the snapshot when it mirrors the store (`synced`), not
            # from Chroma a page at a time (minutes at a million papers).
            _, loaded = synced(session, snapshot)
            papers = loaded.papers if loaded is not None else []
            changes = Changes()
            named, unknown = matching(papers, wanted)
            report.unknown = sorted(unknown)
            changes.deletions.update(named)
            used: set[str] = set()
            for paper in papers if files else ():
                hit = files & set(paper.files)
                if hit and paper.id not in named:
                    used.update(hit)
                    changes.drop_files(paper, hit)
                    report.kept += paper.id not in changes.deletions
            report.unknown += sorted(files - used)
            report.removed = [p.label for p in papers if p.id in changes.deletions]
            if changes and loaded is not None:
                apply(session, snapshot, loaded, changes)
                del loaded, papers  # the BM25 step loads the snapshot again: not twice at once
                save_lexical(settings, snapshot)
        except OSError as exc:
            raise StoreError(
                f"removal stopped: {exc.strerror or exc} ({settings.data_dir}); run the same "
                "command again to finish it"
            ) from exc
    report.seconds = time.perf_counter() - started
    return report
