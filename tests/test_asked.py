"""What a question asks for by its head noun, and whether a sentence gives it (pure logic)."""

from __future__ import annotations

import pytest

from assistant.answer.asked import asked_head, asked_kind, gives, named_terms, names_a_kind

MARLA_Q = "Which seven real-world datasets was MARLA evaluated on?"
WBENCH_Q = "On which benchmark was the per-user-keyed watermarking method for existing photos evaluated?"
PRIVATESEAL = (
    "Extensive experiments on the W-Bench benchmark show that PrivateSeal achieves competitive "
    "robustness against diffusion-based regeneration and editing."
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What bit accuracy does PrivateSeal retain after diffusion-based regeneration?", "figure"),
        ("By what factor does ProxySHAP reduce approximation error?", "figure"),
        ("What WikiText-2 perplexity does the pruned model reach?", "figure"),
        (MARLA_Q, "name"),
        ("Which base LLM's activations were used to train the decoder?", "name"),
        ("Which text-to-image generator produced the synthetic images?", "name"),
        ("Which actor-critic algorithm was i-QN combined with for MuJoCo?", "name"),
        ("Which pathway database supplied the genes for the experiment?", "name"),
        ("Which city's demand data did they use for the battery swap station case study?", "name"),
        ("Which ridesharing company supplied the real-world dataset?", "name"),
        # "by name" asks for names whatever the noun
        ("Which baseline bisimulation methods, by name, does BSPO outperform?", "name"),
        # "which specific …" chooses among named things, in the question's own clause
        ("In the unlearning work, which specific baseline methods did it compare against?", "name"),
        ("Which specific linear programming solver software does the framework call?", "name"),
        ("How can you find out which specific facts someone taught a chatbot?", None),
        # "what (exactly) are the … datasets" asks for them as "which datasets" does
        ("What exactly are the model-zoo datasets of pretrained weights used to evaluate it?", "name"),
        ("What are the datasets' sizes?", None),
        ("What specific mechanism does the gate use?", None),
        # a baseline is as often a description ("exhaustive enumeration") as a name, and a
        # method is what the paper does ("a pruning-based method")
        ("Against what baseline does it get similar regret?", None),
        ("What practical method do they derive from that analysis?", None),
        ("Which method learns to predict what a network will do from its activations?", None),
        # "by name" after a verb or "of" names no noun; the paper's own algorithm is as
        # often described as named
        ("What happens when a user refers to the model by name?", None),
        ("Which of the baselines, by name, does it beat?", None),
        ("Which algorithm does the paper propose?", None),
        # the question's own "how many" asks for a number; an embedded one asks nothing
        ("How many samples does the learner need?", "number"),
        ("On how many datasets was it evaluated?", "number"),
        ("Which study gauged how many steps ahead chatbots plan?", None),
        # answered as often in words as in figures or names: not asked by kind
        ("How much does the context length matter?", None),
        ("What rate does the last iterate converge at?", None),
        ("Which paper studies dueling bandits?", None),
        ("Which layers of an LLM hold the concept?", None),
        ("What kind of strategic formulation does it use?", None),
    ],
)
def test_the_kind_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


def test_a_name_given_is_one_the_sources_use_and_the_question_does_not() -> None:
    sentence = "The per-user-keyed watermarking method was evaluated on the W-Bench benchmark [1]."
    assert named_terms(sentence, WBENCH_Q, PRIVATESEAL) == ["W-Bench"]
    assert gives("name", sentence, WBENCH_Q, PRIVATESEAL)
    # the question's own name is no answer, nor is a capital that only starts the sentence
    assert not named_terms(
        "Seven real-world datasets were used to evaluate MARLA [1].", MARLA_Q, "MARLA Seven"
    )
    # a name no given abstract uses is made up, not given
    assert not gives("name", "MARLA was evaluated on CelebA and Waterbirds [1].", MARLA_Q, "MARLA leverages")


def test_a_figure_is_given_by_a_number_or_a_formula() -> None:
    assert gives("figure", "The replacements cut the arithmetic by up to 6.0× [1].", "q", "")
    assert gives("figure", "It converges at rate $O(T^{-1/4})$ [1].", "q", "")
    assert not gives("figure", "PrivateSeal achieves competitive robustness [1].", "q", "")


def test_a_count_of_things_gives_no_measured_figure() -> None:
    """ "across 54 KGs" counts graphs: no rank, accuracy or percentage; a unit ("3 points",
    "two orders of magnitude") or a percentage is a measured figure."""
    assert not gives("figure", "Flock achieves state-of-the-art performance across 54 KGs [1].", "q", "")
    assert not gives("figure", "By combining these two measures, we present TRACED [1].", "q", "")
    assert gives("figure", "It improves the score by 3 points over the baseline [1].", "q", "")
    assert gives("figure", "It cuts the error by two orders of magnitude [1].", "q", "")
    assert gives("figure", "It reaches 54% on entity prediction across KGs [1].", "q", "")
    assert gives("figure", "GlacierNet reaches a mean distance error of 298 metres on CaFFe [1].", "q", "")


