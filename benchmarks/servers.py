"""Starting and stopping local servers (Chroma, llama.cpp, the app) for tests and benchmarks.
Everything binds to 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(
    command: Sequence[str],
    health_url: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    log: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start a server and wait until `health_url` answers 200; raise with its log if it dies."""
    out = log.open("wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if httpx.get(health_url, timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log else ""
            raise RuntimeError(f"{command[0]} exited at start: {tail}")
        time.sleep(0.3)
    stop(proc)
    raise RuntimeError(f"{command[0]} did not answer {health_url} within {timeout:.0f} s")


def stop(proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_chroma(path: Path, port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A real `chroma run` on 127.0.0.1 (telemetry off)."""
    port = port or free_port()
    chroma = str(Path(sys.executable).with_name("chroma"))
    url = f"http://127.0.0.1:{port}"
    proc = start(
        [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        f"{url}/api/v2/heartbeat",
        env=dict(os.environ, ANONYMIZED_TELEMETRY="False"),
        timeout=60,
    )
    return proc, url
