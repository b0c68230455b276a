"""Research-paper question answering over a Chroma store of abstracts."""

from assistant.config import Settings
from assistant.errors import AssistantError
from assistant.types import Answer, Citation, Filters, Hit, Paper, SearchResult

__all__ = [
    "Answer",
    "Assistant",
    "AssistantError",
    "Citation",
    "Filters",
    "Hit",
    "Paper",
    "SearchResult",
    "Settings",
]


def __getattr__(name: str) -> object:
    # Lazy: importing `assistant` must stay cheap (no torch, no chromadb).
    if name == "Assistant":
        from assistant.api import Assistant

        return Assistant
    raise AttributeError(name)
