"""The chat model's answer: its compact context, its streamed text, and the check of each
sentence as it completes, as events.

The model's text is passed on as it is generated (`TextDelta`); each sentence is
checked as soon as the next one starts (`SentenceChecked`), so a reader sees the
prose at once and each sentence's verdict a moment later.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assistant.answer import prompts
from assistant.answer.checker import Checker
from assistant.answer.citations import PARTIAL_MARKER, markers
from assistant.answer.evidence import ScoredSentence, best_of
from assistant.answer.injection import evidence_of, field_flag
from assistant.answer.llms import Message
from assistant.config import Settings
from assistant.text import make_label, split_sentences
from assistant.types import REFUSAL, Answer, Hit, Paper, SentenceChecked, TextDelta


@dataclass(frozen=True)
class Context:
    text: str
    sources: list[Hit]


def build_context(scored: Sequence[ScoredSentence], hits: Sequence[Hit], settings: Settings) -> Context:
    """The most relevant sentences of each paper, the top paper's most generously (the
    right paper is usually first, and the fact asked for is often in a sentence that
    is not the closest to the question), within the budget. Each abstract is fenced as
    quoted data; flagged (instruction-like) sentences are never among them."""
    budget = settings.context_tokens * 4  # characters
    blocks: list[str] = []
    used = 0
    for number, hit in enumerate(hits, start=1):
        n = settings.context_top_sentences if number == 1 else settings.context_sentences
        best = best_of(scored, hit, n)
        if settings.context_order == "closest-first":
            best = sorted(best, key=lambda s: -s.score)
        p = hit.paper
        head = _head(number, p)
        body = " ".join(s.text for s in best) or p.label
        block = f"{head}\n<<<{body}>>>"
        if blocks and used + len(block) > budget:
            remaining = budget - used - len(head) - 8
            if remaining < 120:
                break
            block = f"{head}\n<<<{body[:remaining].rsplit(' ', 1)[0]}…>>>"
        blocks.append(block)
        used += len(block)
    return Context("\n\n".join(blocks), list(hits[: len(blocks)]))


def _head(number: int, paper: Paper) -> str:
    """A source's heading in a prompt: '[2] “Title” (NeurIPS 2025)'."""
    return f"[{number}] {_named(paper)}"


def _named(paper: Paper) -> str:
    """'“Title” (NeurIPS 2025)'. A title written to AI tools is not shown to the model (the
    label made from the abstract is)."""
    name = paper.title or paper.label
    if field_flag(name) is not None:
        name = make_label(" ".join(evidence_of(paper.abstract)) or "untitled")
    return _quote(name) + (f" ({paper.venue_year})" if paper.venue_year else "")


def _quote(text: str) -> str:
    return "“" + _unfenced(text) + "”"


def _unfenced(text: str) -> str:
    """Text that cannot close or open a <<< >>> fence (whole runs go, so that removing one
    cannot join its neighbours into a new one: "<<>>><")."""
    return re.sub(r"[<>]{3,}", "", text)


def answer_messages(question: str, context: Context, settings: Settings) -> list[Message]:
    template = settings.answer_prompt or prompts.ANSWER_PROMPT
    user = template.format(context=context.text, question=question)
    return [*_fixed_prefix(settings), {"role": "user", "content": user}]


def relevance_messages(question: str, paper: Paper) -> list[Message]:
    """Ask whether `paper` is about what the question asks: its title and the sentences of
    its abstract that are evidence (text addressed to AI tools is left out), shortened."""
    abstract = _unfenced(" ".join(evidence_of(paper.abstract)))[:RELEVANCE_ABSTRACT_CHARS]
    user = prompts.RELEVANCE_PROMPT.format(title=_named(paper), abstract=abstract, question=question)
    return [{"role": "system", "content": prompts.RELEVANCE_SYSTEM}, {"role": "user", "content": user}]


RELEVANCE_ABSTRACT_CHARS = 3000  # fits the relevance model's context with a long question


