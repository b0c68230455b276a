"""What the app shows of the library itself: the corpus line and the filters' choices.

Both follow the library while the app serves: a paper ingested from another process (a
new venue, year, topic or author) appears in the header and the dropdowns within the
refresh interval, without a reload. Computed once per new catalogue, not per session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from assistant.index.catalogue import Catalogue

ANY = "(any)"


@dataclass(frozen=True)
class LibraryView:
    """The header line and the filters' choices for one catalogue."""

    line: str
    venues: tuple[str, ...]
    years: tuple[str, ...]
    topics: tuple[str, ...]
    authors: tuple[str, ...]

    @classmethod
    def of(cls, catalogue: Catalogue) -> LibraryView:
        stats = catalogue.stats()
        # Only values that filter: venue names, and "venue year" pairs (no "(no venue)").
        pairs = [v for v in stats.venues if " " in v and v[0] != "("]
        return cls(
            line=stats.line(),
            venues=(ANY, *sorted(catalogue.venues.values()), *pairs),
            years=(ANY, *[str(y) for y in catalogue.years]),
            topics=(ANY, *sorted(catalogue.topics.values())),
            authors=(ANY, *sorted(catalogue.authors.values())),
        )


class Following:
    """The view of the catalogue `current()` returns, with a generation number that grows
    each time the view changes (a session compares it with the one it shows)."""

    def __init__(self, current: Callable[[], Catalogue]) -> None:
        self._current = current
        self._lock = threading.Lock()
        self._catalogue = current()
        self.view = LibraryView.of(self._catalogue)
        self.generation = 0

    def now(self) -> tuple[int, LibraryView]:
        with self._lock:  # one at a time: an older catalogue never replaces a newer view
            catalogue = self._current()
            if catalogue is not self._catalogue:
                view = LibraryView.of(catalogue)
                self._catalogue = catalogue
                if view != self.view:
                    self.view, self.generation = view, self.generation + 1
            return self.generation, self.view
