"""Reading corpora: seed listings (blank-line separated), JSONL and CSV.

Everything is streamed: `iter_papers` yields papers one at a time and reports
malformed records as `Problem`s naming the file and line, so one bad record
never stops the rest (unless `strict`).
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from assistant.corpus.bibtex import is_csl_json, read_bibtex, read_csl_json
from assistant.corpus.records import (
    MAX_RECORD_CHARS,
    Problem,
    ProblemSink,
    parse_authors,
    record_to_paper,
    split_topic,
    venue_from_comment,
    warner,
)
from assistant.errors import CorpusError
from assistant.text import has_word_characters, make_label, paper_id, strip_controls
from assistant.types import Paper, merge

SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".json", ".csv", ".bib")

_BIBTEX = re.compile(r"@\w+\s*[{(]")
_HEADER_VENUE = re.compile(r"^\s*(.+?)\s+((?:19|20)\d{2})\b")
_NAME_PARTICLES = {"de", "van", "von", "der", "den", "di", "da", "la", "le", "du", "del", "dos", "bin", "al"}
_NON_NAME_WORDS = re.compile(
    r"\b(accepted|pages?|figures?|tables?|paper|code|version|conference|workshop|"
    r"spotlight|oral|poster|appendix|submitted|preprint|released)\b",
    re.IGNORECASE,
)


FORMATS = (
    "seed listings (.txt), JSON Lines (.jsonl, .json), CSL-JSON (.json, Zotero's export), "
    "BibTeX/BibLaTeX (.bib) and CSV (.csv)"
)


def find_corpus_files(paths: Iterable[Path | str]) -> list[Path]:
    """Expand folders into their corpus files (sorted); check that files exist and are
    of a format that is read."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix.lower() in SUPPORTED_SUFFIXES)
            if not found:
                raise CorpusError(f"{path} holds no corpus files ({', '.join(SUPPORTED_SUFFIXES)})")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                kind = path.suffix or "extension-less"
                raise CorpusError(f"{path}: {kind} files are not read; the formats read are {FORMATS}")
            files.append(path)
        else:
            raise CorpusError(f"{path} does not exist: give a corpus file or a folder of them")
    return files


def iter_papers(
    paths: Iterable[Path | str],
    on_problem: ProblemSink | None = None,
    strict: bool = False,
) -> Iterator[Paper]:
    """Yield every paper of every file, each id once (duplicates merge their sources).

    With `strict`, the first problem raises `CorpusError`; otherwise problems go
    to `on_problem` and reading goes on.
    """
    problems: list[Problem] = []

    def sink(problem: Problem) -> None:
        if strict:
            raise CorpusError(f"{problem} (nothing was ingested: fix the record or drop --strict)")
        problems.append(problem)
        if on_problem is not None:
            on_problem(problem)

    for file in find_corpus_files(paths):
        yield from read_file(file, sink)


def load_papers(paths: Iterable[Path | str], strict: bool = False) -> tuple[list[Paper], list[Problem]]:
    """Read everything into memory, merging duplicates: for small corpora and tests."""
    problems: list[Problem] = []
    merged: dict[str, Paper] = {}
    for paper in iter_papers(paths, problems.append, strict=strict):
        merged[paper.id] = merge(merged[paper.id], paper) if paper.id in merged else paper
    return list(merged.values()), problems


SETTLE_S = 1.0  # a file modified this recently may still be being written: wait until it is quiet
MAX_SETTLE_WAIT_S = 10.0  # ... for at most this long


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # read_file says why it cannot be read


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _settled_stat(path: Path) -> tuple[int, int]:
    """The file's (size, mtime) once it has not changed for SETTLE_S seconds."""
    deadline = time.monotonic() + MAX_SETTLE_WAIT_S
    while True:
        before = _stat(path)
        age = time.time() - before[1] / 1e9
        if not 0 <= age < SETTLE_S:
            return before
        if time.monotonic() > deadline:
            raise CorpusError(
                f"the file is still being written (it kept changing for {MAX_SETTLE_WAIT_S:.0f} s); "
                "nothing from it was ingested: run the same command again once it is complete"
            )
        time.sleep(min(SETTLE_S - age, 0.25) + 0.01)


