"""Which of a Chroma server's change entries a data folder has applied (pure logic; the
entries on a real server are tested in tests/test_store.py)."""

from __future__ import annotations

from pathlib import Path

from assistant.index.server_changes import SKEW_S, Applied, Change


def test_a_writers_own_entries_do_not_hide_another_machines_pending_before_them(tmp_path: Path) -> None:
    path = tmp_path / "server-changes.json"
    theirs = Change("0001-a", 1000.0, ("p1",))
    mine = Change("0002-b", 1010.0)
    applied = Applied.load(path)
    applied.own("store", [mine])
    again = Applied.load(path)  # what the app of that folder reads
    assert again.since("store") == 0.0  # the other machine's entry is still read
    assert again.pending("store", [theirs, mine]) == [theirs]
    again.caught_up("store", [theirs, mine])
    later = Applied.load(path)
    assert later.since("store") == 1010.0 and later.pending("store", [theirs, mine]) == []


def test_entries_read_again_within_the_clock_allowance_are_not_applied_twice(tmp_path: Path) -> None:
    applied = Applied(tmp_path / "state.json")
    old, new = Change("a", 5000.0), Change("b", 5000.0 + SKEW_S / 2)
    applied.caught_up("store", [old, new])
    # a read from `since` less the allowance returns both again: neither is pending
    assert applied.pending("store", [old, new]) == []
    # an entry from a machine whose clock is behind, inside the allowance, still is
    late = Change("c", 5000.0 + SKEW_S / 4)
    assert applied.pending("store", [old, late, new]) == [late]


def test_another_store_or_an_unreadable_file_starts_from_the_first_entry(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    applied = Applied(path)
    applied.caught_up("store", [Change("a", 7000.0)])
    assert Applied.load(path).since("other") == 0.0
    assert Applied.load(path).pending("other", [Change("a", 7000.0)]) == [Change("a", 7000.0)]
    path.write_text("{not json")
    assert Applied.load(path).since("store") == 0.0
