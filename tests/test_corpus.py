"""Parsing the seed listings and user corpora."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from assistant.corpus.readers import is_author_line, load_papers
from assistant.corpus.records import parse_authors, venue_from_comment
from assistant.errors import CorpusError
from assistant.text import normalize, paper_id
from tests.conftest import SCIFACT, SEEDS


@pytest.fixture(scope="module")
def seeds() -> list:
    papers, problems = load_papers([SEEDS])
    assert problems == []
    return papers


def by_file(papers: list, prefix: str) -> list:
    return [p for p in papers if any(s.startswith(prefix) for s in p.sources)]


class Starts(dict):
    """papers["first words"] finds the abstract starting with those words."""

    def __missing__(self, start: str):  # type: ignore[no-untyped-def]
        (found,) = [p for p in self.values() if p.abstract.startswith(start)]
        return found


def test_seed_counts(seeds: list) -> None:
    assert len(seeds) == 87
    counts = Counter(p.sources[0].split("_")[0] for p in seeds)
    assert counts == {"000": 19, "001": 19, "002": 19, "003": 10, "004": 20}
    assert len({p.id for p in seeds}) == 87


def test_headers_give_venue_and_year(seeds: list) -> None:
    assert {(p.venue, p.year) for p in by_file(seeds, "000")} == {("NeurIPS", 2025)}
    assert {(p.venue, p.year) for p in by_file(seeds, "001")} == {("ICLR", 2026)}
    assert {(p.venue, p.year) for p in by_file(seeds, "002")} == {("NeurIPS", 2026)}
    # 论文检索 ("paper search") is a header, not a venue.
    assert all(p.venue is None and p.year is None for p in by_file(seeds, "004"))


def test_arxiv_comments_belong_to_the_abstract_before_them(seeds: list) -> None:
    papers = Starts({p.id: p for p in by_file(seeds, "003")})
    sparse = papers["Sparse neural networks promise efficiency"]
    assert sparse.comment == "NeurIPS 2025 Spotlight"
    assert (sparse.venue, sparse.year) == ("NeurIPS", 2025)
    stackelberg = papers["We study payoff manipulation in repeated"]
    assert stackelberg.comment is not None and stackelberg.comment.startswith("Extended version")
    assert stackelberg.comment.endswith("Paper ID: M2635")
    assert (stackelberg.venue, stackelberg.year) == ("ECAI", 2025)
    fewshot = papers["Few-shot image classification remains ch"]
    assert fewshot.comment == "ICML 2025. Our code will be released soon"
    assert (fewshot.venue, fewshot.year) == ("ICML", 2025)
    market = papers["Market-based agents refer to reinforceme"]
    assert (market.venue, market.year, market.comment) == ("AAMAS", 2025, "Accepted at AAMAS 2025")
    bai = papers["This paper formulates a new Best-Arm Ide"]
    assert (bai.venue, bai.year) == ("ECAI", 2024)
    prediction = papers["Prediction markets are useful for estima"]
    assert prediction.comment == "15 pages, 4 figures"
    assert prediction.venue is None and prediction.year is None
    lars = papers["LARS and LAMB have emerged as prominent t"]
    assert lars.comment is None  # last abstract, nothing after it
    assert sum(1 for p in papers.values() if p.comment) == 6


def test_topic_and_author_lines_come_before_the_abstract(seeds: list) -> None:
    papers = Starts({p.id: p for p in by_file(seeds, "004")})
    first = papers["We study gradient-based data attribution"]
    assert first.area == "Social Aspects"
    assert first.subarea == "Accountability, Transparency and Interpretability"
    assert first.authors == ("Shuangqi Li", "Hieu Le", "Jingyi Xu", "Mathieu Salzmann")
    # An entry with no topic line: its authors are its own, and the next entry is not shifted.
    alignment = papers["Recent alignment methods for large langu"]
    assert alignment.topic is None
    assert alignment.authors == ("Alexandros Hollender", "Sonja Kraiczy")
    ab = papers["A/B testing has become a gold standard f"]
    assert ab.topic == "General Machine Learning · Causality"
    assert ab.authors[0] == "Xiangkun Wu"
    kernel = papers["We study kernel regression with common r"]
    assert kernel.topic is None
    assert kernel.authors == ("Dhruva Karkada", "Joseph Turnbull", "Yuxi Liu", "James Simon")
    # 等 means "et al." and is not a name.
    steering = papers["Activation steering, or representation e"]
    assert steering.authors[-1] == "Manling Li"
    assert len(steering.authors) == 10
    # A name repeated in one list is one author.
    rl = papers["The vast majority of Reinforcement Learn"]
    assert rl.authors.count("Théo Vincent") == 1
    assert rl.authors == ("Théo Vincent", "Daniel Palenicek", "Boris Belousov", "Jan Peters", "Carlo D Eramo")
    gnn = papers["We study the problem of zero-shot link p"]
    assert gnn.topic == "Deep Learning · Graph Neural Networks"
    assert "Michael Bronstein" in gnn.authors


def test_text_is_kept_exactly_but_search_sees_it_normalised(seeds: list) -> None:
    raw = (SEEDS / "001_41fdf5f793ca3f13.txt").read_text(encoding="utf-8")
    dmnl = next(p for p in seeds if p.abstract.startswith("Conventional (contextual) MNL"))
    assert dmnl.abstract in raw
    assert "$\\texttt{OFU-DMNL}$" in dmnl.abstract and "*diversified multinomial logit*" in dmnl.abstract
    assert "OFU-DMNL" in normalize(dmnl.abstract) and "$" not in normalize(dmnl.abstract)
    attention = next(p for p in seeds if p.abstract.startswith("The quadratic complexity of self"))
    assert "\u2011" in attention.abstract  # non-breaking hyphen kept
    assert "self-attention" in normalize(attention.abstract)


def test_ids_are_stable_and_labels_short(seeds: list) -> None:
    for p in seeds:
        assert p.id == paper_id(p.abstract)
        assert 10 <= len(p.label) <= 92
    assert paper_id("Some  abstract\u00a0text.") == paper_id("some abstract text.")


def test_a_large_jsonl_file_is_streamed_with_the_same_papers_and_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above STREAM_BYTES a JSON Lines file is read a line at a time (a million abstracts
    read whole held the file three times over): the same papers, the same line numbers in
    problems; a line that is not UTF-8 costs that line, not the file."""
    from assistant.corpus import readers

    lines = [
        "\ufeff" + json.dumps({"id": "a", "title": "First", "abstract": "Alpha " * 30}),
        "{not json",
        "",
        json.dumps({"id": "b", "title": "Second\u202e", "abstract": "Beta " * 30}),
    ]
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole, whole_problems = load_papers([good])
    monkeypatch.setattr(readers, "STREAM_BYTES", 0)
    streamed, streamed_problems = load_papers([good])
    assert streamed == whole and [p.title for p in streamed] == ["First", "Second"]
    assert sorted((p.line, p.kept) for p in streamed_problems) == sorted(
        (p.line, p.kept) for p in whole_problems
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        b'{"id": "c", "abstract": "caf\xe9 '
        + b"x " * 40
        + b'"}\n'
        + good.read_bytes().removeprefix("\ufeff".encode())
    )
    papers, problems = load_papers([bad])
    assert [p.title for p in papers] == ["First", "Second"]
    latin = next(p for p in problems if p.line == 1)
    assert "not UTF-8" in latin.message and "iconv" in latin.message and not latin.kept
    assert any(p.line == 3 and "not valid JSON" in p.message for p in problems)  # numbering kept


