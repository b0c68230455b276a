"""Errors shown to the user. Every message says what is wrong and how to fix it."""

from __future__ import annotations


class AssistantError(Exception):
    """Base class: its message is displayed to the user as it is."""


class ConfigError(AssistantError):
    """A setting is missing or invalid."""


class CorpusError(AssistantError):
    """A corpus file or record cannot be read."""


class StoreError(AssistantError):
    """The vector store cannot be opened, read or written."""


class StoreBusyError(StoreError):
    """Another process is writing to the same store."""


class FilterError(AssistantError):
    """A search filter names a field or value that does not exist."""


class QuestionError(AssistantError):
    """The question is empty or too long."""


class LLMError(AssistantError):
    """The answering backend failed (server down, timeout, bad output)."""


def kind_of(exc: BaseException) -> str:
    """What a script needs to tell apart: "user" (fix the question, a filter, a setting or
    a corpus file), "store" (the Chroma store or server), "backend" (the LLM), "internal"."""
    if isinstance(exc, (ConfigError, CorpusError, FilterError, QuestionError)):
        return "user"
    if isinstance(exc, StoreError):
        return "store"
    if isinstance(exc, LLMError):
        return "backend"
    return "internal"


EXIT_CODES = {"user": 2, "store": 1, "backend": 1, "internal": 1}
