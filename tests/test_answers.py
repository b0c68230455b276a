"""Answers from real local LLMs (llama-cpp in-process and through an OpenAI-compatible
server), the citation checker, refusals, follow-ups and failures."""

from __future__ import annotations

import http.server
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant import Answer, Assistant
from assistant.answer.checker import Checker
from assistant.answer.citations import shown
from assistant.answer.model_answer import checked_events
from assistant.errors import ConfigError, LLMError, QuestionError
from assistant.model_files import MODELS, models_dir
from assistant.types import Hit, Paper, SentenceChecked, Sources, TextDelta
from benchmarks.servers import free_port, start, stop
from tests.conftest import SEEDS, paper_id, remote
from ui import render

SEAL_TEXT = "we propose PrivateSeal, a watermarking framework"
GRAPE_TEXT = "We present GRAPE"


def installed(name: str) -> bool:
    return (models_dir() / MODELS[name].filename).is_file()


needs_default = pytest.mark.skipif(not installed("qwen2.5-coder-1.5b"), reason="run `make models`")
needs_small = pytest.mark.skipif(not installed("smollm2-135m"), reason="run `make models`")


def run(bot: Assistant, question: str, **kwargs: object) -> tuple[list[object], Answer]:
    """All events of a streamed answer, and the final Answer (checked to come last)."""
    items = list(bot.stream(question, **kwargs))  # type: ignore[arg-type]
    assert isinstance(items[0], Sources) and isinstance(items[-1], Answer)
    return items, items[-1]


def generated(items: list[object]) -> str:
    return "".join(e.text for e in items if isinstance(e, TextDelta))


# --- the checker (pure logic over a scripted model reply, real embedder) -------------


def test_planted_wrong_citations_are_removed_or_recited(bot) -> None:
    PRIVATESEAL = paper_id(bot, SEAL_TEXT)
    hits = list(bot.search("watermarking images against diffusion editing; positional encoding", k=5))
    position = {h.paper.id: i + 1 for i, h in enumerate(hits)}
    seal = next(h for h in hits if h.paper.id == PRIVATESEAL)
    wrong = 1 if position[PRIVATESEAL] != 1 else 2
    reply = [
        "We propose PrivateSeal, a watermarking framework for pre-existing images ",
        f"under diffusion-based transformations [{wrong}]. ",
        "Bananas are an excellent source of potassium [9]. ",
        seal.paper.abstract.split(". ")[0] + f". [{position[PRIVATESEAL]}]",
    ]
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08)
    events = list(checked_events(iter(reply), checker))
    text = " ".join(e.text for e in events if isinstance(e, SentenceChecked))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "".join(reply)
    first, banana, third = checker.results
    assert first.supported and first.citations == (1,) and "re-cited" in (first.note or "")
    assert not banana.supported and banana.citations == () and checker.removed == 1
    assert third.supported and third.citations == (1,)
    assert [c.paper.id for c in checker.citations()] == [PRIVATESEAL]
    assert "[9]" not in text and "[1]" in text and "[2]" not in text


def test_a_claim_its_abstract_denies_is_not_supported(bot) -> None:
    """ "Yes, their regret bounds grow polynomially with the number of followers" cited to
    "these bounds do not grow with n at a polynomial rate": the words are the same but one,
    the fact the opposite (a heldout19 follow-up, answered so by the model and supported).
    The abstract's sentence is shown instead; the claim with its negation is kept."""
    hits = [
        h
        for h in bot.search("multi-follower Bayesian Stackelberg games", k=5)
        if "do not grow" in h.paper.abstract
    ]
    reply = [
        "Yes, the leader's regret bounds grow polynomially with the number of followers [1]. ",
        "The leader's regret bounds do not grow polynomially with the number of followers [1]. ",
    ]
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08)
    list(checked_events(iter(reply), checker))
    wrong, right = checker.results
    # answered the other way, by the abstract's own sentence
    assert wrong.supported and wrong.text.startswith("Interestingly, these bounds do not grow with $n$"), (
        wrong
    )
    assert "said the opposite of the cited abstract" in (wrong.note or "") and checker.denials == 1
    assert right.supported and right.text.startswith("The leader's regret bounds do not grow"), right


@pytest.mark.parametrize(
    ("sentence", "claim", "word"),
    [
        (
            "These bounds do not grow with $n$ at a polynomial rate.",
            "Their bounds grow polynomially.",
            "grow",
        ),
        ("Our method does not require retraining.", "The method requires retraining the model.", "require"),
        ("The dynamics never converge in this regime.", "The dynamics converge in this regime.", "converge"),
        ("We find no evidence of memorization.", "The models show evidence of memorization.", "evidence"),
        ("This approach doesn't scale to large graphs.", "The approach scales to large graphs.", "scale"),
        ("Plain gradient play fails to converge here.", "Plain gradient play converges here.", "converge"),
        ("The probes are unable to capture syntax.", "The probes capture syntax well.", "capture"),
        # the claim keeps a negation of its own, or the sentence denies nothing
        ("Our method does not require retraining.", "The method requires no retraining.", None),
        ("Linear probes were unable to recover syntax.", "The probes were unable to recover syntax.", None),
        ("It improves not only accuracy but also robustness.", "It improves accuracy.", None),
        ("No-regret dynamics converge to equilibria.", "The dynamics converge.", None),
        ("This holds whether or not the game is monotone.", "The game is monotone.", None),
        # denied of other methods, not of the paper's own
        (
            "Existing samplers do not converge in this regime.",
            "The proposed sampler converges in this regime.",
            None,
        ),
        (
            "Unlike prior methods, which do not scale to large graphs, ours does.",
            "The method scales to large graphs.",
            None,
        ),
    ],
)
def test_a_denied_word_is_found_only_where_the_claim_asserts_it(
    sentence: str, claim: str, word: str | None
) -> None:
    from assistant.answer.negation import denied

    assert denied(sentence, claim) == word


