"""Quantities in answer sentences: what counts as one and when a source states it."""

from __future__ import annotations

import pytest

from assistant.answer.quantities import quantities, unstated
from assistant.answer.respectively import bindings


def values(text: str) -> list[float]:
    return [q.value for q in quantities(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("reduces word error rate from 12.4% to 9.8%", [12.4, 9.8]),
        ("GPT-4, ResNet-50, Qwen2.5, F1 and 3D are names, 0.91 is not", [0.91]),
        ("1,024 tokens, 1.5M parameters, a 7B model, 10k images", [1024, 1.5e6, 7e9, 1e4]),
        ("3x faster and 3× cheaper", [3, 3]),
        ("2-5 epochs, 12–15 hours", [2, 5, 12, 15]),
        ("two datasets, twenty tasks and 1.5 million users", [1.5e6, 2, 20]),
        ("a 12\\% gain [1, 2] in 2024", [12, 2024]),
        ("exact computation needs $2^d$ evaluations, 2 ^ n states, 16 heads", [16]),
        ("rotations up to $180^\\circ$, 85.2^{\\dagger} and a 1,000-dimensional space", [180, 85.2]),
    ],
)
def test_quantities_are_read_as_written(text: str, expected: list[float]) -> None:
    assert values(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("sentence", "source", "missing"),
    [
        ("It reaches about 12% accuracy.", "we get 12.4 % accuracy", []),
        ("It reaches 21% accuracy.", "we get 12.4 % accuracy", ["21%"]),
        ("It reaches 13% accuracy.", "we get 12.4 % accuracy", ["13%"]),
        ("It reaches 99.9% on every benchmark.", "accuracy of 91.2% on MNIST", ["99.9%"]),
        ("Accuracy is 91%.", "an accuracy of 0.91", []),
        ("It uses 2 datasets.", "on two datasets", []),
        ("It trains 1.5 million users.", "1.5M users", []),
        ("It scores 12.40.", "it scores 12.4", []),
        ("It scores 12.41.", "it scores 12.4", ["12.41"]),
        ("GPT-4 is compared.", "we compare with GPT-3", []),
        # a percent sign after LaTeX math is the figure's: "$35$\\%" states 35%
        ("It trains about 35% faster.", "accelerates training by approximately $35$\\% and $75$\\%", []),
        ("It trains about 35% faster.", "a gain of $\\mathbf{35}$\\%", []),
    ],
)
def test_a_quantity_counts_only_if_the_source_states_it(
    sentence: str, source: str, missing: list[str]
) -> None:
    gone = unstated(quantities(sentence), quantities(source))
    assert [q.text + ("%" if q.percent else "") for q in gone] == missing


@pytest.mark.parametrize(
    ("text", "formula"),
    [
        ("a rate of $O(T^{-1/4})$ in general", [True, True]),
        ("it needs O((N/M)^2) models", [True]),
        ("regret $ O(d_0^{1/3} T^{2/3} \\log(d))$", [True, True, True, True]),
        ("on $12$ benchmarks with a $5.7\\%$ gain", [False, False]),
        ("2.1x faster with 14B parameters", [False, False]),
        ("it costs $5 per call and $10 per batch", [False, False]),  # money, not math
        ("a $7\\mathrm{B}$ model with $N = 12$ layers", [False, False]),  # a unit; a value given
        ("with $\\alpha = 0.3$ and $x^{2}$", [False, True]),
    ],
)
def test_a_formula_s_numbers_are_no_figures(text: str, formula: list[bool]) -> None:
    """An exponent or a number inside math with a variable has no role of its own to check."""
    from assistant.answer.quantities import in_formula

    assert [in_formula(text, q) for q in quantities(text)] == formula


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("across 54 KGs from diverse domains", [True]),
        ("we evaluate 22 state-of-the-art LLMs", [True]),
        ("By combining these two measures, we present", [True]),
        ("of 1,000 users", [True]),
        ("improves by 3 points over the baseline", [False]),  # a unit
        ("two orders of magnitude fewer", [False]),
        ("up to 12 times faster", [False]),
        ("reaches 85.2% accuracy", [False]),  # a percentage, a decimal
        ("achieves 85 on three benchmarks", [False, True]),  # "on" ends what 85 measures
        ("a speed-up of 3x on GPUs", [False]),
        # factors and rates are figures, not counts
        ("achieves 3x speedups", [False]),
        ("uses 4x fewer parameters", [False]),
        ("processes twice as many tokens", [False]),
        ("tenfold fewer parameters", [False]),
        ("1,200 tokens per second", [False]),
        ("an error of 3 pixels", [False]),
        # physical units measure ("a mean distance error of 298 metres": found in Chromium)
        ("a mean distance error of 298 metres on CaFFe", [False]),
        ("a model of 12 gigabytes", [False]),
        ("scores 70 whereas baselines", [False]),
    ],
)
def test_a_count_of_things_is_told_from_a_measured_figure(text: str, counts: list[bool]) -> None:
    from assistant.answer.quantities import counts_things

    assert [counts_things(text, q) for q in quantities(text)] == counts


def test_the_name_a_figure_is_given_for() -> None:
    from assistant.answer.checker import _qualifier
    from assistant.answer.quantities import words_after

    def named(text: str) -> str | None:
        return _qualifier(words_after(text, quantities(text)[0], 6))

    assert named("an average test MSE of 0.014 on the World Values Survey [1].") == "World Values Survey"
    assert named("a $5.7\\%$ gain on HH-RLHF helpfulness") == "HH-RLHF"
    assert named("a 5.7% gain over strong baselines") is None  # no name
    assert named("reaches 85% accuracy") is None


_GROKKING = (
    "Experiments on algorithmic and next-token-prediction tasks show that our regularizer consistently "
    "catalyzes grokking and accelerates training by approximately $35$\\% and $75$\\% respectively."
)
_LMKAN = (
    "lmKAN-based CNNs cut inference FLOPs at matched accuracy by 1.6–2.1× and by 1.7× on the CIFAR-10 "
    "and ImageNet-1k datasets, respectively."
)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (_GROKKING, [(["35"], {"algorithmic"}), (["75"], {"next", "token", "prediction"})]),
        (_LMKAN, [(["1.6", "2.1"], {"cifar"}), (["1.7"], {"imagenet"})]),
        (
            "Screening rates were 48.5, 54.7, and 28.6% for breast, cervical, and colorectal cancer, respectively.",
            [(["48.5"], {"breast"}), (["54.7"], {"cervical"}), (["28.6"], {"colorectal"})],
        ),
        # counts that do not match, no list of settings, no "respectively": nothing bound
        ("It reaches 35% and 75% on the A, B and C tasks, respectively.", []),
        ("115 and 48 proteins bound to 20 nm and 100 nm particles, respectively.", []),
        ("It reaches 35% and 75% on algorithmic and language tasks.", []),
        # a setting no word tells apart; a verb coordination; a preposition inside an item
        (
            "We evaluate on image classification and image segmentation, reaching 95% and 80% respectively.",
            [],
        ),
        (
            "Pretrained on ImageNet and fine-tuned on COCO, the model attains 76% and 41% mAP respectively.",
            [],
        ),
        (
            "Top-1 on ImageNet for ResNet-50 and ViT-B reaches 76% and 81% respectively.",
            [(["76"], {"resnet"}), (["81"], {"vit"})],
        ),
    ],
)
def test_respectively_pairs_figures_with_settings_in_order(sentence, expected):
    found = [([q.text for q in b.figures], set(b.keys)) for b in bindings(sentence)]
    assert found == expected
