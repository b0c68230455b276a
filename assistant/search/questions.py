"""Checking and cleaning questions; turning follow-ups into standalone questions.

No LLM is involved: a follow-up borrows the subject of the previous question
(a rare term such as "GRAPE" replaces "it"), and retrieval sees both turns, so
the sources appear as soon as the search is done, whatever the backend.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from assistant.errors import QuestionError
from assistant.text import (
    content_terms,
    content_words,
    fold,
    has_word_characters,
    name_like,
    question_words,
    singular,
    words_of,
)

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# "Does anyone here do that (kind of thing) for vehicle routing?": asks for something like
# what was just discussed (a follow-up, `_FOLLOW_UP_START`; a switch, `_SWITCH`)
_ANYONE_DOING_THAT = (
    r"(?:does|do|is)\s+(?:anyone|anybody|anything|any\s+papers?|a\s+paper)(?:\s+here)?\s+"
    r"(?:do|does|doing|cover|covers|study|studies|look\s+at|try)\s+(?:that|this|it|the\s+same|something\s+similar)"
)
# What makes a question a follow-up: it opens with "and" / "what about", or it refers back
# with a pronoun, "the paper", "the authors", "the experiments", or a demonstrative naming
# what it points at ("that analysis", "is that an extended version …", "… of this?"). A bare
# "that" is mostly a relative pronoun ("a technique that lifts …", "shows that …") and "also"
# an adverb: neither is one.
_FOLLOW_UP_START = re.compile(
    r"^\W*(?:and|also|what about|how about"
    # "Anything similar for quantum networks?", "Same for speech?": similar to what was asked
    # ("Anything similar to AlphaFold for RNA?" names what it is like: a question of its own)
    r"|(?:is\s+there\s+|do\s+you\s+have\s+)?(?:anything|something)"
    r"\s+(?:similar(?!\s+to\b)|else|comparable(?!\s+to\b)|like\s+th(?:at|is))|(?:the\s+)?same\s+(?:for|with)"
    r"|" + _ANYONE_DOING_THAT + r")\b",
    re.IGNORECASE,
)
_FOLLOW_UP = re.compile(
    r"\b(?:it(?!\s+(?:is\s+|was\s+)?(?:possible|true|hard|difficult|easy|feasible|necessary|known|costs?)"
    r"\s+(?:to|that)\b)(?<!\bis it(?=\s+to\b))|its|it's|they|them|their|he|she|his|her|the same)\b"
    # "the paper" points back; "the paper on iterated Q-Networks" describes the one it means
    r"|\bthe\s+(?:paper|method|approach)\b(?!\s+(?:on|about|that|which|whose|by"
    r"|proposing|introducing|presenting|studying)\b)"
    # "the authors" point back; "the study of grokking", "the authors of X" do not
    r"|\bthe\s+(?:authors|researchers|experiments|study)\b(?!\s+(?:of|on|in|about|from)\b)"
    r"|\b(?:this|that|these|those)\s+(?:papers?|methods?|approach(?:es)?|models?|works?|frameworks?"
    r"|systems?|algorithms?|benchmarks?|results?|analys[ie]s|ones?|datasets?|techniques?|stud(?:y|ies)"
    r"|ideas?|variants?|versions?|findings?|experiments?)\b"
    r"|\b(?:is|was|are|were|of|about|from|on|in|with|to|for|than)\s+(?:this|that|these|those)\b(?!\s+\w+\s+that\b)"
    r"|\b(?:this|that|these|those)\W*$",
    re.IGNORECASE,
)
# A question longer than this that uses a pronoun carries its own subject ("Which paper shows
# that the smallest singular values … also carry learned information?"): the follow-ups people
# write are short ("How many knowledge graphs was it evaluated on, and is the code public?").
FOLLOW_UP_WORDS = 15
# Up to this many words, a question points back when a pronoun is what a verb asks about ("For
# what class of games do they still get play that …?", "How long does that take …?") or a
# demonstrative follows a preposition ("… switching to that family …"), and it names nothing
# of its own (`_subject`): "its", "their" or "the authors" alone are not enough at this length
# ("… what throughput speed-up does it report?" after naming RollVerify).
LONG_FOLLOW_UP_WORDS = 20
# ("does it take / cost …" and "is that" are as often the question's own: "How much data does it
# take to …?", "… the reason is that …"; "in that" is a conjunction)
_POINTS_BACK = re.compile(
    r"\b(?:do|does|did|can|could|would|will|has|have|had)\s+(?:they|that|these|those"
    r"|it(?!\s+(?:take|cost|mean|matter|make|need|require)s?\b))\b"
    r"|\b(?:is|are|was|were)\s+they\b"
    r"|\b(?:of|about|from|on|with|to|for|than)\s+(?:this|that|these|those)\b(?!\s+\w+\s+that\b)"
    r"|\b(?:this|that|these|those)\s+(?:papers?|methods?|approach(?:es)?|models?|works?|frameworks?|stud(?:y|ies)"
    r"|results?|analys[ie]s|findings?)\b",
    re.IGNORECASE,
)
FOLLOW_UP_TO = " (follow-up to: "  # how a follow-up without a subject carries the previous question
# Pronouns and short references a subject can replace ("it" -> "GRAPE"). "they", "them",
# "their" only by a name the previous question used ("Which testbeds did they show results
# on?" after "… the iterated Q-Network (i-QN) paper …"): a name borrowed from the previous
# answer is often not the paper's ("… singular values that deviate from RMT …"), and
# "removing them" read "removing RMT" in the app.
_REFERENCE = re.compile(
    r"\b(?:(?:this|that|the) (?:paper|method|approach|model|work|framework|system|algorithm|benchmark)"
    r"|it|(?P<plural>they|them))\b",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(
    r"\b(?:its|(?P<plural>their)|(?:this|that|the) (?:paper|method|approach|model|work|framework)'s)\b",
    re.IGNORECASE,
)


def _replace(pattern: re.Pattern[str], body: str, by: str, plural: bool) -> tuple[str, int]:
    """`body` with the first of `pattern`'s references replaced by `by` (a plural pronoun
    only when `plural`), and how many were (0 or 1)."""
    for m in pattern.finditer(body):
        if plural or m.group("plural") is None:
            return body[: m.start()] + by + body[m.end() :], 1
    return body, 0


# A follow-up that only names another subject ("What about dueling bandits?", "And for
# speech?", "Anything similar for graphs?") keeps the previous question's ask and changes
# what it is about: an answer must come from an abstract that names the new subject, not
# from the previous turn's paper (a walk: "What about dueling bandits?" was answered with
# the sentences of the sea-ice paper asked about before).
_SWITCH = re.compile(
    r"^\W*(?:(?:and|so|ok|okay)\W+)?"
    r"(?:(?:what|how)\s+about|and\s+(?:for|in|on|with|regarding)"
    r"|(?:is\s+there\s+|do\s+you\s+have\s+)?(?:anything|something)"
    r"(?:\s+(?:similar|else|comparable|like\s+(?:that|this)))?\s+(?:for|on|about|in|with|regarding)"
    r"|(?:and\s+)?(?:the\s+)?same\s+(?:for|with)"
    r"|" + _ANYONE_DOING_THAT + r"(?:\s+(?:kind|sort)\s+of\s+(?:thing|work|analysis))?\s+for)"
    r"\s+(?P<subject>[^?!]+?)\W*\?\W*$"
    r"|^\W*and\s+(?P<bare>(?:\S+\s+){0,5}\S+?)\W*\?\W*$",  # "And dueling bandits?"
    re.IGNORECASE,
)
# what may follow a switch's subject: a tag asking whether the library has it ("What about
# detecting hallucinations, is there something on that?", "And for membership inference,
# does anything here study those?"), an explanation ("vehicle routing, i.e. planning the
# tours"; not "e.g. dueling bandits": an example is the subject), or what it replaces ("for
# the nucleolus instead of the core")
_SWITCH_TAG = re.compile(
    r"\s*,\s*(?:(?:is|are)\s+there|(?:does|do)\s+(?:anything|anyone|anybody|any\s+papers?)|do\s+you\s+have)\b"
    r"[^?]*(?=\?\W*$)",
    re.IGNORECASE,
)
_EXPLAINED = re.compile(r"(?:\s*,)?\s*\(?\b(?:i\.\s?e\.|that\s+is,|namely)[^?]*(?=\?\W*$)", re.IGNORECASE)
_REPLACING = re.compile(r"\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+.*$", re.IGNORECASE)
# a switch that says it wants something like the last answer ("anything similar for the
# nucleolus?"): its subject is another thing even after "the" (not "What about the runtime?",
# "Same for the training time?", "Anything else on the baselines?": the paper's own)
_LIKE_THAT = re.compile(r"\b(?:similar|comparable|anyone|anybody|kind\s+of\s+thing)\b", re.IGNORECASE)
_ASKS = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how|does|did|do|is|are|was|were)\b", re.I)
# "What about the runtime?", "And the code?", "And its licence?": a property of the paper
# just discussed, not another subject
_OF_THE_PAPER = re.compile(r"^(?:the|its|their|this|that|these|those|his|her)\b", re.IGNORECASE)
_NOT_A_SUBJECT = frozenset("similar other else something anything kind kinds ones same related like".split())
SWITCH_WORDS = 8  # a longer "what about …" asks a question of its own
_ACRONYM = re.compile(r"\b[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*\b")  # "RL", "GNNs", "LIME"


def switched_subject(question: str, previous: str) -> tuple[str, frozenset[str]]:
    """The new subject a follow-up turns to ("dueling bandits" in "What about dueling
    bandits?") and its content words the previous question did not use, whole and without
    a plural "s" ("dueling"; a five-letter stem would take "quantum" for "quantitative");
    ("", ∅) when the follow-up points back ("What about its runtime?") or asks something of
    its own."""
    question = " ".join(question.split())
    m = _SWITCH.match(_EXPLAINED.sub("", _SWITCH_TAG.sub("", question)))
    if m is None:
        return "", frozenset()
    named = "subject" if m.group("subject") is not None else "bare"
    subject = _REPLACING.sub("", m.group(named).strip())
    if (
        len(subject.split()) > SWITCH_WORDS
        or _FOLLOW_UP.search(subject)
        or _ASKS.search(subject)
        or (_OF_THE_PAPER.match(subject) and not _LIKE_THAT.search(m.string[: m.start(named)]))
    ):
        return "", frozenset()
    before = words_of(previous)
    new = {
        singular(w)
        for w in content_terms(subject) + [fold(a) for a in _ACRONYM.findall(subject)]
        if w not in _NOT_A_SUBJECT
    }
    # a word the previous question used, in any form ("bandit": "bandits"), is not new
    words = frozenset(w for w in new if len(w) >= 3 and not any(b.startswith(w) for b in before))
    return (subject, words) if words else ("", frozenset())


_LEADING_AND = re.compile(r"^\s*(?:and|so|ok|okay|also|then)[\s,]+", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-]*[\w]|[A-Za-z0-9]")

History = Sequence[Any] | None


def clean_question(question: object, limit: int) -> str:
    """Strip control characters; refuse empty or over-long questions with a clear message."""
    if not isinstance(question, str):
        raise QuestionError(f"the question must be text, not {type(question).__name__}")
    text = unicodedata.normalize("NFC", _CONTROL.sub(" ", question)).strip()
    if not text:
        raise QuestionError("the question is empty: type a question about the indexed papers")
    if not has_word_characters(text):
        raise QuestionError(
            f"the question has no letters or digits ({text[:20]!r}): type a question about the indexed papers"
        )
    if len(text) > limit:
        raise QuestionError(
            f"the question has {len(text):,} characters; the limit is {limit:,} "
            "(ASSISTANT_MAX_QUESTION_CHARS). Shorten it to the question itself."
        )
    return text


def _content_text(content: Any) -> str | None:
    """Text of a chat message's content: a string, a list of parts, or a part."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if content.get("type") in (None, "text") and isinstance(content.get("text"), str):
            return str(content["text"])
        return None
    if isinstance(content, (list, tuple)):
        parts = [t for t in (_content_text(c) for c in content) if t]
        return " ".join(parts) if parts else None
    text = getattr(content, "text", None)
    return text if isinstance(text, str) else None


# The chat app strikes through a sentence the check did not support (no part of what the
# answer said), and shows each [n] as a link to its source card ("[\\[1\\]](#source-1)"); it
# hands that text back as the history.
_STRUCK = re.compile(r"~~.*?~~(?:\s*\*\(unsupported\)\*)?")
_LINKED = re.compile(r"\[\\\[(\d+)\\\]\]\(#source-\d+\)")


def conversation(history: History) -> list[tuple[str, str]]:
    """(question, answer) pairs, oldest first, from every shape a caller may hand over:
    (question, answer) pairs, or messages {"role", "content"} whose content is a string
    or a list of parts (Gradio's chat history), or objects with .role / .content. An
    answer's citations read [n], as the app's links to its source cards read too."""
    pairs = _pairs(history)
    return [(question, _LINKED.sub(r"[\1]", _STRUCK.sub(" ", answer))) for question, answer in pairs]


def _pairs(history: History) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for item in history or ():
        if isinstance(item, (tuple, list)) and item and not isinstance(item[0], dict):
            question = _content_text(item[0])
            answer = _content_text(item[1]) if len(item) > 1 else ""
            if question:
                pairs.append((question, answer or ""))
            continue
        role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
        content = item.get("content") if isinstance(item, dict) else getattr(item, "content", None)
        text = _content_text(content)
        if not text:
            continue
        if role == "user":
            pairs.append((text, ""))
        elif role == "assistant" and pairs:
            question, answer = pairs[-1]
            pairs[-1] = (question, f"{answer} {text}".strip())
    return pairs


FOLLOW_UP_CHAIN = 4  # earlier turns read to resolve a follow-up of a follow-up


def _subject(words: Iterable[str], is_key_term: Callable[[str], bool]) -> str | None:
    """The first of the words that names something specific in the corpus."""
    return next((w for w in words if name_like(w, hyphenated=True) and is_key_term(w)), None)


_CITED = re.compile(r"\[\d+\]")  # an answer that cites a paper (a refusal cites none)


def _refers_back(question: str) -> bool:
    """Opens with "and" / "what about", or has a pronoun or demonstrative (`_FOLLOW_UP`)."""
    return bool(_FOLLOW_UP_START.search(question) or _FOLLOW_UP.search(question))


def is_follow_up(question: str) -> bool:
    """Does the question need the previous turn to be understood (see `_FOLLOW_UP`)?"""
    words = len(question.split())
    if words <= 4 or _FOLLOW_UP_START.search(question):
        return True
    return words <= FOLLOW_UP_WORDS and _refers_back(question)


# A pronoun after a comma or colon is most often the question's own subject again ("Which
# LLMs were tested in …, and what scores did they get?")
_FIRST_CLAUSE = re.compile(r"[,:;]")


def _long_follow_up(question: str, is_key_term: Callable[[str], bool]) -> bool:
    """A question of `FOLLOW_UP_WORDS` to `LONG_FOLLOW_UP_WORDS` words that points back in
    its first clause (`_POINTS_BACK`) and names no subject of its own."""
    words = len(question.split())
    return (
        FOLLOW_UP_WORDS < words <= LONG_FOLLOW_UP_WORDS
        and _POINTS_BACK.search(_FIRST_CLAUSE.split(question, 1)[0]) is not None
        and _subject(question_words(question), is_key_term) is None
    )


@dataclass(frozen=True)
class Standalone:
    """A question made to stand alone: `question` for reading and answering, `retrieval`
    for search (both turns, so the earlier subject keeps pulling its paper)."""

    question: str
    retrieval: str
    rewritten: bool = False
    note: str | None = None  # said when the earlier turn was too long and was cut
    # the previous turn's answer, when the question refers back to it ("How much does removing
    # them hurt?") and it cited a paper: `continues` says whether an abstract is what it was about
    answer: str = ""
    # the new subject a follow-up turns to ("What about dueling bandits?") and its words the
    # previous question lacks: an abstract handed over must name them (`switched_subject`)
    switch: str = ""
    switch_words: frozenset[str] = frozenset()

    @property
    def own(self) -> str:
        """This turn's own question, without the previous one appended ("(follow-up to: …)"):
        what it asks for ("And under how many settings?" asks for no names, whatever the
        previous question asked)."""
        return self.question.split(FOLLOW_UP_TO, 1)[0]


def standalone(
    question: str, history: History, is_key_term: Callable[[str], bool], limit: int = 2000
) -> Standalone:
    """Resolve a follow-up against the previous turn.

    `is_key_term(token)` says whether a word names something specific in the corpus (a
    rare term such as "GRAPE"); the first such word of the previous question replaces
    "it" / "this method" in the follow-up, or, when the question has none ("Is there a
    method that performs several Bellman updates at once?"), the first of the previous
    answer when it cited a paper ("… iterated Q-Network (i-QN) … [1]": "How is i-QN
    evaluated?"). Without one, the follow-up is read together with the previous question.
    The previous question is cut to `limit` characters (the current one was checked
    against it already): a long earlier turn never makes the short question at hand fail.
    """
    pairs = conversation(history)
    if not pairs or not (is_follow_up(question) or _long_follow_up(question, is_key_term)):
        return Standalone(question, question)
    if not _refers_back(question) and _subject(question_words(question), is_key_term):
        return Standalone(question, question)  # short, and names its own subject: "What is PrivateSeal?"
    previous = " ".join(pairs[-1][0].split())
    if len(pairs) > 1 and (is_follow_up(previous) or _long_follow_up(previous, is_key_term)):
        # The previous turn was a follow-up too ("And how is it evaluated?"): read it as it was
        # read then ("How is i-QN evaluated?"), so a chain of follow-ups keeps its subject.
        earlier = pairs[-1 - FOLLOW_UP_CHAIN : -1]
        previous = standalone(previous, earlier, is_key_term, limit).question
    note = None
    if len(previous) > limit:
        note = (
            f"the previous question has {len(previous):,} characters; only its first {limit:,} "
            "were read with this follow-up"
        )
        previous = previous[:limit].rsplit(" ", 1)[0] or previous[:limit]
    retrieval = f"{previous} {question}"
    subject = _subject(_TOKEN.findall(previous), is_key_term)
    asked_by_name = subject is not None  # the previous question named it, not its answer
    answer = pairs[-1][1]
    if subject is None and _CITED.search(answer):
        # not a sentence's first word: "Market-based agents refer to …" names nothing
        subject = _subject(question_words(_CITED.sub(" ", answer[: 4 * limit])), is_key_term)
        if subject is not None:
            retrieval = f"{retrieval} {subject}"  # the paper the answer was about keeps pulling
    # Only a question that points back ("them", "the method") continues the answer; one that
    # merely opens with "and" / "what about" may change the subject ("What about dueling bandits?").
    cited = answer if _CITED.search(answer) and _FOLLOW_UP.search(question) else ""
    body = _LEADING_AND.sub("", question)
    body = body[:1].upper() + body[1:]
    switch, switch_words = switched_subject(question, previous)
    if switch:
        return Standalone(f"{body}{FOLLOW_UP_TO}{previous})", retrieval, True, note, "", switch, switch_words)
    if subject:
        replaced, n = _replace(_POSSESSIVE, body, f"{subject}'s", asked_by_name)
        if not n:
            replaced, n = _replace(_REFERENCE, body, subject, asked_by_name)
        if n:
            return Standalone(replaced, retrieval, True, note, cited)
    return Standalone(f"{body}{FOLLOW_UP_TO}{previous})", retrieval, True, note, cited)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
CONTINUES = 0.7  # share of a cited answer sentence's content words the top abstract must hold
CONTINUES_MARGIN = 0.25  # ... and by this much more than any other abstract retrieved


def continues(answer: str, abstracts: Sequence[str]) -> bool:
    """Was the previous answer about the first of these abstracts (the top paper now)? One
    of its cited sentences has most of its content words in it (the answers that pass the
    citation check restate their abstracts), clearly more than in any of the others: a
    generic sentence ("… outperforms strong baselines on standard benchmarks [1]") fits many
    abstracts and settles nothing. A follow-up that points back at that answer ("And how
    much does removing them hurt?") is about the same paper, however few words it shares
    with it."""
    if not answer or not abstracts:
        return False
    held = [content_words(a) for a in abstracts]
    for sentence in _SENTENCE_END.split(answer):
        if not _CITED.search(sentence):
            continue
        words = content_words(_CITED.sub(" ", sentence))
        if len(words) < 3:
            continue
        shares = [len(words & h) / len(words) for h in held]
        if shares[0] >= CONTINUES and shares[0] - max(shares[1:], default=0.0) >= CONTINUES_MARGIN:
            return True
    return False
