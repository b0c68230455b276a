"""Stores this user has used, so that one which held their papers is never silently
re-seeded after it was deleted or moved.

Kept in $XDG_STATE_HOME/research-assistant/stores.json (~/.local/state/...), outside
the data folder, so it survives the folder's deletion.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from assistant.errors import StoreError


def state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "research-assistant" / "stores.json"


def _key(data_dir: Path, chroma_url: str | None) -> str:
    return chroma_url or str(Path(data_dir).resolve())


def _read() -> dict[str, Any]:
    try:
        data = json.loads(state_file().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def remember(data_dir: Path, chroma_url: str | None, papers: int, own: bool = False) -> None:
    """Record how many papers the store holds; `own`: the user ingested papers into it."""
    data = _read()
    key = _key(data_dir, chroma_url)
    record = data.get(key) or {}
    if record.get("papers") == papers and not (own and not record.get("own")):
        return
    record.update(papers=papers, seen=time.strftime("%Y-%m-%d %H:%M"))
    record["own"] = bool(record.get("own")) or own
    data[key] = record
    path = state_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".stores.json.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:  # a read-only home: the guard is best effort
        pass


def _own_record(data_dir: Path, chroma_url: str | None) -> dict[str, Any] | None:
    """The record of this store if it held papers the user ingested (it may be empty now)."""
    record = _read().get(_key(data_dir, chroma_url))
    return record if record and record.get("own") and record.get("papers", 0) > 0 else None


def held_own(data_dir: Path, chroma_url: str | None) -> bool:
    """Did this store hold papers the user ingested (it may be empty now)?"""
    return _own_record(data_dir, chroma_url) is not None


def check_reseed(data_dir: Path, chroma_url: str | None) -> None:
    """Refuse to fill an empty store with the seeds when it used to hold the user's papers."""
    record = _own_record(data_dir, chroma_url)
    if record:
        where = chroma_url or data_dir
        raise StoreError(
            f"the store in {where} is empty, but it held {record['papers']} papers including yours "
            f"(last seen {record.get('seen', '?')}): it was deleted or moved. Restore it, or start "
            "again with `assistant ingest PATH...`: the seeds are not put back on their own."
        )
