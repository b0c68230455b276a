"""Chat backends behind one small protocol, chosen by the `backend` setting.

No backend is ever chosen implicitly: `openai` and `ollama` are used only when
configured, and a failure is an `LLMError` naming the URL and the setting to
change, never a silent switch to something else.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import httpx

from assistant.config import Settings
from assistant.errors import ConfigError, LLMError

Message = dict[str, str]


class ChatModel(Protocol):
    name: str

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        """Yield the reply's text as it is generated."""
        ...


class LlamaCppModel:
    """A GGUF model run in-process by llama-cpp-python, with the GGUF's own chat template."""

    def __init__(self, path: Path, n_ctx: int, threads: int, temperature: float) -> None:
        self.path = path
        self.name = f"llama-cpp:{path.name}"
        self.n_ctx = n_ctx
        self.threads = threads
        self.temperature = temperature
        self._llm: object | None = None
        self._lock = threading.Lock()  # one generation at a time per model

    def _load(self) -> object:
        if self._llm is None:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ConfigError(
                    "llama-cpp-python is not installed: run `make install` (it builds and caches "
                    "the wheel), or choose ASSISTANT_BACKEND=extractive"
                ) from None
            self._llm = Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                verbose=False,
            )
        return self._llm

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        with self._lock:
            llm = self._load()
            try:
                chunks = llm.create_chat_completion(  # type: ignore[attr-defined]
                    messages=messages,
                    max_tokens=max_tokens,
                    temperature=self.temperature,
                    stream=True,
                )
                for chunk in chunks:
                    text = chunk["choices"][0]["delta"].get("content")
                    if text:
                        yield text
            except ValueError as exc:  # e.g. the prompt does not fit n_ctx
                raise LLMError(
                    f"the local model could not answer: {exc}. Lower ASSISTANT_CONTEXT_TOKENS "
                    "or raise ASSISTANT_LLM_CONTEXT"
                ) from exc


class OpenAICompatModel:
    """Any OpenAI-compatible /v1/chat/completions server (OpenAI, vLLM, llama.cpp server, ...)."""

    def __init__(
        self, base_url: str, model: str, api_key: str | None, timeout: float, temperature: float
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.api_key = api_key
        self.timeout = timeout
        self.temperature = temperature

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        url = f"{self.base_url}/chat/completions"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": self.temperature,
            "stream": True,
        }
        with _http_errors(url, "ASSISTANT_OPENAI_BASE_URL"):
            with httpx.stream("POST", url, json=body, headers=headers, timeout=self.timeout) as response:
                _check_status(response, url)
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    try:
                        delta = json.loads(data)["choices"][0].get("delta", {})
                    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
                        raise LLMError(
                            f"the server at {url} sent something that is not a chat stream: {data[:120]!r}"
                        ) from None
                    if text := delta.get("content"):
                        yield text


class OllamaModel:
    """An Ollama server's /api/chat."""

    def __init__(self, url: str, model: str, timeout: float, temperature: float) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.name = f"ollama:{model}"
        self.timeout = timeout
        self.temperature = temperature

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        url = f"{self.url}/api/chat"
        body = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "options": {"num_predict": max_tokens, "temperature": self.temperature},
        }
        with _http_errors(url, "ASSISTANT_OLLAMA_URL"):
            with httpx.stream("POST", url, json=body, timeout=self.timeout) as response:
                _check_status(response, url)
                for line in response.iter_lines():
                    if not line.strip():
                        continue
                    try:
                        item = json.loads(line)
                    except json.JSONDecodeError:
                        raise LLMError(
                            f"the Ollama server at {url} sent something that is not JSON: {line[:120]!r}"
                        ) from None
                    if item.get("error"):
                        raise LLMError(f"the Ollama server at {url} answered: {item['error']}")
                    if text := item.get("message", {}).get("content"):
                        yield text
                    if item.get("done"):
                        break


class _http_errors:
    """Turn transport failures into LLMErrors that name the URL and the setting."""

    def __init__(self, url: str, setting: str) -> None:
        self.url, self.setting = url, setting

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, httpx.TimeoutException):
            raise LLMError(
                f"the LLM server at {self.url} did not answer in time; check that it is running, "
                f"or raise ASSISTANT_LLM_TIMEOUT_S, or change {self.setting}"
            ) from exc
        if isinstance(exc, httpx.HTTPError):
            raise LLMError(
                f"cannot reach the LLM server at {self.url} ({type(exc).__name__}); start it, or "
                f"change {self.setting}, or use ASSISTANT_BACKEND=extractive"
            ) from exc
        return None


def _check_status(response: httpx.Response, url: str) -> None:
    if response.status_code >= 400:
        response.read()
        raise LLMError(f"the LLM server at {url} answered HTTP {response.status_code}: {response.text[:200]}")


def _llama_cpp(s: Settings) -> ChatModel:
    from assistant.models import model_path

    path = s.llm_model_path or model_path(s.llm_model)
    return LlamaCppModel(path, s.llm_context, s.llm_threads, s.llm_temperature)


def _openai(s: Settings) -> ChatModel:
    if not s.openai_base_url or not s.openai_model:
        raise ConfigError(
            "backend openai needs ASSISTANT_OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1) and "
            "ASSISTANT_OPENAI_MODEL"
        )
    key = os.environ.get(s.openai_api_key_env) if s.openai_api_key_env else None
    return OpenAICompatModel(s.openai_base_url, s.openai_model, key, s.llm_timeout_s, s.llm_temperature)


def _ollama(s: Settings) -> ChatModel:
    if not s.ollama_model:
        raise ConfigError("backend ollama needs ASSISTANT_OLLAMA_MODEL (e.g. llama3.2)")
    return OllamaModel(s.ollama_url, s.ollama_model, s.llm_timeout_s, s.llm_temperature)


FACTORIES: dict[str, Callable[[Settings], ChatModel]] = {
    "llama-cpp": _llama_cpp,
    "openai": _openai,
    "ollama": _ollama,
}

_CACHE: dict[tuple[object, ...], ChatModel] = {}
_CACHE_LOCK = threading.Lock()


def chat_model(settings: Settings, backend: str | None = None) -> ChatModel:
    """The configured model, created once per process and configuration."""
    name = backend or settings.backend
    if name not in FACTORIES:
        raise ConfigError(f"backend {name!r} has no chat model; choose one of {', '.join(FACTORIES)}")
    key = (
        name,
        settings.llm_model,
        settings.llm_model_path,
        settings.llm_context,
        settings.llm_threads,
        settings.openai_base_url,
        settings.openai_model,
        settings.ollama_url,
        settings.ollama_model,
        settings.llm_timeout_s,
    )
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = FACTORIES[name](settings)
        return _CACHE[key]
