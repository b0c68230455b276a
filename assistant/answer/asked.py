"""What kind of thing a question asks for, and whether an answer gives one.

A near-miss question asks a paper for a detail its abstract does not give ("Which seven
datasets was MARLA evaluated on?" of an abstract that says only "across seven real-world
datasets"). The model then answers with what the abstract does say ("MARLA was evaluated
on seven real-world datasets [1]"), every sentence of it supported, and the citation
check cannot object. The test here is the general one: the question asks for a kind of
thing — a figure ("what bit accuracy", "by what factor") or names ("which datasets",
"which base LLM") — and the answer states none of that kind. Then the abstracts given do
not say it, and the answer should say so rather than pass off the sentence next to it.

Two kinds are asked for by their head noun, and only when the head is explicit; "what
rate" is not (an asymptotic rate is a formula), nor "which method" or "what baseline" (as
often a description: "a pruning-based method", "exhaustive enumeration"); "which … by
name" asks for names whatever its noun. A third kind, a number, is asked by the question's
own "how many …?" (not "how much", whose answers are as often "a multiplicative
dependence"): "how many iterations does play take to return?" is not answered by "they
return in finite time".

- A figure is given when an answer sentence states a quantity in digits or in words
  (`quantities`) that is not a count of things ("across 54 KGs" gives no rank,
  `counts_things`), or a formula (`$…$`, O(…), Θ(…), a fraction).
- A number is given by any quantity the question does not hold (a count of things too:
  "across 54 KGs"), a formula, a growth order ("polynomially many", unless the question
  asks for it exactly) or "one" before what is counted ("networks with one hidden layer").
- A name is given when an answer sentence has a named term the question does not use and
  a given abstract does: an acronym ("MNIST"), a word with a capital after its first
  letter or a digit in it ("W-Bench", "Qwen2.5-7B", "3DShapes"), or a capitalised word
  inside the sentence ("the Atari 2600 suite").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from assistant.answer.citations import markers
from assistant.answer.evidence import EXACT, asks_how_many, requested_details
from assistant.answer.quantities import Quantity, counts_things, quantities, unstated
from assistant.text import content_words, fold, name_like, question_words

Kind = Literal["figure", "name", "number"]

# Words between "which/what" and the head noun: modifiers, never an article, a
# preposition or a verb ("which layers of an LLM" asks for layers, not an LLM).
_MODIFIERS = (
    r"(?:(?!(?:of|a|an|the|was|is|are|were|do|does|did|kinds?|types?|sorts?|in|on|for|to|that"
    r"|it|its|this|these|they|paper|work|method)\b)[\w-]+\s+){0,3}?"
)
_NAME_HEADS = (
    r"(?:datasets?|benchmarks?|suites?|llms?|language\s+models?|base\s+models?|generators?"
    r"|corpus|corpora|gpus?|hardware|librar(?:y|ies)|simulators?|programming\s+languages?"
    r"|algorithms?|databases?"
    # kinds whose members are proper names ("Which city's demand data …?", "Which ridesharing
    # company supplied …?"), when the noun is the head: not "What hospital readmission rate …?"
    r"|(?:cit(?:y|ies)|countr(?:y|ies)|compan(?:y|ies)|universit(?:y|ies)|institutions?|hospitals?"
    r"|organi[sz]ations?)(?=['’]s\b|\s*[?,]|\s+(?:or|and|did|does|do|was|were|is|are|has|have|had|in|of"
    r"|for|from|that|which|supplied|provided|released|collected)\b))"
)
_FIGURE_HEADS = (
    r"(?:percentage|fraction|factor|accuracy|speed-?up|perplexity|score|error|ratio|gain|margin"
    r"|improvement|reduction|rank|recall|precision|f1|bleu|auc)"
)
_NOT_A_NOUN = (
    r"(?!(?:of|a|an|the|was|is|are|were|do|does|did|in|on|for|to|that|it|its|this|these|they|happens?)\b)"
)
_ASKS_NAMES = re.compile(
    r"\b(?:which|what)\s+" + _MODIFIERS + "(" + _NAME_HEADS + r")\b"
    # "What exactly are the model-zoo datasets used …?", "What were the benchmarks …?"
    r"|\bwhat\s+(?:exactly\s+)?(?:are|were)\s+the\s+" + _MODIFIERS + "(" + _NAME_HEADS + r")\b(?!')"
    # "which baselines, by name": the noun after "which" (not "What are …", "Which of …")
    r"|\b(?:which|what)\s+" + _NOT_A_NOUN + _MODIFIERS + r"([A-Za-z][\w-]*)\b(?=[^?.]*\bby\s+name\b)"
    # "Which specific LLMs …?", "…, which specific baselines …": choosing among named things, as
    # the question's own clause ("find out which specific facts …" asks for none; "what specific
    # mechanism" asks for a description)
    r"|(?:^\W*|[,;:]\s*|\b(?:to|in|on|for|of|by|from|with|against)\s+)which\s+specific\s+"
    + _NOT_A_NOUN
    + r"([A-Za-z][\w-]*)",
    re.IGNORECASE,
)
# "Which algorithm does the paper propose?": the paper's own algorithm, as often described
# ("a greedy algorithm") as named
_OWN_CONTRIBUTION = re.compile(
    r"\b(?:propos|introduc|develop|design|deriv|present|devis)(?:e|es|ed|ing)\b", re.IGNORECASE
)
_ASKS_FIGURE = re.compile(
    r"\bby\s+(?:about\s+)?(?:what|how\s+much\s+of\s+a)\s+(factor|margin|percentage|amount)\b"
    r"|\b(?:what|which)\s+" + _MODIFIERS + "(" + _FIGURE_HEADS + r")\b",
    re.IGNORECASE,
)
_FORMULA = re.compile(r"\$[^$]+\$|\b[OΘΩo]\s*\(|√|\d\s*/\s*\d|\\(?:frac|log|sqrt)")


def asked_kind(question: str) -> Kind | None:
    """The kind of thing the question asks for: a figure or names by its head noun, a number
    by its own "how many …?" (`asks_how_many`); None for any other question."""
    if _ASKS_FIGURE.search(question):
        return "figure"
    m = _ASKS_NAMES.search(question)
    if m is not None and not (
        m.group(1) and m.group(1).lower().startswith("algorithm") and _OWN_CONTRIBUTION.search(question)
    ):
        return "name"
    if asks_how_many(question):
        return "number"
    return None


def asked_head(question: str) -> str | None:
    """The noun that says what kind of thing the question asks for ("LLMs" in "Which LLMs
    …?", "AUC" in "What AUC …?"): a word of the question that names no paper's subject."""
    for pattern in (_ASKS_FIGURE, _ASKS_NAMES):
        m = pattern.search(question)
        if m is not None:
            return next(g for g in m.groups() if g)
    return None


def gives(kind: Kind, sentence: str, question: str, sources: str) -> bool:
    """Does an answer sentence give a thing of this kind? (A name must be one the given
    abstracts use, `sources`, and not one the question already holds.)"""
    if kind == "figure":
        return bool(measures(sentence)) or bool(_FORMULA.search(sentence))
    if kind == "number":
        return counts(sentence, question, quantities(question))
    return bool(named_terms(sentence, question, sources))


def states_kind(kind: Kind, sentence: str, asks: str, held: list[Quantity]) -> bool:
    """Does an abstract's sentence give what a question asks for: a figure other than a
    year, not a count of things and not one the question holds (`held`); a name of the kind
    asked (`names_a_kind`)?"""
    if kind == "name":
        return bool(names_a_kind(sentence, asks))
    if kind == "number":
        return counts(sentence, asks, held)
    return any(not q.year for q in unstated(measures(sentence), held))


# "one" before the thing counted answers "how many hidden layers?" ("networks with one hidden
# layer"); "on the one hand", "one of", a sentence's "One key insight" do not.
_ONE = re.compile(
    r"(?<!\bthe\s)\b(?:(?<!^)one|a\s+single)\s+"
    r"(?!(?:of|or|and|to|another|hand|can|could|may|might|must|should|would|will|is|has)\b)"
    r"((?:[\w-]+\s+){0,2}[\w-]+)",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(r"\bhow\s+many\s+((?:[\w-]+\s+){0,1}[\w-]+)", re.IGNORECASE)
# a growth order that counts: "polynomially many", "a linear number of", "polynomial in the size
# of the game" (not "piecewise-linear functions")
_ORDER = re.compile(
    r"(?<![\w-])(?:polynomial|(?:sub|super)?linear|logarithmic|exponential|quadratic|constant)(?:ly|ally)?"
    r"\s+(?:many|number\b|in\s+the\s+(?:size|number)\b)",
    re.IGNORECASE,
)


def giving_asked(asks: str, question: str) -> Callable[[str], bool] | None:
    """A test of whether an abstract's sentence gives what a question asks for, when it asks
    for a figure, names or a number (`asked_kind`, on its own words `asks`: "how many
    hidden layers", `counts`) or for another amount ("how much faster": the "a number"
    detail, so not "learns how much each weight matters": any quantity the question does
    not hold, a count of things too, not a year); None for any other question."""
    held = quantities(question)
    kind = asked_kind(asks)
    if kind is not None:
        return lambda sentence: states_kind(kind, sentence, asks, held)
    if not any(d.name == "a number" for d in requested_details(asks)):
        return None
    return lambda sentence: any(not q.year for q in unstated(quantities(sentence), held))


def counts(sentence: str, asks: str, held: list[Quantity]) -> bool:
    """Does a sentence answer "how many …?" (`asks`): a quantity the question does not hold
    (`held`), a count of things too, not a year; a formula ("$O((N/M)^2)$", "$2^d$"); a
    growth order ("polynomially many", unless the question asks for it exactly); or "one"
    before what "how many" counts ("networks with one hidden layer")?"""
    if any(not q.year for q in unstated(quantities(sentence), held)) or _FORMULA.search(sentence):
        return True
    if _ORDER.search(sentence) and not EXACT.search(asks):
        return True
    counted = _HOW_MANY.search(asks)
    heads = content_words(counted.group(1)) if counted else set()
    return any(content_words(m.group(1)) & heads for m in _ONE.finditer(sentence.strip()))


def measures(sentence: str) -> list[Quantity]:
    """The sentence's quantities that measure something: not a count of things ("across 54
    KGs" gives no accuracy, rank or percentage; `counts_things`)."""
    return [q for q in quantities(sentence) if not counts_things(sentence, q)]


def named_terms(sentence: str, question: str, sources: str) -> list[str]:
    """The sentence's named terms (`name_like`, capitalised words included, not a word that
    opens the sentence) that the question does not use and the sources do."""
    asked = {fold(w) for w in re.findall(r"[\w.\-]+", question)}
    asked |= {part for w in asked for part in re.split(r"[-.]", w) if part}
    folded = fold(sources)
    found = []
    for word in question_words(markers(sentence)[1]):
        if not any(c.isalpha() for c in word) or not name_like(word, capitalised=True):
            continue
        key = fold(word)
        if key in asked or all(p in asked for p in re.split(r"[-.]", key) if p):
            continue
        if key in folded:
            found.append(word)
    return found


NEAR_HEAD = 4  # words between a name and the noun that says what it names ("W-Bench benchmark")
_PROPER_HEAD = re.compile(r"(cit|countr|compan|universit)(?:y|ies)|(institution|hospital|organi[sz]ation)s?")


def _bare(word: str) -> str:
    """A word without the punctuation around it, case-folded."""
    return word.strip(".,;:()[]$").casefold()


def names_a_kind(sentence: str, question: str) -> list[str]:
    """An abstract sentence's named terms, not the question's, within `NEAR_HEAD` words of
    the noun the question asks names of ("experiments on the W-Bench benchmark" for
    "which benchmark"; not "an ERM-trained model" for "which datasets")."""
    asked = _ASKS_NAMES.search(question)
    if asked is None:
        return []
    head = next(g for g in asked.groups() if g)
    words = sentence.split()
    last = head.split()[-1].casefold()
    proper = _PROPER_HEAD.fullmatch(last)
    if proper:  # "city" and "cities", never "citation"; "company", never "compare"
        stem = next(g for g in proper.groups() if g)
        heads = [
            i for i, w in enumerate(words) if _PROPER_HEAD.fullmatch(_bare(w)) and _bare(w).startswith(stem)
        ]
    else:
        stem = last.rstrip("s")[:4]  # "datasets" → "data", "LLMs" → "llm"
        heads = [i for i, w in enumerate(words) if _bare(w).startswith(stem)]
    found = []
    for term in named_terms(sentence, question, sentence):
        at = [i for i, w in enumerate(words) if term in w]
        if any(abs(i - h) <= NEAR_HEAD for i in at for h in heads):
            found.append(term)
    return found
