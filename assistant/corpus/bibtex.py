"""Reference-manager exports: BibTeX/BibLaTeX (.bib) and CSL-JSON (Zotero, Better BibTeX).

Both readers turn each reference into the same record dict the JSONL/CSV readers use and
hand it to `records.record_to_paper`, so a paper's id is the hash of its abstract whatever
file it came from: the same abstract exported from Zotero and listed in a seed file is one
paper with two sources.

Field choices (Paper has no keywords or DOI field, so nothing is added to it):

* venue: ``journal`` / ``journaltitle``, else ``booktitle``, else the preprint server
  (``archiveprefix`` / ``eprinttype``, e.g. arXiv); CSL: ``container-title``, else
  ``event-title``, else the publisher of a preprint (``type: article``).
* url: ``url``, else ``https://doi.org/<doi>``: the DOI survives as a resolvable link.
* keywords: the first two become area and subarea (topic "first · second"); the topic
  filter matches either one. The rest are dropped: a topic is one or two labels, and
  reference managers export every tag a user ever attached.
* the citation key (CSL: ``id``) becomes ``external_id``; ``note`` becomes the comment.

Entries without an abstract are reported as ``entry KEY has no abstract; skipped``; an
``@proceedings``/``@book`` that other entries only crossref is a container, not a paper,
and is skipped silently. Nothing in a file is fatal: malformed entries are reported to the
sink with their line and the rest is read.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import bibtexparser
from bibtexparser.exceptions import BlockAbortedException
from bibtexparser.library import Library
from bibtexparser.middlewares import (
    LatexDecodingMiddleware,
    NormalizeFieldKeys,
    RemoveEnclosingMiddleware,
    SeparateCoAuthors,
    SplitNameParts,
)
from bibtexparser.middlewares.middleware import LibraryMiddleware
from bibtexparser.middlewares.names import NameParts, parse_single_name_into_parts
from bibtexparser.model import (
    Block,
    DuplicateBlockKeyBlock,
    DuplicateFieldKeyBlock,
    Entry,
    Field,
    ParsingFailedBlock,
)

from assistant.corpus.records import Problem, ProblemSink, record_to_paper, warner
from assistant.text import fold
from assistant.types import Paper

# bibtexparser logs every malformed block itself, with 0-based line numbers; the sink
# already reports them (1-based, with the fix), so keep its records off stderr unless the
# application configured logging.
logging.getLogger("bibtexparser").addHandler(logging.NullHandler())

# Fields that are not LaTeX: `%`, `_` and `~` in a URL, DOI or key are literal characters.
_VERBATIM = frozenset({"url", "doi", "eprint", "file", "pdf", "urldate", "isbn", "issn", "crossref", "ids"})
_MONTHS = dict(
    zip(
        "jan feb mar apr may jun jul aug sep oct nov dec".split(),
        "January February March April May June July August September October November December".split(),
    )
)
# What a crossref'd child takes from its parent (BibTeX inherits every missing field;
# these are the ones that describe where and when, never the parent's own abstract or ids).
_INHERITED = tuple(
    "booktitle journal journaltitle year date editor publisher address location organization series "
    "volume month".split()
)
_CONTAINER_TYPES = frozenset({"proceedings", "mvproceedings", "book", "mvbook", "collection", "periodical"})
_LATEX_SIGNIFICANT = re.compile(r"[\\{}$%&~^_#\"`<>]|--|''|!`|\?`")
_KEY_IN_RAW = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s}]+)")
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_CSL_MARKUP = re.compile(r"</?(?:i|b|sup|sub|sc|span)(?:\s[^>]*)?>", re.IGNORECASE)


# --- parsing ------------------------------------------------------------------------


class _ResolveMacros(LibraryMiddleware):
    """@string macros and `#` concatenation, e.g. ``journal = jmlr # " 2024"``.

    bibtexparser's own middleware resolves a field only when it is exactly one macro name;
    exports that build venues from macros and literals need the concatenation too. A name
    that is defined nowhere stays as it is written (as BibTeX does, with a warning) and is
    recorded so the reader can report it."""

    METADATA = "undefined_macros"

    def __init__(self) -> None:
        super().__init__(allow_inplace_modification=True)

    @classmethod
    def metadata_key(cls) -> str:
        return "assistant_resolve_macros"

    def transform(self, library: Library) -> Library:
        macros: dict[str, str] = dict(_MONTHS)
        for string in library.strings:  # in file order: a macro may use the ones above it
            macros[string.key.lower()] = self._value(str(string.value), macros, [])
        for entry in library.entries:
            undefined: list[str] = []
            for field in entry.fields:
                if not isinstance(field.value, str):
                    continue
                pieces = _split_concatenation(field.value)
                if len(pieces) == 1 and _is_literal(pieces[0]):
                    continue  # `{...}`, `"..."` or a number: nothing to resolve
                field.value = "{" + self._value(field.value, macros, undefined) + "}"
            if undefined:
                entry.parser_metadata[self.METADATA] = undefined
        return library

    @staticmethod
    def _value(raw: str, macros: dict[str, str], undefined: list[str]) -> str:
        out = []
        for piece in _split_concatenation(raw):
            if _is_literal(piece):
                out.append(piece[1:-1] if piece[:1] in '{"' else piece)
            elif piece.lower() in macros:
                out.append(macros[piece.lower()])
            else:
                undefined.append(piece)
                out.append(piece)
        return "".join(out)


def _is_literal(piece: str) -> bool:
    return piece.isdigit() or (len(piece) >= 2 and (piece[0], piece[-1]) in (("{", "}"), ('"', '"')))


def _split_concatenation(value: str) -> list[str]:
    """'a # {b} # "c"' -> ['a', '{b}', '"c"']: splits on `#` outside braces and quotes."""
    pieces, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(value):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == '"' and depth == 0:
            quoted = not quoted
        elif ch == "#" and depth == 0 and not quoted:
            pieces.append(value[start:i].strip())
            start = i + 1
    pieces.append(value[start:].strip())
    return [p for p in pieces if p]


class _SplitNamesLeniently(SplitNameParts):
    """Like SplitNameParts, but a name BibTeX would reject ("Smith, John, Jr., III") is
    split as well as it can be instead of turning the whole entry into an error block."""

    def _transform_field_value(self, name: list[str]) -> list[NameParts]:
        if not isinstance(name, list):
            name = [str(name)]
        return [parse_single_name_into_parts(n, strict=False) for n in name]


class _DecodeLatex(LatexDecodingMiddleware):
    """LaTeX to Unicode (``{\\"u}`` -> ü, ``\\%`` -> %), except in URLs and DOIs, where a
    `%` would be read as a comment and `~` as a space."""

    def transform_entry(self, entry: Entry, library: Library) -> Block:
        kept = [f for f in entry.fields if f.key in _VERBATIM]
        entry.fields = [f for f in entry.fields if f.key not in _VERBATIM]
        errors: list[str] = []
        for field in entry.fields:  # the base class decodes one NameParts, not a list of them
            if isinstance(field.value, list):
                field.value = [self._decode_person(p, errors) for p in field.value]
        block = super().transform_entry(entry, library)
        entry.fields = entry.fields + kept
        return block

    def _transform_python_value_string(self, python_string: str) -> tuple[str, str]:
        # pylatexenc costs ~1 ms a value; text without a character LaTeX treats specially
        # decodes to itself, and most exported names, venues and abstracts are such text.
        if not _LATEX_SIGNIFICANT.search(python_string):
            return python_string, ""
        # Inside an entry's braces or quotes a bare `%` is text ("90% of weights"), as BibTeX
        # itself reads it; pylatexenc would take it for a comment and cut the rest of the line.
        return super()._transform_python_value_string(_BARE_PERCENT.sub(r"\\%", python_string))

    def _decode_person(self, person: Any, errors: list[str]) -> Any:
        if isinstance(person, NameParts):
            return NameParts(
                first=self._transform_all_strings(person.first, errors),
                von=self._transform_all_strings(person.von, errors),
                last=self._transform_all_strings(person.last, errors),
                jr=self._transform_all_strings(person.jr, errors),
            )
        if isinstance(person, str):
            return self._transform_python_value_string(person)[0]
        return person


def _parse(text: str) -> Library:
    return bibtexparser.parse_string(
        text,
        parse_stack=[
            NormalizeFieldKeys(),
            _ResolveMacros(),
            RemoveEnclosingMiddleware(),
            SeparateCoAuthors(),
            _SplitNamesLeniently(),
            _DecodeLatex(),
        ],
    )


# --- BibTeX -------------------------------------------------------------------------


def read_bibtex(path: Path, text: str, sink: ProblemSink) -> Iterator[Paper]:
    """Yield a Paper per entry with an abstract; report the rest to `sink`."""
    library = _parse(text)
    for failed in library.failed_blocks:
        sink(_failure(path, failed))
    entries = library.entries
    by_key = {e.key.lower(): e for e in entries}
    parents = {_text(e, "crossref").lower() for e in entries if _text(e, "crossref")}
    for entry in entries:
        line = _line(entry)
        fields, missing = _with_crossref(entry, by_key)
        for name in entry.parser_metadata.get(_ResolveMacros.METADATA, ()):
            sink(
                Problem(
                    str(path),
                    line,
                    f"entry {entry.key}: @string macro {name!r} is not defined, so its name was "
                    f"used as the text; define it (@string{{{name} = {{...}}}}) or brace the value",
                )
            )
        if missing:
            sink(
                Problem(
                    str(path),
                    line,
                    f"entry {entry.key}: crossref {missing!r} is not in this file, so nothing was "
                    "inherited from it; export the proceedings entry too",
                )
            )
        abstract = fields.get("abstract")
        if not isinstance(abstract, str) or not abstract.strip():
            if not (entry.key.lower() in parents and entry.entry_type.lower() in _CONTAINER_TYPES):
                sink(Problem(str(path), line, f"entry {entry.key} has no abstract; skipped"))
            continue
        try:
            yield record_to_paper(_bib_record(entry, fields), f"{path.name}:{line}", warner(path, line, sink))
        except ValueError as exc:
            sink(Problem(str(path), line, f"entry {entry.key}: {exc}"))


def _line(block: Block) -> int:
    return (block.start_line or 0) + 1  # bibtexparser counts from 0


def _failure(path: Path, block: ParsingFailedBlock) -> Problem:
    found = _KEY_IN_RAW.search(block.raw or "")
    key = found.group(2) if found else "?"
    line = _line(block)
    if isinstance(block, DuplicateBlockKeyBlock):
        message = f"entry {key} repeats a key used above; skipped: give it a unique key"
    elif isinstance(block, DuplicateFieldKeyBlock):
        fields = ", ".join(sorted(block.duplicate_keys))
        message = f"entry {key} has the field(s) {fields} twice; skipped: keep one of each"
    else:
        error = block.error
        reason = error.abort_reason if isinstance(error, BlockAbortedException) else str(error)
        reason = " ".join(reason.split()).rstrip(". ")
        message = f"entry {key} is malformed ({reason}); skipped: check its braces, quotes and commas"
    return Problem(str(path), line, message)


def _value(field: Field | None) -> Any:
    return None if field is None else field.value


def _text(entry: Entry, key: str) -> str:
    value = _value(entry.get(key))
    return " ".join(str(value).split()) if isinstance(value, str) else ""


def _with_crossref(entry: Entry, by_key: dict[str, Entry]) -> tuple[dict[str, Any], str | None]:
    """The entry's fields plus what it inherits through `crossref` (followed up to three
    levels, as biber does for chains); returns the name of a crossref that is missing."""
    fields: dict[str, Any] = {f.key: f.value for f in entry.fields}
    seen = {entry.key.lower()}
    target = _text(entry, "crossref")
    for _ in range(3):
        if not target or target.lower() in seen:
            break
        parent = by_key.get(target.lower())
        if parent is None:
            return fields, target
        seen.add(target.lower())
        for key in _INHERITED:
            if key not in fields and parent.get(key) is not None:
                fields[key] = parent[key]
        if "booktitle" not in fields and _text(parent, "title"):  # biblatex: parent title -> booktitle
            fields["booktitle"] = parent["title"]
        target = _text(parent, "crossref")
    return fields, None


def _bib_record(entry: Entry, fields: dict[str, Any]) -> dict[str, Any]:
    def text(key: str) -> str | None:
        value = fields.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
        return None

    venue = text("journal") or text("journaltitle") or text("booktitle")
    if venue is None and entry.entry_type.lower() in ("misc", "online", "unpublished", "article", "report"):
        venue = text("archiveprefix") or text("eprinttype")
    doi = text("doi")
    return {
        "id": entry.key,
        "title": text("title"),
        "abstract": text("abstract"),
        "authors": _names(fields.get("author")),
        "venue": venue,
        "year": text("year") or text("date"),
        "url": text("url") or (_doi_url(doi) if doi else None),
        "doi": doi,
        "topic": _keywords(text("keywords")),
        "comment": text("note"),
    }


def _names(value: Any) -> list[str]:
    """NameParts -> "First von Last Jr." ("Müller, Jörg" -> "Jörg Müller"); `and others` dropped."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    names = []
    for person in value:
        if isinstance(person, NameParts):
            name = " ".join([*person.first, *person.von, *person.last, *person.jr])
        else:
            name = str(person)
        name = " ".join(name.split())
        if name and name.lower() != "others":
            names.append(name)
    return names


def _keywords(value: str | None) -> list[str] | None:
    if not value:
        return None
    separator = ";" if ";" in value else ","  # a keyword may hold commas when ; separates them
    words = [w.strip() for w in value.split(separator) if w.strip()]
    return words[:2] or None


def _doi_url(doi: str) -> str:
    return "https://doi.org/" + _DOI_PREFIX.sub("", doi.strip())


# --- CSL-JSON -----------------------------------------------------------------------


def is_csl_json(text: str) -> bool:
    """A JSON array of CSL items (objects with "type" and a "title" or "id"), as Zotero's
    "Export Collection… → CSL JSON" writes: what tells it from JSON Lines in a .json file."""
    text = text.lstrip("\ufeff \t\r\n")
    if not text.startswith("["):
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) for item in data)
        and any("type" in item and ("title" in item or "id" in item) for item in data)
    )