def says_no(reply: str) -> bool:
    """Is the model's reply to the relevance question a plain no? Anything else (yes, an
    answer, nothing) lets the answer go ahead: only a clear no refuses."""
    return re.match(r"\W*no(?![\w-])", reply.strip().lower()) is not None


def synthesis_messages(question: str, answer: Answer, settings: Settings) -> list[Message]:
    """Ask for one sentence over the papers a catalogue answer lists (numbered as there)."""
    blocks = []
    for c in answer.citations:
        said = next((s.text for s in answer.sentences if c.number in s.citations), "")
        blocks.append(f"{_head(c.number, c.paper)}\n<<<{_unfenced(said)}>>>")
    user = prompts.SYNTHESIS_PROMPT.format(context="\n\n".join(blocks), question=question)
    return [*_fixed_prefix(settings), {"role": "user", "content": user}]


def _fixed_prefix(settings: Settings) -> list[Message]:
    """The system prompt and the worked example: the same for every question, so
    llama.cpp keeps their state cached."""
    system = settings.system_prompt or prompts.SYSTEM_PROMPT
    messages: list[Message] = [{"role": "system", "content": system}]
    if settings.answer_example:
        template = settings.answer_prompt or prompts.ANSWER_PROMPT
        example = template.format(context=prompts.EXAMPLE_CONTEXT, question=prompts.EXAMPLE_QUESTION)
        messages += [
            {"role": "user", "content": example},
            {"role": "assistant", "content": prompts.EXAMPLE_ANSWER},
        ]
    return messages


def is_refusal(text: str) -> bool:
    """Does the model say only that the abstracts do not answer? A sentence does when it is
    the fixed phrase, or holds a refusal phrase ("no information about …") and cites
    nothing; a cited sentence that mentions what an abstract leaves out is a claim like any
    other, and is checked."""
    return any(_refuses(sentence) for sentence in split_sentences(text))


def _refuses(sentence: str) -> bool:
    lowered = " ".join(sentence.lower().split())
    if REFUSAL.lower().rstrip(".") in lowered:
        return True
    if re.search(r"\[\d+(?:\s*[,;]\s*\d+)*\]", sentence):
        return False
    return any(marker in lowered for marker in prompts.REFUSAL_MARKERS)


def checked_events(
    pieces: Iterator[str], checker: Checker, start: int = 0
) -> Iterator[TextDelta | SentenceChecked]:
    """Pass generated text on as it comes; check each sentence once the next has started
    (`start`: the index of the first checked sentence, after any already shown)."""
    raw = ""
    done = 0  # sentences already checked
    shown = start  # checked sentences with text

    def check(sentences: list[str], i: int) -> Iterator[SentenceChecked]:
        nonlocal shown
        if is_refusal(sentences[i]):  # "I could not find this ...": not a claim to check
            return
        text = checker.check(sentences[i])
        if text:
            tail = " ".join(sentences[i + 1 :])
            result = checker.results[-1]
            cited = tuple(c for c in checker.citations() if c.number in result.citations)
            yield SentenceChecked(shown, text, result, tail, cited)
            shown += 1

    for piece in pieces:
        raw += piece
        yield TextDelta(piece)
        sentences = split_sentences(_attach_markers(raw))
        # A sentence is complete once the next one has started with real text.
        while len(sentences) - done >= 2 and _has_text(sentences[done + 1]):
            yield from check(sentences, done)
            done += 1
    sentences = split_sentences(_attach_markers(raw))
    while done < len(sentences):
        yield from check(sentences, done)
        done += 1


def _attach_markers(text: str) -> str:
    """'Claim. [1] Next' -> 'Claim [1]. Next': a marker after the stop belongs to that sentence,
    unless a lower-case word follows it: in 'Claim. [1] shows …' it is the next one's subject."""
    return re.sub(r"([.!?])((?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+)(?!\s+[a-z])", r"\2\1", text)


def _has_text(sentence: str) -> bool:
    _, body = markers(PARTIAL_MARKER.sub("", sentence))
    return any(ch.isalpha() for ch in body)