def read_stable(path: Path) -> bytes:
    """The file's bytes, read once it has not changed for SETTLE_S seconds; raises
    CorpusError if it changed while it was read (another program is still writing it)."""
    before = _settled_stat(path)
    raw = path.read_bytes()
    if _stat(path) != before or len(raw) != before[0]:
        raise CorpusError(
            "the file changed while it was read (it is still being written); nothing from it was "
            "ingested: run the same command again once it is complete"
        )
    return raw


STREAM_BYTES = 64 * 2**20  # JSON Lines files larger than this are read a line at a time


def _streamed_lines(path: Path, sink: ProblemSink) -> Iterator[str]:
    """A large JSON Lines file's lines, read one at a time so that memory does not grow
    with the file (a million abstracts are 1.7 GB: read whole, held three times over).
    Each line is UTF-8 (a line that is not is reported and skipped) with control
    characters removed; a file that changed while it was read is reported at the end
    (its papers read so far are kept: ingestion is idempotent, so running the command
    again completes it)."""
    try:
        before = _settled_stat(path)
        handle = path.open("rb")
    except (CorpusError, OSError) as exc:
        sink(_unreadable(path, exc))
        return
    removed, content = 0, False
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                sink(
                    Problem(
                        str(path),
                        number,
                        f"not UTF-8 (byte 0x{raw[exc.start]:02x}); this line was skipped. Convert the "
                        f"file to UTF-8, e.g. `iconv -f latin1 -t utf-8 {path.name} > fixed{path.suffix}`",
                    )
                )
                yield ""  # keeps the line numbers of what follows
                continue
            line, cut = strip_controls(line)
            removed += cut
            content = content or bool(line.strip())
            yield line
    if removed:
        sink(Problem(str(path), 0, f"{removed} control character(s) removed from the file", kept=True))
    if not content:
        sink(Problem(str(path), 0, "the file is empty"))
    elif _stat(path) != before:
        sink(
            Problem(
                str(path),
                0,
                "the file changed while it was read (it is still being written); the papers read "
                "before the change were kept: run the same command again once it is complete",
            )
        )


def _unreadable(path: Path, exc: Exception) -> Problem:
    """The problem of a file that could not be read: still being written, or an OS error."""
    if isinstance(exc, CorpusError):
        return Problem(str(path), 0, str(exc))
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return Problem(str(path), 0, f"cannot read the file: {reason}")


def read_file(path: Path, sink: ProblemSink) -> Iterator[Paper]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl" and _size(path) > STREAM_BYTES:
        yield from _read_jsonl(path, _streamed_lines(path, sink), sink)
        return
    try:
        raw = read_stable(path)
    except (CorpusError, OSError) as exc:
        sink(_unreadable(path, exc))
        return
    text = decode(path, raw, sink)
    if text is None:
        return
    text, removed = strip_controls(text)
    if removed:
        sink(
            Problem(
                str(path),
                0,
                f"{removed} control character(s) (NUL, bidirectional overrides, …) removed from the file",
                kept=True,
            )
        )
    if not text.strip():
        sink(Problem(str(path), 0, "the file is empty"))
        return
    if suffix == ".bib":
        yield from read_bibtex(path, text, sink)
    elif suffix == ".json" and text.lstrip().startswith("["):
        if is_csl_json(text):
            yield from read_csl_json(path, text, sink)
        else:
            yield from _read_jsonl(path, io.StringIO(text), sink)
    elif suffix in (".jsonl", ".json"):
        yield from _read_jsonl(path, io.StringIO(text), sink)
    elif suffix == ".csv":
        yield from _read_csv(path, text, sink)
    elif _BIBTEX.match(text.lstrip()):
        sink(
            Problem(
                str(path),
                1,
                f"this looks like BibTeX: rename it to .bib to import it (formats read: {FORMATS})",
            )
        )
    else:
        yield from _read_listing(path, text, sink)


