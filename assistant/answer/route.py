"""Question kinds, decided the same way for every backend.

- catalogue: answered from the listing's metadata. `list` (papers by an author, at a
  venue, with a comment, in a research area or with none; counted), `authors` (who
  wrote the paper the question describes), `venue` (where it appeared, its comment),
  `author_papers` (the other papers of its first author);
- several: "which papers ... <topic>": every retrieved paper that addresses it;
- comparison: the context holds each paper the question names or describes;
- content: everything else, answered by the backend from the abstracts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from assistant.index.catalogue import Catalogue
from assistant.text import fold, name_like
from assistant.types import Filters, Paper, SearchResult

Kind = Literal["catalogue", "several", "comparison", "content"]
Facet = Literal["list", "authors", "venue", "author_papers"]

_AUTHORS_OF = re.compile(
    r"\bwho (?:wrote|authored|are|were|is|was)\b(?! .*\bpapers?\b.*\bby\b)|\bauthors? of\b"
    r"|\bwritten by whom\b|\bwho (?:are|were) (?:its|the|their) authors\b|\bwho is behind\b|\bwho did\b"
    # "the names of the people behind that analysis", "the researchers who wrote it" (not "the
    # researchers who made the benchmark", "names of persons in clinical notes")
    r"|\bnames? of (?:the )?(?:people|researchers|scientists) (?:behind|who)\b"
    r"|\b(?:people|researchers?|team|scientists?) (?:behind|who (?:wrote|did|made))"
    r" (?:it|this|that|these|those|them|the (?:paper|work|analysis|study|method|approach))\b"
)
_VENUE_OF = re.compile(
    r"\b(?:which|what) (?:venue|conference|journal|workshop|edition|proceedings)\b"
    r"|\bwhere (?:was|is|were|did) (?:it|this|that|they|the paper|the work)\b"
    r".*\b(?:published|accepted|appear|presented|submitted)"
    r"|\bwhere (?:was|is) (?:it|this|that) (?:from|published|accepted)\b|\bpaper id\b|\bextended version of\b"
)
# "Where was i-QN accepted?": a follow-up whose "it" was replaced by the name of what the
# previous answer was about (read on the question as written: the name's case tells it).
_VENUE_OF_NAMED = re.compile(
    r"\bwhere (?:was|is|were|did) ([\w-]+)\b.*\b(?:published|accepted|appear|presented|submitted)",
    re.IGNORECASE,
)
_OTHER_PAPERS = re.compile(
    r"\b(?:first|last|lead|senior) author\b.*\b(?:other|another|more|else)\b|\bother papers? by\b"
)
_NO_AREA = re.compile(
    r"\bno (?:research )?(?:area|topic|category)|\bwithout (?:a |any )?(?:research )?(?:area|topic|category)"
    r"|\b(?:area|topic|category) (?:is )?(?:missing|not given|absent|empty)"
)
_AREA_WORDS = re.compile(
    r"\b(?:area|areas|topic|topics|track|category|categories|filed|listed|under|subarea)\b"
)
_PERSON = re.compile(r"\b(?:authors?|co ?authors?|surname|last name|first name|named|by|wrote|written)\b")
_SEVERAL = re.compile(
    r"^(?:which|what|list|name|show|find|are there|is there any)\b.*\bpapers\b"
    r"|\bpapers (?:on|about|that|which)\b"
    r"|^(?:which|what) (?:\S+ ){0,3}papers\b|\bhow many papers\b"
)
_COMPARE = re.compile(
    r"\b(?:compare|compared|comparison|contrast|differ|differs|difference|differences|versus|vs)\b"
    r"|\bthe two (?:papers|works|methods)\b|\bboth papers\b|\bthe other\b|\beach one\b"
)
_COUNT = re.compile(r"\bhow many\b|\bnumber of papers\b|\bcount\b")
_QUOTED = re.compile(r"(?<![A-Za-z])['\"“‘]([^'\"”’]{3,120})['\"”’](?![A-Za-z])")
_WORDS = re.compile(r"[a-z0-9]+")

# Words that ask for a listing without saying what the papers are about.
GENERIC = frozenset(
    """which what who whom whose where when how many much papers paper work works worked working
    did does do done has have had is are was were be been accepted appeared appear appears
    published presented at in on of the a an by from listed list show all about author authors co
    coauthor coauthors wrote written write surname last first name named collection listing
    listings corpus filed under research area areas topic topics subarea there any me give tell and
    they them their it its each for edition extended version versions comment comments says say
    said fall falls belong belongs category categories categorized annotated track venue venues
    conference conferences year years those these this that other another one ones with no given
    with without count number total find shown included include includes appear appearing also as
    to or whether someone anyone has have please can you could would i we our us lists titled
    called spotlight oral poster gives give provides provide mentions mention contain contains
    containing belongs listing annotated per whose where s t entries entry items item appears shows
    state states stated labelled labeled marked""".split()
)


@dataclass(frozen=True)
class Route:
    """How a question is answered."""

    kind: Kind
    facet: Facet | None = None
    papers: tuple[Paper, ...] = ()  # catalogue: the matching papers (all of them)
    description: str = ""  # "by Théo Vincent", "at AAMAS 2025", "with no research area"
    count: bool = False  # the question asks how many
    parts: tuple[str, ...] = field(default=())  # comparison: what each part of the question describes


DocFreq = Callable[[str], int]  # in how many papers (text and metadata) a word occurs


def decide(question: str, result: SearchResult, catalogue: Catalogue, df: DocFreq) -> Route:
    """The kind of a (standalone) question, given what retrieval found."""
    q = fold(question)
    top = result.hits[0].paper if result.hits else None
    selected = _select(question, q, result, catalogue, df)
    if selected is not None:
        papers, description, rest = selected
        if not rest:
            return Route("catalogue", "list", papers, description, bool(_COUNT.search(q)))
    if top is not None and _OTHER_PAPERS.search(q) and top.authors:
        author = top.authors[0]
        papers = tuple(catalogue.papers[i] for i in np.flatnonzero(catalogue.mask(Filters(author=author))))
        return Route("catalogue", "author_papers", papers, f"by {author}")
    if top is not None and _AUTHORS_OF.search(q) and not result.detected.author and not result.filters.author:
        return Route("catalogue", "authors", (top,))
    named = _VENUE_OF_NAMED.search(question)
    if top is not None and (_VENUE_OF.search(q) or (named and name_like(named.group(1), hyphenated=True))):
        return Route("catalogue", "venue", (top,))
    if _COMPARE.search(q):
        return Route("comparison", parts=tuple(_parts(question)))
    if _SEVERAL.search(q):
        return Route("several", count=bool(_COUNT.search(q)))
    return Route("content")


def _select(
    question: str, q: str, result: SearchResult, catalogue: Catalogue, df: DocFreq
) -> tuple[tuple[Paper, ...], str, list[str]] | None:
    """Papers picked out by metadata the question names, a description of the selection,
    and the question's remaining content words (none: the question is about the listing)."""
    mask = np.ones(len(catalogue), dtype=bool)
    described: list[str] = []
    used: set[str] = set()
    active = result.filters
    if active.author:
        mask &= catalogue.mask(Filters(author=active.author))
        described.append(f"by {active.author}")
        used.update(_WORDS.findall(fold(active.author)))
    if active.venue or active.year_from is not None or active.year_to is not None:
        mask &= catalogue.mask(
            Filters(venue=active.venue, year_from=active.year_from, year_to=active.year_to)
        )
        where = Filters(venue=active.venue, year_from=active.year_from, year_to=active.year_to).describe()
        described.append("at " + where.replace("venue=", "").replace("year=", "").replace(", ", " "))
        if active.venue:
            used.update(_WORDS.findall(fold(active.venue)))
        for year in (active.year_from, active.year_to):
            if year is not None:
                used.add(str(year))
    topic = active.topic or _named_topic(q, catalogue)
    if topic:
        mask &= catalogue.topic_mask(topic)
        described.append(f"in {topic}")
        used.update(_WORDS.findall(fold(topic)))
    if _NO_AREA.search(q):
        mask &= catalogue.no_area_mask()
        described.append("with no research area given")
    names = _name_parts(question, q, catalogue, df) if not active.author else {}
    if names:
        keep = np.zeros(len(catalogue), dtype=bool)
        for authors in names.values():
            for author in authors:
                keep |= catalogue.mask(Filters(author=author))
        mask &= keep
        described.append("with an author named " + " or ".join(sorted(names)))
        used.update(fold(n) for n in names)
    comment_words = [w for w in _comment_words(question, q, catalogue, df) if w not in used]
    if comment_words:
        keep = np.array(
            [
                all(w in fold(p.comment or "") for w in comment_words) and bool(p.comment)
                for p in catalogue.papers
            ]
        )
        if keep.any():
            mask &= keep
            described.append("whose comment mentions " + ", ".join(f"“{w}”" for w in comment_words))
            for w in comment_words:
                used.update(_WORDS.findall(w))
    if not described:
        return None
    rest = [w for w in _WORDS.findall(q) if w not in used and w not in GENERIC and not w.isdigit()]
    papers = tuple(catalogue.papers[i] for i in np.flatnonzero(mask))
    return papers, " ".join(described), rest


