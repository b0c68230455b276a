"""What reference managers and spreadsheets export arrives whole: `%` in BibTeX, CSV
dialects and broken rows, other encodings, odd values, records and questions without
words. Each test fails on the reader of 8b8752b."""

from __future__ import annotations

import json
import random
from pathlib import Path

import bibtexparser
import pytest

from assistant.cli import main
from assistant.corpus.readers import load_papers
from assistant.errors import QuestionError

WORDS = "model data learning graph sparse robust kernel policy token signal layer bound".split()


def abstract(seed: int, extra: str = "") -> str:
    rng = random.Random(seed)
    return " ".join([*(rng.choice(WORDS) for _ in range(40)), *extra.split(), f"case {seed}."])


def test_csv_semicolons_with_a_bom_are_read(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    rows = ["id;title;abstract;year", f"a;Erste Arbeit;{abstract(1)};2024", f"b;Zweite;{abstract(2)};2025"]
    path.write_bytes(("\n".join(rows) + "\n").encode("utf-8-sig"))
    papers, problems = load_papers([path])
    assert problems == []
    assert [(p.title, p.year, p.external_id) for p in papers] == [
        ("Erste Arbeit", 2024, "a"),
        ("Zweite", 2025, "b"),
    ]


def test_a_huge_csv_field_costs_only_its_row(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    huge = "x " * 600_000  # 1.2 MB: more than the csv module's default limit
    path.write_text(
        f'title,abstract\nfirst,{abstract(1)}\nhuge,"{huge}"\nthird,{abstract(3)}\nfourth,{abstract(4)}\n'
    )
    papers, problems = load_papers([path])
    assert [p.title for p in papers] == ["first", "third", "fourth"]
    assert [(p.line, "more than the 100,000 allowed" in p.message) for p in problems] == [(3, True)]


def test_an_unclosed_quote_costs_only_its_row(tmp_path: Path) -> None:
    path = tmp_path / "quote.csv"
    path.write_text(
        "id,title,abstract\n"
        f'1,One,"{abstract(1)}"\n'
        f'2,Two,"{abstract(2)}\n'  # the closing quote is missing
        f'3,Three,"{abstract(3)}"\n'
        f'4,Four,"{abstract(4)}"\n'
    )
    papers, problems = load_papers([path])
    assert [p.title for p in papers] == ["One", "Three", "Four"]
    assert papers[1].abstract == abstract(3)  # not swallowed into row 2
    assert len(problems) == 1 and problems[0].line == 3 and "not closed" in problems[0].message


def test_a_latin1_bib_is_decoded_and_an_undecodable_file_exits_nonzero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bib = tmp_path / "latin.bib"
    text = f"@article{{m1,\n title = {{Über Straßen in Zürich}},\n abstract = {{Die Lösung: {abstract(5)}}},\n}}\n"
    bib.write_bytes(text.encode("latin-1"))
    papers, problems = load_papers([bib])
    assert [p.title for p in papers] == ["Über Straßen in Zürich"]
    assert papers[0].abstract.startswith("Die Lösung:")
    assert len(problems) == 1 and problems[0].kept and "not UTF-8" in problems[0].message

    monkeypatch.setenv("ASSISTANT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ASSISTANT_AUTO_INGEST", "false")
    monkeypatch.setenv("ASSISTANT_INDEX_IN_BACKGROUND", "false")
    assert main(["ingest", "--quiet", str(bib)]) == 0
    assert "1 added" in capsys.readouterr().out
    junk = tmp_path / "junk.txt"
    junk.write_bytes(bytes(range(128, 256)) * 4)
    assert main(["ingest", "--quiet", str(junk)]) == 1
    err = capsys.readouterr().err
    assert "iconv" in err and "nothing was read from 1 file" in err


def test_odd_values_are_fixed_and_said(tmp_path: Path) -> None:
    csl = tmp_path / "zotero.json"
    csl.write_text(
        json.dumps(
            [
                {
                    "id": "s",
                    "type": "article",
                    "title": "Strings",
                    "abstract": abstract(1),
                    "author": "Ada Lovelace and Alan Turing",
                },
                {
                    "id": "y",
                    "type": "article",
                    "title": "Far future",
                    "abstract": abstract(2),
                    "issued": {"date-parts": [[99999]]},
                },
            ]
        )
    )
    jsonl = tmp_path / "nul.jsonl"
    jsonl.write_text(
        json.dumps({"title": "Null\u0000 title \u202eevil", "abstract": abstract(3), "year": 99999})
        + "\n"
        + '{"title": "raw \x00 nul", "abstract": "'
        + abstract(4)
        + '"}\n'
    )
    papers, problems = load_papers([csl, jsonl])
    by_title = {p.title: p for p in papers}
    assert by_title["Strings"].authors == ("Ada Lovelace", "Alan Turing")
    assert by_title["Far future"].year is None
    assert by_title["Null title evil"].year is None
    assert "raw  nul" in by_title  # the raw NUL is removed at the file level, the line is read
    messages = [str(p) for p in problems]
    assert all(p.kept for p in problems), messages
    assert sum("outside 1600" in m for m in messages) == 2
    assert any("control character" in m and "title" in m for m in messages)
    assert not any("at at" in m for m in messages)


def test_records_and_questions_without_words_are_refused(seeded, tmp_path: Path) -> None:
    path = tmp_path / "emoji.jsonl"
    path.write_text(
        json.dumps({"abstract": "🚀🔥 " * 80}) + "\n" + json.dumps({"abstract": abstract(9)}) + "\n"
    )
    report = seeded.ingest([path])
    assert report.added == 1
    assert any("no letters or digits" in str(p) for p in report.problems)
    for question in ("?", "...", "\u200b", "\u202e", "🚀🔥"):
        with pytest.raises(QuestionError, match="no letters or digits|empty"):
            seeded.ask(question)
    assert seeded.search("1", k=1)  # a digit is a question


def _latex(text: str) -> str:
    return text.replace("&", r"\&").replace("é", r"{\'e}").replace("ü", r"{\"u}")


def test_a_5000_entry_zotero_export_arrives_whole(tmp_path: Path) -> None:
    """`%`, `\\&`, accents, `file = {…}` fields, 10% of entries without an abstract: every
    entry with one is imported intact; the rest are reported by key."""
    rng = random.Random(7)
    expected: dict[str, tuple[str, str]] = {}
    without: list[str] = []
    entries = ["% Zotero export\n@comment{jabref-meta: databaseType:bibtex;}\n"]
    for i in range(5000):
        key = f"key{i:04d}"
        title = f"Pruning {rng.randint(1, 99)}% of weights & heads in café model {i}"
        text = (
            f"We prune {rng.randint(1, 99)}% of the weights of a Müller–Lévy net & keep {i}% accuracy. "
            + abstract(i)
        )
        fields = [
            f"  title = {{{_latex(title)}}}",
            f"  file = {{Full Text:files/{i}/paper_{i}%20v2.pdf:application/pdf}}",
        ]
        if i % 10 == 3:
            without.append(key)
        else:
            fields.append(f"  abstract = {{{_latex(text)}}}")
            expected[key] = (title, text)
        entries.append(f"@article{{{key},\n" + ",\n".join(fields) + "\n}\n")
    bib = tmp_path / "library.bib"
    bib.write_text("\n".join(entries))

    papers, problems = load_papers([bib])
    got = {p.external_id: (p.title, p.abstract) for p in papers}
    assert got == expected
    assert sorted(p.message.split()[1] for p in problems) == without
    assert all("no abstract" in p.message for p in problems)
    # bibtexparser's own parse of the file: the same entries, the same raw fields.
    raw = {e.key: e for e in bibtexparser.parse_string(bib.read_text()).entries}
    assert len(raw) == 5000
    for key, (title, text) in expected.items():
        assert raw[key]["title"] == _latex(title)
        assert raw[key]["abstract"] == _latex(text)