def test_same_abstract_in_two_files_is_one_paper_with_both_sources(tmp_path: Path) -> None:
    text = (SEEDS / "000_f4414ef37cb00e6d.txt").read_text(encoding="utf-8")
    first_abstract = text.split("\n\n")[1]
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"abstract": first_abstract, "url": "http://x"}) + "\n")
    papers, problems = load_papers([tmp_path])
    assert problems == []
    assert len(papers) == 19
    dup = next(p for p in papers if p.abstract == first_abstract)
    assert dup.sources == ("a.txt:3", "b.jsonl:1")
    assert dup.url == "http://x" and dup.venue == "NeurIPS"


def test_jsonl_and_csv_with_malformed_records(tmp_path: Path) -> None:
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "_id": "p1",
                        "title": "Paper one",
                        "abstract": "Alpha " * 50,
                        "authors": ["A B", "C D"],
                        "year": 2024,
                        "venue": "ICML",
                    }
                ),
                "{not json",
                json.dumps({"id": "p3", "title": "No abstract"}),
                json.dumps(
                    {"id": "p4", "text": "Beta " * 50, "authors": "E F, G H", "venue": "NeurIPS 2023"}
                ),
            ]
        )
        + "\n"
    )
    csv_file = tmp_path / "d.csv"
    csv_file.write_text(
        'id,title,abstract,year\nq1,Q one,"Gamma gamma, gamma.",2022\nq2,Q two,,2021\nq3,Q three,Delta,notayear\n'
    )
    papers, problems = load_papers([jsonl, csv_file])
    assert [p.title for p in papers] == ["Paper one", None, "Q one"]
    assert papers[0].external_id == "p1" and papers[0].authors == ("A B", "C D")
    assert (papers[1].venue, papers[1].year, papers[1].authors) == ("NeurIPS", 2023, ("E F", "G H"))
    assert papers[0].label == "Paper one"
    where = sorted((Path(p.file).name, p.line) for p in problems)
    assert where == [("c.jsonl", 2), ("c.jsonl", 3), ("d.csv", 3), ("d.csv", 4)]
    assert "not valid JSON" in next(str(p) for p in problems if p.line == 2)
    with pytest.raises(CorpusError, match="c.jsonl:2"):
        load_papers([jsonl], strict=True)


