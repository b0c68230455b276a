"""What the retrieved abstracts can support: scored sentences, the details they report,
and the evidence verdict that `plan` acts on before any model runs:

- the question must be on topic: a hit close in meaning (dense cosine), a sentence
  close to the question, or a rare corpus term in common with the top paper;
- a question that asks for a specific kind of detail (a learning rate, a speed-up,
  an accuracy on a named benchmark, a regret bound, the code, the hardware...) is
  answerable only if the closest abstract reports that kind of detail;
- sentences that `injection` reads as addressed to AI tools are data, never evidence:
  they are left out of everything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assistant.answer.injection import evidence_of
from assistant.answer.quantities import quantities
from assistant.index.embed import Embedder
from assistant.text import RESEMBLES, fold, name_like, question_words
from assistant.types import Hit

# --- instruction-like sentences: assistant.answer.injection -------------------------------


def evidence_sentences(abstract: str) -> list[str]:
    """The abstract's sentences that may serve as evidence (text addressed to AI tools,
    however spelled, left out: see assistant.answer.injection)."""
    return evidence_of(abstract)


# --- scoring ------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoredSentence:
    hit: Hit
    text: str
    score: float
    position: int  # index of the sentence in its abstract


def score_sentences(question: str, hits: Sequence[Hit], embedder: Embedder) -> list[ScoredSentence]:
    """Every evidence sentence of the hits' abstracts, scored by cosine with the question."""
    pairs = [(hit, i, s) for hit in hits for i, s in enumerate(evidence_sentences(hit.paper.abstract))]
    if not pairs:
        return []
    q = embedder.encode_one(question)
    vectors = embedder.encode_cached([s for _, _, s in pairs])
    sims = vectors @ q
    return [ScoredSentence(h, s, float(x), i) for (h, i, s), x in zip(pairs, sims)]


def best_per_hit(
    scored: Sequence[ScoredSentence], hits: Sequence[Hit], n: int
) -> tuple[tuple[str, ...], ...]:
    """Each hit's n best sentences, in the abstract's order."""
    return tuple(tuple(s.text for s in best_of(scored, hit, n)) for hit in hits)


def best_of(scored: Sequence[ScoredSentence], hit: Hit, n: int) -> list[ScoredSentence]:
    """One hit's n best-scored sentences, in the abstract's order."""
    mine = sorted((s for s in scored if s.hit is hit), key=lambda s: -s.score)[:n]
    return sorted(mine, key=lambda s: s.position)


# --- details a question may ask for -------------------------------------------------


