"""The evaluation's fact check (`eval.metrics.fact_hit`, pure logic): an answer that gives
the fact counts however the abstract typeset it."""

from __future__ import annotations

from eval.metrics import fact_hit


def test_a_fact_typeset_in_latex_is_found_in_plain_text() -> None:
    assert fact_hit("Steering improves the truthfulness benchmark by 5.7% [1].", r"$5.7\%$")
    assert fact_hit("RAM was assessed on 12 benchmarks [1].", r"$12$ benchmarks")
    assert fact_hit("It reaches a ratio of $1.8944$ [1].", r"$1.8944$")
    assert fact_hit("The Atari 2600 suite was used [1].", r"Atari $2600$")
    assert fact_hit("It is called i-QN [1].", r"i-qn|iterated $q$-network")


def test_a_bare_number_counts_only_as_a_whole_number() -> None:
    assert not fact_hit("It took 10 seconds [1].", "$0$")
    assert fact_hit("It makes 0 errors [1].", "$0$")
    assert not fact_hit("A ratio of 1.89441 [1].", "$1.8944$")
    assert fact_hit("A ratio of 1.8944.", "$1.8944$")
    assert not fact_hit("A ratio of 2 [1].", "$1.8944$")


def test_overlap_is_the_share_of_question_words_found_in_the_abstract() -> None:
    from eval.overlap import overlap

    abstract = "We prune attention heads of large transformers without retraining."
    # "prunes", "attention", "heads": the last two are the abstract's ("which", "paper" do not count)
    assert overlap("Which paper prunes attention heads?", abstract) == 2 / 3
    assert overlap("What removes parts of big networks cheaply?", abstract) == 0.0
    assert overlap("What is it?", abstract) == 0.0  # no word to count