def test_bad_files_are_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("Caf\xe9 ".encode("latin-1") * 100)  # decoded, with a note
    (tmp_path / "binary.txt").write_bytes(bytes(range(128, 256)) * 3)  # no encoding fits: refused
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "ok.jsonl").write_text(json.dumps({"abstract": "An abstract about things. " * 10}) + "\n")
    papers, problems = load_papers([tmp_path])
    assert sorted(p.sources[0] for p in papers) == ["latin.txt:1", "ok.jsonl:1"]
    assert next(p for p in papers if p.sources[0] == "latin.txt:1").abstract.startswith("Café Café")
    by_file = {Path(p.file).name: p for p in problems}
    assert by_file["latin.txt"].kept and "not UTF-8" in by_file["latin.txt"].message
    assert not by_file["binary.txt"].kept and "iconv" in by_file["binary.txt"].message
    assert "empty" in by_file["empty.jsonl"].message
    with pytest.raises(CorpusError, match="does not exist"):
        load_papers([tmp_path / "missing.txt"])


def test_scifact_corpus_loads_as_it_is() -> None:
    if not (SCIFACT / "corpus.jsonl").exists():
        pytest.skip("shared/benchmarks/scifact is not beside the checkout")
    papers, problems = load_papers([SCIFACT / "corpus.jsonl"])
    assert problems == []
    assert len(papers) >= 5150  # a few SciFact abstracts are duplicates of each other
    assert all(p.title and p.external_id for p in papers)


def test_helpers() -> None:
    assert parse_authors("A B, C D, A B 等") == ("A B", "C D")
    assert venue_from_comment("Accepted at AAMAS 2025") == ("AAMAS", 2025)
    assert venue_from_comment("15 pages, 4 figures") == (None, None)
    assert is_author_line("Fabian Fumagalli, R. Teal Witter, Christopher Musco")
    assert not is_author_line("Accepted at AAMAS 2025")
    assert not is_author_line("ICML 2025. Our code will be released soon")


def test_the_names_a_question_uses_are_read_whole_in_any_script() -> None:
    """What the unknown-name refusal looks up: hyphenated words whole, accented names whole,
    no word that opens a sentence (but 'e.g.' ends none), and no figure or version."""
    from assistant.text import name_parts, question_words

    words = question_words("Which papers list Théo Akgül? Compare e.g. YaRN-style 64k on 1-shot YAP1.")
    assert words == ["papers", "list", "Théo", "Akgül", "e", "g", "YaRN-style", "64k", "1-shot", "YAP1"]
    assert [p for w in words for p in name_parts(w)] == ["Théo", "Akgül", "YaRN"]
    assert name_parts("Gale-Shapley") == ["Gale", "Shapley"] and name_parts("Q-heads") == []
    # A sentence opens past quotes, brackets and Spanish marks: '¿Qué' and '“Explain' open one.
    assert question_words("¿Qué es PrivateSeal? “Explain (Which) ScanNet.") == [
        "es",
        "PrivateSeal",
        "ScanNet",
    ]
