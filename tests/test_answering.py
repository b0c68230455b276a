"""The answer stage's logic with a scripted chat model (real store, real embedder):
routing, refusals decided on evidence, fallback, re-citation, follow-ups, event order."""

from __future__ import annotations

import pytest

from assistant import Answer, Assistant
from assistant.search.questions import conversation, is_follow_up, standalone, switched_subject
from assistant.types import REFUSAL, SentenceChecked, Sources, TextDelta
from tests.conftest import paper_id
from tests.fakes import SCRIPTED

PRIVATESEAL = "we propose PrivateSeal, a watermarking framework"
GRAPE = "We present GRAPE"


def events(bot, question: str, **kwargs: object) -> list[object]:  # type: ignore[no-untyped-def]
    return list(bot.stream(question, backend="scripted", **kwargs))


def final(items: list[object]) -> Answer:
    answer = items[-1]
    assert isinstance(answer, Answer)
    return answer


def test_events_come_in_order_and_sources_before_the_model_runs(bot) -> None:
    SCRIPTED.script(
        "PrivateSeal is a watermarking framework for pre-existing images [1]. It adds watermarks."
    )
    stream = bot.stream("What is PrivateSeal?", backend="scripted")
    first = next(stream)
    assert isinstance(first, Sources) and SCRIPTED.calls == []  # nothing generated yet
    assert first.hits[0].paper.id == paper_id(bot, PRIVATESEAL)
    assert first.evidence[0] and all(s in first.hits[0].paper.abstract for s in first.evidence[0])
    rest = list(stream)
    kinds = [type(e).__name__ for e in rest]
    assert kinds[0] == "TextDelta" and kinds[-1] == "Answer"
    assert kinds.index("SentenceChecked") > kinds.index("TextDelta")
    deltas = "".join(e.text for e in rest if isinstance(e, TextDelta))
    answer = final(rest)
    assert deltas == answer.model_text  # token chunks, not held back to sentence ends
    assert len([e for e in rest if isinstance(e, TextDelta)]) > 5
    checked = [e for e in rest if isinstance(e, SentenceChecked)]
    assert checked[0].status == "supported" and checked[0].cited[0].paper.id == paper_id(bot, PRIVATESEAL)
    assert answer.text.startswith("PrivateSeal is a watermarking framework") and "[1]" in answer.text


def test_model_refusal_overruled_by_evidence(bot) -> None:
    SCRIPTED.script("I could not find this in the indexed abstracts.")
    answer = final(events(bot, "What is PrivateSeal?"))
    assert not answer.refused and answer.fallback
    assert answer.citations[0].paper.id == paper_id(bot, PRIVATESEAL)
    assert any("model said the abstracts do not answer" in n for n in answer.notes)


def test_unsupported_answer_is_replaced_and_says_why(bot) -> None:
    SCRIPTED.script("Bananas are rich in potassium [1]. The moon is made of cheese [2].")
    answer = final(events(bot, "What is PrivateSeal?"))
    assert answer.fallback and "Banana" not in answer.text
    assert any("not supported" in n for n in answer.notes)


def test_one_unsupported_sentence_is_left_out_and_marked(bot) -> None:
    SCRIPTED.script(
        "PrivateSeal is a watermarking framework for pre-existing images [1]. "
        "It watermarks images robustly against diffusion-based regeneration and editing [1]. "
        "Bananas are an excellent source of potassium [1]."
    )
    items = events(bot, "What is PrivateSeal?")
    answer = final(items)
    assert not answer.fallback and "Banana" not in answer.text
    statuses = [e.status for e in items if isinstance(e, SentenceChecked)]
    assert statuses == ["supported", "supported", "unsupported"]
    assert [s.supported for s in answer.sentences] == [True, True, False]
    assert any("left out" in n for n in answer.notes)


def test_an_aside_about_another_paper_is_left_out_with_its_citation(bot) -> None:
    """A one-paper answer that goes on to copy another given abstract's sentence, true of
    that paper but not about the question, loses the sentence and the citation. (Every
    paper is given here: by default PrivateSeal stands out and is given alone.)"""
    bot = Assistant(bot.settings, context_paper_share=0.0)
    hits = list(bot.search("What is PrivateSeal?", k=bot.settings.context_papers))
    seal = next(i + 1 for i, h in enumerate(hits) if h.paper.id == paper_id(bot, PRIVATESEAL))
    other = seal + 1  # ranked below the paper the answer is about
    aside = hits[other - 1].paper.abstract.split(". ")[-1].rstrip(".") + "."
    reply = (
        f"PrivateSeal is a watermarking framework for pre-existing images [{seal}]. {aside[:-1]} [{other}]."
    )
    SCRIPTED.script(reply)
    answer = final(events(bot, "What is PrivateSeal?"))
    assert [c.paper.id for c in answer.citations] == [paper_id(bot, PRIVATESEAL)]
    assert aside[:40] not in answer.text and answer.text.startswith("PrivateSeal is")
    assert any("about another paper" in n for n in answer.notes) and not answer.fallback
    SCRIPTED.script(reply)  # without the rule the aside and its citation stay
    kept = final(events(Assistant(bot.settings, aside_margin=1.0), "What is PrivateSeal?"))
    assert len(kept.citations) == 2 and aside[:40] in kept.text


def test_wrong_citation_is_recited(bot) -> None:
    bot = Assistant(bot.settings, context_paper_share=0.0)  # every paper given
    hits = list(bot.search("What is PrivateSeal?", k=5))
    wrong = next(i + 1 for i, h in enumerate(hits) if h.paper.id != paper_id(bot, PRIVATESEAL))
    SCRIPTED.script(f"PrivateSeal is a watermarking framework for pre-existing images [{wrong}].")
    items = events(bot, "What is PrivateSeal?")
    answer = final(items)
    checked = [e for e in items if isinstance(e, SentenceChecked)]
    assert checked[0].status == "re-cited"
    assert [c.paper.id for c in answer.citations] == [paper_id(bot, PRIVATESEAL)]
    assert any("re-cited" in n for n in answer.notes)


def test_sentence_that_only_restates_the_question_is_replaced_by_the_abstract(bot) -> None:
    question = (
        "Is there a paper on proving ownership of photos that already exist, even after someone "
        "edits them with a diffusion model?"
    )
    SCRIPTED.script(
        "Yes, there is a paper on proving ownership of photos that already exist, even after "
        "someone edits them with a diffusion model [1]."
    )
    items = events(bot, question)
    answer = final(items)
    assert not answer.refused and not answer.fallback
    assert "Yes, there is a paper" not in answer.text
    abstract = next(p for p in bot.catalogue.papers if PRIVATESEAL in p.abstract).abstract
    (sentence,) = answer.sentences
    assert sentence.text in abstract and sentence.supported
    assert "restated the question" in (sentence.note or "")
    assert [c.paper.id for c in answer.citations] == [paper_id(bot, PRIVATESEAL)]
    checked = [e for e in items if isinstance(e, SentenceChecked)]
    assert checked[0].text.startswith(
        sentence.text.rstrip(".")
    )  # the app shows the replacement when the check lands
    assert any("restated the question" in n for n in answer.notes)


def test_a_restatement_is_about_the_paper_ranked_first_whatever_it_cites(bot) -> None:
    """A sentence that only restates the question has no finding of its own to match: the
    paper whose sentences happen to share its words is noise. It is cited to the paper
    retrieval ranks first, and shown as that paper's sentence closest to the question."""
    from assistant.answer.checker import Checker
    from assistant.answer.model_answer import checked_events

    question = (
        "Is there a paper on proving ownership of photos that already exist, even after someone "
        "edits them with a diffusion model?"
    )
    hits = list(bot.search(question, k=bot.settings.context_papers))
    seal = next(h for h in hits if h.paper.id == paper_id(bot, PRIVATESEAL))
    # as if retrieval had ranked another paper first: the restatement's words are PrivateSeal's
    ranked = [next(h for h in hits if h is not seal), seal]
    reply = (
        "Yes, there is a paper on proving ownership of photos that already exist, even after "
        "someone edits them with a diffusion model [2]."
    )
    for one_paper, first in ((True, ranked[0]), (False, seal)):
        checker = Checker(ranked, bot.embedder, 0.45, 0.08, question=question, one_paper=one_paper)
        list(checked_events(iter([reply]), checker))
        (result,) = checker.results
        assert [c.paper.id for c in checker.citations()] == [first.paper.id]
        assert result.text in first.paper.abstract and "restated the question" in (result.note or "")
    assert result.recited is False  # without the rule: the paper sharing its words, as cited


def test_sentence_that_gives_a_paper_the_questions_words_is_replaced(bot) -> None:
    # Seen in the app: the model pinned the question's description on the closest paper,
    # and the cosine against that paper's abstract passed it as supported.
    question = (
        "Which paper proposes a router for mixture-of-experts that keeps experts evenly busy "
        "without an extra loss term?"
    )
    hits = list(bot.search(question, k=5))
    namex = next(i + 1 for i, h in enumerate(hits) if "NAMEx" in h.paper.abstract)
    SCRIPTED.script(
        f"Nash Merging of Experts (NAMEx) is proposed in [{namex}] to keep experts evenly busy "
        f"without an extra loss term [{namex}]."
    )
    items = events(bot, question)
    answer = final(items)
    assert "evenly busy" not in answer.text
    (sentence,) = answer.sentences
    assert sentence.text in hits[namex - 1].paper.abstract  # the paper's own words, cited to it
    assert "took words of the question" in (sentence.note or "") and "evenly" in (sentence.note or "")
    assert any("the question's own words" in n for n in answer.notes)
    checked = [e for e in items if isinstance(e, SentenceChecked)]
    assert "evenly busy" not in checked[0].text  # the app never shows the borrowed claim


