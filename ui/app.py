"""The chat app: a thin Gradio shell over `Assistant` (no retrieval or answering here).

`respond` is a plain generator that tests call without a browser; `build_app`
lays it out; `serve` launches it on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import gradio as gr

from assistant.answerers import backend_names
from assistant.api import Assistant
from assistant.as_json import answer_json
from assistant.corpus.bibtex import to_bibtex
from assistant.errors import AssistantError, kind_of
from assistant.search.questions import conversation
from assistant.types import Answer, Citation, SentenceChecked, Sources, TextDelta
from ui import render
from ui.library_view import ANY, Following, LibraryView

log = logging.getLogger(__name__)

LATEX: list[dict[str, str | bool]] = [
    {"left": "$$", "right": "$$", "display": True},
    {"left": "$", "right": "$", "display": False},
]

CSS = """
#sources { max-height: 78vh; overflow-y: auto; }
.source-card { border: 1px solid var(--border-color-primary); border-radius: 8px;
               padding: 10px; margin-bottom: 10px; }
.source-card.flash { outline: 3px solid var(--color-accent); }
.card-meta, .card-id, .comment { font-size: 0.85em; opacity: 0.8; margin: 2px 0; }
.source-card bdi, .source-card .abstract { unicode-bidi: isolate; }
.card-warning { font-size: 0.85em; margin: 4px 0; padding: 2px 6px; border-left: 3px solid #d97706;
  background: rgba(217, 119, 6, 0.10); }