def test_a_number_the_cited_abstract_does_not_state_is_not_supported(bot) -> None:
    """Close in meaning is not enough: '10 bits' is made up, 'three requirements' is stated."""
    hits = list(bot.search("PrivateSeal watermarking framework for pre-existing images", k=3))
    n = next(i + 1 for i, h in enumerate(hits) if SEAL_TEXT in h.paper.abstract)
    reply = [
        f"PrivateSeal, a watermarking framework for pre-existing images, hides 10 bits of payload [{n}]. ",
        f"Existing watermarking methods fail to satisfy three practical requirements [{n}]. ",
        f"Existing watermarking methods fail to satisfy 3 practical requirements [{n}]. ",
        f"Existing watermarking methods fail to satisfy four practical requirements [{n}]. ",
    ]
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08)
    list(checked_events(iter(reply), checker))
    made_up, words, digits, wrong = checker.results
    assert not made_up.supported and "states 10" in (made_up.note or "")
    assert words.supported and digits.supported
    assert not wrong.supported and "states four" in (wrong.note or "")
    # without the numbers, the first sentence is close enough: only the number decides
    assert (
        Checker(hits, bot.embedder, threshold=0.45, margin=0.08)
        .check(f"PrivateSeal is a watermarking framework for pre-existing images [{n}].")
        .endswith("[1].")
    )


TERNLINK = (
    "Aligning point clouds captured by different scanners is hard because their densities differ. "
    "We present TernLink, one registration model trained once for every kind of sensor. "
    "Extensive experiments on $14$ benchmarks show state-of-the-art registration recall, "
    "and TernLink runs at $23.5\\%$ lower latency than the strongest baseline."
)


MIXAUG = (
    "Corrupted images break classifiers. We propose MixAug, which blends each image with a shuffled copy. "
    "With a mixing ratio of 0.3, MixAug improves robustness on CIFAR-10-C and keeps clean accuracy."
)
MIXAUG_CLOSE = (
    "Corrupted images break classifiers. We propose MixAug, which blends each image with a shuffled copy. "
    "MixAug improves robustness to corruptions on CIFAR-10-C with a mixing ratio of 0.3."
)
SWEEPREG = (
    "Registering lidar sweeps needs robust features. We present SweepReg, a lidar registration method. "
    "We evaluate on 12 benchmarks and report state-of-the-art registration recall."
)


GAMES = (
    "Most evaluations of large language models (LLMs) for strategic decision-making rely on Nash "
    "Equilibrium benchmarks. We introduce a behavioral game-theoretic evaluation framework that "
    "disentangles intrinsic reasoning from contextual influence. Using this framework, we evaluate 22 "
    "state-of-the-art LLMs across diverse strategic scenarios."
)


def test_a_count_of_what_an_acronym_stands_for_is_in_its_role(bot) -> None:
    """ "22 large language models were put through the evaluation [1]" restates the question
    around its answer; the abstract counts "22 state-of-the-art LLMs", and defines LLMs as
    large language models: the count is in its role (it was unsupported, and the answer
    fell back to sentences without the figure). The same count of something else is not."""
    from assistant.answer.checker import acronyms

    assert acronyms(GAMES)["llms"] == {"large", "langu", "model"}
    hits = [Hit(Paper(id="games", label="Games", abstract=GAMES), 1.0)]
    question = "How many large language models were put through the behavioral game-theoretic evaluation of strategic reasoning depth?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    checker.check("22 large language models were put through the behavioral game-theoretic evaluation [1].")
    assert checker.results[-1].supported, checker.results[-1].note
    assert "22 state-of-the-art LLMs" in (checker.results[-1].evidence or "")
    checker.check(
        "22 Nash Equilibrium benchmarks were put through the behavioral game-theoretic evaluation [1]."
    )
    assert not checker.results[-1].supported


