"""The papers in the store, held in memory: filter masks, valid values, statistics."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from assistant.errors import FilterError
from assistant.index.blocks import RowBlocks
from assistant.text import fold, split_venue_year
from assistant.text import fold as fold_text
from assistant.types import Filters, Paper, topic_of


@dataclass(frozen=True)
class Stats:
    papers: int
    venues: dict[str, int]
    years: dict[int, int]
    topics: dict[str, int]
    authors: int
    venue_names: int = 0

    def line(self) -> str:
        years = sorted(self.years)
        span = f"{years[0]}–{years[-1]}" if len(years) > 1 else (str(years[0]) if years else "no years")
        return f"{self.papers} abstracts · {self.venue_names} venues · {span}"


class Catalogue:
    """Every stored paper, in a fixed order shared with the lexical index."""

    def __init__(
        self,
        papers: Sequence[Paper],
        vectors: np.ndarray | RowBlocks | None = None,
        index: dict[str, int] | None = None,
    ) -> None:
        """`index` (paper id -> row), when the caller has it, is taken as it is, not copied:
        the caller does not change it afterwards (`Loaded` makes a new one on every load)."""
        self.papers: list[Paper] = list(papers)
        # Row i of `vectors` is paper i's embedding: filtered searches scan exactly the
        # rows a filter keeps instead of paying Chroma's per-condition `where` cost.
        self.vectors = vectors if vectors is not None and len(vectors) == len(self.papers) else None
        n = len(self.papers)
        if index is None or len(index) != n:
            index = {p.id: i for i, p in enumerate(self.papers)}
        self.index = index
        # Names repeat across papers (authors, venues, topics): fold each once. At 100k
        # papers this was most of a cold start.
        keys: dict[str, str] = {}

        def fold(text: str) -> str:
            key = keys.get(text)
            if key is None:
                key = keys[text] = fold_text(text)
            return key

        # Venues, authors and topics as integer codes, one array entry per (paper, name) pair, not
        # a set per paper: a filter is one vectorised comparison (a Python loop over 100k
        # sets took tens of ms) and a million papers do not hold a million sets. Each is built
        # from columns read in one pass over the papers, the per-entry work in C (map,
        # fromiter): at a million papers the catalogue took 11 s of a cold start (tuples
        # per paper, every name folded per paper, a pass per field), now about 3 s.
        columns = zip(*map(attrgetter("venue", "year", "authors", "area", "subarea"), self.papers))
        venues, years, authors, areas, subareas = (list(c) for c in columns) if n else ([],) * 5
        self._year = np.fromiter((-1 if y is None else y for y in years), dtype=np.int32, count=n)
        self._venue = _Names.of_columns(n, [venues], fold)
        self._authors = _Names(
            [a for names in authors for a in names],
            np.repeat(np.arange(n, dtype=np.int32), np.fromiter(map(len, authors), np.int64, count=n)),
            n,
            fold,
        )
        # `Paper.topic` joins area and subarea: once per distinct pair, not once per paper.
        pairs = {pair: topic_of(*pair) for pair in dict.fromkeys(zip(areas, subareas))}
        topics = list(map(pairs.__getitem__, zip(areas, subareas)))
        self._topics = _Names.of_columns(n, [areas, subareas, topics], fold)
        self.area_names = {a for a, _ in pairs if a}
        self.subarea_names = {s for _, s in pairs if s}
        del venues, years, authors, areas, subareas, topics, pairs
        # Each folded name in one spelling found in the corpus.
        self.venues = self._venue.spellings()
        self.years = sorted({int(y) for y in np.unique(self._year) if y >= 0})
        self.authors = self._authors.spellings()
        self.topics: dict[str, str] = self._topics.spellings()
        self.n = n
        self._name_parts: dict[str, set[str]] | None = None

    def __len__(self) -> int:
        return self.n

    # --- validation ----------------------------------------------------------
    def resolve(self, filters: Filters) -> Filters:
        """Check every value against the corpus and return it in the corpus's spelling."""
        venue, year_from, year_to = filters.venue, filters.year_from, filters.year_to
        if venue is not None:
            key = fold(venue)
            if key not in self.venues:
                name, year = split_venue_year(venue)
                if name and fold(name) in self.venues and year is not None:
                    key = fold(name)
                    if year_from is None and year_to is None:
                        year_from = year_to = year
                else:
                    raise FilterError(
                        f"unknown venue {venue!r}; valid venues: "
                        f"{', '.join(sorted(self.venues.values())) or '(none in the corpus)'}"
                    )
            venue = self.venues[key]
        author = filters.author
        if author is not None:
            key = fold(author)
            if key not in self.authors:
                close = difflib.get_close_matches(key, list(self.authors), n=5, cutoff=0.6)
                hint = (
                    f"did you mean {', '.join(self.authors[c] for c in close)}?"
                    if close
                    else f"the corpus has {len(self.authors)} authors: `assistant stats` lists them"
                )
                raise FilterError(f"unknown author {author!r} (full name needed); {hint}")
            author = self.authors[key]
        topic = filters.topic
        if topic is not None:
            key = fold(topic)
            if key not in self.topics:
                areas = sorted(self.topics.values())
                raise FilterError(f"unknown topic {topic!r}; valid topics: {', '.join(areas)}")
            topic = self.topics[key]
        return Filters(venue=venue, year_from=year_from, year_to=year_to, author=author, topic=topic)

    # --- filtering -----------------------------------------------------------
    def mask(self, filters: Filters) -> np.ndarray:
        """Rows kept by resolved filters: the same rule as `where`, evaluated in memory."""
        keep = np.ones(self.n, dtype=bool)
        if filters.venue is not None:
            keep &= self._venue.mask([fold(filters.venue)])
        if filters.year_from is not None:
            keep &= self._year >= filters.year_from
        if filters.year_to is not None:
            keep &= (self._year <= filters.year_to) & (self._year >= 0)
        if filters.author is not None:
            keep &= self._authors.mask([fold(filters.author)])
        if filters.topic is not None:
            keep &= self._topics.mask([fold(filters.topic)])
        return keep

    @staticmethod
    def where(filters: Filters) -> dict[str, Any] | None:
        """The same rule as `mask`, as a Chroma `where` clause."""
        clauses: list[dict[str, Any]] = []
        if filters.venue is not None:
            clauses.append({"venue_fold": {"$eq": fold(filters.venue)}})
        if filters.year_from is not None:
            clauses.append({"year": {"$gte": filters.year_from}})
        if filters.year_to is not None:
            clauses.append({"year": {"$lte": filters.year_to}})
        if filters.author is not None:
            clauses.append({"authors_fold": {"$contains": fold(filters.author)}})
        if filters.topic is not None:
            key = fold(filters.topic)
            clauses.append({"$or": [{"area_fold": key}, {"subarea_fold": key}, {"topic_fold": key}]})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def topic_mask(self, topic: str) -> np.ndarray:
        return self._topics.mask([fold(topic)])

    def no_area_mask(self) -> np.ndarray:
        """Papers with no research area, in files whose other papers have one."""
        with_areas = {_file(s) for p in self.papers if p.area for s in p.sources}
        return np.fromiter(
            (not p.area and any(_file(s) in with_areas for s in p.sources) for p in self.papers),
            dtype=bool,
            count=self.n,
        )

    def authors_with_part(self, part: str) -> set[str]:
        """Authors one of whose names (first name, surname) is `part` (folded)."""
        if self._name_parts is None:
            index: dict[str, set[str]] = {}
            for key, name in self.authors.items():
                for token in key.split():
                    if len(token) >= 3:
                        index.setdefault(token, set()).add(name)
            self._name_parts = index
        return self._name_parts.get(part, set())

    def papers_with_author_part(self, part: str) -> int:
        return int(self._authors.mask([fold(a) for a in self.authors_with_part(part)]).sum())

    def stats(self) -> Stats:
        return Stats(
            papers=self.n,
            venues=dict(Counter(p.venue_year or "(no venue)" for p in self.papers).most_common()),
            years=dict(sorted(Counter(p.year for p in self.papers if p.year is not None).items())),
            topics=dict(Counter(p.topic for p in self.papers if p.topic).most_common()),
            authors=len(self.authors),
            venue_names=len(self.venues),
        )