.flagged { text-decoration: line-through; opacity: 0.6; }
.abstract { margin-top: 6px; white-space: pre-wrap; }
.abstract mark { background: #fde68a; color: inherit; }
.score { font-size: 0.8em; opacity: 0.7; }
"""

# Clicking [n] in an answer scrolls card n of the sources panel into view.
HEAD = """
<script>
document.addEventListener('click', function (event) {
  const link = event.target.closest('a[href^="#source-"]');
  if (!link) return;
  event.preventDefault(); event.stopPropagation();
  const card = document.getElementById(link.getAttribute('href').slice(1));
  if (card) { card.scrollIntoView({behavior: 'smooth', block: 'start'});
              card.classList.add('flash'); setTimeout(() => card.classList.remove('flash'), 1500); }
}, true);
// Copying text with rendered math gives its TeX ("iterated $Q$-Network"), not the MathML
// letter and the drawn one after it ("iterated 𝑄Q-Network").
document.addEventListener('copy', function (event) {
  const selection = window.getSelection();
  if (!selection || selection.isCollapsed || !event.clipboardData) return;
  const fragment = selection.getRangeAt(0).cloneContents();
  const maths = fragment.querySelectorAll('.katex');
  if (!maths.length) return;
  maths.forEach(function (math) {
    const tex = math.querySelector('annotation[encoding="application/x-tex"]');
    const fence = math.closest('.katex-display') ? '$$' : '$';
    math.replaceWith(tex ? fence + tex.textContent + fence : math.textContent);
  });
  fragment.querySelectorAll('.katex-display').forEach(function (d) { d.replaceWith(d.textContent); });
  const box = document.createElement('div');  // rendered off-screen: innerText keeps line breaks
  box.style.cssText = 'position:fixed;left:-99999px;top:0';
  box.appendChild(fragment);
  document.body.appendChild(box);
  event.clipboardData.setData('text/plain', box.innerText);
  event.clipboardData.setData('text/html', box.innerHTML);
  box.remove();
  event.preventDefault();
}, true);
</script>
"""


def filters_from(
    venue: str | None, year_from: Any, year_to: Any, topic: str | None, author: str | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if venue and venue != ANY:
        out["venue"] = venue
    if year_from not in (None, "", ANY):
        out["year_from"] = int(year_from)
    if year_to not in (None, "", ANY):
        out["year_to"] = int(year_to)
    if topic and topic != ANY:
        out["topic"] = topic
    if author and author != ANY:
        out["author"] = author
    return out


def respond(
    bot: Assistant,
    message: str,
    history: list[Any] | None,
    venue: str | None = None,
    year_from: Any = None,
    year_to: Any = None,
    topic: str | None = None,
    author: str | None = None,
    k: int | None = None,
    backend: str | None = None,
    show_scores: bool = False,
) -> Iterator[tuple[Any, ...]]:
    """Yield (chat, source cards, coverage line, filters line, markdown, BibTeX) as the answer grows:
    the sources as soon as retrieval is done, the prose as it is generated, a badge per
    sentence when its check lands, then the final answer."""
    history = list(history or [])
    past = conversation(history)  # every shape Gradio hands over: strings or lists of parts
    chat = [*history, {"role": "user", "content": message}, {"role": "assistant", "content": "…"}]
    filters = filters_from(venue, year_from, year_to, topic, author)
    yield chat, gr.skip(), "Searching…", "", "", ""
    sources: Sources | None = None
    checked: list[SentenceChecked] = []
    cited: dict[int, Citation] = {}
    pending = ""
    try:
        for event in bot.stream(
            message, k=int(k) if k else None, filters=filters, history=past, backend=backend
        ):
            if isinstance(event, Sources):
                sources = event
                chat[-1] = {"role": "assistant", "content": "▌"}
                found = f"Found {len(event.hits)} of {event.matching} matching abstracts · answering…"
                yield chat, render.found_cards(event, (), show_scores), found, "", "", ""
            elif isinstance(event, TextDelta):
                pending += event.text
                chat[-1] = {"role": "assistant", "content": render.streaming_text(checked, pending)}
                yield chat, gr.skip(), "Answering…", gr.skip(), gr.skip(), gr.skip()
            elif isinstance(event, SentenceChecked):
                checked.append(event)
                pending = event.tail
                cited.update((c.number, c) for c in event.cited)
                chat[-1] = {"role": "assistant", "content": render.streaming_text(checked, pending)}
                cards = (
                    render.found_cards(sources, list(cited.values()), show_scores) if sources else gr.skip()
                )
                yield chat, cards, "Checking citations…", gr.skip(), gr.skip(), gr.skip()
            elif isinstance(event, Answer):
                chat[-1] = {"role": "assistant", "content": render.answer_text(event)}
                notes = " ".join(f"Note: {n}." for n in event.notes)
                line = render.filters_line(event) + (f" · {notes}" if notes else "")
                summary = (
                    render.support_summary(event.sentences) if event.model_text and not event.fallback else ""
                )
                coverage = render.coverage(event) + (f" · {summary}" if summary else "")
                cards = render.source_cards(event, show_scores)
                yield (
                    chat,
                    cards,
                    coverage,
                    line,
                    event.markdown(),
                    to_bibtex([c.paper for c in event.citations]),
                )
                return
    except AssistantError as exc:
        chat[-1] = {"role": "assistant", "content": render.chat_text(f"⚠️ {exc}")}
        yield chat, gr.skip(), "Error: the question was not answered (see the message).", "", "", ""
    except Exception as exc:  # never a stack trace in the page; the app keeps working
        log.exception("unexpected error while answering")
        chat[-1] = {
            "role": "assistant",
            "content": render.chat_text(f"⚠️ Unexpected error: {type(exc).__name__}: {exc}"),
        }
        yield chat, gr.skip(), "Error: the question was not answered.", "", "", ""


def header(view: LibraryView) -> str:
    return f"## Ask the abstracts\n{view.line}"


def build_app(bot: Assistant) -> gr.Blocks:
    library = Following(lambda: bot.catalogue)
    catalogue, view = bot.catalogue, library.view
    venues, years, topics, authors = map(list, (view.venues, view.years, view.topics, view.authors))
    backends = [b for b in backend_names() if b in ("extractive", bot.settings.backend)]
    with gr.Blocks(title="Paper QA") as app:
        corpus_line = gr.Markdown(header(view), elem_id="corpus-line")
        # Which index answers (the fast one until the EmbeddingGemma one is complete), refreshed.
        index_line = gr.Markdown(bot.index_status().line(), elem_id="index-status")
        with gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    elem_id="chat",
                    height=520,
                    sanitize_html=True,
                    latex_delimiters=LATEX,
                    placeholder="Ask about the indexed papers. Answers cite abstracts as [n]; "
                    "click a number to see its source.",
                    examples=[{"text": q} for q in render.examples(catalogue)],
                )
                with gr.Row():
                    box = gr.Textbox(
                        placeholder="Ask a question…",
                        show_label=False,
                        scale=5,
                        elem_id="question",
                        autofocus=True,
                    )
                    send = gr.Button("Ask", variant="primary", scale=1, elem_id="ask")
                coverage = gr.Markdown(elem_id="coverage")
                active = gr.Markdown(elem_id="active-filters")
                with gr.Accordion("Copy as Markdown", open=False):
                    markdown = gr.Textbox(show_label=False, lines=6, buttons=["copy"], elem_id="markdown")
                with gr.Accordion("Copy BibTeX of the cited papers", open=False):
                    bibtex = gr.Textbox(show_label=False, lines=6, buttons=["copy"], elem_id="bibtex")
            with gr.Column(scale=2):
                with gr.Accordion("Filters and settings", open=False, elem_id="filters"):
                    venue = gr.Dropdown(venues, value=ANY, label="Venue", elem_id="venue")
                    with gr.Row():
                        year_from = gr.Dropdown(years, value=ANY, label="Year from")
                        year_to = gr.Dropdown(years, value=ANY, label="Year to")
                    topic = gr.Dropdown(topics, value=ANY, label="Topic")
                    author = gr.Dropdown(authors, value=ANY, label="Author", filterable=True)
                    k = gr.Slider(1, 10, value=bot.settings.k, step=1, label="Sources")
                    backend = gr.Dropdown(backends, value=bot.settings.backend, label="Answering backend")
                    show_scores = gr.Checkbox(False, label="Show retrieval scores")
                gr.Markdown("### Sources")
                # Markdown (not HTML) so that KaTeX renders the abstracts' $math$; the cards are
                # escaped HTML, and the sanitiser runs over them as well.
                sources = gr.Markdown(
                    elem_id="sources",
                    value='<div class="no-sources">Sources appear here.</div>',
                    latex_delimiters=LATEX,
                    sanitize_html=True,
                )

        # The library changes while the app serves (`assistant ingest`, `remove` elsewhere):
        # the header and the filters' choices follow it, on page load and every 5 s. A value
        # chosen stays chosen, and offered, even when its last paper is gone (the question
        # then says the venue or author is unknown, rather than the filter being dropped unseen).
        shown = gr.State(library.generation)
        filters = [venue, year_from, year_to, topic, author]

        def follow(generation: int, *chosen: Any) -> tuple[Any, ...]:
            try:
                status = bot.index_status().line()
                now, current = library.now()
            except Exception:  # the store is unreadable: a question says why; keep what is shown
                log.debug("library view not refreshed", exc_info=True)
                return (gr.skip(), generation, *[gr.skip()] * 6)
            if now == generation:
                return (status, generation, *[gr.skip()] * 6)
            lists = (current.venues, current.years, current.years, current.topics, current.authors)
            return (
                status,
                now,
                header(current),
                *[
                    gr.Dropdown(choices=[*options, *([value] if value and value not in options else [])])
                    for options, value in zip(lists, chosen, strict=True)
                ],
            )

        following = ([shown, *filters], [index_line, shown, corpus_line, *filters])
        app.load(follow, *following, api_visibility="private")
        gr.Timer(5.0).tick(follow, *following, api_visibility="private")

        inputs = [box, chatbot, venue, year_from, year_to, topic, author, k, backend, show_scores]
        outputs = [chatbot, sources, coverage, active, markdown, bibtex]

        def run(message: str, history: list[dict[str, Any]], *rest: Any) -> Iterator[tuple[Any, ...]]:
            if not (message or "").strip():
                yield history, gr.skip(), "Type a question first.", gr.skip(), gr.skip(), gr.skip()
                return
            yield from respond(bot, message, history, *rest)

        # The box is emptied when a question is sent, not after its answer: clearing it
        # afterwards wiped a next question typed while the answer was being finished.
        asked = gr.State("")

        def take(message: str) -> tuple[str, str]:
            return "", message

        for trigger in (box.submit, send.click):
            trigger(take, box, [box, asked], queue=False, api_visibility="private").then(
                run, [asked, *inputs[1:]], outputs, api_visibility="private"
            )

        def example(
            evt: gr.SelectData, history: list[dict[str, Any]], *rest: Any
        ) -> Iterator[tuple[Any, ...]]:
            yield from respond(bot, evt.value["text"], history, *rest)

        chatbot.example_select(example, inputs[1:], outputs, api_visibility="private")

        def api_ask(question: str, venue: str = ANY, k: int = 5) -> dict[str, Any]:
            """For scripts: the answer, or {"ok": false, "error": {"kind", "message"}} with the
            same one-line message as the CLI; kind is user, store, backend or internal."""
            try:
                answer = bot.ask(question, k=int(k), filters=filters_from(venue, None, None, None, None))
            except Exception as exc:
                if not isinstance(exc, AssistantError):
                    log.exception("unexpected error in /ask")
                return {"ok": False, "error": {"kind": kind_of(exc), "message": str(exc)}}
            return {"ok": True, **answer_json(answer)}

        def api_stats() -> dict[str, Any]:
            """For scripts: how many papers the app searches now, and any warning about the store."""
            try:
                stats = bot.stats()
            except Exception as exc:
                return {"ok": False, "error": {"kind": kind_of(exc), "message": str(exc)}}
            status = bot.index_status()
            return {
                "ok": True,
                "papers": stats.papers,
                "line": stats.line(),
                "index": {
                    "answering": status.answering,
                    "strong": status.strong,
                    "strong_papers": status.strong_papers,
                    "building": status.building,
                    "questions": status.questions,
                    "abstracts": status.abstracts,
                    "line": status.line(),
                },
                "notes": list(bot.notes),
            }

        gr.api(api_ask, api_name="ask")
        gr.api(api_stats, api_name="stats")
    app.queue(default_concurrency_limit=bot.settings.ui_concurrency, max_size=256)
    return app


def serve(bot: Assistant | None = None, host: str | None = None, port: int | None = None) -> None:
    bot = bot or Assistant()
    s = bot.settings
    print(f"Preparing the corpus: {bot.stats().line()}")
    if bot.start_indexing():
        print(f"Building the EmbeddingGemma index in the background: {bot.index_status().line()}")
    app = build_app(bot)
    auth = (s.ui_user, s.ui_password) if s.ui_user and s.ui_password else None
    app.launch(
        server_name=host or s.ui_host,
        server_port=port if port is not None else s.ui_port,
        auth=auth,
        show_error=False,
        css=CSS,
        head=HEAD,
        share=False,
        inbrowser=False,
    )
