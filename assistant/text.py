"""Text normalisation shared by ids, search and sentence splitting."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2212"), "-")
_SPACES = dict.fromkeys(map(ord, "\u00a0\u2009\u202f\u200b"), " ")
_LATEX_CMD = re.compile(r"\\[a-zA-Z]+\*?")
_MARKUP = re.compile(r"[$*_{}\\^~]")
_WS = re.compile(r"\s+")


def name_like(word: str, *, capitalised: bool = False, hyphenated: bool = False) -> bool:
    """Does this word look like a name (PolySHAP, i-QN, 3DMatch)? An upper-case letter after
    the first, or a digit; with `hyphenated` also a capitalised hyphenated word (Self-Refine);
    with `capitalised` any capitalised word (ImageNet, Adult)."""
    if len(word) < 2:
        return False
    if any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word):
        return True
    return word[0].isupper() and (capitalised or (hyphenated and "-" in word))


_WORD = re.compile(r"(?<![\w-])([^\W_]+(?:-[^\W_]+)*)")
_QUESTION_WORDS = frozenset(
    "i a an the is are was were do does did which what who how and or in on of for".split()
)
# Where a sentence's first word begins: after the start or a full stop and a space, past any
# opening quotes, brackets or Spanish '¿'/'¡' ('"Which …', '¿Qué …'); 'e.g. Adam' goes on.
_SENTENCE_START = re.compile(r"(?:^|(?<!\be\.g)(?<!\bi\.e)[.?!:;]\s)[^\w-]*")


def question_words(question: str) -> list[str]:
    """The words of a question that may be names: every word (hyphenated ones whole, e.g.
    'YaRN-style') except those that open a sentence and the question's function words."""
    starts = {m.end() for m in _SENTENCE_START.finditer(question)}
    return [
        m.group(1)
        for m in _WORD.finditer(question)
        if m.start() not in starts and m.group(1).lower() not in _QUESTION_WORDS
    ]


def without_accents(text: str) -> str:
    """'Akgül' -> 'Akgul': what a person types for a name written with accents."""
    if text.isascii():  # most names: nothing to decompose (3× faster)
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def name_parts(word: str) -> list[str]:
    """The parts of a word that name something ('YaRN-style' -> ['YaRN'], 'Gale-Shapley' ->
    ['Gale', 'Shapley'], 'plain-English' -> ['English']): capitalised or name-like, with two
    letters at least and no digit (so '64k', '1-shot', 'Q-heads' and 'YAP1' name nothing here:
    a version or a gene is spelt too many ways to be looked up)."""
    return [
        part
        for part in word.split("-")
        if sum(c.isalpha() for c in part) >= 2
        and not any(c.isdigit() for c in part)
        and name_like(part, capitalised=True)
    ]


# A year written in a question or a field: 1900-2099, not part of a longer number.
YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")


def normalize(text: str) -> str:
    """What search sees: NFKC, plain dashes and spaces, no LaTeX/markdown markup."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_SPACES)
    text = _LATEX_CMD.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    return _WS.sub(" ", text).strip()


def fold(text: str) -> str:
    """Case- and accent-insensitive key: 'Théo  Vincent' -> 'theo vincent'."""
    return _WS.sub(" ", without_accents(text).replace("-", " ")).strip().lower()


def identity_text(abstract: str) -> str:
    """What makes two abstracts the same paper: NFKC, no invisible format characters
    (zero-width spaces and joiners, soft hyphens, BOMs: Unicode category Cf), every dash
    a hyphen, whitespace collapsed, case folded. LaTeX stays as it is: `$\\alpha$` and
    `$\\beta$`, `$\\epsilon^2$` and `$\\epsilon_2$` are different papers."""
    text = unicodedata.normalize("NFKC", abstract)
    if not text.isascii():  # (ASCII holds no format character, and its only dash is "-")
        text = "".join(
            "-" if unicodedata.category(c) == "Pd" or c == "\u2212" else c
            for c in text
            if unicodedata.category(c) != "Cf" and c != "\u180e"
        )
    text = re.sub(r"-{2,}", "-", text)  # "--" (LaTeX's en dash) and "–" are the same
    return _WS.sub(" ", text).strip().casefold()


def paper_id(abstract: str) -> str:
    """Stable id from the abstract's identity text: the same text is the same paper."""
    return hashlib.sha256(identity_text(abstract).encode("utf-8")).hexdigest()[:16]


def legacy_paper_id(abstract: str) -> str:
    """The id stores made before the identity text kept LaTeX (it stripped markup): an
    abstract already stored under it is not stored again."""
    key = _WS.sub(" ", normalize(abstract).lower())
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