def _named_topic(q: str, catalogue: Catalogue) -> str | None:
    """A research area named in the question, when it asks about areas or quotes one."""
    quoted = [fold(m) for m in _QUOTED.findall(q)]
    asks_area = bool(_AREA_WORDS.search(q))
    best: str | None = None
    for key, name in sorted(catalogue.topics.items(), key=lambda kv: -len(kv[0])):
        if len(key) < 4:
            continue
        if any(key == qt or key in qt for qt in quoted) or (
            asks_area and re.search(rf"(?<!\w){re.escape(key)}(?!\w)", q)
        ):
            best = name
            break
    return best


def _name_parts(question: str, q: str, catalogue: Catalogue, df: DocFreq) -> dict[str, set[str]]:
    """'the surname Kim', 'first name Philippe': the name part -> every author with it.
    Only in a question about people."""
    if not _PERSON.search(q):
        return {}
    out: dict[str, set[str]] = {}
    for word in re.findall(r"\b([A-ZÀ-Ý][\w'’-]+)\b", question[1:]):
        key = fold(word)
        authors = catalogue.authors_with_part(key)
        # A name part, not a word the abstracts use ("Long", "Will"): it occurs in about
        # as many papers as carry such an author.
        if authors and df(key) <= catalogue.papers_with_author_part(key) + 1:
            out[word] = authors
    return out


