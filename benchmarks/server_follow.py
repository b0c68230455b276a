"""A large store served from a Chroma server to an app, while another process writes to it:
every question the app is asked during the write gets an answer (`failed` counts errors;
on synthetic abstracts some answers are refusals), and the time from the end of the
write until the app finds the new papers; then the same for an edit that keeps the
count (one new paper's abstract rewritten under its record id).

    python -m benchmarks.server_follow DATA_DIR [--papers 3] [--askers 2] [--writer-app] [--edit-wait 120]

DATA_DIR is a store built by `benchmarks.million` (its `data` folder). Its Chroma folder is
served by `chroma run` on 127.0.0.1; the app (`assistant serve`, extractive backend) and
the writer (`assistant ingest`) each keep their own snapshot, hard-linked copies of
DATA_DIR's (segments and manifests are only ever replaced, never written in place, so
the copies never change DATA_DIR's files). The papers added are removed again at the end,
through the server, with the apps stopped. With `--writer-app` a second app serves the
writer's data folder (two apps on the server, one of them beside the ingestion; the
askers take turns between them). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.servers import free_port, start, start_chroma, stop

ASSISTANT = str(Path(sys.executable).with_name("assistant"))
QUESTIONS = ["What limits the sample complexity of bandit exploration?", "How is privacy measured?"]


def _papers(n: int) -> list[dict[str, str]]:
    return [
        {
            "id": f"follow-{i}",
            "title": f"Counting glimmerwort{i} colonies with drones",
            "abstract": f"We introduce glimmerwort{i}, a method for counting moss colonies on granite "
            "from drone images. It detects patches from above and estimates their growth across "
            "seasons, halving the error of manual surveys on four mountain sites.",
        }
        for i in range(n)
    ]


def _copy(data: Path, to: Path, url: str) -> None:
    """The snapshot and BM25 index of `data`, hard-linked where an app of the server at
    `url` keeps them (no Chroma folder: the server's)."""
    from assistant.config import Settings

    embedded = Settings(data_dir=data, corpus=[], auto_ingest=False)
    served = Settings(data_dir=to, corpus=[], auto_ingest=False, chroma_url=url)
    to.mkdir(parents=True)
    for mine, theirs in (
        (embedded.snapshot_dir, served.snapshot_dir),
        (embedded.lexical_dir, served.lexical_dir),
    ):
        subprocess.run(["cp", "-al", str(mine), str(theirs)], check=True)


def _ingest(path: Path, env: dict[str, str], what: str) -> float:
    """`assistant ingest PATH` as the writer; its seconds."""
    t = time.monotonic()
    done = subprocess.run(
        [ASSISTANT, "ingest", "--quiet", str(path)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed: {done.stderr[-2000:]}")
    return round(time.monotonic() - t, 1)


def _until_cited(clients: list[Any], word: str, since: float, limit: float) -> list[float | None]:
    """For each app, seconds from `since` until an answer about `word` cites a paper naming
    it (None: not within `limit`). The apps are asked in turn, so each time is its own."""
    found: list[float | None] = [None] * len(clients)
    while time.monotonic() - since < limit and None in found:
        for n, client in enumerate(clients):
            if found[n] is None:
                got = client.predict(f"How does {word} count moss colonies?", "(any)", 1, api_name="/ask")
                if got["ok"] and word in json.dumps(got["citations"]):  # cited, not just named
                    found[n] = round(time.monotonic() - since, 1)
        time.sleep(0.5)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--papers", type=int, default=3)
    parser.add_argument("--askers", type=int, default=2)
    parser.add_argument(
        "--writer-app", action="store_true", help="a second app serving the writer's own data folder"
    )
    parser.add_argument(
        "--edit-wait", type=float, default=120, help="how long to wait for an app to see the edit (s)"
    )
    args = parser.parse_args(argv)
    from gradio_client import Client

    work = Path(tempfile.mkdtemp(prefix="server-follow-"))
    chroma, url = start_chroma(args.data / "chroma")
    apps: list[subprocess.Popen[bytes]] = []
    result: dict[str, object] = {}
    try:
        _copy(args.data, work / "app", url)
        _copy(args.data, work / "writer", url)
        base = dict(
            os.environ,
            ASSISTANT_CHROMA_URL=url,
            ASSISTANT_BACKEND="extractive",
            ASSISTANT_CORPUS="[]",
            ASSISTANT_AUTO_INGEST="false",
            ASSISTANT_INDEX_IN_BACKGROUND="false",
            XDG_STATE_HOME=str(work / "state"),
        )
        app_env = dict(base, ASSISTANT_DATA_DIR=str(work / "app"))
        writer_env = dict(base, ASSISTANT_DATA_DIR=str(work / "writer"))
        urls = []
        for name, env in [("app", app_env), ("writer", writer_env)][: 1 + args.writer_app]:
            port = free_port()
            urls.append(f"http://127.0.0.1:{port}")
            t0 = time.monotonic()
            apps.append(
                start(
                    [ASSISTANT, "serve", "--port", str(port)],
                    urls[-1],
                    env=env,
                    timeout=600,
                    log=work / f"{name}.log",
                )
            )
            first = Client(urls[-1], verbose=False).predict(QUESTIONS[0], "(any)", 3, api_name="/ask")
            result[f"{name}_start_to_first_answer_s"] = round(time.monotonic() - t0, 1)
            result[f"{name}_first_answer_ok"] = bool(first["ok"])

        answers: list[dict] = []
        stop_asking = threading.Event()

        def asker(n: int) -> None:
            mine = Client(urls[n % len(urls)], verbose=False)
            i = n
            while not stop_asking.is_set():
                t = time.monotonic()
                got = mine.predict(QUESTIONS[i % len(QUESTIONS)], "(any)", 3, api_name="/ask")
                answers.append(
                    {"ok": bool(got["ok"]), "cited": bool(got["citations"]), "s": time.monotonic() - t}
                )
                i += 1

        threads = [threading.Thread(target=asker, args=(n,)) for n in range(args.askers)]
        for thread in threads:
            thread.start()
        try:
            papers = _papers(args.papers)
            path = work / "new.jsonl"
            path.write_text("".join(json.dumps(p) + "\n" for p in papers))
            result["ingest_s"] = _ingest(path, writer_env, "ingest")
            written = time.monotonic()
            word = f"glimmerwort{args.papers - 1}"
            clients = [Client(u, verbose=False) for u in urls]
            found = _until_cited(clients, word, written, 600)
            result.update(zip(["found_after_s", "writer_app_found_after_s"], found, strict=False))
            # An edit that keeps the count: the last paper's abstract rewritten under its id.
            edited = f"frostlichen{args.papers - 1}"
            path.write_text(path.read_text().replace(word, edited))
            result["edit_ingest_s"] = _ingest(path, writer_env, "ingest of the edit")
            written = time.monotonic()
            found = _until_cited(clients, edited, written, args.edit_wait)
            result.update(zip(["edit_found_after_s", "writer_app_edit_found_after_s"], found, strict=False))
        finally:
            stop_asking.set()
            for thread in threads:
                thread.join(timeout=300)
        times = sorted(a["s"] for a in answers)
        result["questions"] = len(answers)
        result["failed"] = sum(not a["ok"] for a in answers)  # an error, not a refusal
        result["answered_with_citations"] = sum(a["cited"] for a in answers)
        if times:
            result["answer_p50_s"] = round(times[len(times) // 2], 2)
            result["answer_max_s"] = round(times[-1], 2)
    finally:
        for app in apps:
            stop(app)
        ids = [p["id"] for p in _papers(args.papers)]
        removed = subprocess.run(
            [ASSISTANT, "remove", *[a for i in ids for a in ("--id", i)]],
            env=dict(os.environ, ASSISTANT_CHROMA_URL=url, ASSISTANT_DATA_DIR=str(work / "writer")),
            capture_output=True,
            text=True,
        )
        result["restored"] = removed.returncode == 0
        stop(chroma)
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
