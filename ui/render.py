"""Pure functions that turn answers into what the app shows. Everything from the
corpus is HTML-escaped here: an abstract can never inject markup or script."""

from __future__ import annotations

import html
import re

from assistant.catalogue import Catalogue
from assistant.types import Answer, Citation

_CITE = re.compile(r"\[(\d+)\]")


def escape(text: str | None) -> str:
    return html.escape(text or "", quote=True)


def chat_text(text: str) -> str:
    """Answer text for the chat: no HTML can get through (markdown and $math$ still
    render), and each [n] links to card n of the sources panel."""
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _CITE.sub(lambda m: f"[\\[{m.group(1)}\\]](#source-{m.group(1)})", safe)


def _highlighted(abstract: str, evidence: set[str]) -> str:
    out = escape(abstract)
    for sentence in sorted(evidence, key=len, reverse=True):
        esc = escape(sentence)
        if esc and esc in out:
            out = out.replace(esc, f"<mark>{esc}</mark>", 1)
    return out


def card(citation: Citation, evidence: set[str], show_scores: bool) -> str:
    p = citation.paper
    meta = []
    if p.authors:
        meta.append(escape(", ".join(p.authors)))
    if p.venue_year:
        meta.append(escape(p.venue_year))
    if p.topic:
        meta.append(escape(p.topic))
    score = f'<span class="score">score {citation.score:.4f}</span>' if show_scores else ""
    comment = f'<div class="comment">Comment: {escape(p.comment)}</div>' if p.comment else ""
    return (
        f'<div class="source-card" id="source-{citation.number}" data-number="{citation.number}">'
        f'<div class="card-title"><b>[{citation.number}]</b> {escape(p.title or p.label)} {score}</div>'
        f'<div class="card-meta">{" · ".join(meta)}</div>{comment}'
        f'<div class="abstract">{_highlighted(p.abstract, evidence)}</div>'
        f'<div class="card-id">id {escape(p.id)} · {escape(", ".join(p.sources))}</div></div>'
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
    return "".join(card(c, evidence.get(c.number, set()), show_scores) for c in answer.citations)


def coverage(answer: Answer) -> str:
    if answer.refused:
        return f"No answer: {answer.reason or ''} ({answer.matching} matching abstracts)"
    used = len(answer.citations)
    line = f"Draws on {used} of {answer.matching} matching abstracts · {answer.backend}"
    if answer.fallback:
        line += " · the model's answer failed the citation check: extractive answer shown"
    return line


def filters_line(answer: Answer) -> str:
    if answer.filters.is_empty():
        return "Filters: none"
    return f"Filters: {answer.filters.describe()}"


def corpus_line(catalogue: Catalogue) -> str:
    return catalogue.stats().line()


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
