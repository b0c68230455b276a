"""Research-paper question answering over a Chroma store of abstracts."""

import os as _os

# Both torch and llama.cpp use OpenMP; with busy-waiting threads two of them on 2 cores
# fell below 1 token/s. libgomp reads this once, when the first of them loads it.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

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
