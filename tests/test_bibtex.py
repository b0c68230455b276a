"""Reference-manager exports: BibTeX (Zotero, Better BibTeX, BibLaTeX) and CSL-JSON."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import bibtexparser
import pytest

from assistant.corpus.bibtex import is_csl_json, read_bibtex, read_csl_json, to_bibtex
from assistant.corpus.readers import load_papers
from assistant.corpus.records import Problem
from assistant.text import paper_id
from assistant.types import Paper
from tests.conftest import SEEDS

DATA = Path(__file__).parent / "data"
BIB = DATA / "zotero_export.bib"
CSL = DATA / "zotero_export.json"
SEED_FILE = SEEDS / "000_f4414ef37cb00e6d.txt"
SEED_START = "This work analyzes singular-value spectra of weight matrices"


def read(path: Path) -> tuple[dict[str, Paper], list[Problem]]:
    problems: list[Problem] = []
    reader = read_bibtex if path.suffix == ".bib" else read_csl_json
    papers = list(reader(path, path.read_text(encoding="utf-8"), problems.append))
    by_key = {p.external_id: p for p in papers}
    assert len(by_key) == len(papers), "every paper keeps its own citation key"
    return by_key, problems


def line_of(path: Path, needle: str, nth: int = 1) -> int:
    lines = [i for i, line in enumerate(path.read_text().splitlines(), start=1) if needle in line]
    return lines[nth - 1]


@pytest.fixture(scope="module")
def bib() -> tuple[dict[str, Paper], list[Problem]]:
    return read(BIB)


# --- BibTeX ------------------------------------------------------------------------


def test_export_has_fifty_entries_and_every_one_with_an_abstract_is_read(bib) -> None:
    papers, problems = bib
    text = BIB.read_text()
    entries = re.findall(r"^@(\w+)\s*[{(]", text, flags=re.MULTILINE)
    real = [e for e in entries if e.lower() not in ("string", "comment", "preamble")]
    assert len(real) >= 50
    # 3 without an abstract, 1 malformed, 1 repeated key, 1 proceedings only crossref'd
    assert len(papers) == len(real) - 6 == 51
    assert all(p.id == paper_id(p.abstract) for p in papers.values())
    assert all(p.label == p.title for p in papers.values())


def test_problems_name_the_entry_and_its_line(bib) -> None:
    _, problems = bib
    got = sorted((p.line, p.message.split(" (")[0].split(";")[0]) for p in problems)
    assert got == [
        (line_of(BIB, "@article{vaswani_attention_2017"), "entry vaswani_attention_2017 has no abstract"),
        (line_of(BIB, "@inproceedings{he_resnet_2016"), "entry he_resnet_2016 has no abstract"),
        (line_of(BIB, "@misc{kingma_adam_2014"), "entry kingma_adam_2014 has no abstract"),
        (line_of(BIB, "@article{broken_entry_2022"), "entry broken_entry_2022 is malformed"),
        (line_of(BIB, "@article{dup_key_2020", 2), "entry dup_key_2020 repeats a key used above"),
    ]
    by_key = {p.message.split()[1]: p for p in problems}
    assert by_key["vaswani_attention_2017"].message == "entry vaswani_attention_2017 has no abstract; skipped"
    assert all(p.file == str(BIB) for p in problems)
    assert "check its braces" in by_key["broken_entry_2022"].message
    assert "unique key" in by_key["dup_key_2020"].message


def test_latex_accents_and_escapes_are_decoded(bib) -> None:
    papers, _ = bib
    p = papers["muller_latex_2023"]
    assert p.title == "Über die Gödel-Numbering of Neural Programs"
    assert p.authors == ("Jörg Müller", "Émilie François", "Tomáš Kočiský", "Søren Grønlund")
    assert "about 90% of the programs" in p.abstract
    assert (
        "Café-style case studies – naïve baselines included – confirm the Results & the bounds." in p.abstract
    )
    assert (p.venue, p.year) == ("Journal of Machine Learning Research", 2023)
    assert (p.area, p.subarea) == ("interpretability", "program extraction")
    assert p.topic == "interpretability · program extraction"


def test_utf8_export_is_read_as_it_is(bib) -> None:
    p = bib[0]["garcia_unicode_2022"]
    assert p.title == "Native UTF-8 Export: Ωmega Networks for Übersetzung"
    assert p.authors == ("José García", "Åsa Øvergaard", "Văn An Nguyễn")
    assert p.url == "https://doi.org/10.5555/findings.2022.17"  # a DOI written as a link


def test_string_macros_concatenation_and_nested_braces(bib) -> None:
    papers, _ = bib
    bert = papers["devlin_bert_2019"]
    assert bert.title == "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
    assert (
        bert.venue == "Proceedings of the International Conference on Machine Learning"
    )  # pmlr # " " # icml
    assert bert.year == 2019  # an unbraced number
    assert bert.authors == ("Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova")
    assert papers["tanaka_contrastive_2021"].venue == "Transactions on Machine Learning Research"  # tmlr
    assert papers["andersen_bayesian_2023"].venue == "Advances in Neural Information Processing Systems"


def test_crossref_inherits_booktitle_and_year_from_the_proceedings(bib) -> None:
    papers, problems = bib
    child = papers["oriol_crossref_2024"]
    assert (child.venue, child.year) == (
        "Proceedings of the 41st International Conference on Machine Learning",
        2024,
    )
    assert child.authors == ("Marta Oriol", "Laurens van der Maaten", "Pilar de la Cruz", "John Smith Jr.")
    own_year = papers["nakamura_crossref_2024"]
    assert (own_year.venue, own_year.year) == (child.venue, 2023)  # its own year wins
    assert own_year.authors == ("Hiro Nakamura", "OpenAI")  # braced corporate name; "and others" dropped
    assert "icml2024proc" not in papers  # the container is no paper ...
    assert not any("icml2024proc" in p.message for p in problems)  # ... and no problem either


def test_doi_becomes_a_link_and_urls_stay_verbatim(bib) -> None:
    papers, _ = bib
    assert papers["muller_latex_2023"].url == "https://doi.org/10.5555/jmlr.2023.0042"
    assert papers["devlin_bert_2019"].url == "https://example.org/bert_paper%20v2?x=1&y=2~3"
    assert papers["schmidt_bayesian_2019"].url == "https://doi.org/10.5555/synthetic.2003"
    assert papers["oriol_crossref_2024"].url is None


def test_biblatex_fields_uppercase_keys_and_parenthesised_entries(bib) -> None:
    papers, _ = bib
    rahimi = papers["Rahimi2007Random"]
    assert rahimi.title == "Random Features for Large-Scale Kernel Machines"
    assert (rahimi.venue, rahimi.year) == ("Advances in Neural Information Processing Systems", 2007)
    assert rahimi.authors == ("Ali Rahimi", "Benjamin Recht")
    sparse = papers["li_parens_2021"]
    assert sparse.title == "Parenthesised Entries and $\\ell_1$-Regularised Sparse Models"  # math kept
    assert "$\\sqrt{s \\log p / n}$" in sparse.abstract


def test_arxiv_misc_entry_and_sources(bib) -> None:
    papers, _ = bib
    svd = papers["svd_spectra_2025"]
    assert (svd.venue, svd.year) == ("arXiv", 2025)
    assert svd.sources == (f"zotero_export.bib:{line_of(BIB, '@misc{svd_spectra_2025')}",)
    assert svd.area == "Computer Science - Machine Learning"


def test_the_seed_abstract_has_the_seed_id(bib) -> None:
    seeds, _ = load_papers([SEED_FILE])
    seed = next(p for p in seeds if p.abstract.startswith(SEED_START))
    assert bib[0]["svd_spectra_2025"].id == seed.id


def test_bad_input_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "odd.bib"
    text = (
        "@article{a, title = {Unclosed, abstract = {x}\n\n"
        "@article{b, title = {Fine}, journal = nowhere, abstract = {Still read.}}\n"
        "@inproceedings{c, title = {Orphan}, crossref = {missing}, abstract = {Read without a parent.}}\n"
        "this line is junk outside any entry\n"
    )
    problems: list[Problem] = []
    papers = {p.external_id: p for p in read_bibtex(path, text, problems.append)}
    assert set(papers) == {"b", "c"}
    assert papers["b"].venue == "nowhere"
    messages = [p.message for p in problems]
    assert any(m.startswith("entry a is malformed") for m in messages)
    assert any("@string macro 'nowhere' is not defined" in m for m in messages)
    assert any("crossref 'missing' is not in this file" in m for m in messages)
    assert list(read_bibtex(path, "no entries at all", problems.append)) == []


# --- CSL-JSON -----------------------------------------------------------------------


def test_csl_json_items() -> None:
    papers, problems = read(CSL)
    assert len(papers) == 8
    godel = papers["muller_godel_2023"]
    assert godel.title == "Über die Gödel-Numbering of neural Programs"  # rich-text tags dropped
    assert godel.authors == ("Jörg Müller", "Émilie François")
    assert (godel.venue, godel.year) == ("Journal of Machine Learning Research", 2023)
    assert godel.url == "https://doi.org/10.5555/jmlr.2023.0042"
    assert godel.topic == "interpretability · program extraction"
    particles = papers["maaten_particles_2008"]
    assert particles.authors == ("Laurens van der Maaten", "John Smith Jr.", "The Zotero Consortium")
    assert particles.year == 2008  # from {"raw": "Spring 2008"}
    preprint = papers["preprint_2024"]
    assert (preprint.venue, preprint.url) == ("arXiv", "https://doi.org/10.48550/arXiv.2401.00001")
    assert papers["event_title_2022"].venue == "International Conference on Learning Representations"
    assert papers["list_container_2021"].venue == "Transactions on Machine Learning Research"
    assert papers["list_container_2021"].topic == "optimisation · theory"
    assert papers["math_2020"].abstract.startswith(
        "CSL abstracts are plain text, so $\\ell_1$ and 50% and {braces}"
    )
    report = papers["no_date_2018"]
    assert (report.venue, report.year) == (None, None)
    rahimi = papers["http://zotero.org/users/1234/items/RAHIMI07"]
    assert rahimi.sources == (f"zotero_export.json:{line_of(CSL, 'RAHIMI07') - 1}",)  # the line of its "{"
    assert [(p.line, p.message) for p in problems] == [
        (line_of(CSL, '"no_abstract_2019"') - 1, "entry no_abstract_2019 has no abstract; skipped"),
        (
            line_of(CSL, '"whitespace_abstract_2017"') - 1,
            "entry whitespace_abstract_2017 has no abstract; skipped",
        ),
    ]


def test_the_same_paper_in_both_formats_has_one_id(bib) -> None:
    csl, _ = read(CSL)
    assert csl["http://zotero.org/users/1234/items/RAHIMI07"].id == bib[0]["Rahimi2007Random"].id


def test_is_csl_json_tells_csl_from_json_lines() -> None:
    assert is_csl_json(CSL.read_text())
    assert is_csl_json('\ufeff [{"type": "book", "id": "x"}]')
    jsonl = '{"title": "a", "abstract": "b"}\n{"title": "c", "abstract": "d"}\n'
    assert not is_csl_json(jsonl)
    assert not is_csl_json('{"type": "book", "title": "one object"}')
    assert not is_csl_json('[{"title": "no type", "abstract": "x"}]')
    assert not is_csl_json("[1, 2]")
    assert not is_csl_json("[]")
    assert not is_csl_json('[{"type": "book", "id": "x"},')  # truncated


def test_malformed_csl_json_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    text = '[\n  {"id": "ok", "type": "book", "abstract": "Fine."},\n  {"id": "bad", "type": oops}\n]\n'
    problems: list[Problem] = []
    papers = list(read_csl_json(path, text, problems.append))
    assert [p.external_id for p in papers] == ["ok"]
    assert problems[0].line == 3 and "not valid JSON" in problems[0].message
    problems.clear()
    assert list(read_csl_json(path, '{"id": "x"}', problems.append)) == []
    assert "must be a JSON array" in problems[0].message


# --- writing BibTeX ---------------------------------------------------------------


def test_to_bibtex_is_valid_and_reads_back_to_the_same_papers(bib) -> None:
    papers = list(bib[0].values())
    text = to_bibtex(papers, abstracts=True)
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == []
    assert len(library.entries) == len(papers)
    back, problems = {}, []
    for p in read_bibtex(Path("copy.bib"), text, problems.append):
        back[p.id] = p
    assert problems == []
    for p in papers:
        q = back[p.id]
        assert (q.title, q.authors, q.venue, q.year, q.url, q.area, q.subarea) == (
            p.title,
            p.authors,
            p.venue,
            p.year,
            p.url,
            p.area,
            p.subarea,
        ), p.external_id


def test_to_bibtex_round_trips_every_seed_abstract() -> None:
    seeds, _ = load_papers([SEEDS])
    back = list(read_bibtex(Path("seeds.bib"), to_bibtex(seeds, abstracts=True), print))
    assert {p.id for p in back} == {p.id for p in seeds}  # "--", ``quotes'', \#P, $math$ all survive


def test_to_bibtex_entry_shape() -> None:
    papers = [
        Paper(
            id="x",
            label="l",
            abstract="50% of {x} & y_z #1 costs ~$5 -- or \\alpha",
            title="PrivateSeal: Über 50% {of} $\\alpha$-Watermarks",
            authors=("Jörg Müller", "Anna van der Berg"),
            venue="NeurIPS",
            year=2025,
            url="https://doi.org/10.1/abc",
        ),
        Paper(
            id="y",
            label="l",
            abstract="b",
            title="PrivateSeal again",
            authors=("Jörg Müller",),
            venue="NeurIPS",
            year=2025,
        ),
        Paper(id="z", label="l", abstract="c", title="The Journal One", venue="Journal of Things", year=2020),
        Paper(id="w", label="No title here", abstract="d"),
    ]
    text = to_bibtex(papers)
    assert "abstract" not in text  # only on request
    assert "@inproceedings{muller2025privateseal,\n" in text
    assert "@inproceedings{muller2025privateseala,\n" in text  # keys stay unique
    assert "@article{anon2020journal,\n" in text  # "The" is skipped
    assert "@misc{anon" in text
    assert "  booktitle = {NeurIPS},\n" in text and "  journal = {Journal of Things},\n" in text
    assert "  doi = {10.1/abc},\n" in text and "  url = {https://doi.org/10.1/abc},\n" in text
    assert "{PrivateSeal:}" in text  # case protected
    assert "$\\alpha$" in text  # math kept
    assert "50\\% \\{of\\}" in text
    back = {p.title: p for p in read_bibtex(Path("c.bib"), to_bibtex(papers, abstracts=True), print)}
    first = back["PrivateSeal: Über 50% {of} $\\alpha$-Watermarks"]
    assert first.abstract == papers[0].abstract
    assert first.authors == papers[0].authors


# --- ingestion ----------------------------------------------------------------------


def write_jsonl(papers: list[Paper], path: Path) -> Path:
    """Until .bib goes through corpus.read_file: the papers as the JSONL the store reads."""
    with path.open("w", encoding="utf-8") as out:
        for p in papers:
            record = {
                "id": p.external_id,
                "title": p.title,
                "abstract": p.abstract,
                "authors": list(p.authors),
                "venue": p.venue,
                "year": p.year,
                "url": p.url,
                "topic": p.topic,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def test_ingesting_the_export_adds_new_papers_and_a_source_to_the_seed(seeded, tmp_path: Path, bib) -> None:
    before = seeded.stats().papers
    seed_id = next(p.id for p in seeded.catalogue.papers if p.abstract.startswith(SEED_START))
    path = BIB
    report = seeded.ingest([path])
    assert len(report.problems) == 5 and all("zotero_export.bib:" in str(p) for p in report.problems)
    assert (report.seen, report.added, report.skipped, report.sources_updated) == (51, 50, 1, 1)
    assert seeded.stats().papers == before + 50
    seed = next(p for p in seeded.catalogue.papers if p.id == seed_id)
    assert len(seed.sources) == 2 and seed.sources[1].startswith("zotero_export.bib:")
    assert seed.title and seed.authors  # the export filled what the listing lacked
    hits = seeded.search("Gödel numbering of neural programs", k=3)
    assert hits[0].paper.title == "Über die Gödel-Numbering of Neural Programs"
    assert hits[0].paper.authors[0] == "Jörg Müller"
    again = seeded.ingest([path])
    assert (again.added, again.skipped) == (0, 51)


# --- a large export -----------------------------------------------------------------

WORDS = (
    "sparse dense graph kernel spectral causal robust private federated neural bayesian "
    "adaptive stochastic convex online latent contrastive generative implicit optimal"
).split()
ACCENTED = ['M{\\"u}ller', "Fran{\\c{c}}ois", "{\\'E}milie", "Ko{\\v{c}}isk{\\'y}", "Gr{\\o}nlund", "Nguyễn"]
GIVEN = ["Anna", "Wei", 'J{\\"o}rg', "Priya"]


def generated_bib(n: int, rng: random.Random) -> tuple[str, int]:
    """n Zotero-style entries; 10% have no abstract. Returns the text and the number with one."""
    lacking = set(rng.sample(range(n), n // 10))
    parts = ['@string{jmlr = "Journal of Machine Learning Research"}\n']
    for i in range(n):
        words = rng.sample(WORDS, 6)
        title = f"{{{words[0].title()}}} and {words[1]} methods for {words[2]} {words[3]} learning"
        authors = " and ".join(
            f"{rng.choice(ACCENTED)}, {rng.choice(GIVEN)}" for _ in range(rng.randint(1, 5))
        )
        venue = (
            "journal = jmlr"
            if i % 3 == 0
            else "booktitle = {Proceedings of the " + words[4].title() + " Workshop}"
        )
        abstract = (
            f"Entry {i}: we study {words[0]} {words[1]} estimators for {words[2]} problems with "
            f"{rng.randint(2, 10_000)} samples, prove that they reach 90\\% of the optimum -- and "
            f"show on {rng.randint(2, 50)} benchmarks that {words[4]} {words[5]} variants are "
            f"{rng.uniform(1.1, 9.9):.2f} times faster than the state of the art. " * 2
        )
        fields = [f"title = {{{title}}}", f"author = {{{authors}}}", venue, f"year = {{{2000 + i % 26}}}"]
        if i % 2:
            fields.append(f"doi = {{10.5555/gen.{i}}}")
        if i not in lacking:
            fields.append(f"abstract = {{{abstract}}}")
        parts.append(
            f"@{'article' if i % 3 == 0 else 'inproceedings'}{{gen{i:04d},\n  "
            + ",\n  ".join(fields)
            + "\n}\n"
        )
    return "\n".join(parts), n - len(lacking)


def test_a_thousand_entry_export_import_rate(tmp_path: Path) -> None:
    text, with_abstract = generated_bib(1000, random.Random(1000))
    path = tmp_path / "library.bib"
    problems: list[Problem] = []
    started = time.perf_counter()
    papers = list(read_bibtex(path, text, problems.append))
    seconds = time.perf_counter() - started
    rate = len(papers) / 1000
    print(
        f"\n1,000-entry .bib: {len(papers)} papers ({rate:.0%} imported) in {seconds:.2f} s, {1000 / seconds:.0f} entries/s"
    )
    assert rate == with_abstract / 1000 == 0.9
    assert len(problems) == 100 and all(p.message.endswith("has no abstract; skipped") for p in problems)
    assert len({p.id for p in papers}) == 900
    assert all("{" not in a and "\\" not in a for p in papers for a in p.authors)  # every accent decoded
    assert seconds < 120, "parsing should take seconds, not minutes"
