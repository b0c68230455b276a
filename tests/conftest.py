"""Shared fixtures: a real embedded store over the seeds, a real Chroma server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.servers import free_port, start_chroma, stop

__all__ = ["SCIFACT", "SEEDS", "free_port", "paper_id"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SCIFACT = ROOT.parent / "shared" / "benchmarks" / "scifact"


@pytest.fixture(scope="session")
def seeded_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with the seeds ingested once for the whole session."""
    from assistant import Assistant

    data = tmp_path_factory.mktemp("seeded")
    bot = Assistant(data_dir=data, corpus=[SEEDS])
    bot.stats()  # ingests on first use
    return data


@pytest.fixture()
def seeded(seeded_dir: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A private copy of the seeded store, so a test may change it."""
    from assistant import Assistant

    data = tmp_path / "data"
    shutil.copytree(seeded_dir, data)
    return Assistant(data_dir=data, corpus=[SEEDS], backend="extractive")


@pytest.fixture(scope="session")
def bot(seeded_dir: Path):  # type: ignore[no-untyped-def]
    """A read-only assistant over the seeds (tests must not ingest into it)."""
    from assistant import Assistant

    return Assistant(data_dir=seeded_dir, corpus=[SEEDS], backend="extractive")


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding a real, freshly made MiniLM export (ONNX for questions,
    checked under OpenVINO for abstracts); point ASSISTANT_MODELS_DIR at it to use it."""
    from assistant.config import BUNDLED_EMBEDDER
    from assistant.index.export_queries import ensure

    folder = tmp_path_factory.mktemp("models")
    saved = os.environ.get("ASSISTANT_MODELS_DIR")
    os.environ["ASSISTANT_MODELS_DIR"] = str(folder)
    try:
        ensure(BUNDLED_EMBEDDER)
    finally:
        if saved is None:
            os.environ.pop("ASSISTANT_MODELS_DIR")
        else:
            os.environ["ASSISTANT_MODELS_DIR"] = saved
    return folder


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` on 127.0.0.1, stopped at the end of the session."""
    proc, url = start_chroma(tmp_path_factory.mktemp("chroma-server") / "db")
    yield url
    stop(proc)


@pytest.fixture()
def connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every address a socket connects to during the test."""
    import socket

    opened: list[object] = []
    real_connect = socket.socket.connect

    def spy(self: socket.socket, address: object) -> object:
        opened.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", spy)
    return opened


def remote(opened: list[object]) -> list[object]:
    """The addresses that are not this machine."""
    local = ("127.", "::1", "localhost")
    return [a for a in opened if isinstance(a, tuple) and not str(a[0]).startswith(local)]


def needs_default() -> None:
    """Skip unless the default local model is installed (`make install` installs it)."""
    from assistant.model_files import MODELS, models_dir

    if not (models_dir() / MODELS["qwen2.5-coder-1.5b"].filename).is_file():
        pytest.skip("the default model is not installed: run `make install`")


def paper_id(bot, fragment: str) -> str:  # type: ignore[no-untyped-def]
    """The id of the one stored paper whose abstract contains `fragment` (ids are hashes
    of the normalised text: tests look them up rather than hard-code them)."""
    found = [p.id for p in bot.catalogue.papers if fragment in p.abstract]
    assert len(found) == 1, f"{fragment!r} is in {len(found)} abstracts"
    return found[0]


@pytest.fixture(autouse=True, scope="module")
def _release_models() -> Iterator[None]:
    """Each test module's models go with it: the chat models and sentence-transformers a module
    loaded are forgotten at its end, so they do not pile up between modules (what the last
    catalogue build froze is thawed first: `assistant.search.live._collector_paused`)."""
    yield
    import gc

    from assistant.answer.llms import release_models
    from assistant.index.embed import _load

    release_models()
    _load.cache_clear()
    gc.unfreeze()
    gc.collect()
    _trim_heap()


def _trim_heap() -> None:
    """Hand the memory freed above back to the system (glibc keeps freed pages for reuse)."""
    import contextlib
    import ctypes
    import sys

    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # not glibc (musl): nothing to trim
            ctypes.CDLL("libc.so.6").malloc_trim(0)