def test_an_abstract_names_a_kind_only_next_to_the_noun_asked_about() -> None:
    assert names_a_kind(PRIVATESEAL, WBENCH_Q) == ["W-Bench", "PrivateSeal"]
    erm = "MARLA leverages an ERM-trained model to identify a subspace where errors concentrate."
    assert names_a_kind(erm, MARLA_Q) == []  # ERM-trained stands next to "model", not "datasets"
    assert names_a_kind("We test on 3DShapes and MPI3D datasets.", MARLA_Q) == ["3DShapes", "MPI3D"]
    by_name = "Which baseline bisimulation methods, by name, does BSPO outperform?"
    assert names_a_kind("BSPO beats the DBC and MICo baselines.", by_name) == ["DBC", "MICo"]


def test_the_noun_that_says_what_is_asked_is_no_name_to_look_for() -> None:
    """ "Which LLMs …?" asks for names of LLMs; an abstract listing "GPT-4o and Llama-3"
    need not write "LLMs" (the missing-name check leaves the head noun out)."""
    assert asked_head("Which LLMs does the paper evaluate?") == "LLMs"
    assert asked_head("What AUC does the detector reach on the held-out split?") == "AUC"
    assert asked_head("By what factor does RollVerify speed up training?") == "factor"
    assert asked_head("How many layers does it prune?") is None


def test_a_number_is_given_by_a_count_a_formula_or_a_growth_order() -> None:
    """ "How many …?" is answered by a count of things ("54 KGs", "two domains", "twice the
    input dimension"), a formula or a growth order; not by "in finite time", nor by the
    question's own number, nor by a growth order when the question asks for it exactly."""
    many = "How many iterations does play take to return to the equilibrium's neighborhood?"
    assert not gives("number", "They always return to its vicinity in finite time [1].", many, "")
    assert gives("number", "Play returns within 40 iterations [1].", many, "")
    assert gives("number", "It needs $O((N/M)^2)$ short models [1].", many, "")
    assert gives("number", "A polynomial number of samples suffices [1].", many, "")
    assert gives("number", "Each region has at most twice the input dimension neighbours [1].", many, "")
    exact = "Exactly how many samples does it need, as an explicit polynomial?"
    assert not gives("number", "A polynomial number of samples suffices [1].", exact, "")
    assert not gives(
        "number", "It was tested on 12 benchmarks [1].", "How many of the 12 benchmarks did it win?", ""
    )


def test_the_sentence_that_gives_the_amount_asked_is_shown_first() -> None:
    """An extractive answer (and a model's fallback) shows the sentences closest to the
    question; for "even for how many hidden layers?" those restated the subject and the one
    that answers ("… already for networks with one hidden layer") came fourth. When none
    chosen gives what is asked, the first paper's closest sentence that does goes first."""
    from assistant.answer.asked import giving_asked
    from assistant.answer.evidence import ScoredSentence
    from assistant.answer.extractive import answer_first
    from assistant.types import Hit, Paper

    question = "Enumerating the linear regions of ReLU networks is hard even for networks with how many hidden layers?"
    gives = giving_asked(question, question)
    assert gives is not None
    relu, other = (Hit(Paper(id=i, label=i, abstract="…"), s) for i, s in (("relu", 1.0), ("other", 0.9)))
    texts = [
        "ReLU networks define continuous piecewise-linear functions.",
        "The number of linear regions measures expressive power.",
        "We prove NP- and #P-hardness results already for networks with one hidden layer.",
        "Regions were counted in 2019 by earlier work.",
    ]
    scored = [ScoredSentence(relu, t, 0.8 - 0.05 * n, n) for n, t in enumerate(texts)]
    second = ScoredSentence(other, "Another paper studies deep networks.", 0.7, 0)
    scored.append(second)
    shown = answer_first(scored[:2], scored, gives, 3, 0.3)
    assert [s.text for s in shown] == [texts[2], texts[0], texts[1]]
    assert answer_first(scored[:3], scored, gives, 3, 0.3) == scored[:3]  # already given
    # at most three: the first paper's last sentence makes way, the other paper's stays
    assert answer_first([scored[0], scored[1], second], scored, gives, 3, 0.3) == [
        scored[2],
        scored[0],
        second,
    ]
    assert answer_first(scored[:2], scored, gives, 3, 0.75) == scored[:2]  # too far from the question
    # not asked for a number, a figure or names: nothing moves
    for not_asked in (
        "What does the paper prove about linear regions?",
        "Which paper explains how large language models store factual knowledge?",
        "Which method learns how much each weight matters?",
        "By what mechanism does dropout regularise?",
    ):
        assert giving_asked(not_asked, not_asked) is None, not_asked
    # a year is no number; nor one the question holds; "one" only before what is counted
    assert not gives("Regions were counted in 2019 by earlier work.")
    assert not gives("On the one hand, depth helps; one or more layers are used.")
    held = giving_asked("How many of the 12 layers matter?", "How many of the 12 layers matter?")
    assert held is not None and not held("All 12 layers are studied.")
