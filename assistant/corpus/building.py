"""Which process is building an index in the background: a marker file beside the index's
snapshot, renewed before every batch and removed when the build ends.

Writers ask it too: the app's background writers (a build's batch, the strong index
following an edit, a sync) hold the write lock a second or two, and a person's
`assistant ingest` that lands in that window should wait for them, not fail with
"another ingestion is writing" (`holder_note`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from assistant.config import Settings

FRESH_S = 60.0  # a build's marker renewed this recently is taken to be a running build
SUFFIX = ".building"


def marker(settings: Settings) -> Path:
    return settings.snapshot_dir.with_name(settings.snapshot_dir.name + SUFFIX)


def built_elsewhere(settings: Settings) -> int | None:
    """The process id of another process building the index of `settings` now (a build
    renews its marker before every batch and removes it when it ends), else None."""
    return _running(marker(settings))


def holder_note(settings: Settings) -> Path:
    """Written by a background writer of the app (a build's batch, the strong index following
    an edit, a sync) while it holds the write lock: its process id."""
    return settings.lock_path.with_name(settings.lock_path.name + ".background")


def held_in_background(settings: Settings) -> int | None:
    """The process id of the app's background writer holding the write lock now, else None."""
    return _running(holder_note(settings))


def building_in(data_dir: Path) -> int | None:
    """The process id of another process building any index of this data folder now."""
    for path in sorted(data_dir.glob(f"*{SUFFIX}")):
        pid = _running(path)
        if pid is not None:
            return pid
    return None


def _running(path: Path) -> int | None:
    try:
        pid = int(path.read_text())
        fresh = time.time() - path.stat().st_mtime < FRESH_S
    except (OSError, ValueError):
        return None
    if pid == os.getpid() or not fresh:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return pid