@dataclass(frozen=True)
class Detail:
    """A kind of detail: how a question asks for it, how an abstract reports it."""

    name: str  # "a learning rate"
    asked: re.Pattern[str]
    reported: re.Pattern[str]
    needs_number: bool = False
    # a question that matches this speaks of the detail without asking for it
    not_when: re.Pattern[str] | None = None


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_NUMBER = _re(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twice|half|dozen|hundreds?|thousands?"
    r"|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\b"  # "the third most influential"
)
# An order of growth answers "how many" as well as a figure does ("a polynomial number of
# samples" for "how many queries, in terms of growth order?").
_ORDER = _re(
    r"\b(?:polynomial(?:ly)?|(?:sub|super)?linear(?:ly)?|logarithmic(?:ally)?|exponential(?:ly)?"
    r"|quadratic(?:ally)?|constant number)\b"
)
# "exactly", "explicit", "precise": a question that wants the value itself, not its order
EXACT = _re(r"\bexact(?:ly)?\b|\bexplicit(?:ly)?\b|\bprecise(?:ly)?\b")
_MATH = r"\$|\\tilde|\\mathcal|\bO\(|Θ\(|Ω\(|√|\^|\bsqrt|\blog\s*\(|\bexp\s*\(|\d\s*/\s*\d|=|≤|≥"
DETAILS: tuple[Detail, ...] = (
    Detail(
        "a learning rate",
        _re(r"learning[- ]rates?|step[- ]?sizes?"),  # "Polyak stepsizes": one word too
        _re(r"learning[- ]rates?|step[- ]?sizes?"),
        # "which gradual ramp-up of the step size does it make unnecessary?" asks for a
        # warm-up, which an abstract states without naming a learning rate
        not_when=_re(r"\bwarm-?ups?\b|\bramp(?:s|ing|ed)?\b|\bramp-?ups?\b"),
    ),
    Detail("a batch size", _re(r"batch[- ]sizes?"), _re(r"batch[- ]sizes?")),
    Detail(
        "hyperparameter settings",
        _re(
            r"hyper-?parameters?|weight decay|dropout rate|how many epochs|number of epochs"
            r"|privacy budget|\bepsilon\b|\bε\b|noise (?:scale|level|multiplier)|regulari[sz]ation (?:strength|coefficient|weight)"
            r"|(?:value|setting) of (?:the )?[\w -]{0,30}parameter|temperature (?:value|setting)"
        ),
        _re(
            r"hyper-?parameters?|weight decay|dropout|epochs?|\badam\b|\bsgd\b|privacy budget|\bepsilon\s*=|ε\s*=|=\s*\d"
        ),
        needs_number=True,
    ),
    Detail(  # a name, not a setting: "LARS and LAMB" answers "which optimizer"
        "the optimizer used",
        _re(r"(?:which|what) optimi[sz]ers?"),
        _re(
            r"optimi[sz]ers?\b|\b(?:adam\w*|sgd|lars|lamb|lion|adagrad|adadelta|rmsprop|adafactor|shampoo|sophia|muon)\b"
            r"|gradient descent|momentum"
        ),
    ),
    Detail(
        "the hardware used",
        _re(r"\b(?:gpus?|tpus?|cpus?|hardware|accelerators?|a100s?|h100s?|v100s?|compute cluster)\b"),
        _re(r"\b(?:gpus?|tpus?|cpus?|hardware|accelerators?|a100|h100|v100|cluster)\b"),
    ),
    Detail(
        "a wall-clock time",
        _re(
            r"wall[- ]?clock|how long (?:does|did|do|will)|training time|(?<!\bat )run[- ]?time|how many (?:hours|seconds|minutes|days)"
            r"|inference time|latency"  # "called at run time" says when, it asks for no time
        ),
        _re(r"wall[- ]?clock|\b(?:seconds?|hours?|minutes?|days?|ms)\b|run[- ]?time|latency|time per"),
    ),
    Detail(
        "a speed-up figure",
        _re(r"speed-?ups?|how (?:much|many times) faster|times faster"),
        _re(
            r"speed-?ups?|faster|accelerat(?:es|ed|ing|ion)\b(?!\s+gradient)|\d\s*(?:x|×)|times (?:fewer|less|more|faster)"
        ),
        needs_number=True,
    ),
    Detail(
        "memory use",
        _re(
            r"\bmemory (?:use|usage|footprint|consumption|cost|savings?|requirements?)|how much memory|gpu memory|\bvram\b|gigabytes?|\bin gb\b|\bgb\b"
        ),
        _re(r"memory|\bgb\b|gigabytes?|megabytes?|\bmb\b"),
        needs_number=True,
    ),
    Detail(
        "the code or its availability",
        _re(
            r"\bcode\b|github|repositor(?:y|ies)|open[- ]sourced?|source code|implementation (?:available|released)"
        ),
        _re(r"\bcode\b|github|repositor|available at|https?://|open[- ]source|released"),
    ),
    Detail(
        "the authors' affiliations",
        _re(
            r"affiliat|which (?:university|universities|institution|lab|company)|what (?:university|institution|lab|company)|where (?:do|did) the authors work"
        ),
        _re(r"universit|institut|laborator|affiliat|\binc\b|corporation"),
    ),
    Detail(
        "funding",
        _re(r"\bfund(?:ed|ing)\b|\bgrants?\b|sponsor"),
        _re(r"\bfund(?:ed|ing)\b|\bgrants?\b|sponsor"),
    ),
    Detail("a licence", _re(r"\blicen[cs]e"), _re(r"\blicen[cs]e")),
    Detail(
        "which model was used",
        _re(
            # No determiner between: "what a fine-tuned language model memorised" is not a question
            # about which model.
            r"\b(?:which|what)\s+(?:of\s+the\s+)?(?:(?!(?:a|an|the|this|that|its|their)\b)[\w-]+\s+){0,3}?"
            r"(?:llms?|(?:large\s+)?language\s+models?"
            r"|base\s+models?|backbones?|foundation\s+models?|pre-?trained\s+models?)\b"
        ),
        re.compile(
            r"(?i:\b(?:gpt|llama|qwen|mistral|mixtral|claude|gemini|gemma|deepseek|bert|roberta|deberta|t5"
            r"|vit|resnet|clip|dinov?2?|stable\s+diffusion|dall-?e|pythia|falcon|vicuna|olmo|palm|bloom|whisper"
            r"|phi-\d|opt-\d)\b)|\b[A-Z][A-Za-z]*-\d[\w.-]*"
        ),
    ),
    Detail(
        "the datasets used",
        _re(
            r"(?:which|what) (?:[\w-]+ ){0,2}(?:datasets?|data sets?|corpora|corpus)|datasets? (?:did|do|does|was|were)"
            r"|(?:trained|evaluated|tested|run) on which"
        ),
        # or a dataset known by its name alone ("We validate the theory on … CIFAR-10.")
        _re(
            r"\bdatasets?\b|\bdata sets?\b|\bcorp(?:us|ora)\b|\bbenchmarks?\b"
            r"|\b(?:cifar|imagenet|mnist|svhn|celeba|lsun|cityscapes|ade20k|kitti|shapenet|scannet"
            r"|wikitext|penn treebank|superglue|mmlu|gsm8k|humaneval|mbpp|hellaswag|truthfulqa"
            r"|big-?bench|atari|mujoco|d4rl|procgen|ogb|citeseer|pubmed|qm9|librispeech|laion|flickr30k"
            r"|(?-i:GLUE|COCO|SQuAD|Cora))"  # as written: not "glue solvers together", "cora"
            r"(?:-?\d+[a-z]*)?\b"  # CIFAR-10, ImageNet-1k; not "coral"
        ),
    ),
    Detail(
        "an accuracy or score figure",
        _re(
            r"\b(?:accuracy|f1|bleu|rouge|perplexity|auc|auroc|recall|precision|top-?1|top-?5|error rate|success rate"
            r"|win rate|mse|rmse|ndcg|exact match"
            # a score function, score-based or score matching model is no score figure
            r"|scores?(?![- ](?:functions?|based|matching|networks?|models?|estimat\w*)))\b"
        ),
        _re(
            r"accura|\bf1\b|bleu|rouge|perplexity|\bauc|recall|precision|top-?[15]|error|success|win rate|mse|ndcg"
            r"|exact match|score|improv|outperform|gain"
        ),
        needs_number=True,
    ),
    Detail(
        "an explicit formula",
        _re(
            r"\b(?:explicit|exact|closed[- ]form|precise)\s+(?:\w+\s+){0,2}(?:formula|expression|bound|rate|complexity|value|constant|form)"
            r"|\bwhat formula\b"
        ),
        _re(_MATH),
    ),
    Detail(
        "a stated bound or rate",
        _re(
            r"(?:regret|error|generali[sz]ation|sample[- ]complexity|approximation|convergence|complexity|runtime|query)[- ](?:bounds?|rates?|guarantees?)"
            r"|sample complexity|convergence rate|(?:upper|lower) bound|\bbound on\b|\bwhat bound\b|how (?:fast|quickly) does .* converge"
        ),
        _re(_MATH + r"|\brate of\b|\bpolynomial(?:ly)?\b|\blinear(?:ly)?\b|logarithmic|exponential(?:ly)?"),
    ),
    Detail(
        "a number",
        _re(
            r"\bhow many\b|\bhow much\b|\bwhat (?:percentage|proportion|fraction|number)\b|\bby how much\b"
            r"|\bexact (?:number|value|figure)\b|\bhow large\b(?!\s+language)|\bhow big\b|\b(?:what|which) values?\b"
        ),
        _re(r"."),
        needs_number=True,
    ),
)

