"""Shared fixtures: a real embedded store over the seeds, a real Chroma server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SCIFACT = ROOT.parent / "shared" / "benchmarks" / "scifact"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` on 127.0.0.1, stopped at the end of the session."""
    chroma = Path(sys.executable).with_name("chroma")
    path = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
    log = open(path / "server.log", "wb")
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(path / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"chroma run exited: {(path / 'server.log').read_text()[-2000:]}")
        time.sleep(0.3)
    else:
        proc.terminate()
        raise RuntimeError("chroma run did not answer within 60 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
