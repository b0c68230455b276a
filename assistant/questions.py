"""Checking and cleaning questions; turning follow-ups into standalone questions."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from assistant.errors import QuestionError

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_FOLLOW_UP = re.compile(
    r"\b(it|its|it's|they|them|their|this|that|these|those|the paper|the method|the approach|"
    r"the same|also|and what|what about|how about)\b",
    re.IGNORECASE,
)

History = Sequence[tuple[str, str]] | Sequence[dict[str, str]] | None


def clean_question(question: object, limit: int) -> str:
    """Strip control characters; refuse empty or over-long questions with a clear message."""
    if not isinstance(question, str):
        raise QuestionError(f"the question must be text, not {type(question).__name__}")
    text = unicodedata.normalize("NFC", _CONTROL.sub(" ", question)).strip()
    if not text:
        raise QuestionError("the question is empty: type a question about the indexed papers")
    if len(text) > limit:
        raise QuestionError(
            f"the question has {len(text):,} characters; the limit is {limit:,} "
            "(ASSISTANT_MAX_QUESTION_CHARS). Shorten it to the question itself."
        )
    return text


def user_turns(history: History) -> list[str]:
    """The user's earlier questions, oldest first, from (user, assistant) pairs or messages."""
    turns: list[str] = []
    for item in history or ():
        if isinstance(item, dict):
            if item.get("role") == "user" and isinstance(item.get("content"), str):
                turns.append(item["content"])
        elif isinstance(item, (tuple, list)) and item and isinstance(item[0], str):
            turns.append(item[0])
    return turns


def is_follow_up(question: str) -> bool:
    return bool(_FOLLOW_UP.search(question)) or len(question.split()) <= 4


def rule_standalone(question: str, history: History) -> str:
    """Without an LLM: a follow-up borrows the previous question's words."""
    turns = user_turns(history)
    if not turns or not is_follow_up(question):
        return question
    return f"{turns[-1]} {question}"