_QUESTION_WORD = re.compile(
    r"\b(?:what|which|how|where|who|whose|is|are|does|do|did|was|were|give|list|name|report)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[,;:.!?]|\band\b|\bbut\b", re.IGNORECASE)


def requested_details(question: str, details: Sequence[Detail] | None = None) -> list[Detail]:
    """The kinds of detail a question asks for (none for most questions). A detail is
    asked for only inside a question clause: "what bit accuracy does it reach?" asks for
    an accuracy, "improving worst-group accuracy without subgroup labels" does not."""
    if not (question.rstrip().endswith("?") or _QUESTION_WORD.match(question.strip())):
        return []
    out = []
    for detail in DETAILS if details is None else details:
        if detail.not_when is not None and detail.not_when.search(question):
            continue
        for m in detail.asked.finditer(question):
            clause = _CLAUSE_END.split(question[max(0, m.start() - 80) : m.start()])[-1]
            near = " ".join(clause.split()[-5:])  # the question word governs the detail
            if _embedded(question, m) or _COMPOUND.match(question, m.end()):
                continue
            if _QUESTION_WORD.search(near) or _QUESTION_WORD.match(m.group(0)):
                out.append(detail)
                break
    return out


# A detail's word that begins a compound modifier names no detail asked for: "what state can
# accuracy-seeking goals push a population into?" asks for a state ("F1-score" is no modifier).
_COMPOUND = re.compile(
    r"-(?:[a-z]{3,}ing|based|oriented|aware|centric|focused|driven|agnostic|free|sensitive|optimal"
    r"|guided|weighted|constrained|tuned|calibrated|related)\b",
    re.IGNORECASE,
)


