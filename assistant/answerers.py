"""One answerer per backend, in one registry.

Every answerer gets the same `Plan` (route, evidence, verdict) and yields the same
events. Catalogue questions, "which papers" questions and refusals decided on the
evidence are answered alike by all of them; only content questions reach a model.

Backends are registered by name: `extractive` (no LLM) and the chat models of
`assistant.answer.llms` (`llama-cpp`, `openai`, `ollama`). `register(name, factory)` adds
another one (a factory gets the settings and returns a `ChatModel`); the settings'
`backend` accepts exactly the registered names.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from itertools import chain
from typing import Protocol

from assistant.answer.asked import asked_kind, giving_asked
from assistant.answer.catalogue_answers import catalogue_answer, several_answer
from assistant.answer.checker import Checker
from assistant.answer.citations import Numbering, markers, shown
from assistant.answer.extractive import ANSWER_FROM, answer_first, compose, pick
from assistant.answer.llms import ChatModel, Message, chat_model, relevance_model
from assistant.answer.model_answer import (
    Context,
    answer_messages,
    build_context,
    checked_events,
    is_refusal,
    relevance_messages,
    says_no,
    synthesis_messages,
)
from assistant.answer.plan import Plan
from assistant.backends import EXTRACTIVE, backend_names, register
from assistant.config import Settings
from assistant.errors import LLMError
from assistant.index.embed import Embedder
from assistant.text import split_sentences
from assistant.types import Answer, Event, Hit, SentenceChecked, TextDelta

# `register` and `backend_names` live in the leaf `assistant.backends`; this stays their
# public address (`from assistant.answerers import register`).
__all__ = ["EXTRACTIVE", "Answerer", "answerer", "backend_names", "register"]

log = logging.getLogger(__name__)

SYNTHESIS_MAX_TOKENS = 96  # one sentence
RELEVANCE_MAX_TOKENS = 2  # "yes" or "no"
RELEVANCE_PAPERS = 2  # the closest papers the relevance question is asked of
# what an `asked_kind` asks for, in words
_KIND_WORDS = {"figure": "figure", "name": "names", "number": "number"}
# "[1] and [2] both study…": a number used as a paper's name leaves a hole once the
# checker moves markers to the end of the sentence.
NUMBER_AS_NAME = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]\s+[A-Za-z]")


class Answerer(Protocol):
    name: str

    def answer(self, plan: Plan) -> Iterator[Event]:
        """Yield text, sentence checks and finally the Answer (Sources come before, from the caller)."""
        ...


def replay(answer: Answer) -> Iterator[Event]:
    """The events of an answer that was not generated token by token."""
    if answer.text:
        yield TextDelta(answer.text)
    for i, s in enumerate(answer.sentences):
        cited = tuple(c for c in answer.citations if c.number in s.citations)
        yield SentenceChecked(i, shown(s), s, cited=cited)
    yield answer


class ExtractiveAnswerer:
    """No LLM: the listing, or the abstract sentences closest to the question."""

    def __init__(self, settings: Settings, embedder: Embedder, name: str = EXTRACTIVE) -> None:
        self.settings = settings
        self.embedder = embedder
        self.name = name

    def answer(self, plan: Plan) -> Iterator[Event]:
        yield from replay(self.without_model(plan) or self._content(plan))

    def without_model(self, plan: Plan) -> Answer | None:
        """The answer when no model is needed: catalogue, refusal, 'which papers'."""
        if not plan.verdict.answerable:
            return plan.refusal(plan.verdict.reason or "The abstracts do not answer this.", self.name)
        if plan.route.kind == "catalogue":
            return catalogue_answer(plan, self.embedder, self.name)
        if plan.route.kind == "several":
            return several_answer(plan, self.name, self.settings.min_sentence_score)
        return None

    def extract(self, plan: Plan, backend: str | None = None) -> Answer | None:
        """The closest abstract sentences, cited; None when none is close enough."""
        s = self.settings
        chosen = pick(
            plan.scored,
            s.answer_sentences,
            s.min_sentence_score,
            per_paper=s.answer_sentences_per_paper,
            relative=s.answer_sentence_share,
            paper_share=s.answer_paper_share,
            must_cover=plan.cover,
        )
        if not chosen:
            return None
        gives = giving_asked(plan.standalone.own, plan.standalone.question)
        if gives is not None and not plan.cover:  # a comparison speaks of every paper it compares
            every = asked_kind(plan.standalone.own) == "number"  # as `_stated_nowhere` looks
            chosen = answer_first(
                chosen,
                plan.scored,
                gives,
                s.answer_sentences,
                s.min_sentence_score,
                None if every else ANSWER_FROM,
            )
        text, citations, sentences = compose(chosen)
        return plan.answer(text, citations, sentences, backend or self.name)

    def _content(self, plan: Plan) -> Answer:
        return self.extract(plan) or plan.refusal(
            "No sentence of the top abstracts addresses the question.", self.name
        )


class ModelAnswerer:
    """An LLM writes the answer from the best sentences; every sentence is checked, and
    the evidence, not the model's wording, decides between answer, fallback and refusal."""

    def __init__(
        self, settings: Settings, embedder: Embedder, model: ChatModel, relevance: ChatModel | None = None
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.model = model
        self.relevance = relevance or model  # asked whether a close abstract is about the question
        self.name = model.name
        self.extractive = ExtractiveAnswerer(settings, embedder, name=model.name)

    def answer(self, plan: Plan) -> Iterator[Event]:
        ready = self.extractive.without_model(plan)
        if ready is not None:
            if self._synthesises(plan, ready):
                yield from self._with_synthesis(plan, ready)
            else:
                yield from replay(ready)
            return
        s = self.settings
        noes, asked_tokens, declined = self._off_topic(plan)
        if noes:
            yield plan.refusal(
                "None of the closest abstracts is about what the question asks: asked of the "
                f"{len(noes)} closest, the model said no, and the "
                f"evidence is not strong enough to overrule it (evidence {plan.verdict.score:.2f}, "
                f"needs {s.answer_above:.2f}).",
                self.name,
                model_text=" | ".join(noes),  # what the model said, for the record (eval counts it)
                prompt_tokens=asked_tokens,
            )
            return
        # a paper the relevance question accepted after declining the first is always given
        given = plan.given(s) if not declined else plan.hits[: s.context_papers]
        context = build_context(plan.scored, given, s)
        checker = Checker(
            context.sources,
            self.embedder,
            s.support_threshold,
            s.recite_margin,
            question=plan.standalone.question,
            asks=plan.standalone.own,
            echo_margin=s.echo_margin,
            # a comparison's sentences speak of several papers at once
            cite_margin=s.cite_margin if len(plan.cover) < 2 else 1.0,
            aside_margin=s.aside_margin,
            one_paper=len(plan.cover) < 2,
            borrowed_words=s.borrowed_words,
        )
        messages = answer_messages(plan.standalone.question, context, s)
        raw: list[str] = []
        shown: list[SentenceChecked] = []
        pieces = _recording(self.model.stream(messages, s.llm_max_tokens), raw)
        yield from _keeping_checks(checked_events(pieces, checker), shown)
        model_text = "".join(raw)
        extra = self._made_by_model(model_text)
        supported = [e for e in shown if e.support.supported]
        if is_refusal(model_text) and len(supported) <= 1:
            if (
                _asks_a_kind_of_one(plan, checker)
                and not any(checker.gives_asked(e.text) for e in supported)
                and _stated_nowhere(checker)
            ):
                # The model says the abstracts do not give the figure, names or number asked
                # for, and the abstract's sentences give none either (`_stated_nowhere`): it is right.
                why = self._not_stated(checker, context, model_text, refused=True)
                yield self._refuse(why, plan, extra)
                return
            if plan.verdict.strong:  # the evidence, not the model's wording, decides
                why = (
                    "the model said the abstracts do not answer this, but they hold sentences close "
                    f"to the question (evidence {plan.verdict.score:.2f}); these are shown instead"
                )
                yield self._instead(plan, why, extra)
            else:
                yield self._refuse(
                    "The model found no answer in the closest abstracts, and the evidence is not strong "
                    f"enough to overrule it (evidence {plan.verdict.score:.2f}, needs "
                    f"{self.settings.answer_above:.2f}).",
                    plan,
                    extra,
                )
            return
        if plan.verdict.strong and self._figure_not_given(checker, supported):
            # The evidence says which paper the question is about; the model answered with
            # figures no given abstract states, and no sentence of theirs states a figure of
            # that kind: they do not give what was asked. (On weak evidence the right paper
            # may not be among them: the weak fallback below decides.)
            first = checker.unstated[0]
            figures = ", ".join(dict.fromkeys(f for u in checker.unstated for f in u.figures))
            whose = "Its" if len(context.sources) == 1 else "Their"
            closest = f" {whose} sentence closest to that claim: “{first.closest}”" if first.closest else ""
            claim = first.sentence.rstrip(" .")
            yield self._refuse(
                f"{_not_in(context)} the figure asked for: the model answered “{claim}”, "
                f"but no given abstract states {figures} or a figure of that kind.{closest}",
                plan,
                extra,
            )
            return
        wrong = next((m for m in checker.misbound if not m.named_figure), None)
        if plan.verdict.strong and not supported and wrong is not None:
            # The model gave the abstract's figure for the name the question asks about; the
            # abstract gives it for something else, and states no figure with that name.
            claim = wrong.sentence.rstrip(" .")
            yield self._refuse(
                f"The abstract of “{wrong.paper}” states no figure for “{wrong.name}”: the model answered "
                f"“{claim}”, but the abstract gives {wrong.figure} for something else: “{wrong.stated}”",
                plan,
                extra,
            )
            return
        other = {o.sentence: o for o in checker.other_case}
        if plan.verdict.strong and supported and all(e.support.text in other for e in supported):
            # Every supported sentence speaks of the opposite case ("non-CoT variants") of
            # the one asked about, and the abstract never names the case asked: no answer.
            case = other[supported[0].support.text]
            yield self._refuse(
                f"The abstract of “{case.paper}” speaks only of “{case.case}”, not of the case the "
                f"question asks about: “{case.stated}”",
                plan,
                extra,
            )
            return
        if self._asked_not_given(plan, checker, shown, supported):
            # The question asks a paper for a figure, names or a number, and the answer gives
            # none; the evidence says which paper. If its sentences give none either
            # (`_stated_nowhere`), the abstract does not say it; if they do, they are shown.
            if _stated_nowhere(checker):
                yield self._refuse(self._not_stated(checker, context, model_text), plan, extra)
                return
            if supported:
                assert checker.asked is not None
                why = (
                    f"the model's answer does not give the {_KIND_WORDS[checker.asked]} asked for; the "
                    "closest abstract sentences are shown instead"
                )
                yield self._instead(plan, why, extra)
                return
        if not supported or len(supported) < 0.5 * len(shown):
            unsupported = f"{len(shown) - len(supported)} of {len(shown)} sentences of the model's answer"
            if not plan.verdict.strong and s.weak_fallback == "refuse":
                # Neither the model nor the evidence carries an answer: say so, naming the
                # closest papers, rather than show their sentences as if they answered.
                yield self._refuse(
                    f"No abstract answers this directly: {unsupported} are not supported by the "
                    f"abstracts they cite, and the evidence is not strong enough to answer from the "
                    f"abstracts alone (evidence {plan.verdict.score:.2f}, needs {s.answer_above:.2f}).",
                    plan,
                    extra,
                )
                return
            why = (
                f"{unsupported} are not supported by the abstracts they cite; the closest abstract "
                "sentences are shown instead"
            )
            yield self._instead(plan, why, extra)
            return
        notes = []
        if len(supported) < len(shown):
            notes.append(f"{len(shown) - len(supported)} sentence(s) no abstract supports were left out")
        if checker.removed or checker.recited:
            notes.append(
                f"citation check: {checker.removed} citation(s) to sources not given removed, "
                f"{checker.recited} re-cited to the abstract that supports the sentence"
            )
        if checker.asides:
            notes.append(
                f"{checker.asides} sentence(s) about another paper, further from the question than "
                "the answer's first, were left out"
            )
        if checker.restated:
            notes.append(
                f"{checker.restated} sentence(s) that only restated the question replaced by the cited "
                "abstract's own sentence"
            )
        if checker.wrapped:
            notes.append(
                f"{checker.wrapped} sentence(s) that wrapped their answer in the question's words "
                "replaced by the abstract's sentence that states it"
            )
        if checker.borrowed:
            notes.append(
                f"{checker.borrowed} sentence(s) that gave a paper the question's own words, which its "
                "abstract does not use, replaced by that abstract's own sentence"
            )
        yield plan.answer(
            " ".join(e.text for e in supported),
            checker.citations(),
            tuple(checker.results),
            self.name,
            tuple(notes),
            **extra,  # type: ignore[arg-type]
        )

    def _off_topic(self, plan: Plan) -> tuple[list[str], int, int]:
        """Below answer_above, ask whether each of the closest abstracts is about what a
        content question asks, one at a time, stopping at the first that is; the model's
        replies when it says a plain no for each (else none), the prompt tokens asked, and
        how many papers it declined before one it accepted.
        (The right paper is not always first, above all in the MiniLM index: asking of the
        first alone refused answerable questions.)
        Not asked when the question names an author (an abstract does not name its
        authors), nor of a follow-up on the paper the previous answer was about, nor when
        asking fails: the check is an extra, never a new way to fail."""
        result = plan.result
        if (
            not self.settings.relevance_check
            or plan.verdict.strong
            or plan.verdict.continues  # the previous turn settled what the question is about
            or plan.route.kind != "content"
            or result.detected.author is not None
            or result.filters.author is not None
        ):
            return [], 0, 0
        noes: list[str] = []
        tokens = 0
        for hit in plan.hits[:RELEVANCE_PAPERS]:
            messages = relevance_messages(plan.standalone.question, hit.paper)
            try:
                said = self._relevant(messages)
            except LLMError as exc:
                log.warning("relevance question not answered (%s): answering without it", exc)
                return [], 0, 0
            tokens += getattr(self.relevance, "last_prompt_tokens", 0)
            if said is None:
                return [], tokens, len(noes)
            noes.append(said)
        return noes, tokens, 0

    def _relevant(self, messages: list[Message]) -> str | None:
        """None when the model takes the abstract to be about the question; else what it
        said. A model that can score its first token (the bundled one) says no when its
        probability of "yes" is below `relevance_floor`; any other answers in words, and
        only a plain no counts (`says_no`)."""
        score = getattr(self.relevance, "yes_probability", None)
        if score is not None:
            p_yes = float(score(messages))
            return None if p_yes >= self.settings.relevance_floor else f"no (P(yes) {p_yes:.2f})"
        reply = "".join(self.relevance.stream(messages, RELEVANCE_MAX_TOKENS))
        return reply.strip() if says_no(reply) else None

    def _synthesises(self, plan: Plan, ready: Answer) -> bool:
        return (
            self.settings.catalogue_synthesis
            and plan.route.kind == "catalogue"
            and not ready.refused
            and len(ready.citations) >= 2
        )

    def _with_synthesis(self, plan: Plan, listing: Answer) -> Iterator[Event]:
        """The catalogue answer, then one model sentence over its papers, checked against
        their abstracts and kept only if supported (the listing itself never changes)."""
        *shown, _ = replay(listing)
        yield from shown
        s = self.settings
        sources = [Hit(c.paper, c.score) for c in listing.citations]
        numbering = Numbering()  # the listing's numbers first, so [n] means what it means there
        for c in listing.citations:
            numbering.number(c.paper, c.score)
        checker = Checker(  # the sentence is about the listed papers together: no cite_margin
            sources, self.embedder, s.support_threshold, s.recite_margin, cite_margin=1.0, numbering=numbering
        )
        messages = synthesis_messages(plan.standalone.question, listing, s)
        raw: list[str] = []
        checked: list[SentenceChecked] = []
        pieces = chain([" "], _recording(self.model.stream(messages, SYNTHESIS_MAX_TOKENS), raw))
        yield from _keeping_checks(checked_events(pieces, checker, start=len(listing.sentences)), checked)
        model_text = "".join(raw)
        extra = self._made_by_model(model_text)
        kept = next((e for e in checked if e.support.supported), None)
        why = None
        if kept is None or is_refusal(model_text):
            why = "was not supported by the listed abstracts"
        elif NUMBER_AS_NAME.search(model_text):
            why = "names the papers only by their numbers"
        if kept is None or why is not None:
            note = f"the model's summary sentence {why} and is left out"
            yield replace(listing, notes=(*listing.notes, note), **extra)  # type: ignore[arg-type]
            return
        yield replace(
            listing,
            text=f"{listing.text} {kept.text}",
            sentences=(*listing.sentences, kept.support),
            **extra,  # type: ignore[arg-type]
        )

    @staticmethod
    def _figure_not_given(checker: Checker, supported: list[SentenceChecked]) -> bool:
        """Does every sentence of the model's answer fail the check for stating figures no
        given abstract states (nor the question), with no sentence of theirs stating a figure
        of that kind? Then the abstracts do not give the figure asked for (a near-miss the
        model answered anyway)."""
        return (
            not supported
            and bool(checker.results)
            and len(checker.unstated) == len(checker.results)
            and not any(u.like for u in checker.unstated)
        )

    @staticmethod
    def _asked_not_given(
        plan: Plan, checker: Checker, shown: list[SentenceChecked], supported: list[SentenceChecked]
    ) -> bool:
        """A one-paper question, on strong evidence, that asks for a figure, names or a
        number (`asked_kind`), answered without one."""
        if not (_asks_a_kind_of_one(plan, checker) and shown):
            return False
        return not any(checker.gives_asked(e.text) for e in supported)

    @staticmethod
    def _not_stated(checker: Checker, context: Context, model_text: str, refused: bool = False) -> str:
        """Why an answer that gives nothing of the kind asked for is refused (`refused`: the
        model itself said the abstracts do not give it)."""
        assert checker.asked is not None
        whose = "Its" if len(context.sources) == 1 else "The first abstract's"
        sentences = split_sentences(model_text) or [""]
        if refused:  # the sentence in which the model says so
            sentences = [t for t in sentences if is_refusal(t)] or sentences
        claim = markers(sentences[0])[1].rstrip(" .")  # the model's own words
        said = (
            f"the model says so (“{claim}”)" if refused else f"the model answered “{claim}”, which gives none"
        )
        closest = checker.closest_to_question()
        near = f" {whose} sentence closest to the question: “{closest}”" if closest else ""
        either = (
            "no sentence of the abstract gives one either"
            if checker.asked == "number"
            else "the abstract's sentences closest to the question give none either"
        )
        return f"{_not_in(context)} the {_KIND_WORDS[checker.asked]} asked for: {said}, and {either}.{near}"

    def _refuse(self, why: str, plan: Plan, extra: dict[str, object]) -> Answer:
        """A refusal by this backend, with what the model said for the record."""
        return plan.refusal(why, self.name, **extra)

    def _made_by_model(self, model_text: str) -> dict[str, object]:
        return {"model_text": model_text, "prompt_tokens": getattr(self.model, "last_prompt_tokens", 0)}

    def _instead(self, plan: Plan, why: str, extra: dict[str, object]) -> Answer:
        fallback = self.extractive.extract(plan, backend=EXTRACTIVE)
        if fallback is None:
            return plan.refusal(
                "The model's answer is not supported by the abstracts, and no abstract sentence "
                "addresses the question.",
                self.name,
                **extra,
            )
        return replace(fallback, fallback=True, notes=(*fallback.notes, why), **extra)  # type: ignore[arg-type]


def _asks_a_kind_of_one(plan: Plan, checker: Checker) -> bool:
    """A one-paper question, on strong evidence (it says which paper), that asks for a
    figure or for names by its head noun, or for a number by its own "how many"
    (`asked_kind`)."""
    return bool(plan.verdict.strong and checker.asked and checker.one_paper)


def _stated_nowhere(checker: Checker) -> bool:
    """Does no sentence of the first abstract give what the question asks for: of its 3
    sentences closest to the question, for a figure or names; of all of them, for a number
    (the count that answers "how many …?" is often far from the question's words: "Flock
    … achieves state-of-the-art performance … across 54 KGs" comes last)?"""
    return checker.stating_asked(closest=None if checker.asked == "number" else 3) is None


def _not_in(context: Context) -> str:
    """How a refusal says that the abstracts given do not state what was asked."""
    return "The abstract given does not state" if len(context.sources) == 1 else "No abstract given states"


def _recording(pieces: Iterator[str], into: list[str]) -> Iterator[str]:
    """Pass the model's pieces on as they come, keeping a copy."""
    for piece in pieces:
        into.append(piece)
        yield piece


def _keeping_checks(events: Iterator[Event], into: list[SentenceChecked]) -> Iterator[Event]:
    """Pass the events on, keeping the sentence checks."""
    for event in events:
        if isinstance(event, SentenceChecked):
            into.append(event)
        yield event


def answerer(settings: Settings, embedder: Embedder, name: str | None = None) -> Answerer:
    name = name or settings.backend
    if name == EXTRACTIVE:
        return ExtractiveAnswerer(settings, embedder)
    return ModelAnswerer(settings, embedder, chat_model(settings, name), relevance_model(settings, name))