def test_a_figure_the_cited_sentence_states_is_supported_however_the_paper_is_described(bot) -> None:
    """A model repeats the question's paraphrase of a paper and adds the figure asked for: the
    cosine to the abstract is low, but the figure and what it counts come from one sentence."""
    hits = [Hit(Paper(id="tern", label="TernLink", abstract=TERNLINK, title="TernLink"), 1.0)]
    question = "On how many test suites was the single all-purpose model for aligning 3D scans from many scanners evaluated?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    counted = checker.check(
        "The single all-purpose model for aligning scans from many scanners was evaluated on 14 benchmarks [1]."
    )
    assert checker.results[-1].supported and "14" in counted and counted.endswith("[1].")
    assert "$14$ benchmarks" in (checker.results[-1].evidence or "")
    faster = checker.check("The all-purpose scan-aligning model cuts latency by 23.5% [1].")
    assert checker.results[-1].supported and "23.5" in faster
    # the same sentences with a figure the abstract does not state, or stated about something else
    for made_up in (
        "The single all-purpose model for aligning scans from many scanners was evaluated on 15 benchmarks [1].",
        "The all-purpose scan-aligning model speaks 14 languages [1].",
    ):
        checker.check(made_up)
        assert not checker.results[-1].supported, made_up


def test_a_figure_anchors_only_in_its_role_its_unit_and_its_cited_paper(bot) -> None:
    """The review's cases: the figure stated about something else, a fraction read as a
    percentage, a figure another (uncited) paper states: none is shown as the answer."""
    tern = Hit(Paper(id="tern", label="TernLink", abstract=TERNLINK, title="TernLink"), 1.0)
    speed = Checker(
        [tern],
        bot.embedder,
        threshold=0.45,
        margin=0.08,
        question=("How much faster is the all-purpose scan-aligning model than the strongest baseline?"),
    )
    speed.check("The all-purpose scan-aligning model runs 14 times faster than the strongest baseline [1].")
    # 14 counts benchmarks in the abstract, not a speed-up: unsupported (it was supported at
    # cosine 0.525 and only replaced as a restatement), so the answer leaves it out
    assert not speed.results[-1].supported and speed.results[-1].citations == ()
    dated = Hit(Paper(id="tern", label="TernLink", abstract=TERNLINK, title="TernLink", year=2025), 1.0)
    listing = Checker([dated], bot.embedder, threshold=0.45, margin=0.08, question="What is TernLink?")
    listing.check("TernLink (2025) is one registration model trained once for every kind of sensor [1].")
    assert listing.results[-1].supported  # a figure the paper's listing gives needs no sentence
    mix = Hit(Paper(id="mix", label="MixAug", abstract=MIXAUG, title="MixAug"), 1.0)
    ratio = Checker(
        [mix],
        bot.embedder,
        threshold=0.45,
        margin=0.08,
        question=("By how much does the image-blending augmentation improve robustness to corruptions?"),
    )
    ratio.check("The image-blending augmentation improves robustness to corruptions by 30% [1].")
    assert not ratio.results[-1].supported  # a mixing ratio of 0.3 is no 30% gain
    # ... even when the sentence closest to the claim is the one that states the ratio
    # (`stated_by` equates 0.3 with 30% on purpose; the role check must not)
    closest = Hit(Paper(id="mix", label="MixAug", abstract=MIXAUG_CLOSE, title="MixAug"), 1.0)
    near = Checker(
        [closest], bot.embedder, threshold=0.45, margin=0.08, question="How much does MixAug help?"
    )
    near.check("MixAug improves robustness to corruptions on CIFAR-10-C by 30% [1].")
    assert not near.results[-1].supported
    near.check("MixAug improves robustness to corruptions on CIFAR-10-C with a mixing ratio of 0.3 [1].")
    assert near.results[-1].supported
    other = Hit(Paper(id="sweep", label="SweepReg", abstract=SWEEPREG, title="SweepReg"), 0.9)
    question = "On how many test suites was the single all-purpose model for aligning 3D scans from many scanners evaluated?"
    two = Checker([tern, other], bot.embedder, threshold=0.45, margin=0.08, question=question)
    two.check(
        "The single all-purpose model for aligning scans from many scanners was evaluated on 12 benchmarks [1]."
    )
    assert (
        not two.results[-1].supported and two.results[-1].citations == ()
    )  # 12 is SweepReg's, not TernLink's
    shown = two.check(
        "The single all-purpose model for aligning scans from many scanners was evaluated on 14 benchmarks [1]."
    )
    assert two.results[-1].supported and "$14$ benchmarks" in shown and shown.endswith("[1].")


def test_a_citation_used_as_a_noun_stays_in_place_and_is_renumbered(bot) -> None:
    hits = list(bot.search("PrivateSeal watermarking framework for pre-existing images", k=3))
    n = next(i + 1 for i, h in enumerate(hits) if SEAL_TEXT in h.paper.abstract)
    reply = [
        f"Watermarks must survive diffusion-based editing and regeneration [{n}]. ",
        f"[{n}] proposes PrivateSeal, a watermarking framework for pre-existing images. ",
        f"As shown in [{n}], the embedded message is recovered via a simple latent-space projection. ",
        f"PrivateSeal is a watermarking framework for pre-existing images, as described in ({n}) [{n}]. ",
        f"The embedded message is recovered via a simple latent-space projection, as shown in ({n}). ",
    ]
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08)
    texts = [e.text for e in checked_events(iter(reply), checker) if isinstance(e, SentenceChecked)]
    assert texts == [
        "Watermarks must survive diffusion-based editing and regeneration [1].",
        "[1] proposes PrivateSeal, a watermarking framework for pre-existing images.",
        "As shown in [1], the embedded message is recovered via a simple latent-space projection.",
        "PrivateSeal is a watermarking framework for pre-existing images, as described in [1].",
        "The embedded message is recovered via a simple latent-space projection, as shown in [1].",
    ]
    assert all(r.supported and r.citations == (1,) for r in checker.results)
    # and as the app shows the finished answer: not "as described in (1) [1]"
    assert [shown(r) for r in checker.results] == texts
    answer = Answer("q", " ".join(texts), tuple(checker.citations()), tuple(checker.results), model_text="x")
    assert "(1)" not in render.answer_text(answer) and render.answer_text(answer).count("✓") == 5