# A sentence ends at . ! ? before a capital (Latin, Greek or Cyrillic), a digit, a quote, a
# bracket, a footnote mark, CJK text or full-width and mathematical letters; or at a CJK,
# full-width, Devanagari or Arabic full stop, whatever follows.
_SENT_END = re.compile(
    r"(?<=[.!?．])\s+(?=[A-Z0-9\"'(\[$*#<¹²³\u0386-\u03ab\u0400-\u042f\u3000-\u9fff\uac00-\ud7af"
    r"\uff10-\uff19\uff21-\uff3a\U0001d400-\U0001d7ff])"
    r"|(?<=[。！？．।؟۔])\s*(?=\S)"
)
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|Sec|resp|approx|al)\.)$")


def split_sentences(text: str) -> list[str]:
    """Split an abstract into sentences, keeping abbreviations such as 'e.g.' inside."""
    parts = _SENT_END.split(text.strip())
    out: list[str] = []
    for part in parts:
        if out and _ABBREV.search(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return [p.strip() for p in out if p.strip()]


def make_label(abstract: str, limit: int = 90) -> str:
    """A short display label for an untitled abstract: its first sentence, shortened."""
    sentences = split_sentences(abstract)
    first = normalize(sentences[0] if sentences else abstract)
    if len(first) <= limit:
        return first.rstrip(".")
    cut = first[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_WORD_CHAR = re.compile(r"[^\W_]")


def strip_controls(text: str) -> tuple[str, int]:
    """`text` without NUL and other control characters (and bidirectional overrides, which
    reorder what a reader sees); tabs and newlines stay. Returns the text and how many
    characters were removed."""
    cleaned, removed = _CONTROL.subn("", text)
    return cleaned, removed


def has_word_characters(text: str) -> bool:
    """Does `text` hold a letter or a digit (in any script)? '?', '...', emoji: no."""
    return _WORD_CHAR.search(text) is not None


def normalize_doi(value: str | None) -> str | None:
    """'https://doi.org/10.1000/ABC', 'doi:10.1000/abc' -> '10.1000/abc'; None if not a DOI."""
    if not value:
        return None
    text = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", value.strip(), flags=re.IGNORECASE)
    text = text.strip().rstrip(".")
    return text.lower() if re.fullmatch(r"10\.\d{4,9}/\S+", text) else None


def split_venue_year(text: str) -> tuple[str | None, int | None]:
    """'NeurIPS 2025' -> ('NeurIPS', 2025); 'ICLR' -> ('ICLR', None)."""
    match = re.fullmatch(r"\s*(.*?)\s*((?:19|20)\d{2})?\s*", text)
    assert match is not None
    venue = match.group(1).strip() or None
    year = int(match.group(2)) if match.group(2) else None
    return venue, year


CONTENT_WORD = re.compile(r"[a-z][a-z0-9\-]{3,}")  # in folded text
_COMMON = frozenset(
    """this that these those with from into their there which what when where while about paper
    papers work works study studies method methods approach approaches propose proposes proposed
    show shows shown also such than then them they have has been being were will would could should
    answer question abstract abstracts source sources cite cited following based using used""".split()
)


def content_terms(sentence: str) -> list[str]:
    """A sentence's content words, folded ("High-dimensional" -> "high", "dimensional")."""
    return [w for w in CONTENT_WORD.findall(fold(sentence)) if w not in _COMMON]


def content_words(sentence: str) -> set[str]:
    """Stems (first five letters) of a sentence's content words."""
    return {w[:5] for w in content_terms(sentence)}


_ALNUM = re.compile(r"[a-z0-9]+")  # every folded word, digits and acronyms too


def singular(word: str) -> str:
    """'bandits' -> 'bandit', 'processes' -> 'process', 'gnns' -> 'gnn' (a prefix to match)."""
    if word.endswith("es") and len(word) > 4 and word[-3] in "sxz":
        return word[:-2]
    return word[:-1] if word.endswith("s") and len(word) > 3 and not word.endswith("ss") else word


def words_of(text: str) -> list[str]:
    """Every folded word of `text`, acronyms included ("GNNs" -> "gnns")."""
    return _ALNUM.findall(fold(text))


# A likeness, not a name ("GPT-style networks", "DeGroot-type rules", "Adam-like updates"):
# a paper about something like it need not name it (not "BERT-based": built on it).
RESEMBLES = re.compile(r"-(?:style|type|like|inspired|esque|flavou?red)$", re.IGNORECASE)