def decode(path: Path, raw: bytes, sink: ProblemSink) -> str | None:
    """UTF-8 (with or without a BOM); else the encoding charset-normalizer detects, said
    in a note; else None, with a problem saying how to convert the file."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        byte = raw[exc.start]
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    if best is None or best.encoding in ("utf_8", "utf-8"):
        sink(
            Problem(
                str(path),
                0,
                f"not UTF-8 (byte 0x{byte:02x} on line {line}) and no other encoding fits; nothing "
                "from this file was ingested: convert it, e.g. "
                f"`iconv -f latin1 -t utf-8 {path.name} > fixed{path.suffix}`",
            )
        )
        return None
    sink(
        Problem(
            str(path),
            line,
            f"not UTF-8 (byte 0x{byte:02x}); read as {best.encoding} (detected). If accents look wrong, "
            f"convert the file to UTF-8 and ingest it again",
            kept=True,
        )
    )
    return str(best).lstrip("\ufeff")


def _read_jsonl(path: Path, lines: Iterable[str], sink: ProblemSink) -> Iterator[Paper]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            reason = exc.msg.removesuffix(" at").rstrip(": ")
            sink(Problem(str(path), number, f"not valid JSON ({reason} at column {exc.colno})"))
            continue
        if not isinstance(record, dict):
            sink(Problem(str(path), number, "expected a JSON object per line"))
            continue
        try:
            yield record_to_paper(record, f"{path.name}:{number}", warner(path, number, sink))
        except ValueError as exc:
            sink(Problem(str(path), number, str(exc)))


MAX_CSV_FIELD = 64 * 2**20  # characters in one CSV field (Python's default is 128 KiB)
_CSV_DELIMITERS = ",;\t|"


class _Lines:
    """The file's lines, fed to csv.reader one at a time, so a bad row can be skipped and
    reading restarted on the next line."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.pos = 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.pos >= len(self.lines):
            raise StopIteration
        self.pos += 1
        return self.lines[self.pos - 1]


def _dialect(header: str) -> type[csv.Dialect] | csv.Dialect:
    """The header's delimiter: `,`, `;` (spreadsheets in much of Europe), tab or `|`."""
    try:
        return csv.Sniffer().sniff(header, delimiters=_CSV_DELIMITERS)
    except csv.Error:
        best = max(_CSV_DELIMITERS, key=header.count)
        if header.count(best) and best != ",":
            return type("sniffed", (csv.excel,), {"delimiter": best})
        return csv.excel


def _looks_like_row(line: str, dialect: type[csv.Dialect] | csv.Dialect, width: int) -> bool:
    """Would this line, alone, be a complete row (the width of the header, a short first field)?"""
    try:
        fields = next(csv.reader([line], dialect))
    except (csv.Error, StopIteration):
        return False
    first = fields[0].strip() if fields else ""
    return len(fields) == width and 0 < len(first) <= 64 and not any(c.isspace() for c in first)


def _read_csv(path: Path, text: str, sink: ProblemSink) -> Iterator[Paper]:
    """Rows as records. The delimiter is sniffed from the header; a malformed row (an
    unclosed quote, too many fields) is reported with its line and only that row is lost."""
    csv.field_size_limit(MAX_CSV_FIELD)
    lines = io.StringIO(text, newline="").readlines()  # \n, \r\n, \r only (not U+2028)
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        sink(Problem(str(path), 1, "the CSV has no header row"))
        return
    dialect = _dialect(lines[0])
    header = next(csv.reader([lines[0]], dialect))
    if len([h for h in header if h.strip()]) < 1:
        sink(Problem(str(path), 1, "the CSV has no header row"))
        return
    width = len(header)
    src = _Lines(lines)
    src.pos = 1
    reader = csv.reader(src, dialect)
    while src.pos < len(lines):
        start = src.pos
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            sink(Problem(str(path), start + 1, f"malformed CSV row ({exc}); this row was skipped"))
            src.pos = start + 1
            reader = csv.reader(src, dialect)
            continue
        number = start + 1
        if not any(cell.strip() for cell in row):
            continue
        swallowed = next(
            (j for j in range(start + 1, src.pos) if _looks_like_row(lines[j], dialect, width)), None
        )
        if swallowed is not None:
            sink(
                Problem(
                    str(path),
                    number,
                    f"a quoted field is not closed, so the row on line {swallowed + 1} was read into "
                    'it; this row was skipped: close its quote (write a quote inside a field as "")',
                )
            )
            src.pos = swallowed
            reader = csv.reader(src, dialect)
            continue
        if len(row) > width:
            delim = getattr(dialect, "delimiter", ",")
            sink(
                Problem(
                    str(path),
                    number,
                    f"the row has more fields ({len(row)}) than the header ({width}; delimiter {delim!r}); "
                    "quote fields that contain the delimiter",
                )
            )
            continue
        record = dict(zip(header, row))
        try:
            yield record_to_paper(record, f"{path.name}:{number}", warner(path, number, sink))
        except ValueError as exc:
            sink(Problem(str(path), number, str(exc)))


