"""Pure functions that turn answers into what the app shows.

Everything from the corpus is escaped here: an abstract can never inject markup or
script, nor make the browser fetch anything (no images, no auto-loading content;
markdown link and image syntax from abstracts is shown as text).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from assistant.answer.citations import shown
from assistant.answer.injection import abstract_flags, author_flag, field_flag
from assistant.index.catalogue import Catalogue
from assistant.types import Answer, Citation, Hit, Paper, SentenceChecked, SentenceSupport, Sources

_CITE = re.compile(r"\[(\d+)\]")
# Text symbols every common font has (DejaVu, Liberation): colour emoji are missing on many
# Linux desktops and in headless Chromium, where they showed as empty boxes.
BADGES = {"supported": "✓", "re-cited": "↻", "unsupported": "⚠"}


def escape(text: str | None) -> str:
    return html.escape(text or "", quote=True)


def chat_text(text: str) -> str:
    """Answer text for the chat. No HTML gets through, nor markdown images or links
    (their brackets are shown as text); `$math$` still renders, and each [n] links to
    card n of the sources panel."""
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    parts = _CITE.split(safe)  # text, number, text, number, ...
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"[\\[{part}\\]](#source-{part})")
        else:
            out.append(_defuse(part))
    return "".join(out)


def _defuse(text: str) -> str:
    """Markdown that could fetch or link: ![x](url), [x](url), <url>, bare URLs."""
    text = text.replace("[", "&#91;").replace("]", "&#93;")
    return re.sub(r"(?i)\b(https?|ftp)://", lambda m: f"{m.group(1)}&#58;//", text)


def badge(status: str) -> str:
    return f" {BADGES[status]}"


def checked_sentence(text: str, status: str) -> str:
    """One checked sentence with its badge; an unsupported one is struck through."""
    body = chat_text(text)
    if status == "unsupported":
        body = f"~~{body}~~ *(unsupported)*"
    return body + badge(status)


def streaming_text(checked: Sequence[SentenceChecked], pending: str) -> str:
    """What the chat shows while the answer streams: checked sentences with badges, then
    the text still being generated."""
    parts = [checked_sentence(e.text, e.status) for e in checked]
    if pending.strip():
        parts.append(chat_text(pending.strip()))
    return " ".join(parts) + " ▌"


def answer_text(answer: Answer) -> str:
    """The final answer for the chat: model answers with a badge per sentence (unsupported
    ones struck through); listings and extractive answers as they are."""
    if answer.refused:
        reason = f"\n\n*{chat_text(answer.reason)}*" if answer.reason else ""
        return chat_text(answer.text) + reason
    if answer.model_text and not answer.fallback and answer.sentences:
        return " ".join(checked_sentence(shown(s), s.status) for s in answer.sentences)
    text = chat_text(answer.text)
    if answer.fallback:
        text += (
            "\n\n*(The model's answer did not pass the evidence check; "
            "these are the closest abstract sentences.)*"
        )
    return text


# LaTeX's text-mode escapes outside `$…$` math ("by $35$\\% and …"): markdown inside the card's
# HTML does not unescape them, so they would show with their backslash. Inside math KaTeX
# reads them itself ("$5.7\\%$"; a bare % there would start a comment).
_MATH_OR_TEXT = re.compile(r"(\$[^$]*\$)")
_TEXT_ESCAPE = re.compile(r"\\(%|&amp;|_|#)")


def _latex_text(markup: str) -> str:
    """LaTeX text-mode escapes (\\%, \\&, \\_, \\#) outside math shown as their character."""
    parts = _MATH_OR_TEXT.split(markup)
    return "".join(p if i % 2 else _TEXT_ESCAPE.sub(r"\1", p) for i, p in enumerate(parts))


def _highlighted(abstract: str, evidence: Iterable[str], flagged: Iterable[str] = ()) -> str:
    out = escape(abstract)
    for sentence in sorted(set(evidence), key=len, reverse=True):
        esc = escape(sentence)
        if esc and esc in out:
            out = out.replace(esc, f"<mark>{esc}</mark>", 1)
    for sentence in flagged:
        esc = escape(sentence)
        if esc and esc in out:
            out = out.replace(
                esc, f'<span class="flagged" title="not used: text addressed to AI tools">{esc}</span>', 1
            )
    return _latex_text(out)


def _bdi(text: str) -> str:
    """Corpus text isolated from its surroundings: a right-to-left override in an author
    name cannot reverse the rest of the line (ingestion removes such controls too)."""
    return f"<bdi>{escape(text)}</bdi>"


def _warning(paper: Paper) -> tuple[str, list[str]]:
    """The card's note on text addressed to AI tools, and the flagged sentences."""
    flags = abstract_flags(paper.abstract)
    fields = ["title"] if paper.title and field_flag(paper.title) else []
    if any(author_flag(a) for a in paper.authors):
        fields.append("an author name")
    if not flags and not fields:
        return "", []
    parts = []
    if flags:
        parts.append(f"{len(flags)} sentence(s) of the abstract (struck through)")
    parts.extend(f"the {f}" if f == "title" else f for f in fields)
    note = (
        '<div class="card-warning" role="note">⚠ Contains text addressed to AI tools — '
        f"{escape(', '.join(parts))}; it was not used as evidence or shown to the model.</div>"
    )
    return note, [f.text for f in flags]


def card(paper: Paper, number: int | None, evidence: Iterable[str], score: float | None = None) -> str:
    meta = []
    if paper.authors:
        shown = ", ".join(_bdi(a) for a in paper.authors[:12])
        meta.append(shown + (" et al." if len(paper.authors) > 12 else ""))
    if paper.venue_year:
        meta.append(_bdi(paper.venue_year))
    if paper.topic:
        meta.append(_bdi(paper.topic))
    warning, flagged = _warning(paper)
    score_html = f'<span class="score">score {score:.4f}</span>' if score is not None else ""
    comment = f'<div class="comment">Comment: {_bdi(paper.comment)}</div>' if paper.comment else ""
    # A link from the corpus is only ever followed on a click, and tells the site nothing.
    anchors = []
    if paper.doi_url and re.match(r"https://doi\.org/[^\s\"'<>]+$", paper.doi_url):
        anchors.append((paper.doi_url, f"doi:{paper.doi}"))
    if paper.url and paper.url != paper.doi_url and re.match(r"https?://[^\s\"'<>]+$", paper.url):
        shown = paper.url.removeprefix("https://doi.org/")
        anchors.append((paper.url, f"doi:{shown}" if shown != paper.url else paper.url))
    link = ""
    if anchors:
        link = (
            '<div class="card-link">'
            + " · ".join(
                f'<a href="{escape(href)}" target="_blank" rel="noopener noreferrer nofollow">'
                f"{escape(label)}</a>"
                for href, label in anchors
            )
            + "</div>"
        )
    ident = (
        f'id="source-{number}" data-number="{number}"'
        if number is not None
        else f'data-paper="{escape(paper.id)}"'
    )
    mark = f"<b>[{number}]</b> " if number is not None else ""
    return (
        f'<div class="source-card" {ident}>'
        f'<div class="card-title">{mark}{_bdi(paper.title or paper.label)} {score_html}</div>'
        f'<div class="card-meta">{" · ".join(meta)}</div>{comment}{link}{warning}'
        f'<div class="abstract">{_highlighted(paper.abstract, evidence, flagged)}</div>'
        f'<div class="card-id">id {escape(paper.id)} · {escape(", ".join(paper.sources[:5]))}</div></div>'
    )


def found_cards(sources: Sources, cited: Sequence[Citation] = (), show_scores: bool = False) -> str:
    """Cards as soon as retrieval is done: papers already cited first (with their number),
    then the rest of what was found; each with its best sentences highlighted."""
    if not sources.hits:
        return '<div class="no-sources">No abstract matches.</div>'
    numbers = {c.paper.id: c.number for c in cited}
    pairs: list[tuple[Hit, tuple[str, ...]]] = list(zip(sources.hits, sources.evidence))
    pairs.sort(key=lambda p: numbers.get(p[0].paper.id, 10_000 + p[0].rank))
    return "".join(
        card(h.paper, numbers.get(h.paper.id), ev, h.score if show_scores else None) for h, ev in pairs
    )


def source_cards(answer: Answer | None, show_scores: bool = False) -> str:
    if answer is None or not answer.citations:
        reason = escape(answer.reason) if answer is not None and answer.reason else ""
        return f'<div class="no-sources">No sources for this answer. {reason}</div>'
    evidence: dict[int, set[str]] = {}
    for s in answer.sentences:
        for n in s.citations:
            if s.evidence:
                evidence.setdefault(n, set()).add(s.evidence)
    return "".join(
        card(c.paper, c.number, evidence.get(c.number, set()), c.score if show_scores else None)
        for c in answer.citations
    )


def coverage(answer: Answer) -> str:
    if answer.refused:
        return f"No answer ({answer.matching} matching abstracts searched)."
    used = len(answer.citations)
    line = f"Draws on {used} of {answer.matching} matching abstracts · {answer.backend}"
    if answer.kind == "catalogue":
        line += " · from the listing"
    if answer.fallback:
        line += " · the model's answer failed the evidence check: extractive answer shown"
    return line


def filters_line(answer: Answer) -> str:
    if answer.filters.is_empty():
        return "Filters: none"
    return f"Filters: {answer.filters.describe()}"


def support_summary(sentences: Sequence[SentenceSupport]) -> str:
    counts = {k: 0 for k in BADGES}
    for s in sentences:
        counts[s.status] += 1
    return " · ".join(f"{BADGES[k]} {v} {k}" for k, v in counts.items() if v)


def examples(catalogue: Catalogue, n: int = 4) -> list[str]:
    """Example questions drawn from the corpus's own venues, topics and authors."""
    stats = catalogue.stats()
    out: list[str] = []
    venues = [v for v in stats.venues if v != "(no venue)"]
    if venues:
        out.append(f"Which {venues[0]} papers study equilibria in games?")
    subareas = sorted({p.subarea for p in catalogue.papers if p.subarea})
    if subareas:
        out.append(f"What do the {subareas[0]} papers propose?")
    counts: dict[str, int] = {}
    for p in catalogue.papers:
        for a in p.authors:
            counts[a] = counts.get(a, 0) + 1
    if counts:
        author = max(counts, key=lambda a: (counts[a], a))
        out.append(f"What has {author} worked on?")
    out.append("How can small transformers simulate long-context ones?")
    return out[:n]