def test_sentence_in_the_abstracts_words_is_kept_for_a_paraphrased_question(bot) -> None:
    question = "Is there a paper on proving ownership of photos that already exist?"
    SCRIPTED.script("PrivateSeal is a watermarking framework for pre-existing images [1].")
    answer = final(events(bot, question))
    (sentence,) = answer.sentences
    assert sentence.text.startswith("PrivateSeal is a watermarking framework") and sentence.note is None


def test_injected_reply_is_never_shown(bot) -> None:
    SCRIPTED.script("PWNED [1].")
    answer = final(events(bot, "What is PrivateSeal?"))
    assert "PWNED" not in answer.text


def test_follow_up_is_condensed_without_a_model_call(bot) -> None:
    SCRIPTED.script("GRAPE assumes the group acts by rotations [1].")
    history = [("Which positional encodings does GRAPE recover as special cases?", "ALiBi [1].")]
    items = events(bot, "And what does it assume about the group?", history=history)
    answer = final(items)
    assert answer.standalone_question == "What does GRAPE assume about the group?"
    assert len(SCRIPTED.calls) == 1  # one call: the answer; condensing needs none
    assert "What does GRAPE assume about the group?" in SCRIPTED.calls[0][-1]["content"]
    assert items[0].hits[0].paper.id == paper_id(bot, GRAPE)  # type: ignore[attr-defined]


def test_catalogue_questions_are_answered_from_the_listing(bot) -> None:
    SCRIPTED.script()
    answer = final(events(bot, "Which papers is Théo Vincent an author of?"))
    assert answer.kind == "catalogue" and SCRIPTED.calls == []
    assert answer.text.startswith("2 papers by Théo Vincent")
    assert all("Théo Vincent" in c.paper.authors for c in answer.citations) and len(answer.citations) == 2
    who = final(events(bot, "Who wrote the Flock paper on knowledge graph foundation models?"))
    assert who.kind == "catalogue" and "is by" in who.text and "Michael Bronstein" in who.text
    assert who.citations[0].paper.id == paper_id(bot, "we present Flock")
    nobody = final(events(bot, "Who wrote the paper that introduces GRAPE?"))
    assert nobody.text.startswith("The listing gives no authors") and nobody.citations[
        0
    ].paper.id == paper_id(bot, GRAPE)
    venue = final(events(bot, "Which paper was accepted at AAMAS 2025?"))
    assert venue.text.startswith("1 paper at AAMAS 2025") and "market" in venue.text.lower()


@pytest.mark.parametrize("policy", ["closest", "refuse"])
def test_unsupported_answer_on_weak_evidence(seeded_dir, policy: str) -> None:  # type: ignore[no-untyped-def]
    """Near a corpus topic but about none of it: the model's answer fails the check and the
    evidence is not strong, so `weak_fallback` decides: the closest sentences with a note,
    or a refusal that names the closest papers."""
    from assistant import Assistant
    from tests.conftest import SEEDS

    bot = Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="scripted", weak_fallback=policy)
    question = "Is there a paper on dueling bandits?"
    plan = bot.plan(question)
    assert plan.verdict.answerable and not plan.verdict.strong  # the case this is about
    SCRIPTED.script(
        "Yes: Yue and Joachims proposed an interleaved filter for ranking web search results [1]."
    )
    answer = final(events(bot, question))
    assert "Joachims" not in answer.text
    if policy == "closest":
        assert not answer.refused and answer.fallback and answer.citations
        assert any("not supported" in n for n in answer.notes)
    else:
        assert answer.refused and answer.text == REFUSAL and not answer.citations
        assert answer.reason.startswith("No abstract answers this directly")
        assert "The closest papers are:" in answer.reason and "bandit" in answer.reason.lower()
        assert answer.model_text  # what the model wrote is kept for the record


def test_a_model_that_says_no_abstract_is_about_the_question_refuses_it(seeded_dir) -> None:  # type: ignore[no-untyped-def]
    """Below answer_above, the model is first asked whether any given abstract is about
    what the question asks; a plain no refuses, naming the closest papers, before any
    answer is written."""
    from assistant import Assistant
    from assistant.answer.prompts import RELEVANCE_SYSTEM
    from tests.conftest import SEEDS

    bot = Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="scripted", relevance_check=True)
    question = "Is there a paper on dueling bandits?"
    plan = bot.plan(question)
    assert not plan.verdict.strong
    SCRIPTED.script("Dueling bandits are studied in [1].")
    SCRIPTED.relevant = "No."
    answer = final(events(bot, question))
    assert answer.refused and answer.text == REFUSAL and not answer.citations
    assert "the model said no" in answer.reason and "The closest papers are:" in answer.reason
    first, second = SCRIPTED.asked  # asked of the two closest papers, one at a time
    assert first[0]["content"] == RELEVANCE_SYSTEM == second[0]["content"]
    assert question in first[1]["content"] and question in second[1]["content"]
    assert plan.hits[0].paper.abstract[:200] in first[1]["content"]
    assert plan.hits[1].paper.abstract[:200] in second[1]["content"]
    assert "asked of the 2 closest" in answer.reason
    assert answer.model_text == "No. | No." and answer.prompt_tokens > 0  # kept for the record
    assert SCRIPTED.replies and not SCRIPTED.calls  # the answer was never asked for

    # a yes (or anything but a plain no) lets the answer go ahead, without asking further
    SCRIPTED.script("I could not find this in the indexed abstracts.")
    SCRIPTED.relevant = "Yes"
    answer = final(events(bot, question))
    (asked,), (answered,) = SCRIPTED.asked, SCRIPTED.calls
    assert asked[0]["content"] == RELEVANCE_SYSTEM and answered[0]["content"] != RELEVANCE_SYSTEM
    assert answer.refused and "the model said no" not in answer.reason


