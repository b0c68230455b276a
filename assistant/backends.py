"""The answering backends a setting may name: the extractive one, the chat models the
assistant builds itself, and any a user registers. A leaf: settings validate `backend`
against it without importing the models."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EXTRACTIVE = "extractive"
BUILT_IN = ("llama-cpp", "openai", "ollama")  # chat models built by `assistant.answer.llms`

ChatFactory = Callable[[Any], Any]  # Settings -> ChatModel
_REGISTERED: dict[str, ChatFactory] = {}


def register(name: str, factory: ChatFactory) -> None:
    """Add a chat backend, usable as `backend=name` (e.g. a scripted model in tests); a
    built-in name is replaced for this process."""
    _REGISTERED[name] = factory


def registered() -> dict[str, ChatFactory]:
    """The chat backends added with `register` (name -> factory)."""
    return _REGISTERED


def backend_names() -> tuple[str, ...]:
    """Every backend: extractive first, then the built-in chat models, then registered ones."""
    return (EXTRACTIVE, *BUILT_IN, *(n for n in _REGISTERED if n not in BUILT_IN))
