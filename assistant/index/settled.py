"""Whether a snapshot may be served without opening Chroma.

Every writer holds the write lock (`assistant.corpus.ingest.writing`): it removes this
store's stamp before it writes and, when it finishes cleanly, leaves one that names the
Chroma file it left behind (inode and size). A reader that finds the stamp, and the file as
the stamp names it, serves the snapshot as the last writer published it and never imports
chromadb: at 100,000 papers that was 1.4–3 s of a cold start. A writer killed mid-way, a
store written before stamps existed, a Chroma folder restored or written by anything else,
and a Chroma server are all checked against the store as before.
"""

from __future__ import annotations

import json
import os
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


def unsettle(settings: Settings) -> None:
    """Before a writer writes: until it settles, readers check the store."""
    _stamp(settings).unlink(missing_ok=True)


def settle(settings: Settings) -> None:
    """After a writer finished cleanly (its snapshot published, its Chroma session closed)."""
    if settings.chroma_url:
        return
    found = _chroma_file(settings)
    if found is None:
        return
    stamp = _stamp(settings)
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
    try:
        left = json.loads(_stamp(settings).read_text()).get("chroma.sqlite3")
    except (OSError, ValueError, AttributeError):
        return False
    return left is not None and left == _chroma_file(settings)
