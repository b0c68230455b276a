"""Chat backends behind one small protocol, chosen by the `backend` setting.

No backend is ever chosen implicitly: `openai` and `ollama` are used only when
configured, and a failure is an `LLMError` naming the URL and the setting to
change, never a silent switch to something else.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from assistant.backends import BUILT_IN, registered
from assistant.config import Settings
from assistant.errors import ConfigError, LLMError

Message = dict[str, str]


class ChatModel(Protocol):
    name: str

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        """Yield the reply's text as it is generated."""
        ...


def _close_at_exit(ref: weakref.ref[LlamaCppModel]) -> None:
    model = ref()
    if model is not None:
        model.close(wait=2.0)  # a daemon thread still generating keeps it: exit anyway


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
        self.last_prompt_tokens = 0
        self._yes_no: tuple[list[int], list[int]] | None = None  # token ids of "yes" and "no"

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
            # Freed while the interpreter still stands: llama-cpp-python's own finaliser runs
            # at shutdown, after its library handle is gone, and prints a TypeError traceback
            # at the end of every `assistant ask`.
            # (A weak reference: a model dropped before then is freed when it is dropped.)
            atexit.register(_close_at_exit, weakref.ref(self))
        return self._llm

    def close(self, wait: float = -1) -> None:
        """Free the model now (it is loaded again when next asked); waits for a generation
        in progress (`wait` seconds at most; -1: as long as it takes, else it is left)."""
        if not self._lock.acquire(timeout=wait):
            return
        try:
            llm, self._llm = self._llm, None
        finally:
            self._lock.release()
        if llm is not None:
            llm.close()  # type: ignore[attr-defined]

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        with self._lock:
            llm = self._load()
            try:
                self.last_prompt_tokens = self.prompt_tokens(messages)
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

    def prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of the prompt as the model sees it (its chat template applied)."""
        llm = self._load()
        return len(llm.tokenize(_chatml(messages).encode("utf-8"), add_bos=False, special=True))  # type: ignore[attr-defined]

    def yes_probability(self, messages: list[Message]) -> float:
        """How likely the model's reply starts with "yes" rather than "no": P(yes) / (P(yes) +
        P(no)) over the first token, with every spelling of each word that is one token
        ("yes", "Yes", " YES", …). One prompt pass, nothing generated; the prompt's prefix
        cached from the previous question is reused as in `stream`."""
        import numpy as np

        with self._lock:
            llm: Any = self._load()
            prompt = _chatml(messages) + "<|im_start|>assistant\n"
            tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            self.last_prompt_tokens = len(tokens)
            if len(tokens) >= self.n_ctx:
                raise LLMError(
                    f"the relevance question has {len(tokens)} tokens, more than the model's "
                    f"context of {self.n_ctx}; shorten the question"
                )
            yes, no = self._answer_tokens(llm)
            steps = llm.generate(tokens, temp=0.0)
            try:
                next(steps)  # the prompt is read; its last position's logits are the reply's first token
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
                logits = logits.astype(np.float64)
            finally:
                steps.close()
            top = float(logits.max())
            p_yes = float(np.exp(logits[yes] - top).sum())
            p_no = float(np.exp(logits[no] - top).sum())
            return p_yes / (p_yes + p_no) if p_yes + p_no > 0 else 0.5

    def _answer_tokens(self, llm: Any) -> tuple[list[int], list[int]]:
        if self._yes_no is None:

            def single(words: tuple[str, ...]) -> list[int]:
                ids = [llm.tokenize(w.encode("utf-8"), add_bos=False, special=False) for w in words]
                return sorted({t[0] for t in ids if len(t) == 1})

            spellings = ("", " ")
            self._yes_no = (
                single(tuple(s + w for s in spellings for w in ("yes", "Yes", "YES"))),
                single(tuple(s + w for s in spellings for w in ("no", "No", "NO"))),
            )
        return self._yes_no


def _chatml(messages: list[Message]) -> str:
    """The messages in ChatML, the bundled Qwen models' chat template."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)


class OpenAICompatModel:
    """Any OpenAI-compatible chat server (OpenAI, vLLM, LM Studio, llama.cpp's server),
    through the official `openai` SDK: its timeouts, retries and typed errors."""

    def __init__(
        self, base_url: str, model: str, api_key: str | None, timeout: float, temperature: float
    ) -> None:
        from openai import OpenAI

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.temperature = temperature
        # A local server needs no key; the SDK insists on one, so it gets a placeholder.
        self.client = OpenAI(
            base_url=self.base_url, api_key=api_key or "none", timeout=timeout, max_retries=1
        )

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        import openai

        url = f"{self.base_url}/chat/completions"
        try:
            chunks = self.client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=self.temperature,
                stream=True,
            )
            for chunk in chunks:
                choices = getattr(chunk, "choices", None)
                if choices and (text := choices[0].delta.content):
                    yield text
        except openai.APITimeoutError as exc:
            raise LLMError(_slow(url, "ASSISTANT_OPENAI_BASE_URL")) from exc
        except openai.APIConnectionError as exc:
            raise LLMError(_dead(url, "ASSISTANT_OPENAI_BASE_URL", exc)) from exc
        except openai.APIStatusError as exc:
            raise LLMError(
                f"the LLM server at {url} answered HTTP {exc.status_code}: {str(exc)[:200]}"
            ) from exc
        except (openai.APIError, ValueError, KeyError, AttributeError) as exc:
            raise LLMError(
                f"the server at {url} sent something that is not a chat stream ({type(exc).__name__}: "
                f"{str(exc)[:120]}); check that ASSISTANT_OPENAI_BASE_URL is an OpenAI-compatible server"
            ) from exc