def read_csl_json(path: Path, text: str, sink: ProblemSink) -> Iterator[Paper]:
    """Yield a Paper per CSL item with an abstract; report the rest to `sink`."""
    for line, item in _csl_items(path, text, sink):
        if not isinstance(item, dict):
            sink(Problem(str(path), line, "expected a JSON object per item of the array"))
            continue
        key = item.get("id") or item.get("citation-key") or "?"
        abstract = item.get("abstract")
        if not isinstance(abstract, str) or not abstract.strip():
            sink(Problem(str(path), line, f"entry {key} has no abstract; skipped"))
            continue
        try:
            yield record_to_paper(_csl_record(item), f"{path.name}:{line}", warner(path, line, sink))
        except ValueError as exc:
            sink(Problem(str(path), line, f"entry {key}: {exc}"))


def _csl_items(path: Path, text: str, sink: ProblemSink) -> Iterator[tuple[int, Any]]:
    """The array's items with the line each starts on (json.loads gives no positions)."""
    decoder = json.JSONDecoder()
    space = re.compile(r"\s*")

    def skip(at: int) -> int:
        match = space.match(text, at)
        return match.end() if match else at

    def line_of(at: int) -> int:
        return text.count("\n", 0, at) + 1

    at = skip(0)
    if text[at : at + 1] == "\ufeff":
        at = skip(at + 1)
    if text[at : at + 1] != "[":
        sink(Problem(str(path), line_of(at), "CSL-JSON must be a JSON array of items ([{...}, ...])"))
        return
    at = skip(at + 1)
    if text[at : at + 1] == "]":
        return
    while True:
        try:
            item, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            sink(
                Problem(
                    str(path),
                    exc.lineno,
                    f"not valid JSON ({exc.msg} at column {exc.colno}); the items after it were not read",
                )
            )
            return
        yield line_of(at), item
        at = skip(end)
        if text[at : at + 1] == ",":
            at = skip(at + 1)
        elif text[at : at + 1] == "]":
            return
        else:
            sink(
                Problem(
                    str(path),
                    line_of(at),
                    "expected ',' or ']' after an item; the items after it were not read",
                )
            )
            return