# --- real local models ---------------------------------------------------------------


@needs_small
def test_assistant_ask_with_a_local_model_exits_cleanly(seeded_dir: Path, tmp_path: Path) -> None:
    """`assistant ask` as a user runs it, in its own process, with the in-process model: the
    answer, exit status 0, and nothing on stderr (llama-cpp-python's finaliser printed a
    TypeError traceback at interpreter shutdown after every answer)."""
    import json
    import shutil
    import subprocess

    data = tmp_path / "data"
    shutil.copytree(seeded_dir, data)
    env = {
        **os.environ,
        "ASSISTANT_DATA_DIR": str(data),
        "ASSISTANT_CORPUS": json.dumps([str(SEEDS)]),
        "ASSISTANT_BACKEND": "llama-cpp",
        "ASSISTANT_LLM_MODEL": "smollm2-135m",
    }
    cli = Path(sys.executable).with_name("assistant")
    done = subprocess.run(
        [str(cli), "ask", "What is PrivateSeal?"], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert "References" in done.stdout or "could not find" in done.stdout.lower()
    assert "Traceback" not in done.stderr and "TypeError" not in done.stderr, done.stderr


@needs_small
def test_small_model_streams_tokens_then_checked_sentences(bot) -> None:
    small = Assistant(bot.settings, llm_model="smollm2-135m", backend="llama-cpp")
    items, answer = run(small, "What is PrivateSeal?")
    assert answer.model_text and generated(items) == answer.model_text  # token chunks, as generated
    assert answer.prompt_tokens > 100
    checked = [e for e in items if isinstance(e, SentenceChecked)]
    if answer.fallback:  # the 135M model often fails the check: then the notes say so
        assert answer.backend == "extractive" and any("instead" in n for n in answer.notes)
    else:
        assert [e.support for e in checked] == list(answer.sentences)
    numbers = {c.number for c in answer.citations}
    assert numbers == set(range(1, len(numbers) + 1))  # every citation is used, numbered 1..n


@needs_default
def test_default_configuration_answers_locally_with_a_right_citation(
    seeded_dir: Path, connections: list[object]
) -> None:
    bot = Assistant(data_dir=seeded_dir, corpus=[SEEDS])  # defaults: llama-cpp, bundled model
    assert bot.settings.backend == "llama-cpp"
    items, answer = run(bot, "What is PrivateSeal?")
    assert not answer.refused and not answer.fallback, answer
    assert answer.backend.startswith("llama-cpp:qwen2.5-coder-1.5b")
    assert paper_id(bot, SEAL_TEXT) in {c.paper.id for c in answer.citations}
    assert "watermark" in answer.text.lower()
    assert generated(items) == answer.model_text
    checked = [e.text for e in items if isinstance(e, SentenceChecked) and e.status != "unsupported"]
    assert " ".join(checked) == answer.text
    assert all(s.supported for s in answer.sentences)
    assert remote(connections) == []


@needs_default
def test_unanswerable_question_is_refused(bot) -> None:
    local = Assistant(bot.settings, backend="llama-cpp")
    _, answer = run(local, "How many GPUs were used to train the Register Anything Model?")
    assert answer.refused and answer.citations == ()
    assert answer.text == "I could not find this in the indexed abstracts."
    assert "Register Anything Model" in (answer.reason or "") and "hardware" in (answer.reason or "")
    _, off_topic = run(local, "What is the recipe for a good chocolate cake?")
    assert off_topic.refused and "closest papers" in (off_topic.reason or "").lower()


@needs_default
def test_a_figure_the_abstract_does_not_give_is_refused_not_made_up(bot) -> None:
    """The default model, asked for a figure MARLA's abstract does not give, writes one; the
    check finds that no given abstract states it nor any figure of that kind, and the answer
    is a refusal that says so, instead of the closest sentences shown as if they answered.
    The same model asked for a figure the abstract does give (Flock's 54 graphs) answers it."""
    local = Assistant(bot.settings, backend="llama-cpp")
    question = (
        "For MARLA, the misclassification-aware low-rank logit correction for worst-group "
        "robustness, what rank is the correction subspace set to in the experiments?"
    )
    _, answer = run(local, question)
    assert answer.refused and not answer.fallback, answer
    assert "does not state the figure asked for" in (answer.reason or ""), answer.reason
    _, answered = run(local, "Across how many knowledge graphs was Flock evaluated?")
    assert not answered.refused and "54" in answered.text, answered


@needs_default
def test_names_the_abstract_does_not_give_are_refused_and_names_it_gives_are_answered(bot) -> None:
    """The default model, asked which seven datasets MARLA was evaluated on (its abstract
    says only "across seven real-world datasets"), answers with what the abstract does say;
    no sentence of the answer, nor of the abstract near the question, names a dataset, so
    the answer is a refusal that says so. Asked which benchmark PrivateSeal was tested on
    (W-Bench, in its abstract), the same model answers with the name."""
    local = Assistant(bot.settings, backend="llama-cpp")
    _, answer = run(local, "Which seven real-world datasets were used to evaluate MARLA?")
    assert answer.refused and "names asked for" in (answer.reason or ""), answer
    _, answered = run(local, "On which benchmark was the PrivateSeal watermarking framework evaluated?")
    assert not answered.refused and "W-Bench" in answered.text, answered


@needs_default
def test_near_topic_questions_are_refused_on_the_models_no(bot) -> None:
    """Next to corpus topics (diffusion models, mixture-of-experts, offline RL) but answered
    by no abstract: the real model, asked whether the closest abstract is about the
    question, says no, and the answer is a refusal naming the closest papers; a
    weakly-matched question that one abstract does answer is still answered. (The
    questions are `heldout4`'s h4o14, h4o05 and h4p24: the model's probability of yes was
    0.24 / 0.31 and 0.29 / 0.18 for the two closest abstracts of the first two, 0.82 for the
    third's first, against the floor of 0.475.)"""
    local = Assistant(bot.settings, backend="llama-cpp")  # relevance_check is on by default
    for question in (
        "How does the green-list token watermark for detecting LLM-generated text work?",
        "Which paper proposes an auxiliary load-balancing loss to stop a mixture-of-experts router "
        "from sending most tokens to just a few experts?",
    ):
        assert not local.plan(question).verdict.strong  # the case this is about
        _, answer = run(local, question)
        assert answer.refused and answer.citations == (), answer
        assert "the model said no" in (answer.reason or "") and "closest papers" in (answer.reason or "")
    question = (
        "For finding the single best option under a fixed trial budget when the environment pushes "
        "every option's payoff up or down together, what is the proposed allocation policy called?"
    )
    assert not local.plan(question).verdict.strong
    _, kept = run(local, question)
    assert not kept.refused and paper_id(bot, "We then propose an allocation policy, LinLUCB") in {
        c.paper.id for c in kept.citations
    }


@needs_default
def test_follow_up_resolves_it(bot) -> None:
    local = Assistant(bot.settings, backend="llama-cpp")
    history = [("What is GRAPE?", "GRAPE is a framework for positional encoding [1].")]
    _, answer = run(local, "Which rotary scheme does it recover exactly?", history=history)
    assert answer.standalone_question == "Which rotary scheme does GRAPE recover exactly?"
    assert paper_id(bot, GRAPE_TEXT) in {c.paper.id for c in answer.citations}


@needs_default
def test_catalogue_synthesis_from_the_real_model_is_checked(bot) -> None:
    question = "Which papers is Théo Vincent an author of?"
    listing = bot.ask(question)  # extractive: the listing alone
    local = Assistant(bot.settings, backend="llama-cpp", catalogue_synthesis=True)
    items, answer = run(local, question)
    assert answer.model_text and answer.kind == "catalogue"
    assert answer.text.startswith(listing.text) and answer.citations == listing.citations
    added = answer.sentences[len(listing.sentences) :]
    assert len(added) == 1 and added[0].supported, answer
    assert set(added[0].citations) <= {c.number for c in listing.citations}
    assert [e.index for e in items if isinstance(e, SentenceChecked)][: len(answer.sentences)] == list(
        range(len(answer.sentences))
    )


def test_extractive_follow_up_uses_the_previous_question(bot) -> None:
    history = [("What is PrivateSeal?", "")]
    answer = bot.ask("What does it need to be robust against?", history=history, backend="extractive")
    assert answer.standalone_question == "What does PrivateSeal need to be robust against?"
    assert answer.citations[0].paper.id == paper_id(bot, SEAL_TEXT)


def test_a_follow_up_s_it_is_what_the_previous_answer_was_about(bot) -> None:
    """The Chromium walk's case: the first question names no method ("several Bellman updates
    at once"), its answer does ("iterated Q-Network (i-QN)", cited). "How is it evaluated?"
    then asks about i-QN, whose abstract's evaluation sentence (Atari, MuJoCo) comes first;
    read as "How is it evaluated? (follow-up to: …)" that sentence was last of the paper's."""
    first = "Is there a method that performs several Bellman updates at once?"
    said = "It is based on iterated Q-Network (i-QN), which enables multiple consecutive Bellman updates [1]."
    answer = bot.ask("And how is it evaluated?", history=[(first, said)], backend="extractive")
    assert answer.standalone_question == "How is i-QN evaluated?"
    assert "Atari" in answer.text and answer.citations[0].paper.id == paper_id(bot, "we introduce iterated")
    # A listing question about it is still one: "Where was i-QN accepted?" is answered from the listing.
    venue = bot.ask("Where was it accepted?", history=[(first, said)], backend="extractive")
    assert venue.kind == "catalogue" and venue.citations[0].paper.id == paper_id(bot, "we introduce iterated")
    # A follow-up of the follow-up keeps the subject: the previous turn is read as it was then.
    evaluated = "Typically, action-value functions are estimated through an iterative scheme [1]."  # no name
    chain = [(first, said), ("And how is it evaluated?", evaluated)]
    chained = bot.ask("Where was it accepted?", history=chain, backend="extractive")
    assert chained.standalone_question == "Where was i-QN accepted?"
    assert chained.kind == "catalogue" and chained.citations[0].paper.id == paper_id(
        bot, "we introduce iterated"
    )
    # A previous answer that cites nothing (a refusal) names no subject.
    refused = bot.ask(
        "And how is it evaluated?", history=[(first, "i-QN is not in the abstracts.")], backend="extractive"
    )
    assert refused.standalone_question.startswith("How is it evaluated? (follow-up to:")


# --- the OpenAI-compatible backend against a real local server ------------------------


@pytest.fixture(scope="module")
def llm_server() -> Iterator[str]:
    if not installed("qwen2.5-coder-0.5b"):
        pytest.skip("run `make models`")
    port = free_port()
    model = models_dir() / MODELS["qwen2.5-coder-0.5b"].filename
    url = f"http://127.0.0.1:{port}/v1"
    proc = start(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_threads",
            "2",
            "--n_ctx",
            "4096",
            "--model_alias",
            "local-qwen",
        ],
        f"{url}/models",
        env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"),
    )
    yield url
    stop(proc)


