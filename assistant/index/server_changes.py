"""Changes on a Chroma server that its count does not show.

Several machines may write one Chroma server, and an app that follows the server
compares its count now and then. An edit keeps the count: an abstract edited under the
same record id replaces one paper by another (one removed, one added), and a title,
year or source fixed in place changes no id at all. So every writing session that
changed the server adds an entry to a small companion collection (`<collection>-changes`):
when it wrote and the ids it updated in place. A follower reads the entries it has not
applied yet, compares the server's ids with its own snapshot's and reads back the
papers updated in place (`assistant.corpus.ingest.sync_snapshot`); which entries it
applied is kept in its data folder, so an edit made while it was stopped is found at
its next start.

Entries are pruned by the writers after `KEEP_S`; entries up to `SKEW_S` older than the
newest applied one are read again, for the clocks of different machines.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KEEP_S = 30 * 86_400
SKEW_S = 600.0
IDS_PER_ENTRY = 5000  # one document of at most ~100 KB


@dataclass(frozen=True)
class Change:
    """One writing session's entry: its id, when it wrote, the ids it updated in place."""

    id: str
    t: float
    updated: tuple[str, ...] = ()


def log_name(collection_name: str) -> str:
    return f"{collection_name}-changes"


def _log(client: Any, collection_name: str) -> Any:
    return client.get_or_create_collection(log_name(collection_name), embedding_function=None)


def record(client: Any, collection_name: str, updated: Collection[str]) -> list[Change]:
    """Say that a session wrote to `collection_name` (and which ids it updated in place)."""
    entries = _log(client, collection_name)
    now = time.time()
    ids = sorted(updated)
    chunks = [ids[i : i + IDS_PER_ENTRY] for i in range(0, len(ids), IDS_PER_ENTRY)] or [[]]
    written = [
        Change(f"{time.time_ns():020d}-{uuid.uuid4().hex[:12]}", now, tuple(chunk)) for chunk in chunks
    ]
    entries.add(
        ids=[c.id for c in written],
        embeddings=[[1.0]] * len(written),
        documents=[json.dumps(list(c.updated)) for c in written],
        metadatas=[{"t": now}] * len(written),
    )
    entries.delete(where={"t": {"$lt": now - KEEP_S}})
    return written


def read_since(client: Any, collection_name: str, since: float) -> list[Change]:
    """The entries written after `since` (less the clock allowance), oldest first."""
    got = _log(client, collection_name).get(
        where={"t": {"$gte": since - SKEW_S}}, include=["documents", "metadatas"]
    )
    changes = []
    for entry_id, document, meta in zip(got["ids"], got["documents"] or [], got["metadatas"] or []):
        try:
            updated = tuple(str(i) for i in json.loads(document or "[]"))
        except (TypeError, ValueError):
            updated = ()
        changes.append(Change(str(entry_id), float((meta or {}).get("t", 0.0)), updated))
    return sorted(changes, key=lambda c: (c.t, c.id))


@dataclass
class Applied:
    """What a data folder's snapshot has applied of a store's entries (kept in `path`):
    every entry written before `through` (less the clock allowance), and `entries`, those
    applied since, by id (its own writers' entries among them)."""

    path: Path
    store_id: str = ""
    through: float = 0.0
    entries: dict[str, float] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Applied:
        try:
            data = json.loads(path.read_text())
            entries = {str(k): float(v) for k, v in data["entries"].items()}
            return cls(path, str(data["store_id"]), float(data["through"]), entries)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return cls(path)  # none yet, or unreadable: every kept entry is read again

    def since(self, store_id: str) -> float:
        """Where to read the entries from (0: from the first one kept)."""
        return self.through if store_id == self.store_id else 0.0

    def pending(self, store_id: str, changes: Sequence[Change]) -> list[Change]:
        known = self.entries if store_id == self.store_id else {}
        return [c for c in changes if c.id not in known]

    def caught_up(self, store_id: str, read: Sequence[Change]) -> None:
        """Every entry of `read` (all read since `since`) is applied to the snapshot now."""
        self._keep(store_id, read, through=max((c.t for c in read), default=self.since(store_id)))

    def own(self, store_id: str, written: Sequence[Change]) -> None:
        """Entries this data folder's writer wrote and published to its snapshot itself: not
        to be applied again (`through` stays: entries of others may be pending before them)."""
        self._keep(store_id, written, through=self.since(store_id))

    def _keep(self, store_id: str, changes: Sequence[Change], through: float) -> None:
        if store_id != self.store_id:
            self.store_id, self.entries = store_id, {}
        self.through = through
        self.entries.update((c.id, c.t) for c in changes)
        self.entries = {k: t for k, t in self.entries.items() if t >= self.through - 2 * SKEW_S}
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(
                json.dumps({"store_id": self.store_id, "through": self.through, "entries": self.entries})
            )
            os.replace(tmp, self.path)
        except OSError as exc:  # a full disk: the entries are applied again next time
            log.warning("cannot save %s (%s)", self.path, exc)
            tmp.unlink(missing_ok=True)