# Words after which "how many" / "how much" still asks ("On how many datasets …", "… and by
# how much?"); after any other word it is the object of a verb ("what is used to estimate how
# much each block adds?", "learns how much each weight matters"): an embedded clause, which
# asks for nothing.
_ASKING_BEFORE = frozenset(
    "and but or by on in across for to of with at from over under within after between among than"
    " roughly approximately about exactly precisely just".split()
)
_HOW = re.compile(r"\bhow\s+(?:many|much)\b", re.IGNORECASE)


def _embedded(question: str, m: re.Match[str]) -> bool:
    """Is this "how many/much" match the object of a verb rather than the question's own?"""
    how = _HOW.match(question, m.start())
    if how is None:
        return False
    before = question[: m.start()].rstrip()
    if not before or before[-1] in ",;:?!.(\"'“":
        return False
    word = re.findall(r"[\w'-]+", before)[-1].lower()
    return word not in _ASKING_BEFORE


def asks_how_many(question: str) -> bool:
    """Does the question itself ask "how many …?" ("On how many datasets …?"; not "… gauged
    how many steps ahead they plan", whose "how many" is the object of a verb)?"""
    if not any(d.name == "a number" for d in requested_details(question)):
        return False
    return any(
        m.group(0).lower().endswith("many") and not _embedded(question, m) for m in _HOW.finditer(question)
    )


def detail_reported(question: str, detail: Detail, abstract: str) -> bool:
    """Does this abstract report the kind of detail the question asks for? Either a sentence
    reports that kind of thing, or a sentence names the very thing asked ("word error rate")
    and states a quantity for it ("from 12.4% to 9.8%")."""
    asked = [fold(m.group(0)) for m in detail.asked.finditer(question)]
    # "exactly how many, as an explicit polynomial" is not answered by "polynomially many"
    order = not EXACT.search(question)
    for sentence in evidence_sentences(abstract):
        if any(a in fold(sentence) for a in asked) and _states_a_value(sentence):
            return True
        if not detail.reported.search(sentence):
            continue
        if detail.needs_number and not (
            _NUMBER.search(sentence) or re.search(_MATH, sentence) or (order and _ORDER.search(sentence))
        ):
            continue
        return True
    return False