def _csl_record(item: dict[str, Any]) -> dict[str, Any]:
    def text(key: str) -> str | None:
        value = item.get(key)
        if isinstance(value, list):  # some exporters write container-title as a list
            value = value[0] if value else None
        if isinstance(value, (str, int)) and str(value).strip():
            return " ".join(_CSL_MARKUP.sub("", str(value)).split())
        return None

    venue = text("container-title") or text("event-title") or text("event")
    if venue is None and item.get("type") == "article":  # Zotero's preprint: publisher is arXiv etc.
        venue = text("publisher")
    doi = text("DOI") or text("doi")
    keywords = item.get("keyword")
    if isinstance(keywords, list):
        keywords = ", ".join(str(k) for k in keywords)
    return {
        "id": item.get("id") or item.get("citation-key"),
        "title": text("title"),
        "abstract": item.get("abstract"),
        "authors": _csl_authors(item.get("author")),
        "venue": venue,
        "year": _csl_year(item.get("issued")),
        "url": text("URL") or text("url") or (_doi_url(doi) if doi else None),
        "doi": doi,
        "topic": _keywords(keywords if isinstance(keywords, str) else None),
        "comment": text("note"),
    }


def _csl_authors(value: Any) -> Any:
    """A list of CSL names; a plain string ("A. Smith and B. Jones") is split like any
    other author field (iterating it would give single letters)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = [value]
    return [n for n in (_csl_name(a) for a in value or []) if n]


def _csl_name(person: Any) -> str | None:
    if isinstance(person, str):
        return " ".join(person.split()) or None
    if not isinstance(person, dict):
        return None
    if person.get("literal"):
        return " ".join(str(person["literal"]).split())
    parts = [
        person.get("given"),
        person.get("dropping-particle"),
        person.get("non-dropping-particle"),
        person.get("family"),
        person.get("suffix"),
    ]
    return " ".join(" ".join(str(p) for p in parts if p).split()) or None


def _csl_year(issued: Any) -> int | None:
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        try:
            return int(str(parts[0][0]))
        except ValueError:
            pass
    for key in ("raw", "literal"):
        found = _YEAR.search(str(issued.get(key) or ""))
        if found:
            return int(found.group(1))
    return None


# --- writing BibTeX ----------------------------------------------------------------

_CONFERENCE = re.compile(
    r"\b(proc\.?|proceedings|conference|conf\.?|workshop|symposium|congress|meeting)\b", re.IGNORECASE
)
_CONFERENCE_NAMES = frozenset(
    fold(v)
    for v in (
        "NeurIPS NIPS ICML ICLR AAAI IJCAI ACL EMNLP NAACL EACL COLING CVPR ICCV ECCV WACV KDD WWW "
        "SIGIR CIKM WSDM COLT AISTATS UAI ECAI CHI SIGMOD VLDB ICDE STOC FOCS SODA EC ICALP CAV "
        "ICASSP Interspeech CoRL RSS ICRA IROS MICCAI ECML PKDD"
    ).split()
)
_STOPWORDS = frozenset("a an the on of in for and to with by from at is are towards toward".split())
_MATH = re.compile(r"(?<!\\)\$[^$]+(?<!\\)\$")


def to_bibtex(papers: Iterable[Paper], abstracts: bool = False) -> str:
    """BibTeX entries for papers ("copy BibTeX" for cited papers): @inproceedings for a
    conference venue, @article for any other venue, @misc without one. Keys are surname +
    year + first title word, made unique with a, b, c; an untitled abstract is titled with
    its label. Non-ASCII stays UTF-8. With `abstracts`, the abstract is included, and
    reading the output back gives papers with the same ids."""
    used: set[str] = set()
    entries = []
    for paper in papers:
        key = _unique(_cite_key(paper), used)
        kind, venue_field = _entry_type(paper.venue)
        fields: list[tuple[str, str]] = []
        fields.append(("title", _latex(paper.title or paper.label, protect_case=bool(paper.title))))
        if paper.authors:
            fields.append(("author", " and ".join(_bib_name(a) for a in paper.authors)))
        if paper.venue and venue_field:
            fields.append((venue_field, _latex(paper.venue)))
        if paper.year:
            fields.append(("year", str(paper.year)))
        doi = paper.doi or _doi_of(paper.url)
        if doi:
            fields.append(("doi", _verbatim(doi)))
        if paper.url:
            fields.append(("url", _verbatim(paper.url)))
        topics = [t for t in (paper.area, paper.subarea) if t]
        if topics:
            separator = "; " if any("," in t for t in topics) else ", "
            fields.append(("keywords", _latex(separator.join(topics))))
        if abstracts:
            fields.append(("abstract", _latex(paper.abstract)))
        body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields)
        entries.append(f"@{kind}{{{key},\n{body}}}\n")
    return "\n".join(entries)


def _cite_key(paper: Paper) -> str:
    surname = paper.authors[0].split()[-1] if paper.authors and paper.authors[0].split() else "anon"
    words = [w for w in re.findall(r"[^\W_]+", fold(paper.title or paper.label)) if w not in _STOPWORDS]
    key = (
        _ascii_word(surname)
        + (str(paper.year) if paper.year else "")
        + (_ascii_word(words[0]) if words else "")
    )
    return key or "paper"


def _ascii_word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", fold(text))


def _unique(key: str, used: set[str]) -> str:
    candidate, n = key, 0
    while candidate in used:
        candidate = key + (chr(ord("a") + n) if n < 26 else str(n))
        n += 1
    used.add(candidate)
    return candidate


def _entry_type(venue: str | None) -> tuple[str, str | None]:
    if not venue:
        return "misc", None
    if _CONFERENCE.search(venue) or fold(venue) in _CONFERENCE_NAMES:
        return "inproceedings", "booktitle"
    return "article", "journal"


def _latex(text: str, protect_case: bool = False) -> str:
    """Unicode text -> BibTeX-safe LaTeX: specials escaped (& % # _ { } ~ ^ \\), non-ASCII
    left as UTF-8; `$...$` math with balanced braces is kept as written. With `protect_case`, words
    with inner capitals ({PrivateSeal}, {BERT}) are braced so bibliography styles that
    lower-case titles keep them."""
    out, at = [], 0
    for match in _MATH.finditer(text):
        out.append(_escape(text[at : match.start()], protect_case))
        math = match.group(0)
        out.append(math if _balanced(math) else _escape(math, protect_case))
        at = match.end()
    out.append(_escape(text[at:], protect_case))
    return "".join(out)


_ASCII_ESCAPES = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    '"': '{"}',  # a bare " is read as a closing quote
    "`": "{`}",  # `` is an opening quote, !` and ?` are ¡ and ¿
}


def _escape(text: str, protect_case: bool = False) -> str:
    """Plain text -> LaTeX that decodes back to exactly the same text: the ligatures
    -- and '' are broken up too, so "relevance--diversity" does not come back as an en dash
    (and as a different paper)."""
    if protect_case:
        return "".join(
            "{" + _escape(part) + "}" if _inner_capital(part) else _escape(part)
            for part in re.split(r"(\s+)", text)
        )
    out = []
    for i, ch in enumerate(text):
        nxt = text[i + 1 : i + 2]
        if ch in _ASCII_ESCAPES:
            out.append(_ASCII_ESCAPES[ch])
        elif ch in "-'" and nxt == ch:
            out.append(ch + "{}")
        else:
            out.append(ch)  # non-ASCII stays UTF-8, as Zotero writes it (biber and bibtex8 read it)
    return "".join(out)


def _inner_capital(word: str) -> bool:
    letters = [ch for ch in word if ch.isalpha()]
    return any(ch.isupper() for ch in letters[1:])


def _balanced(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "{}" and i and text[i - 1] == "\\":
            continue
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth < 0:
            return False
    return depth == 0


def _verbatim(text: str) -> str:
    """URLs and DOIs go as written; only braces, which would end the field, are encoded."""
    return text.replace("{", "%7B").replace("}", "%7D")


def _bib_name(name: str) -> str:
    """Names go first-name-first, which BibTeX parses; one with ' and ' or a comma in it
    is braced so it stays one name."""
    if " and " in name or "," in name:
        return "{" + _latex(name) + "}"
    return _latex(name)


def _doi_of(url: str | None) -> str | None:
    if url and _DOI_PREFIX.match(url):
        return _DOI_PREFIX.sub("", url)
    return None
