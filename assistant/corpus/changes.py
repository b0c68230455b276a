"""Changing stored papers: a file's sources taken away, papers deleted, metadata rewritten.

Ingestion (an edited record replaces its old version; `--sync` drops what left a file),
removal (`assistant remove`) and the strong index (which mirrors the fast one) all end
in `apply`: Chroma first, then the snapshot, as ingestion writes, so a reader that sees
the snapshot can rely on the store, and an interruption is repaired by the next writer's
`sync_snapshot`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from assistant.corpus.records import key_parts
from assistant.index.snapshot import Loaded, Snapshot
from assistant.index.store import PAGE, Session, bounded
from assistant.text import normalize_doi
from assistant.types import Paper, source_file


@dataclass
class Changes:
    """What to write: papers whose metadata changed, and ids to delete."""

    updates: dict[str, Paper] = field(default_factory=dict)
    deletions: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.updates or self.deletions)

    def drop_files(self, paper: Paper, files: set[str]) -> None:
        """`paper` is no longer in `files`: it loses their sources and keys, and is
        deleted when nothing else holds it."""
        kept = without_files(self.updates.get(paper.id, paper), files)
        if kept is None:
            self.deletions.add(paper.id)
            self.updates.pop(paper.id, None)
        elif kept != paper:
            self.updates[paper.id] = kept


def key_file(key: str) -> str:
    """'refs.bib#id:smith2024' -> 'refs.bib'."""
    return key_parts(key)[0]


def without_files(paper: Paper, files: set[str]) -> Paper | None:
    """The paper without the sources and keys of `files`; None if no source is left."""
    sources = tuple(s for s in paper.sources if source_file(s) not in files)
    if not sources:
        return None
    keys = tuple(k for k in paper.keys if key_file(k) not in files)
    return paper.replace(sources=sources, keys=keys)


def with_file_sources(paper: Paper, file: str, sources: Sequence[str], keys: Sequence[str]) -> Paper:
    """The paper with the sources and keys of `file` replaced by these (line numbers move
    when a file is edited)."""
    others = tuple(s for s in paper.sources if source_file(s) != file)
    other_keys = tuple(k for k in paper.keys if key_file(k) != file)
    return paper.replace(
        sources=others + tuple(s for s in sources if s not in others),
        keys=other_keys + tuple(k for k in keys if k not in other_keys),
    )


def apply(session: Session, snapshot: Snapshot, loaded: Loaded, changes: Changes) -> int:
    """Write `changes` to the store, then to the snapshot; returns the store's new count.
    `loaded` is the snapshot as read (it gives the vectors of updated papers)."""
    updates = [bounded(p) for i, p in changes.updates.items() if i not in changes.deletions]
    session.update(updates)
    deletions = sorted(changes.deletions)
    for start in range(0, len(deletions), PAGE):
        session.delete(deletions[start : start + PAGE])
    count = session.count()
    if updates:
        vectors = loaded.vectors[[loaded.index[p.id] for p in updates]]
        snapshot.append(session.store_id, count + len(deletions), updates, vectors)
    if deletions:
        snapshot.remove(session.store_id, count, deletions)
    return count


def matching(papers: Iterable[Paper], wanted: Iterable[str]) -> tuple[set[str], set[str]]:
    """Papers named by an id the user gave: the paper id, its record id (BibTeX key, JSONL
    or CSL id) or its DOI. Returns (paper ids, the names that matched nothing)."""
    names = {w.strip() for w in wanted if w.strip()}
    found: set[str] = set()
    used: set[str] = set()
    for paper in papers:
        names_of = {paper.id, paper.external_id or "", paper.doi or ""}
        for key in paper.keys:  # ids and DOIs name a paper; a title key (records with neither) does not
            _, kind, name = key_parts(key)
            if kind in ("id", "doi"):
                names_of.add(name)
        for name in names:
            if name in names_of or (normalize_doi(name) or "\0") == paper.doi:
                found.add(paper.id)
                used.add(name)
    return found, names - used
