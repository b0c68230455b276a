"""Records: one abstract's fields as a file gives them (JSON, CSV, BibTeX, CSL-JSON) turned
into a `Paper`, and the `Problem`s a reader reports about a record it cannot read or had to
change. Every reader shares these; none of them is imported here."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.text import (
    fold,
    has_word_characters,
    make_label,
    normalize_doi,
    paper_id,
    split_venue_year,
    strip_controls,
)
from assistant.types import Paper, source_file

MAX_RECORD_CHARS = 100_000

_VENUE_YEAR = re.compile(r"\b([A-Z][A-Za-z]{1,12})[\s'’]+((?:19|20)\d{2})\b")


@dataclass(frozen=True)
class Problem:
    """A record that could not be read."""

    file: str
    line: int
    message: str
    kept: bool = False  # a note: the record was ingested, with what the message says changed

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


ProblemSink = Callable[[Problem], None]
Warn = Callable[[str], None]

FIRST_YEAR = 1600  # earlier years are typing mistakes, not papers


def last_year() -> int:
    return time.gmtime().tm_year + 1


_FIELD_ALIASES = {
    "id": ("id", "_id", "doc_id", "paper_id"),
    "title": ("title",),
    "abstract": ("abstract", "text", "summary", "body"),
    "authors": ("authors", "author"),
    "venue": ("venue", "conference", "journal"),
    "year": ("year",),
    "url": ("url", "link", "pdf_url"),
    "doi": ("doi",),
    "comment": ("comment", "comments", "note"),
    "topic": ("topic", "topics", "area"),
    "subarea": ("subarea", "subtopic"),
}


def _pick(record: dict[str, Any], key: str) -> Any:
    lowered = {str(k).lower(): v for k, v in record.items()}
    for alias in _FIELD_ALIASES[key]:
        value = lowered.get(alias)
        if value not in (None, ""):
            return value
    return None


def record_keys(
    file: str, external: str | None, doi: str | None, title: str | None = None
) -> tuple[str, ...]:
    """A record's identities within its file: its id and its DOI (either one, kept across
    an edit, makes the new version replace the old). A record with neither is known by its
    title, so an abstract edited under the same title replaces the old version too."""
    keys = []
    if external:
        keys.append(f"{file}#id:{external}")
    if doi:
        keys.append(f"{file}#doi:{doi}")
    if not keys and title and (words := title_words(title)):
        keys.append(f"{file}#title:{words}")
    return tuple(keys)


def title_words(title: str) -> str:
    """'Snail  Speed: A Study.' -> 'snail speed a study' (case, spacing and punctuation
    edits keep a record's identity); at most 200 characters, so that the key fits the store."""
    return " ".join(re.findall(r"\w+", title.casefold()))[:200]


def key_parts(key: str) -> tuple[str, str, str]:
    """A key of `record_keys` read back: 'refs.bib#id:smith2024' -> ('refs.bib', 'id', 'smith2024')."""
    file, _, identity = key.partition("#")
    kind, _, value = identity.partition(":")
    return file, kind, value


def is_title_key(key: str) -> bool:
    return key_parts(key)[1] == "title"


def stored_keys(paper: Paper) -> tuple[str, ...]:
    """`paper.keys`; for papers stored before keys were kept, derived from its id and files."""
    if paper.keys:
        return paper.keys
    return tuple(k for f in paper.files for k in record_keys(f, paper.external_id, paper.doi, paper.title))


def _clean(value: Any, name: str, warn: Warn | None) -> Any:
    if isinstance(value, str):
        cleaned, removed = strip_controls(value)
        if removed and warn is not None:
            warn(f"{removed} control character(s) (NUL, bidirectional overrides, …) removed from the {name}")
        return cleaned
    if isinstance(value, list):
        return [_clean(v, name, warn) for v in value]
    return value


def parse_year(value: Any, warn: Warn | None = None) -> int | None:
    """'2024', '2024-05-01', 2024 -> 2024; a year outside 1600…next year is reported and dropped."""
    if value in (None, ""):
        return None
    match = re.match(r"\s*(\d+)", str(value))
    if match is None:
        raise ValueError(f"year {value!r} is not a number")
    year = int(match.group(1))
    if not FIRST_YEAR <= year <= last_year():
        if warn is not None:
            warn(f"year {value!r} is outside {FIRST_YEAR}…{last_year()}; stored without a year")
        return None
    return year


def record_to_paper(record: dict[str, Any], source: str, warn: Warn | None = None) -> Paper:
    """Turn one JSON/CSV record into a Paper; raises ValueError with a readable reason.
    `warn` hears what was changed in a record that is kept (control characters removed,
    an impossible year dropped)."""
    record = {k: _clean(v, str(k), warn) for k, v in record.items()}
    abstract = _pick(record, "abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise ValueError("the record has no abstract (expected a field 'abstract' or 'text')")
    if len(abstract) > MAX_RECORD_CHARS:
        raise ValueError(
            f"the abstract has {len(abstract):,} characters, more than the "
            f"{MAX_RECORD_CHARS:,} allowed: is this a whole paper rather than an abstract?"
        )
    abstract = abstract.strip()
    if not has_word_characters(abstract):
        raise ValueError("the abstract has no letters or digits (only symbols, emoji or spaces)")
    title = _pick(record, "title")
    title = str(title).strip() if title not in (None, "") else None
    authors = parse_authors(_pick(record, "authors"))
    year_int = parse_year(_pick(record, "year"), warn)
    area, subarea = split_topic(_pick(record, "topic"))
    if _pick(record, "subarea"):
        subarea = str(_pick(record, "subarea")).strip()
    venue = _pick(record, "venue")
    comment = _pick(record, "comment")
    comment = str(comment).strip() if comment else None
    venue_s = str(venue).strip() if venue else None
    if venue_s:
        # "ICML 2024" with year 2024 is venue ICML, year 2024 (not "ICML 2024 2024").
        name, venue_year = split_venue_year(venue_s)
        if name and venue_year is not None and year_int in (None, venue_year):
            venue_s, year_int = name, venue_year
    if (venue_s is None or year_int is None) and comment:
        c_venue, c_year = venue_from_comment(comment)
        venue_s = venue_s or c_venue
        year_int = year_int or c_year
    external = _pick(record, "id")
    external_s = str(external).strip() if external not in (None, "") else None
    url = _pick(record, "url")
    raw_doi = _pick(record, "doi")
    doi = normalize_doi(str(raw_doi)) if raw_doi else None
    if doi is None and url:
        doi = normalize_doi(str(url)) if re.match(r"https?://(dx\.)?doi\.org/", str(url)) else None
    file = source_file(source)
    return Paper(
        id=paper_id(abstract),
        label=title or make_label(abstract),
        abstract=abstract,
        title=title,
        authors=authors,
        venue=venue_s,
        year=year_int,
        area=area,
        subarea=subarea,
        comment=comment,
        url=str(url) if url else (f"https://doi.org/{doi}" if doi else None),
        external_id=external_s,
        sources=(source,),
        doi=doi,
        keys=record_keys(file, external_s, doi, title),
    )


def warner(path: Path, line: int, sink: ProblemSink) -> Warn:
    return lambda message: sink(Problem(str(path), line, message, kept=True))


def parse_authors(value: Any) -> tuple[str, ...]:
    """'A, B, A 等' -> ('A', 'B'): 等 means et al.; a repeated name is one author."""
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip()
        text = re.sub(r"\s*(等|et al\.?)\s*$", "", text)
        parts = re.split(r",|;|\band\b", text)
    elif isinstance(value, (list, tuple)):
        parts = [str(v) for v in value]
    else:
        parts = [str(value)]
    seen: dict[str, str] = {}
    for part in parts:
        name = " ".join(part.split())
        if name and fold(name) not in seen:
            seen[fold(name)] = name
    return tuple(seen.values())


def split_topic(value: Any) -> tuple[str | None, str | None]:
    if value in (None, ""):
        return None, None
    if isinstance(value, (list, tuple)):
        value = " · ".join(str(v) for v in value)
    text = str(value).strip()
    if "·" in text:
        area, subarea = text.split("·", 1)
        return area.strip() or None, subarea.strip() or None
    return text, None


def venue_from_comment(comment: str) -> tuple[str | None, int | None]:
    """'Extended version ... (ECAI 2025); Paper ID: M2635' -> ('ECAI', 2025)."""
    for match in _VENUE_YEAR.finditer(comment):
        name = match.group(1)
        if sum(ch.isupper() for ch in name) >= 2:
            return name, int(match.group(2))
    return None, None
