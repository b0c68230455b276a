"""Time to first token and to the full answer in the chat app, as a person sees it:
headless Chromium asks 5 questions and watches the page (default backend: the local LLM).

    python -m benchmarks.app_latency [--backend llama-cpp] [--questions 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.servers import free_port, start, stop

QUESTIONS = [
    "What is PrivateSeal?",
    "How can small transformers simulate long-context ones?",
    "What is GRAPE?",
    "Which papers study Stackelberg games?",
    "What does PrivacySIM evaluate?",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="llama-cpp")
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, ASSISTANT_DATA_DIR=str(Path(tmp) / "data"), ASSISTANT_BACKEND=args.backend)
        assistant = str(Path(sys.executable).with_name("assistant"))
        proc = start(
            [assistant, "serve", "--port", str(port)], url, env=env, timeout=600, log=Path(tmp) / "app.log"
        )
        first_tokens, totals = [], []
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium",
                    headless=True,
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(url)
                page.wait_for_selector("#question textarea", timeout=60_000)
                for question in QUESTIONS[: args.questions]:
                    n = page.locator("#chat .message").count()
                    page.fill("#question textarea", question)
                    t0 = time.perf_counter()
                    page.click("#ask")
                    page.wait_for_function(
                        "n => { const m = document.querySelectorAll('#chat .message');"
                        " return m.length >= n + 2 && m[m.length-1].innerText.replace(/[…▌\\s]/g, '').length > 0; }",
                        arg=n,
                        timeout=600_000,
                        polling=50,
                    )
                    first_tokens.append(time.perf_counter() - t0)
                    page.wait_for_function(
                        "() => { const c = document.querySelector('#coverage').innerText;"
                        " return c.length > 0 && !/Searching|Answering/.test(c); }",
                        timeout=600_000,
                        polling=50,
                    )
                    totals.append(time.perf_counter() - t0)
                    print(
                        f"{question!r}: first text {first_tokens[-1]:.1f}s, full answer {totals[-1]:.1f}s",
                        flush=True,
                    )
                if args.screenshot:
                    page.screenshot(path=str(args.screenshot), full_page=True)
                browser.close()
        finally:
            stop(proc)
    print(
        f"backend {args.backend}: median time to first text {statistics.median(first_tokens):.1f}s, "
        f"median full answer {statistics.median(totals):.1f}s over {len(totals)} questions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
