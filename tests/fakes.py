"""A deterministic chat model for logic tests: it replies from a script and records
what it was asked. Registered as backend "scripted" like the real ones."""

from __future__ import annotations

from collections.abc import Iterator

from assistant.answer.llms import Message
from assistant.answer.prompts import RELEVANCE_SYSTEM
from assistant.answerers import register
from assistant.config import Settings


class ScriptedModel:
    name = "scripted"

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.relevant = "yes"  # the reply to the relevance question, asked apart from the script
        self.calls: list[list[Message]] = []  # the answers asked for
        self.asked: list[list[Message]] = []  # the relevance questions asked
        self.last_prompt_tokens = 0

    def script(self, *replies: str) -> ScriptedModel:
        self.replies = list(replies)
        self.calls = []
        self.asked = []
        self.relevant = "yes"
        return self

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        if messages[0]["content"] == RELEVANCE_SYSTEM:
            self.asked.append(messages)
            reply = self.relevant
        elif self.replies:
            self.calls.append(messages)
            reply = self.replies.pop(0)
        else:
            self.calls.append(messages)
            reply = "I could not find this in the indexed abstracts."
        self.last_prompt_tokens = sum(len(m["content"].split()) for m in messages)
        for i in range(0, len(reply), 7):  # token-like chunks
            yield reply[i : i + 7]


SCRIPTED = ScriptedModel()


def _factory(settings: Settings) -> ScriptedModel:
    return SCRIPTED


register("scripted", _factory)