def test_openai_backend_answers_through_a_local_server(bot, llm_server: str) -> None:
    remote = Assistant(bot.settings, backend="openai", openai_base_url=llm_server, openai_model="local-qwen")
    items, answer = run(remote, "What is PrivateSeal?")
    assert answer.model_text, "the server produced no text"
    assert generated(items) == answer.model_text
    assert paper_id(bot, SEAL_TEXT) in {c.paper.id for c in answer.citations}


# --- failures ----------------------------------------------------------------------------


def test_dead_llm_server_names_the_url(bot) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    remote = Assistant(bot.settings, backend="openai", openai_base_url=url, openai_model="x")
    with pytest.raises(LLMError, match=f"cannot reach the LLM server at {url}.*ASSISTANT_OPENAI_BASE_URL"):
        remote.ask("What is PrivateSeal?")
    ollama = Assistant(bot.settings, backend="ollama", ollama_url=url[:-3], ollama_model="x")
    with pytest.raises(LLMError, match="ASSISTANT_OLLAMA_URL"):
        ollama.ask("What is PrivateSeal?")


class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "slow"

    def do_POST(self) -> None:
        if self.mode == "slow":
            time.sleep(3)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"data: {this is not json\n\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("mode", "message"), [("slow", "did not answer in time"), ("garbage", "not a chat stream")]
)
def test_slow_or_garbage_server_gives_a_clear_error(bot, mode: str, message: str) -> None:
    handler = type("H", (_Handler,), {"mode": mode})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        remote = Assistant(
            bot.settings, backend="openai", openai_base_url=url, openai_model="x", llm_timeout_s=1
        )
        t0 = time.monotonic()
        with pytest.raises(LLMError, match=message):
            remote.ask("What is PrivateSeal?")
        assert time.monotonic() - t0 < 30
    finally:
        server.shutdown()


