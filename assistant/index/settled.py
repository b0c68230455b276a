"""Whether a snapshot may be served without opening Chroma.

Every writer holds the write lock (`assistant.corpus.ingest.writing`): it removes its store's
stamp before it writes and, when it finishes cleanly, leaves one that names the Chroma file
it left behind (inode and size). A reader that finds the stamp, and the file as the stamp
names it, serves the snapshot as the last writer published it and never imports chromadb
(1.8–3.2 s of a 100k cold start, 5.5–6.3 s at 300k). A writer killed or stopped mid-way, a
store written before stamps existed, a Chroma folder copied or restored, and a Chroma server
are checked against the store as before. The collections of one data folder share Chroma's
file: a writer carries the other collections' stamps that held before it wrote over to the
file as it leaves it (the lock kept their collections as they were).

Not seen: a program other than this one writing Chroma without taking the lock, when the
file keeps its size (deletions do). After such a change run any `assistant ingest`, or
delete the stamp, and the next start checks the store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from assistant.config import Settings

__all__ = ["holds", "settle", "unsettle"]


def _stamp(settings: Settings) -> Path:
    return settings.data_dir / f"{settings.snapshot_dir.name}.settled"


def _chroma_file(settings: Settings) -> list[int] | None:
    """Chroma's database file as (inode, size): reading the store changes its times, not these."""
    try:
        stat = (settings.chroma_dir / "chroma.sqlite3").stat()
    except OSError:
        return None
    return [stat.st_ino, stat.st_size]


def _left(stamp: Path) -> list[int] | None:
    try:
        found = json.loads(stamp.read_text()).get("chroma.sqlite3")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, list) else None


def unsettle(settings: Settings) -> list[Path]:
    """Before a writer writes: until it settles, readers check its store. Returns the stamps
    of the folder's other collections that hold now, for `settle` to carry over."""
    own = _stamp(settings)
    own.unlink(missing_ok=True)
    found = _chroma_file(settings)
    if settings.chroma_url or found is None:
        return []
    return [p for p in settings.data_dir.glob("*.settled") if p != own and _left(p) == found]


def settle(settings: Settings, others: Sequence[Path] = ()) -> None:
    """After a writer finished cleanly (its snapshot published, its Chroma session closed):
    its stamp, and the other collections' stamps that held before it wrote."""
    if settings.chroma_url:
        return
    found = _chroma_file(settings)
    if found is None:
        return
    for stamp in (_stamp(settings), *others):
        tmp = stamp.with_name(stamp.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"chroma.sqlite3": found}))
            os.replace(tmp, stamp)
        except OSError:  # a full disk: readers check the store, as without a stamp
            tmp.unlink(missing_ok=True)


def holds(settings: Settings) -> bool:
    """The last write finished cleanly and Chroma's file is as that writer left it."""
    if settings.chroma_url:
        return False
    left = _left(_stamp(settings))
    return left is not None and left == _chroma_file(settings)