class _Names:
    """Folded names of papers (their venue, authors or topics) as integer codes: entry e is
    name `codes[e]` of paper `rows[e]` (a name twice in one paper is two entries: masks
    ignore it)."""

    def __init__(self, raw: list[str], rows: np.ndarray, n: int, fold: Callable[[str], str]) -> None:
        self.n = n
        # Each spelling folded once, each folded name coded once; the per-entry work is C's
        # (dict.fromkeys, map): at 100k papers 0.9 s of a cold start became about 0.2 s.
        self._folded = {name: fold(name) for name in dict.fromkeys(raw)}
        self.code: dict[str, int] = {key: i for i, key in enumerate(dict.fromkeys(self._folded.values()))}
        spelling = {name: self.code[key] for name, key in self._folded.items()}
        self.codes = np.fromiter(map(spelling.__getitem__, raw), dtype=np.int32, count=len(raw))
        self.rows = rows

    @classmethod
    def of_columns(cls, n: int, columns: Sequence[list[str | None]], fold: Callable[[str], str]) -> _Names:
        """Names from columns of one optional name per paper (venue; area, subarea, topic)."""
        raw: list[str] = []
        rows: list[np.ndarray] = []
        for column in columns:
            rows.append(np.flatnonzero(np.fromiter(map(bool, column), dtype=bool, count=n)).astype(np.int32))
            raw += [name for name in column if name]
        return cls(raw, np.concatenate(rows) if rows else np.zeros(0, np.int32), n, fold)

    def spellings(self) -> dict[str, str]:
        """Folded name -> the first spelling of it met (columns in order, then rows)."""
        out: dict[str, str] = {}
        for name, key in self._folded.items():
            out.setdefault(key, name)
        return out

    def mask(self, names: Sequence[str]) -> np.ndarray:
        """Papers that have one of these names."""
        keep = np.zeros(self.n, dtype=bool)
        wanted = [self.code[name] for name in names if name in self.code]
        if wanted:
            hits = self.codes == wanted[0] if len(wanted) == 1 else np.isin(self.codes, wanted)
            keep[self.rows[hits]] = True
        return keep


def _file(source: str) -> str:
    """'listing.txt:12' -> 'listing.txt'."""
    return source.rsplit(":", 1)[0]
