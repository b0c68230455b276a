"""The LLM answer pipeline: compact context, generation, sentence-by-sentence check.

Text is streamed one checked sentence at a time, so the pieces a caller sees
always add up to the final answer's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from assistant import prompts
from assistant.checker import PARTIAL_MARKER, Checker, markers
from assistant.config import Settings
from assistant.embed import Embedder
from assistant.extractive import score_sentences
from assistant.llms import ChatModel, Message
from assistant.questions import History, user_turns
from assistant.text import split_sentences
from assistant.types import Hit


@dataclass(frozen=True)
class Context:
    text: str
    sources: list[Hit]


def build_context(question: str, hits: list[Hit], embedder: Embedder, settings: Settings) -> Context:
    """The most relevant sentences of each top paper, numbered by paper, within the budget."""
    scored = score_sentences(question, hits, embedder)
    budget = settings.context_tokens * 4  # characters
    blocks: list[str] = []
    used = 0
    for number, hit in enumerate(hits, start=1):
        mine = [s for s in scored if s.hit is hit]
        order = {s.text: i for i, s in enumerate(mine)}
        best = sorted(mine, key=lambda s: -s.score)[: settings.context_sentences]
        best.sort(key=lambda s: order[s.text])  # keep the abstract's order
        p = hit.paper
        head = f"[{number}] {p.title or p.label}" + (f" ({p.venue_year})" if p.venue_year else "")
        if p.authors:
            head += f" by {', '.join(p.authors[:3])}{' et al.' if len(p.authors) > 3 else ''}"
        body = " ".join(s.text for s in best)
        block = f"{head}\n{body}"
        if blocks and used + len(block) > budget:
            remaining = budget - used - len(head) - 1
            if remaining < 120:
                break
            block = f"{head}\n{body[:remaining].rsplit(' ', 1)[0]}…"
        blocks.append(block)
        used += len(block)
    return Context("\n\n".join(blocks), hits[: len(blocks)])


def answer_messages(question: str, context: Context, settings: Settings) -> list[Message]:
    system = settings.system_prompt or prompts.SYSTEM_PROMPT
    user = (settings.answer_prompt or prompts.ANSWER_PROMPT).format(context=context.text, question=question)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def condense(question: str, history: History, model: ChatModel, settings: Settings) -> str:
    """A follow-up rewritten by the LLM into a standalone question."""
    turns = user_turns(history)
    if not turns:
        return question
    lines = [f"User: {t}" for t in turns[-3:]]
    prompt = (settings.condense_prompt or prompts.CONDENSE_PROMPT).format(
        history="\n".join(lines), question=question
    )
    text = "".join(model.stream([{"role": "user", "content": prompt}], max_tokens=60)).strip()
    text = text.splitlines()[0].strip().strip('"') if text else ""
    return text if 8 <= len(text) <= 400 else question


def is_refusal(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in prompts.REFUSAL_MARKERS)


def checked_stream(pieces: Iterator[str], checker: Checker) -> Iterator[str]:
    """Re-emit generated text one checked sentence at a time (citations fixed, renumbered)."""
    raw = ""
    done = 0  # sentences already checked
    emitted = False

    def emit(sentence: str) -> Iterator[str]:
        nonlocal emitted
        if out := checker.check(sentence):
            yield (" " if emitted else "") + out
            emitted = True

    for piece in pieces:
        raw += piece
        sentences = split_sentences(_attach_markers(raw))
        # A sentence is complete once the next one has started with real text.
        while len(sentences) - done >= 2 and _has_text(sentences[done + 1]):
            yield from emit(sentences[done])
            done += 1
    for sentence in split_sentences(_attach_markers(raw))[done:]:
        yield from emit(sentence)


def _attach_markers(text: str) -> str:
    """'Claim. [1] Next' -> 'Claim [1]. Next': a marker after the stop belongs to that sentence."""
    import re

    return re.sub(r"([.!?])((?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+)", r"\2\1", text)


def _has_text(sentence: str) -> bool:
    _, body = markers(PARTIAL_MARKER.sub("", sentence))
    return any(ch.isalpha() for ch in body)
