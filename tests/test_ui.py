"""The chat app: its functions directly, then the real page in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.servers import free_port, start, stop
from tests.conftest import SEEDS
from ui import render
from ui.app import respond

CHROMIUM = Path("/usr/bin/chromium")
XSS = (
    "We study <script>window.__pwned = 1; alert('xss')</script> injection and "
    '<img src=x onerror="window.__pwned = 2; alert(1)"> handling in **markdown** abstracts, '
    "a zebra-striped quokka benchmark for sanitisers that render $x^2$ formulas safely. " * 2
)


# --- the app's functions, without a browser ----------------------------------------------


def test_respond_streams_then_shows_sources(bot) -> None:
    outputs = list(respond(bot, "What is PrivateSeal?", [], k=3, backend="extractive", show_scores=True))
    chat, cards, coverage, active, markdown = outputs[-1]
    assert chat[-2] == {"role": "user", "content": "What is PrivateSeal?"}
    assert "(#source-1)" in chat[-1]["content"]
    assert 'id="source-1"' in cards and "PrivateSeal" in cards and "<mark>" in cards and "score " in cards
    assert coverage.startswith("Draws on ") and "of 87 matching abstracts" in coverage
    assert markdown.startswith(chat[-1]["content"].split(" [")[0][:20]) or "References" in markdown
    assert "**References**" in markdown


def test_respond_applies_filters_and_reports_them(bot) -> None:
    *_, last = respond(bot, "game theory equilibria", [], venue="ICLR 2026", backend="extractive")
    chat, cards, coverage, active, _ = last
    assert "venue=ICLR, year=2026" in active and "of 19 matching" in coverage
    assert cards.count("ICLR 2026") >= 1 and "NeurIPS" not in cards


def test_errors_become_messages_and_the_app_goes_on(bot) -> None:
    *_, last = respond(bot, "x", [], venue="CVPR", backend="extractive")
    assert "unknown venue" in last[0][-1]["content"] and last[2].startswith("Error")
    *_, last = respond(bot, "   ", [], backend="extractive")
    assert "empty" in last[0][-1]["content"]
    *_, ok = respond(bot, "What is PrivateSeal?", [], backend="extractive")
    assert "[1]" in ok[4]


def test_cards_escape_everything() -> None:
    from assistant.types import Answer, Citation, Paper

    paper = Paper(id="x1", label="<b>label</b>", abstract=XSS, authors=("A <i>B</i>",))
    answer = Answer(question="q", text="t [1]", citations=(Citation(1, paper),))
    html = render.source_cards(answer)
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "<b>label" not in html and "<i>B" not in html
    chat = render.chat_text("Use <script>alert(1)</script> now [1].")
    assert "<script>" not in chat and "&lt;script&gt;" in chat and "[\\[1\\]](#source-1)" in chat


def test_corpus_line_and_examples(bot) -> None:
    catalogue = bot.catalogue
    assert render.corpus_line(catalogue) == "87 abstracts · 5 venues · 2024–2026"
    examples = render.examples(catalogue)
    assert len(examples) == 4 and any("Théo Vincent" in e or "Jan Peters" in e for e in examples)


# --- the real app in a real browser --------------------------------------------------------


@pytest.fixture(scope="module")
def app_url(seeded_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("app") / "data"
    shutil.copytree(seeded_dir, data)
    extra = data.parent / "xss.jsonl"
    extra.write_text(
        json.dumps({"title": "<script>alert('title')</script>Sanitiser quokka", "abstract": XSS}) + "\n"
    )
    env = dict(
        os.environ,
        ASSISTANT_DATA_DIR=str(data),
        ASSISTANT_BACKEND="extractive",
        ASSISTANT_CORPUS=json.dumps([str(SEEDS)]),
        ASSISTANT_UI_CONCURRENCY="4",
    )
    assistant = str(Path(sys.executable).with_name("assistant"))
    subprocess.run([assistant, "ingest", "--quiet", str(extra)], env=env, check=True, capture_output=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(
        [assistant, "serve", "--port", str(port)], url, env=env, timeout=180, log=data.parent / "app.log"
    )
    yield url
    stop(proc)


@pytest.fixture()
def page(app_url: str):  # type: ignore[no-untyped-def]
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.dialogs = []  # type: ignore[attr-defined]
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
        page.goto(app_url)
        page.wait_for_selector("#question textarea", timeout=60_000)
        yield page
        browser.close()


def ask(page, question: str) -> str:  # type: ignore[no-untyped-def]
    before = page.locator("#chat .message").count()
    page.fill("#question textarea", question)
    page.click("#ask")
    page.wait_for_function(
        "n => document.querySelectorAll('#chat .message').length >= n + 2", arg=before, timeout=120_000
    )
    page.wait_for_function(
        "() => !document.querySelector('#coverage').innerText.match(/Searching|Answering/) "
        "&& document.querySelector('#coverage').innerText.trim().length > 0",
        timeout=120_000,
    )
    return page.locator("#chat .message").last.inner_text()


@pytest.mark.browser
def test_browser_question_sources_and_filter(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert "87" not in page.inner_text("#corpus-line") or "abstracts" in page.inner_text("#corpus-line")
    answer = ask(page, "What is PrivateSeal?")
    assert "[1]" in answer
    card = page.locator("#source-1")
    assert "PrivateSeal, a watermarking framework" in card.inner_text()
    page.locator("#chat a[href='#source-1']").first.click()
    page.wait_for_timeout(800)
    assert card.is_visible()
    page.screenshot(path=str(tmp_path / "answer.png"), full_page=True)

    page.click("#filters")
    page.locator("#venue input").click()
    page.locator("#venue input").fill("ICLR 2026")
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    ask(page, "Which papers study Stackelberg games?")
    cards = page.locator("#sources .source-card")
    assert cards.count() >= 1
    for i in range(cards.count()):
        assert "ICLR 2026" in cards.nth(i).inner_text()
    assert "venue=ICLR, year=2026" in page.inner_text("#active-filters")
    page.screenshot(path=str(tmp_path / "filtered.png"), full_page=True)
    print(f"screenshots in {tmp_path}")


@pytest.mark.browser
def test_browser_html_in_abstracts_never_executes(page) -> None:  # type: ignore[no-untyped-def]
    ask(page, "zebra-striped quokka benchmark for sanitisers")
    sources = page.inner_text("#sources")
    assert "<script>" in sources and "onerror" in sources  # shown literally
    assert page.evaluate("() => window.__pwned === undefined")
    assert page.locator("#sources script, #sources img, #chat img").count() == 0
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_sixteen_simultaneous_users_all_get_answers(app_url: str) -> None:
    from gradio_client import Client

    questions = [
        "What is PrivateSeal?",
        "What is GRAPE?",
        "What is ProxySHAP?",
        "What are lmKANs?",
        "What does RAM do for point clouds?",
        "What is NAMEx?",
        "What is MARLA?",
        "What is PolySHAP?",
    ] * 2

    def one(question: str) -> tuple[str, dict]:
        client = Client(app_url, verbose=False)
        return question, client.predict(question, "(any)", 3, api_name="/ask")

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(one, questions))
    assert len(results) == 16
    for question, answer in results:
        assert not answer["refused"] and answer["citations"], (question, answer)
        name = question.split()[-1].rstrip("?")
        if name.isupper() or name in ("PrivateSeal", "ProxySHAP", "PolySHAP", "lmKANs"):
            assert name.lower().rstrip("s") in answer["text"].lower(), (question, answer["text"][:200])
