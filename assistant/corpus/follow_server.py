"""A snapshot brought up to date with a Chroma server that other machines write.

A count tells a follower when papers were added or removed; the server's change entries
(`assistant.index.server_changes`) tell it about the edits a count cannot show.
"""

from __future__ import annotations

from assistant.config import Settings
from assistant.corpus.ingest import sync_snapshot
from assistant.index.server_changes import Applied, Change
from assistant.index.snapshot import Loaded, Snapshot
from assistant.index.store import Session


def _unapplied(session: Session, settings: Settings) -> tuple[Applied, list[Change], list[Change]]:
    """What this folder applied, the entries read since then, and those not applied yet."""
    applied = Applied.load(settings.server_changes_path)
    read = session.changes_since(applied.since(session.store_id))
    return applied, read, applied.pending(session.store_id, read)


def pending(session: Session, settings: Settings) -> bool:
    """Did the server change in a way this folder's snapshot has not applied yet? (An
    embedded store has one writer at a time and no entries: never.)"""
    return bool(settings.chroma_url) and bool(_unapplied(session, settings)[2])


def sync_with_server(
    session: Session, snapshot: Snapshot, settings: Settings, known: Loaded | None = None
) -> set[str]:
    """`sync_snapshot`, with the edits the server's change entries name (the caller holds
    the write lock); the entries read are then recorded as applied. An embedded store:
    `sync_snapshot` alone."""
    if not settings.chroma_url:
        return sync_snapshot(session, snapshot, known)
    applied, read, fresh = _unapplied(session, settings)
    reread = {i for change in fresh for i in change.updated} if fresh else None
    ids = sync_snapshot(session, snapshot, known, reread)
    if read:
        applied.caught_up(session.store_id, read)
    return ids