def _states_a_value(sentence: str) -> bool:
    """A quantity that is not a year."""
    return any(not q.year for q in quantities(sentence))


# "How do their findings compare with Direct Preference Optimization?": what a comparison is
# with, when it is a name (capitalised words)
_COMPARED_WITH = re.compile(
    r"\b(?i:compar(?:e|es|ed|ing|isons?))\b(?:\s+[\w-]+){0,2}?\s+(?i:with|to|against)\s+(?:the\s+)?"
    r"([A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,5})"
)


def unmentioned_comparison(question: str, text: str) -> str | None:
    """The name a question asks a comparison with ("Direct Preference Optimization"), when
    the text (the top papers' titles, abstracts and listings) mentions neither it nor its
    initials ("DPO"): no abstract can say how the paper compares with it. At most two words
    stand between "compare" and "with / to / against" ("… compare to baselines when applied
    to ImageNet?" compares with no name). One capitalised word counts only when it is
    name-like ("DQN", "RoPE"), not a plain word's capital ("Adam"), nor a likeness ("GPT-style
    models", `RESEMBLES`)."""
    m = _COMPARED_WITH.search(question)
    if m is None:
        return None
    name = m.group(1)
    words = name.split()
    if (len(words) == 1 and not name_like(name, capitalised=False)) or RESEMBLES.search(words[-1]):
        return None
    joined = re.sub(r"\s+", "", fold(text))  # "CIFAR-10" is "CIFAR10"; `fold` makes "-" a space
    key = re.sub(r"\s+", "", fold(name))
    if key in joined or key.rstrip("s") in joined:  # "GNNs" is "GNN"
        return None
    initials = "".join(w[0] for w in words)
    if len(words) > 1 and re.search(rf"\b{initials}\b", text):
        return None
    return name


def missing_names(question: str, text: str) -> list[str]:
    """Names in the question (benchmarks, datasets, models: 'ImageNet', '3DMatch', 'Adult')
    that the text (the top abstracts) never mentions; not a likeness ("GPT-style",
    `RESEMBLES`)."""
    folded = fold(text)
    joined = re.sub(r"[\s-]+", "", folded)  # "CIFAR-10" is "CIFAR10"
    out = []
    for word in question_words(question):
        if len(word) < 3 or not any(c.isalpha() for c in word):
            continue
        if (
            not name_like(word, capitalised=True)
            or _LETTER_PREFIXED.fullmatch(word)
            or RESEMBLES.search(word)
        ):
            continue
        key = fold(word)
        if key in folded or key.rstrip("s") in folded or re.sub(r"-", "", key) in joined:
            continue
        out.append(word)
    return out


# A term of art with a one-letter prefix ("Q-networks", "Q-function-style", "k-means"): a
# description, not a name an abstract must spell the same way.
_LETTER_PREFIXED = re.compile(r"[A-Za-z]-[a-z][a-z-]*")


# --- the decision -----------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether the evidence supports an answer, and if not, why (naming the closest paper)."""

    answerable: bool
    reason: str | None = None
    dense: float = -1.0
    sentence: float = -1.0
    missing: str | None = None  # the kind of detail the closest abstract does not report
    names_closest: bool = False  # the reason already names the closest paper
    score: float = 0.0  # the evidence score (see `plan.evidence_score`)
    strong: bool = False  # strong enough to overrule a model that finds no answer
    continues: bool = False  # a follow-up on the paper the previous answer was about


def best_dense(hits: Sequence[Hit]) -> float:
    scores = [h.dense_score for h in hits if h.dense_score is not None]
    return float(np.max(scores)) if scores else -1.0