class OllamaModel:
    """An Ollama server, through the official `ollama` client."""

    def __init__(self, url: str, model: str, timeout: float, temperature: float) -> None:
        from ollama import Client

        self.url = url.rstrip("/")
        self.model = model
        self.name = f"ollama:{model}"
        self.temperature = temperature
        self.client = Client(host=self.url, timeout=timeout)

    def stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        import httpx
        import ollama

        url = f"{self.url}/api/chat"
        try:
            parts = self.client.chat(
                model=self.model,
                messages=messages,
                stream=True,
                options={"num_predict": max_tokens, "temperature": self.temperature},
            )
            for part in parts:
                if text := part.message.content:
                    yield text
        except httpx.TimeoutException as exc:
            raise LLMError(_slow(url, "ASSISTANT_OLLAMA_URL")) from exc
        except (httpx.TransportError, ConnectionError) as exc:
            raise LLMError(_dead(url, "ASSISTANT_OLLAMA_URL", exc)) from exc
        except ollama.ResponseError as exc:
            raise LLMError(f"the Ollama server at {url} answered: {exc.error}") from exc
        except (ValueError, KeyError, AttributeError) as exc:
            raise LLMError(
                f"the Ollama server at {url} sent something that is not a chat stream "
                f"({type(exc).__name__}: {str(exc)[:120]})"
            ) from exc


def _slow(url: str, setting: str) -> str:
    return (
        f"the LLM server at {url} did not answer in time; check that it is running, "
        f"or raise ASSISTANT_LLM_TIMEOUT_S, or change {setting}"
    )


def _dead(url: str, setting: str, exc: BaseException) -> str:
    return (
        f"cannot reach the LLM server at {url} ({type(exc).__name__}); start it, or "
        f"change {setting}, or use ASSISTANT_BACKEND=extractive"
    )


def _gguf_path(s: Settings) -> Path:
    """The GGUF the llama-cpp backend loads: the user's own file, or the bundled model's."""
    from assistant.model_files import model_path

    return s.llm_model_path or model_path(s.llm_model)


def _llama_cpp(s: Settings) -> ChatModel:
    return LlamaCppModel(_gguf_path(s), s.llm_context, s.llm_threads, s.llm_temperature)


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
assert tuple(FACTORIES) == BUILT_IN


def chat_factories() -> dict[str, Callable[[Settings], ChatModel]]:
    """Every chat backend (name -> factory): the built-in ones and those `register`ed."""
    return {**FACTORIES, **registered()}


_CACHE: dict[tuple[object, ...], ChatModel] = {}
_CACHE_LOCK = threading.Lock()


def chat_model(settings: Settings, backend: str | None = None) -> ChatModel:
    """The configured model, created once per process and configuration."""
    name = backend or settings.backend
    factories = chat_factories()
    if name not in factories:
        raise ConfigError(f"backend {name!r} has no chat model; choose one of {', '.join(factories)}")
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
        settings.llm_temperature,
        settings.openai_api_key_env,
        # the key itself may change between two assistants of one process (not kept: a digest)
        hashlib.sha256((os.environ.get(settings.openai_api_key_env or "") or "").encode()).hexdigest(),
    )
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = factories[name](settings)
        return _CACHE[key]


def release_models() -> int:
    """Forget every chat model this process created, so that their weights are freed once no
    assistant holds them (a notebook switching models, or a test run). Returns how many."""
    with _CACHE_LOCK:
        n = len(_CACHE)
        _CACHE.clear()
    return n


RELEVANCE_CONTEXT = 2048  # tokens: one shortened abstract and a question


def relevance_model(settings: Settings, backend: str | None = None) -> ChatModel:
    """The model asked whether a close abstract is about the question. For llama-cpp, a
    second instance over the same GGUF with a small context, so that each instance keeps
    its own fixed prompt cached (one instance would re-read the answer's system prompt and
    worked example after every relevance question); it costs a second copy of the weights
    where llama.cpp repacks them. Any other backend answers it with its chat model."""
    name = backend or settings.backend
    if name != "llama-cpp" or name in registered():  # a registered llama-cpp replaces ours
        return chat_model(settings, name)
    key = ("llama-cpp relevance", settings.llm_model, settings.llm_model_path, settings.llm_threads)
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = LlamaCppModel(_gguf_path(settings), RELEVANCE_CONTEXT, settings.llm_threads, 0.0)
        return _CACHE[key]