def test_missing_local_model_says_how_to_install(
    bot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSISTANT_MODELS_DIR", str(tmp_path))
    local = Assistant(bot.settings, backend="llama-cpp", llm_model="qwen2.5-coder-0.5b")
    with pytest.raises(ConfigError, match="make models"):
        local.ask("What is PrivateSeal?")


def test_openai_backend_needs_explicit_configuration(bot) -> None:
    with pytest.raises(ConfigError, match="ASSISTANT_OPENAI_BASE_URL"):
        Assistant(bot.settings, backend="openai").ask("What is PrivateSeal?")


def test_too_long_question_names_the_limit(bot) -> None:
    with pytest.raises(QuestionError, match="2,000"):
        bot.ask("x" * 5000, backend="extractive")


def test_bracketed_years_in_abstracts_do_not_look_like_citations() -> None:
    from assistant.answer.citations import cite

    assert (
        cite("Since Arrow and Debreu [1954] it is known.", (2,))
        == "Since Arrow and Debreu (1954) it is known [2]."
    )


def test_brackets_inside_a_formula_are_an_interval_not_a_citation() -> None:
    """A sentence the model copies from an abstract ("… parameter $\\alpha \\in [1,2]$ …")
    keeps its interval: not read as citations [1] and [2] (one of them "removed"), not
    rewritten as "(1,2)", an open interval."""
    from assistant.answer.citations import cite, markers

    sentence = r"We achieve robustness for a parameter $\alpha \in [1,2]$, and prove its optimality [1]."
    numbers, body = markers(sentence)
    assert numbers == [1]
    assert body == r"We achieve robustness for a parameter $\alpha \in [1,2]$, and prove its optimality."
    assert cite(body, (1,)) == sentence
    # dollar amounts are not formulas: their citations still count
    assert markers("It costs $5 [1] and $10 [2].") == ([1, 2], "It costs $5 and $10.")


FLASHX = (
    "We present FlashX, a fused attention kernel for long sequences. We benchmark it on A100 GPUs. "
    "FlashX is 12 times faster than the best previous kernel. "
    "On a different note, the kernel needs no changes to the model."
)


def test_a_figure_for_a_name_the_previous_sentence_gives_is_supported(bot) -> None:
    """An abstract names the setting in one sentence and gives the figure in the next ("We
    benchmark it on A100 GPUs. FlashX is 12 times faster …"): "12 times faster on A100 GPUs"
    is what it says, not a figure moved to another setting (`Checker.misbound`); a name no
    sentence near the figure gives ("on H100 GPUs") is."""
    hits = [Hit(Paper(id="flashx", label="FlashX", abstract=FLASHX, title="FlashX"), 1.0)]
    question = "How much faster is the FlashX attention kernel on A100 GPUs?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    checker.check("FlashX is 12 times faster on A100 GPUs [1].")
    assert checker.results[-1].supported and not checker.misbound
    moved = Checker(
        hits, bot.embedder, threshold=0.45, margin=0.08, question=question.replace("A100", "H100")
    )
    moved.check("FlashX is 12 times faster on H100 GPUs [1].")
    assert not moved.results[-1].supported
    assert [(m.figure, m.name, m.named_figure) for m in moved.misbound] == [("12", "H100 GPUs", False)]


GROKREG = (
    "We propose NoiseReg, a regularizer that penalises how much a transformer's output moves under "
    "correlated noise on all inputs. Experiments on algorithmic and next-token-prediction tasks show that "
    "NoiseReg consistently catalyzes grokking and accelerates training by approximately $35$\\% and $75$\\% "
    "respectively. The regularizer adds little compute."
)


def test_a_figure_of_a_respectively_list_is_bound_to_its_own_setting(bot) -> None:
    """In "… on algorithmic and next-token-prediction tasks … by $35$\\% and $75$\\% respectively"
    35% is the algorithmic tasks' figure. "35% on next-token prediction" (or "35%" to a question
    about next-token prediction) gives it for the other setting (`Checker.misbound`); "75%" is
    supported, and so is a claim that repeats both figures with their pairing."""
    hits = [Hit(Paper(id="nr", label="NoiseReg", abstract=GROKREG, title="NoiseReg"), 1.0)]
    question = "By roughly what percentage does NoiseReg speed up training on next-token prediction?"

    def check(claim: str) -> Checker:
        checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
        checker.check(claim)
        return checker

    wrong = check("NoiseReg accelerates training on next-token prediction by approximately 35% [1].")
    assert not wrong.results[-1].supported
    assert [(m.figure, m.name) for m in wrong.misbound] == [("35", "next-token-prediction")]
    assert not check("NoiseReg accelerates training by approximately 35% [1].").results[-1].supported
    assert check("NoiseReg accelerates training by approximately 75% [1].").results[-1].supported
    both = check("NoiseReg accelerates training by approximately 35% and 75% respectively [1].")
    assert both.results[-1].supported and not both.misbound
    # the claim's own setting decides before the question's
    assert check("On algorithmic tasks NoiseReg accelerates training by about 35% [1].").results[-1].supported
    # a figure the abstract also states outside the list may be that one
    hits[0] = Hit(
        Paper(
            id="nr",
            label="NoiseReg",
            title="NoiseReg",
            abstract=GROKREG.replace("respectively.", "respectively, i.e. 35% overall."),
        ),
        1.0,
    )
    assert check("Overall NoiseReg accelerates training by 35% [1].").results[-1].supported


MATCHING = (
    "PrivacySIM is a benchmark of individual privacy decisions. "
    "Its users are drawn from five published user studies on privacy. "
    "The best frontier model matches individual decisions 61.2% of the time. "
    "Persona details help some models and hurt others."
)


def test_a_restated_answer_to_a_figure_question_is_replaced_by_the_sentence_that_gives_one(bot) -> None:
    """The model restates a question that asks for a figure ("PrivacySIM measures the
    percentage …"): the sentence shown instead is the abstract's one near the question that
    gives a figure of that kind (61.2%), not the one with the name it added, which gives none."""
    hits = [Hit(Paper(id="psim", label="PrivacySIM", abstract=MATCHING, title="PrivacySIM"), 1.0)]
    question = "When frontier chatbots mimic individual people's data-sharing choices, what percentage do they match?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    shown = checker.check(
        "PrivacySIM measures the percentage frontier chatbots match when mimicking people's data-sharing choices [1]."
    )
    assert "61.2%" in shown, shown