def _comment_words(question: str, q: str, catalogue: Catalogue, df: DocFreq) -> list[str]:
    """Words or quoted phrases of the question that pick out listing comments
    ("spotlight", "extended version", "15 pages, 4 figures")."""
    comments = [fold(p.comment) for p in catalogue.papers if p.comment]
    if not comments:
        return []
    for quoted in _QUOTED.findall(question):
        phrase = fold(quoted).strip(" .")
        if any(phrase in c for c in comments):
            return [phrase]
    out = []
    for word in dict.fromkeys(_WORDS.findall(q)):
        if len(word) < 5 or word in GENERIC - {"spotlight", "oral", "poster", "extended", "version"}:
            continue
        with_it = sum(word in c.split() for c in comments)
        # Rare among comments, and no more frequent in the papers' text than in comments.
        if 0 < with_it <= max(3, len(comments) // 10) and df(word) <= with_it:
            out.append(word)
    return out


def _parts(question: str) -> list[str]:
    """The pieces of a comparison question that each describe one paper."""
    pieces = re.split(
        r"\s*(?:,|;|—|–| - |\bversus\b|\bvs\.?|\bcompared (?:to|with)\b|\bwhereas\b|\bwhile\b|\bthe other\b"
        r"|\bone about\b|\band the one\b|\band\b)\s*",
        question,
    )
    return [p.strip(" ?.:") for p in pieces if len(p.split()) >= 1 and any(c.isalpha() for c in p)]