# --- seed listings -----------------------------------------------------------


def _blocks(text: str) -> Iterator[tuple[int, str]]:
    """Blank-line separated blocks with the line number each starts on."""
    start, lines = 0, list[str]()
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.rstrip())
        elif lines:
            yield start, "\n".join(lines).strip()
            lines = []
    if lines:
        yield start, "\n".join(lines).strip()


def is_abstract(block: str) -> bool:
    return len(block) >= 200 and block.count(" ") >= 25


def is_topic_line(block: str) -> bool:
    return "·" in block and len(block) < 200 and "\n" not in block and not block.endswith(".")


def is_author_line(block: str) -> bool:
    if len(block) > 2000 or "\n" in block or any(ch.isdigit() for ch in block):
        return False
    if _NON_NAME_WORDS.search(block):
        return False
    names = [n.strip() for n in re.split(r",|;|\band\b", block.rstrip(" 等").rstrip()) if n.strip()]
    if not names:
        return False
    for name in names:
        tokens = name.split()
        if not 1 <= len(tokens) <= 6:
            return False
        for token in tokens:
            if token.lower() in _NAME_PARTICLES:
                continue
            if not (token[0].isupper() or not token[0].isalpha()):
                return False
    return True


def header_venue(header: str) -> tuple[str | None, int | None]:
    """'NeurIPS 2025 Papers' -> ('NeurIPS', 2025); '论文检索' -> (None, None)."""
    match = _HEADER_VENUE.match(header)
    if not match:
        return None, None
    return match.group(1).strip(), int(match.group(2))


@dataclass
class _Pending:
    line: int
    abstract: str
    authors: tuple[str, ...] = ()
    area: str | None = None
    subarea: str | None = None
    comment: str | None = None


def _read_listing(path: Path, text: str, sink: ProblemSink) -> Iterator[Paper]:
    """A listing: optional header, then abstracts with optional topic and author lines
    before them and an optional comment line after them."""
    venue: str | None = None
    year: int | None = None
    blocks = list(_blocks(text))
    if blocks and not is_abstract(blocks[0][1]) and len(blocks[0][1]) < 120:
        header = blocks[0][1]
        if not is_topic_line(header) and not is_author_line(header):
            venue, year = header_venue(header)
            blocks = blocks[1:]
    position = 0
    current: _Pending | None = None
    topic: tuple[str | None, str | None] = (None, None)
    authors: tuple[str, ...] = ()
    pre_line: int | None = None

    def finish(entry: _Pending) -> Paper | None:
        nonlocal position
        position += 1
        if len(entry.abstract) > MAX_RECORD_CHARS:
            sink(Problem(str(path), entry.line, f"abstract longer than {MAX_RECORD_CHARS:,} characters"))
            return None
        if not has_word_characters(entry.abstract):
            sink(Problem(str(path), entry.line, "the abstract has no letters or digits; skipped"))
            return None
        p_venue, p_year = venue, year
        if entry.comment:
            c_venue, c_year = venue_from_comment(entry.comment)
            if c_venue:
                p_venue, p_year = c_venue, c_year
        return Paper(
            id=paper_id(entry.abstract),
            label=make_label(entry.abstract),
            abstract=entry.abstract,
            authors=entry.authors,
            venue=p_venue,
            year=p_year,
            area=entry.area,
            subarea=entry.subarea,
            comment=entry.comment,
            sources=(f"{path.name}:{entry.line}",),
        )

    for line, block in blocks:
        if is_abstract(block):
            if current is not None and (paper := finish(current)) is not None:
                yield paper
            current = _Pending(line, block, authors, topic[0], topic[1])
            topic, authors, pre_line = (None, None), (), None
        elif is_topic_line(block):
            topic, pre_line = split_topic(block), line
        elif is_author_line(block):
            if authors:
                sink(Problem(str(path), line, "two author lines in a row; the first was dropped"))
            authors, pre_line = parse_authors(block), line
        elif current is not None and current.comment is None and pre_line is None:
            current.comment = block
        else:
            sink(
                Problem(
                    str(path),
                    line,
                    f"cannot tell what this block is (not an abstract, topic, author or "
                    f"comment line): {block[:60]!r}",
                )
            )
    if current is not None and (paper := finish(current)) is not None:
        yield paper
    if pre_line is not None:
        sink(Problem(str(path), pre_line, "a topic or author line with no abstract after it"))
