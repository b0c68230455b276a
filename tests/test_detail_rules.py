"""The detail rules (`evidence.DETAILS`) on the questions they misread (pure logic)."""

from __future__ import annotations

from assistant.answer.evidence import detail_reported, requested_details


def _names(question: str) -> list[str]:
    return [d.name for d in requested_details(question)]


def test_how_much_as_the_object_of_a_verb_asks_for_no_number() -> None:
    """ "what is used to estimate how much each block adds?" asks for a method, not a number;
    "… learns how much each weight matters" describes the paper."""
    assert "a number" not in _names(
        "In the work treating each block of a language model as a player, what is used to cheaply "
        "estimate how much each block adds to overall quality?"
    )
    assert "a number" not in _names(
        "Which paper on data attribution learns how much each weight matters from data?"
    )
    # the question's own "how many" still asks, after a preposition or an adverb too
    assert "a number" in _names("How many datasets is MARLA evaluated on?")
    assert "a number" in _names("On how many knowledge graphs was Flock evaluated?")
    assert "a number" in _names("Roughly how many seconds does the unlearning method take?")


def test_an_order_of_growth_answers_how_many_unless_an_exact_figure_is_asked() -> None:
    abstract = "The algorithm returns a stable allocation given a polynomial number of samples."
    question = "How many noisy queries, in terms of growth order, does the algorithm need?"
    (number,) = [d for d in requested_details(question) if d.name == "a number"]
    assert detail_reported(question, number, abstract)
    exact = "Exactly how many samples does the algorithm need, as an explicit polynomial?"
    (number,) = [d for d in requested_details(exact) if d.name == "a number"]
    assert not detail_reported(exact, number, abstract)


def test_at_run_time_says_when_not_how_long() -> None:
    assert "a wall-clock time" not in _names(
        "What sort of optimizer is called at run time to obtain the equilibrium?"
    )
    assert "a wall-clock time" in _names("What is the run time of the solver?")


def test_a_warm_up_of_the_step_size_asks_for_no_learning_rate() -> None:
    """ "Which gradual ramp-up of the step size does it make unnecessary?" asks for a warm-up
    strategy, which an abstract states ("with and without a warm-up strategy") without naming
    a learning rate; a question for the rate itself still asks for one."""
    assert "a learning rate" not in _names(
        "Which gradual ramp-up of the step size does the layer-wise optimizer for huge batches make unnecessary?"
    )
    assert "a learning rate" not in _names("Does the method still need a learning-rate warm-up?")
    assert "a learning rate" in _names("What learning rate does the GRAPE paper use for its experiments?")
    assert "a learning rate" in _names("Which step size does the method use?")


def test_a_score_function_asks_for_no_score_figure() -> None:
    """ "does the true score function minimize the denoising loss?" asks a yes/no question
    about diffusion theory, not for a score; "what F1 score" still asks for one."""
    assert "an accuracy or score figure" not in _names(
        "In the theoretical work on diffusion memorization, does the true (population) score function "
        "minimize the empirical denoising loss?"
    )
    assert "an accuracy or score figure" not in _names("Which score-based models does it study?")
    assert "an accuracy or score figure" in _names("What F1 score does the tagger reach?")


def test_a_detail_word_that_begins_a_compound_modifier_asks_for_no_detail() -> None:
    """ "what state can accuracy-seeking goals push a population into?" asks for a state
    (it was refused: "does not report an accuracy or score figure"); "F1-score" is a score."""
    assert "an accuracy or score figure" not in _names(
        "If a platform's predictions feed back into its users' beliefs, what collective state can "
        "ordinary accuracy-seeking goals push the whole population into?"
    )
    assert "an accuracy or score figure" not in _names("Which recall-oriented objective does it optimise?")
    assert "an accuracy or score figure" in _names("What F1-score does the tagger reach?")
    assert "an accuracy or score figure" in _names("What accuracy does the accuracy-tuned model reach?")


def test_training_accelerated_by_a_percentage_reports_a_speed_up() -> None:
    question = "Roughly what percentage training speedup does the regularizer give on next-token prediction?"
    (speed,) = [d for d in requested_details(question) if d.name == "a speed-up figure"]
    abstract = (
        "The penalty consistently accelerates training by approximately $35$\\% and $75$\\% respectively."
    )
    assert detail_reported(question, speed, abstract)
    assert not detail_reported(question, speed, "The penalty helps grokking on modular arithmetic.")


def test_a_term_of_art_with_a_one_letter_prefix_is_no_missing_name() -> None:
    """ "Q-networks" and "k-means" describe; an abstract may write "online network" or
    "clustering". A name proper ("HH-RLHF", "t-SNE") is still looked up."""
    from assistant.answer.evidence import missing_names

    abstract = "We freeze only the last linear layer of the online network and share the rest."
    assert missing_names("How many Q-networks does the method need?", abstract) == []
    assert missing_names("Does it cluster with k-means?", abstract) == []
    assert missing_names("What does it gain on HH-RLHF and in t-SNE plots?", abstract) == ["HH-RLHF", "t-SNE"]


def test_a_dataset_known_by_its_name_reports_the_datasets_used() -> None:
    """ "Which real image dataset did they validate the theory on?" of an abstract that says
    "We validate the theory on synthetic Gaussian mixtures and CIFAR-10." was refused: the
    abstract never writes "dataset"."""
    question = "Which real image dataset did they validate the theory on?"
    (used,) = [d for d in requested_details(question) if d.name == "the datasets used"]
    assert detail_reported(
        question, used, "We validate the theory on synthetic Gaussian mixtures and CIFAR-10."
    )
    assert not detail_reported(question, used, "We validate the theory on synthetic Gaussian mixtures.")
