"""Two real processes: the app serving the embedded store, and `assistant ingest` writing
to it. Ten rounds with questions in flight, then a writer killed with -9 mid-way: every
question is answered, each new paper becomes searchable, and the final store is exact."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.servers import free_port, start, stop
from benchmarks.synth import write_corpus
from tests.conftest import SEEDS

ASSISTANT = str(Path(sys.executable).with_name("assistant"))
QUESTIONS = ["What is PrivateSeal?", "What is GRAPE?", "Which papers is Théo Vincent an author of?"]


def new_paper(i: int) -> dict[str, str]:
    word = f"zorbling{i}"
    return {
        "id": f"live-{i}",
        "abstract": f"We introduce {word}, a method for counting {word} lichens on granite boulders "
        f"with drones. {word.capitalize()} detects lichen patches from above and estimates their "
        "growth rate across seasons, halving the error of manual surveys on four mountain sites.",
    }


@pytest.fixture()
def served(seeded_dir: Path, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    data = tmp_path / "data"
    shutil.copytree(seeded_dir, data)
    env = dict(
        os.environ,
        ASSISTANT_DATA_DIR=str(data),
        ASSISTANT_BACKEND="extractive",
        ASSISTANT_CORPUS=json.dumps([str(SEEDS)]),
        ASSISTANT_STORE_BATCH_SIZE="16",
        ASSISTANT_TORCH_THREADS="1",
        # The EmbeddingGemma build has a test of its own (test_indexing): here it would only
        # compete for the two cores with the writers this test times.
        ASSISTANT_INDEX_IN_BACKGROUND="false",
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(
        [ASSISTANT, "serve", "--port", str(port)], url, env=env, timeout=240, log=tmp_path / "app.log"
    )
    yield url, env
    stop(proc)


@pytest.mark.slow
def test_ingest_while_the_app_serves(served: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    from gradio_client import Client

    url, env = served
    answers: list[dict] = []
    stop_asking = threading.Event()

    def asker() -> None:
        client = Client(url, verbose=False)
        i = 0
        while not stop_asking.is_set():
            result = client.predict(QUESTIONS[i % len(QUESTIONS)], "(any)", 3, api_name="/ask")
            answers.append(result)
            i += 1

    askers = [threading.Thread(target=asker) for _ in range(2)]
    for t in askers:
        t.start()
    client = Client(url, verbose=False)
    found_after: list[float] = []
    try:
        for r in range(10):
            path = tmp_path / f"round{r}.jsonl"
            path.write_text("".join(json.dumps(new_paper(r * 3 + j)) + "\n" for j in range(3)))
            done = subprocess.run(
                [ASSISTANT, "ingest", "--quiet", str(path)], env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
            written = time.monotonic()
            while True:
                got = client.predict(
                    f"How does zorbling{r * 3 + 2} count lichens?", "(any)", 1, api_name="/ask"
                )
                if got["ok"] and f"zorbling{r * 3 + 2}" in got["text"]:
                    found_after.append(time.monotonic() - written)
                    break
                assert time.monotonic() - written < 30, "a new paper was not searchable within 30 s"
                time.sleep(0.5)
        # A writer killed with -9 mid-way, then the same command again.
        big = write_corpus(tmp_path / "big.jsonl", 200, seed=11)
        proc = subprocess.Popen(
            [ASSISTANT, "ingest", "--quiet", str(big)], env=env, stderr=subprocess.DEVNULL
        )
        time.sleep(12)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(2)
        done = subprocess.run(
            [ASSISTANT, "ingest", "--quiet", str(big)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 30
        while client.predict(api_name="/stats")["papers"] != 87 + 30 + 200:
            assert time.monotonic() < deadline, client.predict(api_name="/stats")
            time.sleep(0.5)
    finally:
        stop_asking.set()
        for t in askers:
            t.join(timeout=120)
    failed = [a for a in answers if not a["ok"] or not a["citations"]]
    assert len(answers) > 20 and failed == [], failed[:3]
    stats = subprocess.run([ASSISTANT, "stats", "--json"], env=env, capture_output=True, text=True)
    assert json.loads(stats.stdout)["papers"] == 87 + 30 + 200  # the store itself is exact
    print(
        f"\nlive ingestion: {len(answers)} questions answered during 10 rounds and a kill -9; "
        f"new papers found after {min(found_after):.1f}–{max(found_after):.1f} s "
        f"(median {sorted(found_after)[len(found_after) // 2]:.1f} s)"
    )


def test_overlapping_builds_keep_the_collector_paused_until_the_last_ends() -> None:
    """The fast and the strong index build their catalogues in two threads: the first build
    to finish must not switch the collector back on (nor freeze) under the other; the last
    one restores it."""
    import gc

    from assistant.search.live import _collector_paused

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with _collector_paused():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with _collector_paused():
            second_in.set()
            first_out.wait(10)
            seen["after the first ended"] = gc.isenabled()
        seen["after both"] = gc.isenabled()

    assert gc.isenabled()
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"after the first ended": False, "after both": True}