DIFFING = (
    "We introduce a model diffing method that needs no weight access. "
    "We validate it on real-domain finetuning, achieving near-perfect recovery across all "
    "single-dataset non-CoT variants. "
    "It runs about 120 times faster than the white-box baseline."
)


def test_a_sentence_about_the_opposite_case_is_recorded(bot) -> None:
    """Asked about the chain-of-thought (CoT) variants, an answer about the non-CoT ones,
    from an abstract that names CoT only negated, answers another question
    (`Checker.other_case`); asked about the non-CoT variants, it is the answer."""
    hits = [Hit(Paper(id="cdd", label="CDD", abstract=DIFFING, title="Model diffing"), 1.0)]
    question = "What recovery does the diffing method reach on the chain-of-thought (CoT) variants?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    checker.check("It achieves near-perfect recovery across all single-dataset non-CoT variants [1].")
    assert checker.results[-1].supported
    assert [(o.case, o.paper) for o in checker.other_case] == [("non-CoT", "CDD")]
    right = Checker(
        hits, bot.embedder, threshold=0.45, margin=0.08, question=question.replace("(CoT)", "(non-CoT)")
    )
    right.check("It achieves near-perfect recovery across all single-dataset non-CoT variants [1].")
    assert right.results[-1].supported and not right.other_case
    # a follow-up made standalone holds both cases: it asks about the non-CoT ones too
    both = Checker(
        hits, bot.embedder, threshold=0.45, margin=0.08, question=question + " And on the non-CoT variants?"
    )
    both.check("It achieves near-perfect recovery across all single-dataset non-CoT variants [1].")
    assert not both.other_case
    # the opposite case named in the title only: quoted from there
    titled = [
        Hit(
            Paper(
                id="t",
                label="T",
                abstract="We study model diffing for audits.",
                title="Diffing non-CoT models",
            ),
            1.0,
        )
    ]
    checker = Checker(titled, bot.embedder, threshold=0.0, margin=0.08, question=question)
    checker.check("Model diffing recovers content of non-CoT models [1].")
    assert [(o.case, o.stated) for o in checker.other_case] == [("non-CoT", "Diffing non-CoT models")]