def test_a_model_that_scores_yes_refuses_below_the_floor(seeded_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The bundled model's relevance answer is its probability of "yes": below
    `relevance_floor` for both closest abstracts refuses (the probabilities go into the
    record); at or above it for either lets the answer be written."""
    from assistant import Assistant
    from tests.conftest import SEEDS

    question = "Is there a paper on dueling bandits?"
    for floor, scores, refused in (
        (0.5, [0.31, 0.22], True),
        (0.5, [0.31, 0.5], False),
        (0.2, [0.31], False),
    ):
        bot = Assistant(
            data_dir=seeded_dir,
            corpus=[SEEDS],
            backend="scripted",
            relevance_check=True,
            relevance_floor=floor,
        )
        asked = iter(scores)
        monkeypatch.setattr(
            SCRIPTED, "yes_probability", lambda messages, asked=asked: next(asked), raising=False
        )
        SCRIPTED.script("I could not find this in the indexed abstracts.")
        answer = final(events(bot, question))
        assert next(asked, None) is None  # asked of as many papers as it took, no more
        assert ("the model said no" in (answer.reason or "")) is refused
        if refused:
            assert answer.model_text == "no (P(yes) 0.31) | no (P(yes) 0.22)"
            assert SCRIPTED.replies  # the answer was never asked for
        else:
            assert not SCRIPTED.replies  # the answer was written


def test_only_a_plain_no_counts_as_no() -> None:
    from assistant.answer.model_answer import says_no

    assert says_no("No") and says_no(" no.") and says_no("No, none of them")
    assert not says_no("Yes") and not says_no("") and not says_no("Nonparametric methods [1]")
    assert not says_no("Not sure") and not says_no("No-regret learning [1]")


def test_abstract_text_cannot_make_a_fence() -> None:
    from assistant.answer.model_answer import _unfenced

    assert "<<<" not in _unfenced("a <<>>>< b") and ">>>" not in _unfenced("a >><<<> b")
    assert _unfenced("x << y >> z") == "x << y >> z"


def test_the_relevance_question_is_asked_only_when_the_evidence_is_weak(seeded_dir) -> None:  # type: ignore[no-untyped-def]
    from assistant import Assistant
    from tests.conftest import SEEDS

    bot = Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="scripted", relevance_check=True)
    assert bot.plan("What is PrivateSeal?").verdict.strong
    SCRIPTED.script("PrivateSeal is a watermarking framework for pre-existing images [1].")
    SCRIPTED.relevant = "no"
    answer = final(events(bot, "What is PrivateSeal?"))
    assert not answer.refused and len(SCRIPTED.calls) == 1 and not SCRIPTED.asked  # strong evidence

    off = Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="scripted", relevance_check=False)
    SCRIPTED.script("Dueling bandits are studied in [1].")
    SCRIPTED.relevant = "no"
    final(events(off, "Is there a paper on dueling bandits?"))
    assert len(SCRIPTED.calls) == 1 and not SCRIPTED.asked  # switched off: the answer only

    # a question naming an author is not asked (an abstract does not name its authors)
    SCRIPTED.script("Théo Vincent's paper studies reinforcement learning [1].")
    named = "What does the paper by Théo Vincent say about bandits?"
    plan = bot.plan(named)
    assert plan.result.detected.author == "Théo Vincent" and not plan.verdict.strong
    assert plan.route.kind == "content"
    final(events(bot, named))
    assert SCRIPTED.calls and not SCRIPTED.asked


def test_catalogue_synthesis_adds_one_checked_sentence(seeded_dir) -> None:  # type: ignore[no-untyped-def]
    from assistant import Assistant
    from tests.conftest import SEEDS

    synth = Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="scripted", catalogue_synthesis=True)
    question = "Which papers is Théo Vincent an author of?"
    listing = final(list(synth.stream(question, backend="extractive")))
    SCRIPTED.script("Both papers study target networks in value-based deep reinforcement learning [1][2].")
    items = events(synth, question)
    answer = final(items)
    assert len(SCRIPTED.calls) == 1
    prompt = SCRIPTED.calls[0][-1]["content"]
    assert all(c.paper.label in prompt for c in listing.citations)  # the listed papers, numbered as shown
    assert answer.text.startswith(listing.text) and answer.text.endswith("learning [1][2].")
    assert answer.citations == listing.citations and answer.sentences[-1].supported
    checked = [e for e in items if isinstance(e, SentenceChecked)]
    assert [e.index for e in checked] == list(range(len(answer.sentences)))
    SCRIPTED.script("Bananas are rich in potassium [1].")
    unsupported = final(events(synth, question))
    assert unsupported.text == listing.text and "Banana" not in unsupported.text
    assert any("summary sentence was not supported" in n for n in unsupported.notes)
    SCRIPTED.script()
    assert final(events(synth, "Who wrote the Flock paper on knowledge graph foundation models?")).kind == (
        "catalogue"
    )
    assert SCRIPTED.calls == []  # one paper: nothing to synthesise


def test_near_miss_is_refused_naming_the_closest_paper(bot) -> None:
    SCRIPTED.script("The learning rate is 0.001 [1].")
    answer = final(events(bot, "What learning rate does the GRAPE paper use for its experiments?"))
    assert answer.refused and answer.text == REFUSAL and SCRIPTED.calls == []
    assert "does not report a learning rate" in (answer.reason or "")
    assert "GRAPE" in (answer.reason or "")


def test_which_model_is_refused_only_when_the_abstract_names_none(bot) -> None:
    SCRIPTED.script("GPT-4 [1].")
    answer = final(events(bot, "Which LLM was used to generate the proxy agents in Prompts to Proxies?"))
    assert answer.refused and SCRIPTED.calls == []
    assert "does not report which model was used" in (answer.reason or "")
    SCRIPTED.script("Models like GPT-o3-mini, GPT-o1 and DeepSeek-R1 lead in reasoning depth [1].")
    answer = final(
        events(bot, "Which LLMs lead in reasoning depth in the behavioral game-theoretic evaluation?")
    )
    assert not answer.refused and SCRIPTED.calls  # the abstract names them: the model answers
    assert "GPT-o3-mini" in answer.text


@pytest.mark.parametrize(
    "history",
    [
        [("What is GRAPE?", "A framework [1].")],
        [{"role": "user", "content": "What is GRAPE?"}, {"role": "assistant", "content": "A framework"}],
        [
            {"role": "user", "content": [{"type": "text", "text": "What is GRAPE?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "A framework"}]},
        ],
    ],
    ids=["pairs", "messages", "parts"],
)
def test_every_history_shape_gives_the_same_conversation(history) -> None:  # type: ignore[no-untyped-def]
    [(question, answer)] = conversation(history)
    assert question == "What is GRAPE?" and answer.startswith("A framework")
    alone = standalone("What does it assume?", history, lambda t: t == "GRAPE")
    assert alone.question == "What does GRAPE assume?"


def test_a_new_question_in_a_chat_is_not_read_as_a_follow_up(bot) -> None:
    """In the app every question after the first comes with the chat's history. A new
    question that uses "that" as a relative pronoun ("shows that …", "a technique that
    lifts …") or "also" as an adverb is not a follow-up: it is searched alone and finds its
    own paper, not the one the previous answer was about (before, 420 of the 968 questions of
    the sets without history read as follow-ups; 19 now, `is_follow_up`). A short question
    that refers back is still one."""
    history = [
        (
            "On which benchmark was the PrivateSeal watermarking framework evaluated?",
            "The PrivateSeal watermarking framework was evaluated on the W-Bench benchmark [1].",
        )
    ]
    for question, paper in (
        (
            "Which paper shows that the smallest singular values of a transformer's weight matrices "
            "also carry learned information?",
            "This work analyzes singular-value spectra",
        ),
        (
            "How many real data collections were used to test the low-rank correction technique that "
            "lifts the accuracy of the worst-off subpopulation without needing subgroup labels?",
            MARLA,
        ),
    ):
        plan = bot.plan(question, history=history)
        assert not plan.standalone.rewritten, plan.standalone
        assert plan.hits[0].paper.id == paper_id(bot, paper)
    for follow_up in (
        "Which conference is that an extended version of?",
        "What does it need to be robust against?",
    ):
        assert bot.plan(follow_up, history=history).standalone.rewritten
    # a short question that names its own subject stands alone
    assert not bot.plan("What is MARLA?", history=history).standalone.rewritten
    # "the paper on X" describes the paper it means; "the paper" alone points back (seen in
    # Chromium: after "Which papers did Théo Vincent write?" this kept his name as a filter
    # and was answered from an abstract, without a single author's name)
    vincent = [("Which papers did Théo Vincent write?", "2 papers by Théo Vincent: … [1]. … [2].")]
    games_history = [("Is there a paper on regularized learning in continuous games?", "")]
    own = bot.plan("Who are the authors of the paper on iterated Q-Networks?", history=vincent)
    assert not own.standalone.rewritten and own.route.kind == "catalogue", own.standalone
    # asked for the people, not "the authors" (heldout21, read: answered "not mentioned")
    people = bot.plan(
        "Could you give me the names of the people behind that analysis, so I can look up their other papers?",
        history=games_history,
    )
    assert people.route.kind == "catalogue" and people.route.facet == "authors", people.route
    for own in (
        "Do the researchers who made the benchmark report inter-annotator agreement?",
        "How does the model anonymise names of persons in clinical notes?",
        "What is the name of the group acting on the weights?",
    ):
        assert bot.plan(own).route.facet != "authors", own
    assert is_follow_up("What does the paper propose?")
    assert is_follow_up("How robust is the approach in low-resource settings?")
    # up to 20 words, a question still points back when, in its first clause, a verb asks about
    # "they" / "that" or a demonstrative follows a preposition, and it names nothing of its own;
    # "its" or "does it" after a name of its own do not make it one
    games = [
        ("Is there a paper on regularized learning dynamics in continuous games under persistent noise?", "")
    ]
    for long_follow_up in (
        "For what class of games do they still get play that keeps coming back near the equilibrium?",
        "Which of the two error sources does switching to that family shrink for smooth targets with few inputs?",
    ):
        assert bot.plan(long_follow_up, history=games).standalone.rewritten, long_follow_up
    for own in (
        "What rank does MARLA use for its logit-correction subspace, and what worst-group accuracy does it reach?",
        "Which paper proposes a watermark for existing photos and explains how users can verify it later on?",
        # after a comma the pronoun is the question's own subject again
        "Which LLMs were tested in the black-box zero-sum-game safety alignment framework, and what "
        "harmlessness scores did they get?",
        # an "it" or "that" that points at nothing before
        "How much labelled data does it take for a linear probe to recover syntactic depth from a frozen encoder?",
        "Which paper argues that the reason language models fail at arithmetic is that tokenization splits numbers?",
    ):
        assert not bot.plan(own, history=history).standalone.rewritten, own
    # an "it" that stands for what follows refers to nothing before
    assert not is_follow_up("How hard is it to count the linear regions of a ReLU network?")
    assert not is_follow_up("What does it cost to enforce exact rather than approximate symmetry?")


def test_worked_example_is_a_fixed_turn_before_the_question(bot) -> None:  # type: ignore[no-untyped-def]
    from assistant import Assistant
    from assistant.answer.prompts import EXAMPLE_ANSWER

    for on in (False, True):
        SCRIPTED.script("PrivateSeal is a watermarking framework [1].")
        final(events(Assistant(bot.settings, answer_example=on), "What is PrivateSeal?"))
        roles = [m["role"] for m in SCRIPTED.calls[0]]
        assert roles == (["system", "user", "assistant", "user"] if on else ["system", "user"])
        assert "PrivateSeal" in SCRIPTED.calls[0][-1]["content"]
        if on:  # the example never mentions the question's papers, and cites every sentence
            assert "PrivateSeal" not in SCRIPTED.calls[0][1]["content"]
            assert SCRIPTED.calls[0][2]["content"] == EXAMPLE_ANSWER
            assert EXAMPLE_ANSWER.count("[1]") == 2


def test_a_cited_sentence_mentioning_missing_information_is_kept(bot) -> None:
    """Only a sentence that says nothing but "not found" is a refusal: one that cites its
    abstract and merely contains "no information about" is a claim, checked and kept."""
    from assistant.answer.model_answer import is_refusal

    assert is_refusal("I could not find this in the indexed abstracts.")
    assert is_refusal("The abstracts provide no information about the learning rate.")
    kept = "The abstract gives no information about its runtime, but PrivateSeal is a watermarking framework for pre-existing images [1]."
    assert not is_refusal(kept)
    SCRIPTED.script(
        "PrivateSeal is a watermarking framework for pre-existing images under diffusion-based "
        "transformations, though the abstract gives no information about its runtime [1]."
    )
    answer = final(events(bot, "What is PrivateSeal?"))
    assert not answer.refused and not answer.fallback
    assert "watermarking framework for pre-existing images" in answer.text
    assert [c.paper.id for c in answer.citations] == [paper_id(bot, PRIVATESEAL)]


def test_a_question_mentioning_a_language_model_is_not_read_as_asking_which_model(bot) -> None:
    """ "what a fine-tuned language model memorised" names no detail to report; the detail
    rule "which model was used" once refused it although the right paper was first."""
    question = "Is there a paper on auditing what a fine-tuned language model memorised?"
    answer = bot.ask(question, backend="extractive")
    assert not answer.refused, answer.reason
    auditing = paper_id(bot, "Narrowly finetuned language models memorize implanted content verbatim")
    assert answer.citations[0].paper.id == auditing
    assert bot.plan("Which pretrained language model do the P2P authors fine-tune?").verdict.missing == (
        "which model was used"
    )


def test_a_rate_the_abstract_reports_is_answered_not_refused(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The FedConformer case: the question asks for a rate, the abstract states it in the same
    sentence that names it. The near-miss rule must not refuse ("does not report a rate")."""
    import json

    abstract = (
        "We present HarborSpeech, a federated conformer for on-device speech recognition across "
        "hospital wards. Clients train locally and share only low-rank adapter updates. "
        "On a multi-site clinical dictation corpus, HarborSpeech reduces word error rate from "
        "14.1% to 10.3% while cutting upload traffic by 6x."
    )
    path = tmp_path / "harbor.jsonl"
    record = {"title": "HarborSpeech: federated conformers for clinical dictation", "abstract": abstract}
    path.write_text(json.dumps(record) + "\n")
    assert seeded.ingest([path]).added == 1
    answer = seeded.ask("What word error rate does HarborSpeech reach?")
    assert not answer.refused, answer.reason
    assert "10.3%" in answer.text and answer.citations[0].paper.title.startswith("HarborSpeech")
    # The rule still refuses a detail the abstract does not report.
    missing = seeded.ask("What learning rate does HarborSpeech use?")
    assert missing.refused and "HarborSpeech" in (missing.reason or "")


def test_a_detail_reported_in_other_words_is_answered_not_refused(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Three detail-rule misfires seen on our sets, on a made-up abstract: a step size written
    as one word ("stepsizes"), a number written as an ordinal ("the third"), and "which
    optimizer" answered by an optimizer's name (it was read as asking for hyperparameter
    settings with numbers). Each question is answered; a detail the abstract lacks is still refused."""
    import json

    abstract = (
        "We revisit QuillProx, a distributed proximal method with server-side extrapolation. "
        "For partial client participation we analyse adaptive extrapolation rules based on "
        "Polyak stepsizes and gradient diversity. Training QuillProx with LAMB removes the need "
        "for warm-up at large batch. Its smallest singular directions rank third in influence."
    )
    path = tmp_path / "quill.jsonl"
    path.write_text(
        json.dumps({"title": "QuillProx: extrapolated proximal federated training", "abstract": abstract})
        + "\n"
    )
    assert seeded.ingest([path]).added == 1
    for question in (
        "What step-size rules does QuillProx analyse for partial participation?",
        "Which optimizer does QuillProx train with at large batch?",
        "How much do the smallest singular directions of QuillProx matter?",
    ):
        answer = seeded.ask(question, backend="extractive")
        assert not answer.refused, (question, answer.reason)
        assert answer.citations[0].paper.title.startswith("QuillProx"), question
    missing = seeded.ask("What batch size does QuillProx use?", backend="extractive")
    assert missing.refused and "batch size" in (missing.reason or "")


def test_a_name_that_is_in_the_listing_not_the_abstract_is_not_missing(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A question may name a paper by its venue or an author; the name rule (refuse when the
    question names something the closest abstracts never mention) reads the listing too."""
    import json

    record = {
        "title": "Tactile pre-grasp shaping for cluttered bins",
        "abstract": (
            "We learn pre-grasp finger shaping from tactile arrays for picking objects out of "
            "cluttered bins. A policy trained in simulation transfers to a real gripper and reaches "
            "92.4% grasp accuracy on unseen household objects."
        ),
        "venue": "CoRL 2024",
        "authors": ["Mirela Ostrander"],
    }
    path = tmp_path / "grasp.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert seeded.ingest([path]).added == 1
    answer = seeded.ask("What accuracy does the CoRL 2024 paper on tactile pre-grasp shaping reach?")
    assert not answer.refused, answer.reason
    assert "92.4%" in answer.text
    # A name that is nowhere, neither in the abstract nor in the listing, is still missing.
    absent = seeded.ask("What accuracy does tactile pre-grasp shaping reach on YCB-Video?")
    assert absent.refused and "YCB-Video" in (absent.reason or "")


def test_each_rule_is_replaceable_through_its_seam(seeded_dir) -> None:  # type: ignore[no-untyped-def]
    """`Rules` passes a router, detail rules and an evidence scorer in: a learned component
    replaces a hand-written rule without touching the pipeline."""
    from assistant import Assistant
    from assistant.answer.route import Route
    from assistant.answer.rules import EmbeddingScorer, Rules
    from tests.conftest import SEEDS

    class NoDetails:
        def requested(self, question: str) -> list[object]:
            return []

        def reported(self, question: str, detail: object, text: str) -> bool:
            return True

    class ContentOnly:
        def decide(self, question, result, catalogue, df) -> Route:  # type: ignore[no-untyped-def]
            return Route("content")

    calls: list[str] = []

    class Counting(EmbeddingScorer):
        def score(self, question, hits, embedder):  # type: ignore[no-untyped-def]
            calls.append(question)
            return super().score(question, hits, embedder)

    near_miss = "What learning rate does the GRAPE paper use for its experiments?"
    listing = "Which paper was accepted at AAMAS 2025?"
    default = Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="extractive")
    assert "does not report a learning rate" in (default.ask(near_miss).reason or "")
    assert default.ask(listing).kind == "catalogue"
    scorer = Counting()
    custom = Assistant(
        data_dir=seeded_dir,
        corpus=[SEEDS],
        backend="extractive",
        rules=Rules(router=ContentOnly(), details=NoDetails(), scorer=scorer),  # type: ignore[arg-type]
    )
    assert "does not report" not in (custom.ask(near_miss).reason or "")
    assert custom.ask(listing).kind == "content"
    assert calls == [near_miss, listing]


MOE_PAPERS = [
    {
        "title": "QuokkaRoute: load-balanced routing for sparse mixture-of-experts language models",
        "abstract": "Sparse mixture-of-experts language models route each token to a few experts, and "
        "uneven routing leaves some experts idle. We present QuokkaRoute, a router that balances "
        "expert load by solving a small assignment problem per batch instead of adding an auxiliary "
        "balancing loss. On a 1.3B-parameter model, QuokkaRoute lowers validation perplexity by 4.1 "
        "points and keeps every expert between 90% and 110% of its fair share of tokens.",
    },
    {
        "title": "WombatMoE: capacity factors for sparse mixture-of-experts language models",
        "abstract": "Sparse mixture-of-experts language models drop tokens when an expert's buffer "
        "overflows. We study the capacity factor that sizes these buffers in mixture-of-experts "
        "language models. WombatMoE adapts the capacity factor of each expert during training from "
        "the observed token counts. On a 1.3B-parameter model, it drops 60% fewer tokens than a "
        "fixed capacity factor of 1.25 at equal throughput.",
    },
]
ROUTER_QUESTION = (
    "Which router balances the load of experts in sparse mixture-of-experts language models "
    "without an auxiliary loss?"
)


def _moe_store(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Adds two near-topic papers to the private seeded store."""
    import json

    path = tmp_path / "moe.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in MOE_PAPERS))
    assert seeded.ingest([path]).added == 2


def _over(seeded, **settings: object):  # type: ignore[no-untyped-def]
    """An assistant over the same store with other settings."""
    from assistant import Assistant

    s = seeded.settings
    return Assistant(data_dir=s.data_dir, corpus=s.corpus, backend="extractive", **settings)


def titles(answer: Answer) -> list[str]:
    return [(c.paper.title or "").split(":")[0] for c in answer.citations]


def test_extractive_answer_quotes_only_papers_close_to_the_top_one(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A near-topic paper ranked second (about buffers, not routing) is not quoted beside the
    paper that answers: each extra paper cited is one the reader checks for nothing."""
    _moe_store(seeded, tmp_path)
    assert titles(_over(seeded).ask(ROUTER_QUESTION)) == ["QuokkaRoute"]
    # What the default did before (answer_paper_share 0.6): the second paper quoted too.
    assert titles(_over(seeded, answer_paper_share=0.6).ask(ROUTER_QUESTION)) == ["QuokkaRoute", "WombatMoE"]


def test_extractive_answer_is_not_made_to_quote_a_second_paper() -> None:
    """Three sentences, at most two per paper, forced a second paper into every answer whose
    first paper had three good sentences. Now all three may come from the paper that answers
    (pure logic of `pick`, with the default settings)."""
    from assistant.answer.evidence import ScoredSentence
    from assistant.answer.extractive import pick
    from assistant.config import Settings
    from assistant.types import Hit, Paper

    first, second = (Hit(Paper(id=i, label=i, abstract="…"), score) for i, score in (("a", 1.0), ("b", 0.95)))
    scored = [ScoredSentence(first, f"a{n}", 0.8 - 0.05 * n, n) for n in range(3)]
    scored.append(ScoredSentence(second, "b0", 0.68, 0))  # below a2, above the floors
    defaults = {name: f.default for name, f in Settings.model_fields.items()}
    chosen = pick(
        scored,
        defaults["answer_sentences"],
        defaults["min_sentence_score"],
        per_paper=defaults["answer_sentences_per_paper"],
        relative=defaults["answer_sentence_share"],
        paper_share=defaults["answer_paper_share"],
    )
    assert [s.text for s in chosen] == ["a0", "a1", "a2"]
    before = pick(scored, 3, 0.25, per_paper=2, relative=0.7, paper_share=0.85)
    assert [s.text for s in before] == ["a0", "a1", "b0"]


def test_a_model_sentence_cited_to_two_papers_keeps_the_one_that_supports_it(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _moe_store(seeded, tmp_path)
    bot = _over(seeded, context_paper_share=0.0)  # both papers given, whatever their scores
    hits = [(h.paper.title or "").split(":")[0] for h in bot.search(ROUTER_QUESTION, k=4)]
    quokka, wombat = hits.index("QuokkaRoute") + 1, hits.index("WombatMoE") + 1
    claim = (
        "QuokkaRoute is a router for sparse mixture-of-experts language models that balances "
        f"expert load by solving an assignment problem per batch [{quokka}][{wombat}]."
    )
    SCRIPTED.script(claim)
    answer = final(events(bot, ROUTER_QUESTION))
    assert titles(answer) == ["QuokkaRoute"] and not answer.fallback
    SCRIPTED.script(claim)  # without the rule (cite_margin 1.0) both citations stay
    assert titles(
        final(events(_over(seeded, cite_margin=1.0, context_paper_share=0.0), ROUTER_QUESTION))
    ) == [
        "QuokkaRoute",
        "WombatMoE",
    ]


def test_a_question_naming_what_no_paper_mentions_is_refused_naming_the_closest(seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A near-topic question about work the library does not hold (the seeds have bandit
    papers, none on dueling bandits or Condorcet winners) is refused before any model runs,
    saying which name no paper mentions and which papers are closest. Once a paper that
    mentions the name is added, the same question reaches the model."""
    import json

    question = "Is there a paper that finds the Condorcet winner of dueling bandits from pairwise wins?"
    SCRIPTED.script("The paper finds the Condorcet winner [1].")
    answer = final(events(seeded, question))
    assert answer.refused and answer.text == REFUSAL and SCRIPTED.calls == []
    assert (answer.reason or "").startswith("No paper in the library mentions “Condorcet”")
    assert "The closest papers are:" in (answer.reason or "") and "bandit" in (answer.reason or "").lower()
    # A capitalised word that opens the question, or a name in a hyphenated word the library
    # does use ("Shapley-style"), is no unknown name.
    unknown = seeded._ready().unknown_names
    assert unknown("Bandits with Shapley-based credit, under Condorcet rules?") == ["Condorcet"]
    # a likeness is no name to look up: a paper about GPT-like networks need not say "GPT"
    # (heldout21, read: three paraphrases refused for "GPT-style", "DeGroot-type", "GLM-type")
    assert unknown("Do GPT-style networks or DeGroot-type rules pick Condorcet winners?") == ["Condorcet"]
    from assistant.answer.evidence import missing_names

    assert missing_names("How many copies of a GPT-style network on SQuAD?", "Transformers.") == ["SQuAD"]
    from assistant.answer.evidence import unmentioned_comparison

    assert unmentioned_comparison("How does it compare with GPT-style models?", "Transformers.") is None
    # An author typed without accents is known (the seeds list Abdullah Akgül), and a word
    # after an opening quote opens the question.
    assert unknown("“Explain what Abdullah Akgul proposes for Shapley values.") == []
    assert unknown("¿Qué es PrivateSeal y para qué sirve?") == []  # '¿Qué' opens the question
    # Who did the work is no subject an abstract names ("two Soviet mathematicians").
    assert unknown("Which theorem of two Soviet mathematicians finds Condorcet winners?") == ["Condorcet"]
    # An adjective made from a name is a property an abstract may state otherwise ("symmetric
    # random matrices" for "Hermitian random arrays"); the name itself is still looked up.
    assert unknown("Which tail bounds hold for Hermitian random arrays with a Hermite twist?") == []
    assert unknown("Tail bounds for Hermitian arrays under Condorcet rules?") == ["Condorcet"]
    assert unknown("Do Google DeepMind researchers study Shapley values?") == []
    # refuse_unknown_names=false: the question is judged on its evidence alone, no name blamed.
    SCRIPTED.script("The paper finds the Condorcet winner [1].")
    judged = final(events(_over(seeded, refuse_unknown_names=False), question))
    assert "Condorcet" not in (judged.reason or ""), judged.reason
    abstract = (
        "We study dueling bandits, where a learner observes only which of two arms wins a duel. "
        "We propose CondorSeek, which finds the Condorcet winner with regret O(K log T) and "
        "needs no total order over the arms."
    )
    path = tmp_path / "duel.jsonl"
    path.write_text(
        json.dumps({"title": "CondorSeek: finding Condorcet winners", "abstract": abstract}) + "\n"
    )
    assert seeded.ingest([path]).added == 1
    SCRIPTED.script("CondorSeek finds the Condorcet winner of dueling bandits [1].")
    answer = final(events(seeded, question))
    assert not answer.refused and SCRIPTED.calls, answer.reason
    assert answer.citations[0].paper.title.startswith("CondorSeek")


MARLA = "We propose Misclassification Aware Rank-Limited Adaptation (MARLA)"
FLOCK = "across 54 KGs from diverse domains"


def test_a_paper_that_stands_out_is_given_to_the_model_alone(bot) -> None:
    """A question one paper answers far better than the rest gives the model that paper
    alone (it cannot write about, or cite, another); with `context_paper_share` 0 every
    retrieved paper is given, as before."""
    SCRIPTED.script("PrivateSeal is a watermarking framework for pre-existing images [1].")
    answer = final(events(bot, "What is PrivateSeal?"))
    prompt = SCRIPTED.calls[-1][-1]["content"]
    assert "[1] " in prompt and "[2] " not in prompt
    assert [c.paper.id for c in answer.citations] == [paper_id(bot, PRIVATESEAL)]
    SCRIPTED.script("PrivateSeal is a watermarking framework for pre-existing images [1].")
    final(events(Assistant(bot.settings, context_paper_share=0.0), "What is PrivateSeal?"))
    prompt = SCRIPTED.calls[-1][-1]["content"]
    assert "[2] " in prompt


def test_a_figure_no_abstract_states_is_refused_when_the_closest_sentences_state_none(bot) -> None:
    """The model answers a near-miss with a made-up figure: no given abstract states it, and
    the abstract sentences closest to the question state no figure at all, so the abstracts
    do not give what was asked: a refusal that says so and quotes what they report, not
    those sentences shown as if they answered."""
    question = "For MARLA, what rank is the correction subspace set to in the experiments?"
    SCRIPTED.script("The correction subspace is set to rank 1 in the experiments for MARLA [1].")
    answer = final(events(bot, question))
    assert answer.refused and not answer.fallback
    assert answer.reason is not None and "does not state the figure asked for" in answer.reason
    assert "rank 1" in answer.reason and "no given abstract states 1 " in answer.reason
    assert "closest to that claim" in answer.reason
    assert paper_id(bot, MARLA) in {h.paper.id for h in answer.hits[:1]}


def test_a_wrong_figure_about_what_the_abstract_gives_a_figure_for_is_not_refused(bot) -> None:
    """A made-up figure where the abstract does state a figure about the same thing (Flock's
    "54 KGs"): not refused by the rule above; the closest sentences are shown, as before."""
    SCRIPTED.script("Flock was evaluated on 60 knowledge graphs [1].")
    answer = final(events(bot, "On how many knowledge graphs was Flock evaluated?"))
    assert not answer.refused and answer.fallback
    assert answer.citations[0].paper.id == paper_id(bot, FLOCK)
    assert "60" not in answer.text


def test_a_count_of_things_is_no_figure_of_the_kind_asked_for(bot) -> None:
    """A near-miss asks Flock for a mean reciprocal rank, which its abstract does not state.
    The model answers with what it does state, a count ("across 54 KGs"), and the sentences
    closest to the question state no other figure. A count of graphs is no rank: refused,
    saying so, rather than those sentences shown as if they answered."""
    SCRIPTED.script(
        "Flock achieves state-of-the-art performance on entity prediction tasks across 54 KGs [1]."
    )
    question = "What mean reciprocal rank does the KGFM Flock reach for zero-shot link prediction on knowledge graphs?"
    answer = final(events(bot, question))
    assert answer.refused and not answer.fallback, answer.text
    assert answer.reason is not None and "does not state the figure asked for" in answer.reason
    assert answer.hits[0].paper.id == paper_id(bot, FLOCK)


@pytest.mark.parametrize(
    ("question", "model_says", "kind"),
    [
        (
            "Which text-to-image generator does the few-shot image classification paper with prototype "
            "learning use to produce its synthetic training images?",
            "The text-to-image generator used is not specified in the abstract.",
            "names",
        ),
        ("Which seven real-world datasets was MARLA evaluated on?", REFUSAL, "names"),
        (
            "What bit accuracy does PrivateSeal achieve under diffusion-based regeneration attacks on W-Bench?",
            REFUSAL,
            "figure",
        ),
        # "how many" asks for a number, and no sentence of the abstract states one
        (
            "In the Markov pseudo-games paper, how many consumers and goods did the infinite-horizon "
            "Markov exchange economies have on which the generative adversarial policy network "
            "computed recursive Radner equilibria?",
            REFUSAL,
            "number",
        ),
    ],
)
def test_a_model_that_says_the_figure_or_names_asked_for_are_not_given_is_believed_when_none_is(
    bot, question: str, model_says: str, kind: str
) -> None:
    """Near-misses on strong evidence: the model says the abstract does not give the names
    or figure asked for, and the abstract's sentences closest to the question give none
    either. The model is right: a refusal that says so, not those sentences shown as if
    they answered (which is what a refusal on strong evidence gets otherwise)."""
    SCRIPTED.script(model_says)
    answer = final(events(bot, question))
    assert answer.refused and not answer.fallback, answer.text
    assert (
        answer.reason is not None
        and f"does not state the {kind} asked for: the model says so" in answer.reason
    )


def test_a_count_anywhere_in_the_abstract_is_shown_when_the_model_finds_none(bot) -> None:
    """ "… shown to hold in how many settings?": the model says the abstracts do not say, but
    the abstract does ("This impossibility holds in two regimes"), in its fourth sentence
    by closeness to the question: its sentences are shown, that one first, not a refusal."""
    SCRIPTED.script(REFUSAL)
    answer = final(
        events(
            bot,
            "The impossibility of accurate yet confidential equilibrium computation in networked "
            "pairwise games is shown to hold in how many settings?",
        )
    )
    assert not answer.refused and answer.fallback, answer.reason
    assert answer.text.startswith("This impossibility holds in two regimes"), answer.text


def test_a_figure_given_for_a_survey_the_abstract_gives_it_for_another_is_refused(bot) -> None:
    """A near-miss: P2P's abstract states "an average test MSE of 0.014" across American
    Trends Panel waves, and speaks of the World Values Survey in another sentence. Asked for
    the MSE on the World Values Survey, the model moves 0.014 there: every word of the claim
    is in the abstract, but the figure belongs to another survey. Refused, quoting where it
    belongs, not shown as an answer."""
    SCRIPTED.script(
        "The prompted proxy-ensemble survey reconstruction method (P2P) reached an average test MSE "
        "of 0.014 on the World Values Survey [1]."
    )
    question = "What average test MSE did the proxy-ensemble survey reconstruction method P2P reach on the World Values Survey?"
    answer = final(events(bot, question))
    assert answer.refused and not answer.fallback, answer.text
    assert answer.reason is not None and "states no figure for “World Values Survey”" in answer.reason
    assert "American Trends Panel" in answer.reason
    # the same figure for the survey the abstract gives it for is an answer
    SCRIPTED.script("P2P reached an average test MSE of 0.014 across 14 American Trends Panel waves [1].")
    answer = final(events(bot, "What average test MSE did P2P reach across American Trends Panel waves?"))
    assert not answer.refused and "0.014" in answer.text


def test_a_figure_asked_of_a_benchmark_no_abstract_mentions_is_refused_before_the_model(bot) -> None:
    """ "What improvement does ODESteer achieve on the HH-RLHF helpfulness benchmark?": its
    abstract reports improvements on other benchmarks only; the question asks for a figure
    about a name no close abstract mentions, so it is refused naming that name, and the
    model is not asked (it would pass off TruthfulQA's figure)."""
    calls = len(SCRIPTED.calls)
    answer = final(
        events(bot, "What improvement does ODESteer achieve on the HH-RLHF helpfulness benchmark?")
    )
    assert answer.refused and answer.reason is not None
    assert "does not mention HH-RLHF" in answer.reason, answer.reason
    assert len(SCRIPTED.calls) == calls


def test_a_comparison_with_a_method_no_abstract_mentions_is_refused_before_the_model(bot) -> None:
    """ "How does ODESteer compare with Direct Preference Optimization?": no close abstract
    mentions DPO, by name or initials, so none can say how the two compare; the model is
    not asked (it wrote "… does not resolve this issue [1]" of another method, and the
    check kept the abstract's sentence as if it answered). A comparison with a method the
    abstract does name goes on."""
    calls = len(SCRIPTED.calls)
    answer = final(events(bot, "How does ODESteer compare with Direct Preference Optimization?"))
    assert answer.refused and answer.reason is not None
    assert "does not mention Direct Preference Optimization" in answer.reason, answer.reason
    assert len(SCRIPTED.calls) == calls
    from assistant.answer.evidence import unmentioned_comparison

    text = "We compare against Direct Preference Optimization (DPO) and beat DQN."
    assert unmentioned_comparison("How does it compare with DPO?", text) is None
    assert unmentioned_comparison("How does it compare with DQN?", text) is None
    assert (
        unmentioned_comparison("How does it compare with Direct Preference Optimization?", "DPO wins.")
        is None
    )
    assert unmentioned_comparison("How does it compare with RoPE?", text) == "RoPE"
    assert unmentioned_comparison("Compared with Adam, how fast is it?", text) is None  # a plain capital
    assert unmentioned_comparison("Compared with RoPE, how fast is it?", text) == "RoPE"
    assert unmentioned_comparison("How does it compare to baselines when applied to ImageNet?", text) is None
    assert unmentioned_comparison("How does it compare with GNNs on CIFAR-10?", "A GNN on CIFAR10.") is None


def test_a_comparison_inside_one_paper_is_a_question_about_that_paper(bot) -> None:
    """ "… is compared with the Nash and Kalai-Smorodinsky bargaining solutions": the paper
    that compares them is the best match for every part, and the question speaks of no
    second paper, so it is answered as a question about that paper (the comparison route
    gave a second, unrelated paper a sentence and a citation). Comparisons of two papers,
    named or described, still cover both."""
    inside = bot.plan(
        "A bargaining algorithm in which the mediator only observes each agent's most preferred "
        "direction is compared with the Nash and Kalai-Smorodinsky bargaining solutions: what does "
        "it guarantee that they do not?"
    )
    assert inside.route.kind == "content" and inside.cover == ()
    assert "Kalai-Smorodinsky" in inside.hits[0].paper.abstract
    for question in (
        "Compare PolySHAP and ProxySHAP: how does each one approximate Shapley-type quantities?",
        "What does the leader have to learn in the multi-follower Bayesian Stackelberg paper versus "
        "the multi-objective Stackelberg payoff-manipulation paper?",
        "How does ProxySHAP's way of estimating Shapley values compare with PolySHAP's?",
    ):
        plan = bot.plan(question)
        assert plan.route.kind == "comparison" and len(plan.cover) == 2, question


def test_a_figure_the_abstract_states_in_words_is_not_refused(bot) -> None:
    """MARLA's abstract writes its figures in words ("under three settings"): a claim of two
    settings is wrong, not ungiven, and the closest sentences are shown as before."""
    SCRIPTED.script("MARLA is evaluated under two settings [1].")
    answer = final(events(bot, "Under how many settings is MARLA evaluated?"))
    assert not answer.refused and answer.fallback


def test_a_figure_the_question_holds_is_not_one_the_model_made_up(bot) -> None:
    """ "Is MARLA evaluated on 10 datasets?" answered "not on 10 [1]": the 10 is the
    question's, so the rule does not refuse."""
    SCRIPTED.script("MARLA is not evaluated on 10 datasets [1].")
    answer = final(events(bot, "Is MARLA evaluated on 10 datasets?"))
    assert not (answer.refused and "figure asked for" in (answer.reason or ""))


def test_a_question_for_names_answered_without_one_is_refused(bot) -> None:
    """A near-miss that asks for names ("which seven datasets") answered with what the
    abstract does say ("seven real-world datasets"): every sentence is supported, but none
    names a dataset, and no abstract sentence near the question names one: refused, saying
    so, not passed off as an answer."""
    SCRIPTED.script("MARLA was evaluated on seven real-world datasets under three settings [1].")
    answer = final(events(bot, "Which seven real-world datasets was MARLA evaluated on?"))
    assert answer.refused and not answer.fallback
    assert answer.reason is not None and "does not state the names asked for" in answer.reason
    assert "the model answered “MARLA was evaluated on seven real-world datasets" in answer.reason
    assert "Its sentence closest to the question: “MARLA" in answer.reason
    assert paper_id(bot, MARLA) in {h.paper.id for h in answer.hits[:1]}


def test_a_question_for_a_figure_answered_without_one_is_refused(bot) -> None:
    """ "What bit accuracy …" answered "competitive robustness [1]": no figure, and the
    abstract's sentences closest to the question state none: refused."""
    SCRIPTED.script("PrivateSeal achieves competitive robustness against diffusion-based regeneration [1].")
    answer = final(
        events(bot, "What bit accuracy does PrivateSeal retain after diffusion-based regeneration?")
    )
    assert answer.refused
    assert answer.reason is not None and "does not state the figure asked for" in answer.reason


def test_a_name_copied_from_the_abstract_is_an_answer_though_it_repeats_the_question(bot) -> None:
    """The model repeats the question around the one name it was asked for ("… was evaluated
    on the W-Bench benchmark"): the name comes from the cited abstract, so the sentence is
    anchored there and kept, not replaced as a restatement of the question (which dropped
    W-Bench from the answer)."""
    question = "On which benchmark was the per-user-keyed watermarking method for existing photos evaluated?"
    SCRIPTED.script(
        "The per-user-keyed watermarking method for existing photos was evaluated on the W-Bench benchmark [1]."
    )
    answer = final(events(bot, question))
    assert not answer.refused and not answer.fallback
    assert "W-Bench" in answer.text
    assert answer.citations[0].paper.id == paper_id(bot, PRIVATESEAL)
    assert not any("restated the question" in note for note in answer.notes)


def test_a_replaced_sentence_is_replaced_by_the_abstract_sentence_its_answer_came_from(bot) -> None:
    """The model answers with the abstract's figure but wraps it in the question's own
    description, which MARLA's abstract does not use: the sentence is replaced, and by the
    abstract's sentence that states the figure it gave ("Across seven real-world datasets
    …"), not by the one it was matched with, which dropped the answer."""
    question = (
        "How many real data collections were used to test the low-rank correction technique that "
        "lifts the accuracy of the worst-off subpopulation without needing subgroup labels?"
    )
    SCRIPTED.script(
        "Seven real-world datasets were used to test the low-rank correction technique that lifts "
        "the accuracy of the worst-off subpopulation without needing subgroup labels [1]."
    )
    answer = final(events(bot, question))
    assert not answer.refused
    assert "Across seven real-world datasets" in answer.text
    assert answer.citations[0].paper.id == paper_id(bot, MARLA)


def test_a_follow_up_asks_for_what_its_own_words_ask(bot) -> None:
    """ "And under how many settings?" after "Which seven datasets …?" is read together with
    the previous question, but asks for a figure, not for names: the model's "three
    settings" answers it (seen in Chromium: it was refused for naming no dataset)."""
    history = [("Which seven real-world datasets were used to evaluate MARLA?", REFUSAL)]
    SCRIPTED.script("MARLA is evaluated under three settings of subgroup knowledge [1].")
    answer = final(events(bot, "And under how many settings?", history=history))
    assert not answer.refused, answer.reason
    assert "three settings" in answer.text


SPECTRA = "This work analyzes singular-value spectra"
SPECTRA_QUESTION = (
    "Is there work showing that the smallest singular directions of pretrained weights still "
    "matter after fine-tuning?"
)
SPECTRA_ANSWER = (  # no name in it for "them" to borrow
    "After fine-tuning, the smallest singular values can still carry more information than larger ones [1]."
)


def test_a_follow_up_on_the_paper_just_cited_is_answered_from_it(seeded_dir) -> None:  # type: ignore[no-untyped-def]
    """ "And how much does removing them hurt?" shares almost no word with the abstract the
    previous answer cited, and was refused for weak evidence (0.43 against 0.44, seen in
    Chromium). It points back at that answer, whose sentence the top paper states, and no
    other retrieved paper does: the conversation has settled the paper, so neither the
    evidence bar (raised here to 0.9, so the test does not hang on calibration) nor the
    relevance question is asked of it again. After a refusal, after an answer about another
    paper, or after a generic one, it still is. The app hands the history back with its
    linked citations ("[\\[1\\]](#source-1)"): read as [1]."""
    from assistant import Assistant
    from tests.conftest import SEEDS
    from ui.render import checked_sentence

    bot = Assistant(
        data_dir=seeded_dir, corpus=[SEEDS], backend="scripted", relevance_check=True, refuse_below=0.9
    )
    follow_up = "And how much does removing them hurt?"
    for answer in (SPECTRA_ANSWER, checked_sentence(SPECTRA_ANSWER, "supported")):
        plan = bot.plan(follow_up, history=[(SPECTRA_QUESTION, answer)])
        assert plan.hits[0].paper.id == paper_id(bot, SPECTRA)
        assert plan.verdict.continues and plan.verdict.answerable, plan.verdict.reason
    SCRIPTED.script("Zeroing them out raises perplexity far more than removing values from the bulk [1].")
    SCRIPTED.relevant = "no"
    answer = final(events(bot, follow_up, history=[(SPECTRA_QUESTION, SPECTRA_ANSWER)]))
    assert not answer.refused and answer.citations[0].paper.id == paper_id(bot, SPECTRA), answer.reason
    assert not SCRIPTED.asked and len(SCRIPTED.calls) == 1  # the answer only: no relevance question
    for previous in (
        REFUSAL,
        "PrivateSeal is evaluated on the W-Bench benchmark with several attacks [1].",
        "The proposed method outperforms strong baselines on standard benchmarks [1].",
    ):
        verdict = bot.plan(follow_up, history=[(SPECTRA_QUESTION, previous)]).verdict
        assert not verdict.continues and not verdict.answerable, previous
    # opening with "and" without pointing back may change the subject
    assert not bot.plan(
        "And dueling bandits?", history=[(SPECTRA_QUESTION, SPECTRA_ANSWER)]
    ).verdict.continues


BAI_QUESTION = "Is there a paper on best-arm identification when the arm means all shift over time?"
BAI_ANSWER = "It formulates best-arm identification in non-stationary stochastic bandits [1]."


def test_a_follow_up_that_only_names_another_subject_is_about_that_subject() -> None:
    """ "What about dueling bandits?" keeps the previous question's ask and changes what it
    is about; "What about its runtime?" points back, and "And how many datasets?" asks a
    question of its own."""
    assert switched_subject("What about dueling bandits?", BAI_QUESTION) == (
        "dueling bandits",
        frozenset({"dueling", "bandit"}),
    )
    # whole words: "quantum" is not "quantitative" (a five-letter stem took one for the other)
    assert switched_subject("Anything similar for quantum neural networks?", BAI_QUESTION)[1] == frozenset(
        {"quantum", "neural", "network"}
    )
    assert switched_subject("And for speech?", BAI_QUESTION)[0] == "speech"
    assert switched_subject("Do you have anything similar for protein folding?", BAI_QUESTION)[0] == (
        "protein folding"
    )
    assert switched_subject("And dueling bandits?", BAI_QUESTION)[0] == "dueling bandits"
    # "similar" and "same" refer back: a follow-up, however long ("Anything on X?" is not)
    assert is_follow_up("Do you have anything similar for protein folding in living cells?")
    assert is_follow_up("Same for speech recognition models trained on podcasts?")
    assert not is_follow_up("Anything on dueling bandits in recommender systems at scale?")
    assert not is_follow_up("Are there any papers similar to AlphaFold for RNA structure prediction?")
    for own in (
        "What about its runtime?",
        "What about the runtime?",  # a property of the paper just discussed
        "And the code?",
        "And how many datasets?",
        "And who wrote it?",
        "What about the authors?",
        "In simpler terms?",
        "In one sentence?",
        "And summarize the results.",
    ):
        assert switched_subject(own, BAI_QUESTION) == ("", frozenset()), own
    # acronyms and plurals as written
    assert switched_subject("What about GNNs?", BAI_QUESTION)[1] == frozenset({"gnn"})
    assert switched_subject("What about Gaussian processes?", BAI_QUESTION)[1] == frozenset(
        {"gaussian", "process"}
    )
    # nothing new: the previous question's own subject
    assert switched_subject("What about best-arm identification?", BAI_QUESTION) == ("", frozenset())
    # a switch with a tag, an explanation or what it replaces (heldout21, read: each was
    # answered from the previous paper)
    for question, subject in (
        ("What about detecting hallucinations in model answers, is there something on that?", "detecting"),
        ("And for membership inference attacks, does anything here study those?", "membership"),
        (
            "Does anyone here do that kind of thing for vehicle routing, i.e. planning delivery tours?",
            "routing",
        ),
        ("Is there anything similar for the nucleolus instead of the core?", "nucleolu"),
    ):
        assert is_follow_up(question), question
        assert subject in switched_subject(question, BAI_QUESTION)[1], question
    # "the …" after "what about", "same for" or "anything else on" is the paper's own
    # property; "in practice", "with real data" say how, not what about
    for own in (
        "What about the runtime, is there anything on that?",
        "Same for the training time?",
        "Anything else on the baselines?",
        "Does any paper study it in practice?",
        "Does anyone here do that with real data?",
    ):
        assert switched_subject(own, BAI_QUESTION) == ("", frozenset()), own
    # an example is the subject ("e.g. dueling bandits"); spaces cost nothing
    assert "dueling" in switched_subject("What about other settings, e.g. dueling bandits?", BAI_QUESTION)[1]
    assert switched_subject("What about " + " " * 5000 + "x?", BAI_QUESTION)[0] == ""


def test_a_switch_to_a_subject_no_abstract_names_is_refused_not_answered_from_the_last_paper(bot) -> None:
    """A walk (stop 60): "What about dueling bandits?" after a question on another paper was
    answered with that paper's sentences (retrieval reads both turns, so the previous paper
    comes first). It is refused, naming the subject and the closest papers; a switch to a
    subject the library has is answered from the paper that names it."""
    history = [(BAI_QUESTION, BAI_ANSWER)]
    plan = bot.plan("What about dueling bandits?", history=history)
    assert plan.standalone.switch == "dueling bandits"
    assert not plan.verdict.answerable
    assert plan.verdict.reason == "None of the closest abstracts mentions “dueling bandits”."
    answer = bot.ask("What about dueling bandits?", history=history)
    assert answer.refused and "closest papers are" in (answer.reason or "")
    # after "Who wrote it?", the switch keeps that ask: still refused, not answered with the
    # authors of whichever paper comes first (seen in Chromium)
    authors = [*history, ("And who wrote it?", "It is by Ada Lovelace [1].")]
    hallucinations = "What about detecting hallucinations in chatbot answers, is there something on that?"
    assert not bot.plan(hallucinations, history=authors).verdict.answerable
    linear = bot.ask("And for linear bandits in high dimensions?", history=history)
    assert not linear.refused, linear.reason
    assert linear.citations[0].paper.id == paper_id(bot, "High-dimensional linear bandits")


MARKET = "Market-based agents refer to reinforcement learning agents"
GOODS_QUESTION = (
    "In the reinforcement-learning design where decisions come from an internal economy of "
    "trading sub-agents, what are the parts the environment's state is split into called?"
)


def test_an_answer_wrapped_in_the_questions_words_is_shown_as_the_abstract_states_it(bot) -> None:
    """The model answers by restating the question around the answer ("… called goods [1]"):
    the paraphrase it repeats keeps the sentence far from every abstract sentence, so it is
    unsupported; the cited abstract's sentence that states what it added is shown, cited,
    instead of falling back to the sentences closest to the question (which lost the answer
    and its paper)."""
    SCRIPTED.script("The environment's state is split into several axes called goods [1].")
    answer = final(events(bot, GOODS_QUESTION))
    assert not answer.refused and not answer.fallback, answer.notes
    assert "goods" in answer.text and answer.text.split(" [1]")[0] in answer.citations[0].paper.abstract
    assert answer.citations[0].paper.id == paper_id(bot, MARKET)
    assert any("wrapped their answer in the question's words" in note for note in answer.notes)


def test_a_restated_answer_whose_name_the_abstract_never_writes_is_not_shown_as_its_answer(bot) -> None:
    """The same restatement around a name the cited abstract does not use ("ProtoGoods") is
    no answer of that abstract: it stays unsupported, and the answer falls back."""
    SCRIPTED.script("The environment's state is split into several axes called ProtoGoods [1].")
    answer = final(events(bot, GOODS_QUESTION))
    assert answer.refused or answer.fallback
    assert "ProtoGoods" not in answer.text
    assert not any("wrapped their answer" in note for note in answer.notes)


def assert_shown_as_stated(bot, answer: Answer, said: str, paper: str) -> None:  # type: ignore[no-untyped-def]
    """The answer is one sentence of the cited abstract, giving `said`, from the paper whose
    abstract holds `paper`."""
    assert not answer.refused and not answer.fallback, answer.notes
    assert said in answer.text, answer.text
    assert answer.text.split(" [1]")[0] in answer.citations[0].paper.abstract
    assert answer.citations[0].paper.id == paper_id(bot, paper)


MEMORISE = "Diffusion models have achieved remarkable success across diverse domains, but they remain"


def test_a_restated_answer_is_shown_as_the_abstract_sentence_that_states_what_it_adds(bot) -> None:
    """A sentence close to the question and supported by the abstract is replaced for
    restating it; its answer ("scale with sample size") is not a name or a figure, so the
    replacement is the abstract's sentence holding the words it adds, not the opening
    sentence or the one closest to the question, which lose the answer."""
    question = (
        "In a theoretical analysis of why denoising generative models copy their training "
        "images, with what must a network's size grow to exactly reproduce the "
        "training-set-optimal denoiser?"
    )
    SCRIPTED.script(
        "The size of a network must grow to scale with sample size to exactly reproduce the "
        "training-set-optimal denoiser [1]."
    )
    assert_shown_as_stated(bot, final(events(bot, question)), "scale with sample size", MEMORISE)


PRIVACYSIM = "Large language models (LLMs) are increasingly used to simulate human behavior, but their"


def test_a_replaced_sentence_keeps_the_figure_that_answers_not_the_ones_it_copied(bot) -> None:
    """The model copies the abstract's opening ("PrivacySIM, … of 1,000 users") and adds the
    answer next to the question's words ("… reached a hit rate of 40.4% …"); replaced for
    taking the question's words, it is shown as the sentence stating 40.4%, not the opening
    that states more of what it copied (PrivacySIM, 1,000) but not the answer."""
    question = (
        "What hit rate did the best AI reach when imitating real people's choices about handing "
        "over their personal data?"
    )
    SCRIPTED.script(
        "PrivacySIM, an evaluation suite that benchmarks LLM simulation of user privacy behavior "
        "against the ground-truth responses of 1,000 users, showed that the best AI reached a hit "
        "rate of 40.4% accuracy when imitating real people's choices about handing over their "
        "personal data [1]."
    )
    assert_shown_as_stated(bot, final(events(bot, question)), "40.4%", PRIVACYSIM)


EXPONENTIAL = "Reinforcement learning (RL) for exponential-utility optimization in discounted"


def test_an_uncited_answer_with_a_bracketed_year_is_shown_as_the_abstract_states_it(bot) -> None:
    """ "… is Porteus [1975]." : the bracketed year is the model's reference, not a citation
    (no "citation removed" note, no "[1975]" in the answer), and the sentence, uncited and
    wrapped in the question's words, is shown as the abstract's sentence that names Porteus,
    cited to it, instead of falling back to the sentences closest to the question."""
    question = (
        "Whose 1975 equation do the Q-learning-style methods for risk-averse agents with an "
        "exponential utility build on?"
    )
    SCRIPTED.script(
        "The 1975 equation that the Q-learning-style methods for risk-averse agents with an "
        "exponential utility build on is the one of Porteus [1975]."
    )
    answer = final(events(bot, question))
    assert not answer.refused and not answer.fallback, answer.notes
    assert "Porteus" in answer.text and "[1975]" not in answer.text, answer.text
    assert answer.citations[0].paper.id == paper_id(bot, EXPONENTIAL)
    assert not any("removed" in note for note in answer.notes), answer.notes
    # the model cited nothing: the sentence's note says which abstract states the answer
    assert any("abstract [1]'s sentence" in (s.note or "") for s in answer.sentences), answer.sentences


LMKAN = "We introduce a general-purpose drop-in replacement, lookup multivariate Kolmogorov-Arnold"
FLOPS_QUESTION = (
    "At most, by how much do the lookup-table replacements for linear layers reduce the arithmetic "
    "done at inference?"
)


def test_a_figure_wrapped_in_the_questions_words_is_shown_as_the_abstract_states_it(bot) -> None:
    """The answer adds only a figure to the question's words ("… by up to 6.0× [1]"): the
    abstract sentence that states the figure is shown; a figure the abstract does not state
    ("9.0×") is never shown as its answer."""
    SCRIPTED.script(
        "The lookup-table replacements for linear layers reduce the arithmetic done at inference by up to 6.0× [1]."
    )
    answer = final(events(bot, FLOPS_QUESTION))
    assert not answer.refused and not answer.fallback, answer.notes
    assert "reduce inference FLOPs by up to 6.0×" in answer.text
    assert answer.citations[0].paper.id == paper_id(bot, LMKAN)
    SCRIPTED.script(
        "The lookup-table replacements for linear layers reduce the arithmetic done at inference by up to 9.0× [1]."
    )
    answer = final(events(bot, FLOPS_QUESTION))
    assert "9.0×" not in answer.text
    assert not any("wrapped their answer" in note for note in answer.notes)


def test_each_paper_is_given_to_the_model_closest_sentence_first(bot) -> None:
    """The small model answers from the first sentences it reads: each paper's sentences
    reach it closest to the question first (`context_order`), so the one that states the
    answer ("… lmKAN-based CNNs cut inference FLOPs …", the abstract's seventh) comes before
    the abstract's opening; with `context_order="abstract"` they keep the abstract's order."""
    question = "How much do lmKAN-based CNNs cut inference FLOPs on CIFAR-10 and ImageNet-1k?"
    abstract = next(p.abstract for p in bot.catalogue.papers if LMKAN in p.abstract)

    def given(assistant) -> str:  # type: ignore[no-untyped-def]
        SCRIPTED.script("lmKAN-based CNNs cut inference FLOPs by 1.6–2.1× on CIFAR-10 [1].")
        final(list(assistant.stream(question, backend="scripted")))
        prompt = SCRIPTED.calls[-1][-1]["content"]
        return prompt.split("<<<", 1)[1]

    assert given(bot).startswith("Within the framework of Convolutional Neural Networks, lmKAN-based CNNs")
    in_order = Assistant(bot.settings, context_order="abstract", backend="extractive")
    assert given(in_order).startswith(abstract[:60])


def test_an_answer_about_the_opposite_case_is_refused(bot) -> None:
    """Contrastive Decoding Diffing's abstract reports near-perfect recovery on the non-CoT
    variants and says nothing of CoT ones. Asked about the CoT variants, the model copies
    the non-CoT sentence: supported, but about the other case. Refused, naming the case the
    abstract speaks of; asked about the non-CoT variants, the same sentence is the answer."""
    sentence = (
        "Contrastive Decoding Diffing achieves near-perfect recovery across all single-dataset "
        "non-CoT variants in real-domain finetuning settings [1]."
    )
    SCRIPTED.script(sentence)
    question = (
        "How well does Contrastive Decoding Diffing recover implanted content on the chain-of-thought "
        "(CoT) variants of its real-domain finetuning validation?"
    )
    answer = final(events(bot, question))
    assert answer.refused and not answer.fallback, answer.text
    assert answer.reason is not None and "speaks only of “non-CoT”" in answer.reason, answer.reason
    SCRIPTED.script(sentence)
    answer = final(
        events(
            bot, question.replace("(CoT)", "(non-CoT)").replace("chain-of-thought", "non-chain-of-thought")
        )
    )
    assert not answer.refused and "near-perfect recovery" in answer.text, answer.reason


def test_the_authors_and_the_experiments_point_back_at_the_paper_just_discussed() -> None:
    """ "What hypothesis do the authors put forward?" and "Which benchmark were the
    experiments run on?" after a question about one paper were searched alone, and
    answered from another paper; `python -m eval.chat_turns` reads no new question of the
    sets as a follow-up for it."""
    assert is_follow_up("What hypothesis do the authors put forward?")
    assert is_follow_up("Which benchmark were the experiments run on?")
    assert not is_follow_up("Which paper studies how authors respond to reviewers in peer review?")


def test_an_extractive_answer_puts_the_sentence_with_the_number_asked_first(bot) -> None:
    """ "… checked on a synthetic benchmark with how many tasks?": the sentences closest to
    the question restated the paper's aim; the one with "18 tasks" was not among them. The
    closest of the paper's sentences that gives a number now comes first (the model
    backends' fallback is this answer too)."""
    answer = bot.ask(
        "The approach that has LLMs imitate the execution of a Turing machine was checked on a "
        "synthetic benchmark with how many tasks?"
    )
    assert not answer.refused and answer.text.split(" [1]")[0].endswith(
        "8 classes of algorithms and 18 tasks"
    )


def test_they_and_them_are_not_replaced_by_a_name_the_previous_answer_used() -> None:
    """ "them" after "… the smallest singular directions …" are those directions: replaced
    by the name the previous answer used ("RMT"), the question read "How much does removing
    RMT hurt?" (seen in Chromium). "it" still is; and "they" by a name the previous question
    used ("Which testbeds did they show results on?" after "… the i-QN paper …")."""
    history = [
        (SPECTRA_QUESTION, "Zeroing out the singular values that deviate from RMT raises perplexity [1].")
    ]
    alone = standalone("And how much does removing them hurt?", history, lambda t: t == "RMT")
    assert "RMT" not in alone.question.split("(follow-up to")[0]
    assert standalone("And how is it tested?", history, lambda t: t == "RMT").question == "How is RMT tested?"
    named = [
        ("I'm looking for the iterated Q-Network (i-QN) paper.", "It learns action-value functions [1].")
    ]
    alone = standalone("Which testbeds did they show results on?", named, lambda t: t == "i-QN")
    assert alone.question == "Which testbeds did i-QN show results on?"
