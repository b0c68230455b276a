"""Hybrid search over the real seeded store with the real embedder."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.errors import FilterError, QuestionError

# Paraphrases written from the abstracts: (question, first words of the gold abstract).
PARAPHRASES = [
    (
        "Can long-sequence transformers be emulated by transformers that only see short inputs?",
        "The quadratic complexity of self",
    ),
    (
        "singular values of weight matrices compared against random matrix theory",
        "This work analyzes singular-value spectra",
    ),
    (
        "which work proves that computing Phi-equilibria or correlated equilibria is PPAD-hard?",
        "Correlated equilibria",
    ),
    (
        "a registration model that aligns 3D point clouds across different sensors",
        "We present Register Anything Model",
    ),
    (
        "unlearning training examples to recover the model trained on the rest of the data",
        "Machine unlearning algorithms aim",
    ),
    (
        "zero-shot link prediction with knowledge graph foundation models",
        "We study the problem of zero-shot link",
    ),
    ("watermarks that survive diffusion-based image regeneration", "Diffusion-driven image editing"),
    (
        "experimenting with A/B tests when treatments are assigned over time",
        "A/B testing has become a gold standard",
    ),
    ("positional encoding built from group actions, unifying rotary embeddings", "We present GRAPE"),
    ("how stable is large batch training with LARS and LAMB optimizers", "LARS and LAMB have emerged"),
    (
        "do language models faithfully simulate individual people's privacy choices?",
        "Large language models (LLMs) are increasingly used to simulate",
    ),
    ("getting rid of target networks in deep Q-learning", "The use of target networks"),
]


@pytest.mark.parametrize(("question", "gold"), PARAPHRASES)
def test_paraphrased_questions_find_their_abstract(bot, question: str, gold: str) -> None:
    hits = bot.search(question, k=3)
    assert hits[0].paper.abstract.startswith(gold), [h.paper.label for h in hits]


def test_hits_are_typed_and_ranked(bot) -> None:
    result = bot.search("privacy in federated learning at scale", k=5)
    assert len(result) == 5
    assert [h.rank for h in result] == [1, 2, 3, 4, 5]
    assert all(a.score >= b.score for a, b in zip(result.hits, result.hits[1:]))
    top = result[0]
    assert top.paper.id and top.paper.abstract and top.paper.sources
    assert top.dense_score is not None and -1 <= top.dense_score <= 1


def test_explicit_filters(bot) -> None:
    for hit in bot.search("game theory equilibria", k=10, filters={"venue": "NeurIPS 2025"}):
        assert (hit.paper.venue, hit.paper.year) == ("NeurIPS", 2025)
    hits = bot.search("learning", k=20, filters={"year": "2024-2025"})
    assert hits and all(2024 <= h.paper.year <= 2025 for h in hits)
    assert {h.paper.venue for h in hits} >= {"NeurIPS", "ECAI"}
    hits = bot.search("reinforcement learning", k=10, filters={"author": "theo VINCENT"})
    assert len(hits) == 2 and all("Théo Vincent" in h.paper.authors for h in hits)
    hits = bot.search("networks", k=10, filters={"topic": "Graph Neural Networks"})
    assert len(hits) == 1 and hits[0].paper.subarea == "Graph Neural Networks"
    hits = bot.search("networks", k=20, filters={"topic": "Deep Learning"})
    assert len(hits) == 8 and all(h.paper.area == "Deep Learning" for h in hits)


def test_filters_apply_identically_to_dense_and_lexical(bot) -> None:
    retriever = bot._ready()
    catalogue = retriever.catalogue
    from assistant.types import Filters

    for raw in ({"venue": "ICLR"}, {"year": "2025"}, {"author": "Jan Peters"}, {"topic": "Theory"}):
        filters = catalogue.resolve(Filters.from_mapping(raw))
        allowed = {catalogue.papers[i].id for i in np.flatnonzero(catalogue.mask(filters))}
        where = catalogue.where(filters)
        with bot.store.session() as session:
            in_chroma = set(session.collection.get(where=where, include=[])["ids"])
        assert in_chroma == allowed, raw


def test_unknown_filters_list_the_valid_values(bot) -> None:
    with pytest.raises(FilterError, match="valid venues: AAMAS, ECAI, ICLR, ICML, NeurIPS"):
        bot.search("x", filters={"venue": "CVPR"})
    with pytest.raises(FilterError, match="valid filters are"):
        bot.search("x", filters={"colour": "red"})
    with pytest.raises(FilterError, match="did you mean Michael Bronstein"):
        bot.search("x", filters={"author": "Micheal Bronstien"})
    with pytest.raises(FilterError, match="empty"):
        bot.search("x", filters={"year": "2026-2024"})
    with pytest.raises(FilterError, match="at least 1"):
        bot.search("x", k=0)
    with pytest.raises(FilterError, match="at most"):
        bot.search("x", k=10_000)


def test_bad_questions(bot) -> None:
    with pytest.raises(QuestionError, match="empty"):
        bot.search("   \n\t ")
    with pytest.raises(QuestionError, match="limit"):
        bot.search("why " * 10_000)
    assert len(bot.search("graph\x00 neural\x07 networks", k=3)) == 3


def test_venue_and_year_named_in_the_question_become_filters(bot) -> None:
    result = bot.search("ICLR 2026 papers on game theory", k=5)
    assert (result.filters.venue, result.filters.year_from) == ("ICLR", 2026)
    assert result.detected.venue == "ICLR" and result.matching == 19
    assert all((h.paper.venue, h.paper.year) == ("ICLR", 2026) for h in result)
    assert "game" in result[0].paper.abstract.lower()


def test_author_surname_in_the_question(bot) -> None:
    result = bot.search("what has Bronstein worked on?", k=5)
    assert result.filters.author == "Michael Bronstein"
    assert len(result) == 1 and "knowledge graphs" in result[0].paper.abstract


def test_topic_named_in_the_question_is_boosted(bot) -> None:
    result = bot.search("Graph Neural Networks papers from 2025", k=5)
    # No GNN paper has a year, so the year read from the question is relaxed, and said so.
    assert result.notes and "searched without it" in result.notes[0]
    assert result[0].paper.subarea == "Graph Neural Networks"
    assert "Graph Neural Networks" in result.boosts


def test_detection_can_be_switched_off(bot) -> None:
    result = bot.search("ICLR 2026 papers on game theory", k=5, detect=False)
    assert result.filters.is_empty() and result.matching == 87


def test_filtered_search_scans_exactly_the_kept_rows(bot) -> None:
    catalogue = bot.catalogue
    for question, filters in [
        ("equilibria in games", {"venue": "NeurIPS"}),
        ("privacy", {"year": "2026"}),
        ("reinforcement learning", {"topic": "Reinforcement Learning"}),
        ("bandits", {"year": "2024-2025"}),
    ]:
        result = bot.search(question, k=5, filters=filters, detect=False)
        kept = catalogue.mask(catalogue.resolve(result.filters))
        rows = np.flatnonzero(kept)
        sims = catalogue.vectors[rows] @ bot.embedder.encode_query(question)
        best = {catalogue.papers[rows[j]].id: float(sims[j]) for j in np.argsort(-sims)[:5]}
        assert result.matching == len(rows) and all(kept[catalogue.index[h.paper.id]] for h in result)
        assert max(result.dense_top) == pytest.approx(max(best.values()), abs=1e-5), question


def test_a_filtered_scan_in_blocks_scores_exactly_the_kept_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The filtered scan copies a block of rows at a time (one large copy is slow to first
    touch); the scores are those of the one-shot product, in the rows' order."""
    from assistant.search import retrieve

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((1000, 8)).astype(np.float32)
    vector = rng.standard_normal(8).astype(np.float32)
    rows = np.sort(rng.choice(1000, 301, replace=False))
    monkeypatch.setattr(retrieve, "SCAN_ROWS", 64)
    assert np.allclose(retrieve.scan(vectors, rows, vector), vectors[rows] @ vector)
    assert np.allclose(retrieve.scan(vectors, rows[:10], vector), vectors[rows[:10]] @ vector)