SPECTRA = (
    "We study the singular-value spectra of transformer weights with random matrix theory. "
    "Zeroing out the values that deviate from the bulk raises perplexity, and after fine-tuning "
    "the smallest decile can be the third most influential part of the spectrum."
)


def test_a_sentence_about_after_fine_tuning_does_not_answer_before(bot) -> None:
    """Asked where the smallest decile ranks before any fine-tuning, the abstract's
    sentence about after fine-tuning is about the other case (`Checker.other_case`); a
    yes/no question is left alone ("Does it matter after …?" may be answered "No: …")."""
    hits = [Hit(Paper(id="rmt", label="RMT", abstract=SPECTRA, title="Spectra"), 1.0)]
    question = "Where does the smallest decile of singular values rank for the pretrained model before any fine-tuning?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    checker.check(
        "After fine-tuning the smallest decile can be the third most influential part of the spectrum [1]."
    )
    assert [(o.case, o.paper) for o in checker.other_case] == [("After fine-tuning", "RMT")]
    yes_no = Checker(
        hits, bot.embedder, threshold=0.45, margin=0.08, question="Does the decile matter before fine-tuning?"
    )
    yes_no.check("After fine-tuning the smallest decile can be the third most influential part [1].")
    assert not yes_no.other_case


def test_the_cases_a_text_names() -> None:
    """Whole words, so "non-convex" is no case of "convergence"; "compared with" and
    "without loss of generality" name no case."""
    from assistant.answer.checker import _cases

    assert ("non", "convex") in _cases("an eps-stationary point of non convex objectives")
    assert ("", "convergence") in _cases("what convergence rate")
    assert ("non", "convergence") not in _cases("an eps-stationary point of non convex objectives")
    assert ("with", "fine") not in _cases("how does it compare with fine tuning")
    assert ("without", "loss") not in _cases("without loss of generality")
    assert ("before", "fine") in _cases("before any fine tuning")


def test_an_answer_that_names_the_case_asked_too_is_no_other_case(bot) -> None:
    """A sentence that speaks of the term in the case asked as well ("Adding retrieval …,
    from 45.1% without retrieval") and a yes/no question after a leading phrase are left
    alone."""
    abstract = (
        "We study retrieval for question answering. "
        "Adding retrieval raises accuracy to 60.3%, from 45.1% without retrieval."
    )
    hits = [Hit(Paper(id="rag", label="RAG", abstract=abstract, title="Retrieval"), 1.0)]
    question = "What accuracy does the reader reach with retrieval?"
    checker = Checker(hits, bot.embedder, threshold=0.45, margin=0.08, question=question)
    checker.check("Adding retrieval raises accuracy to 60.3%, from 45.1% without retrieval [1].")
    assert not checker.other_case
    yes_no = Checker(
        hits, bot.embedder, threshold=0.45, margin=0.08, question="With retrieval, does accuracy rise?"
    )
    yes_no.check("Accuracy is 45.1% without retrieval [1].")
    assert not yes_no.other_case
