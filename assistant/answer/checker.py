"""The citation check: every [n] must name a given source that supports its sentence.

Each answer sentence is compared (bundled embedder, cosine) with every sentence
of every given abstract (instruction-like sentences excluded: they are data, not
evidence). A sentence counts as supported only if it is close enough in meaning
AND shares a content word with its evidence sentence: "PWNED [1]." shares none.
A supported sentence keeps its citation; one better supported by another source
is re-cited to it; one that no source supports is marked unsupported. A supported
sentence that is much closer to the question than to its evidence only restates the
question ("Yes, there is a paper on X [1].") and tells the reader nothing: it is
replaced by the cited abstract's own sentence closest to the question. One that hands
the question's own description to a paper whose abstract never uses those words
("NAMEx keeps experts evenly busy without an extra loss term [1]." when NAMEx's abstract
says nothing of the kind) is replaced by the abstract sentence it was matched with: a
cosine against the abstract cannot see that the claim came from the question, but the
words show it. A sentence that
states a quantity ("12.4%", "two", "3×") is supported only by a source that states it
too (its evidence sentences, title, year or venue): a cosine cannot tell 12% from 21%. The
converse holds too: a sentence that adds figures (in digits) the question does not hold is
anchored by a sentence of an abstract it cites that states all its figures (a percentage by a
percentage), with a word in common next to them, and is not far off in meaning ("RAM was
evaluated on 12 benchmarks" against "Extensive experiments on $12$ benchmarks …"): it is
supported by that sentence however the model described the paper, since a cosine is
dominated by the question's paraphrase the model repeats and misses the figure it adds. An
anchored sentence is an answer, not a restatement of the question; if its borrowed words
get it replaced, the anchoring sentence is shown. A sentence no source supports because it
restates the question around its answer ("The authors obtain poly-logarithmic running time
for … [1]") is shown as the cited abstract's sentence that states what it adds to the
question (its content words, and every figure and name it adds). An unsupported sentence that states figures
no source states is recorded (`Checker.unstated`), with the sources' sentence that states a
figure of that kind if any: an answer made only of such sentences, with none, is refused by
the answerer (the abstracts do not give the figure asked for). A sentence that gives a
figure for a name the question asks about ("an MSE of 0.014 on the World Values Survey")
is not supported by an abstract that states that figure only in sentences without that
name, nor just after one that names it ("Across 14 American Trends Panel waves … 0.014");
it is recorded (`Checker.misbound`), and on strong evidence an answer made only of
unsupported sentences with such a one is refused, quoting the sentence the figure belongs
to, unless the abstract states some figure with that name. Citation
numbers are renumbered in order of first use, so the answer's citations are
exactly the numbers in its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from assistant.answer.asked import Kind, asked_kind, gives, measures, named_terms, states_kind
from assistant.answer.citations import SLOT, Numbering, cite, markers, noun_markers
from assistant.answer.evidence import evidence_sentences
from assistant.answer.negation import denied
from assistant.answer.quantities import Quantity, around, in_formula, quantities, unstated, words_after
from assistant.answer.respectively import bindings, names
from assistant.index.embed import Embedder
from assistant.text import CONTENT_WORD, content_words, fold, name_like
from assistant.types import Citation, Hit, SentenceSupport

FIGURE_WINDOW = 3  # words either side of a figure that say what it measures
QUALIFIER_WINDOW = 6  # words after a figure that say where it holds ("0.014 on the World Values Survey")
WRAPPED_WINDOW = 6  # the same for an answer wrapped in the question's words (`_states_added`)

# "described in (1) [1]": the model's own way of citing, written next to ours; the
# parenthesised number goes (an enumeration's "(1)" is kept: no matching marker follows).
_ECHOED_NUMBER = re.compile(r"\((\d+)\)\s*(?=\[\1\])")
# "described in (1)." alone: the model's own citation, read as ours when a source has that number.
_PAREN_CITATION = re.compile(r"\b(in|by|see|from)\s+\((\d+)\)", re.IGNORECASE)
# "… studied in Porteus [1975]": a year in brackets is a reference the abstract makes, not a
# citation of a source (nor one to count as removed); it is dropped, as it is when scoring
# a claim this close to one of its abstract's sentences restates it: never "denied" (`_denial`)
DENIAL_BELOW = 0.8
_BRACKET_YEAR = re.compile(r"\s*\[(?:1[89]|20)\d\d[a-z]?\]")


@dataclass
class Checker:
    """Checks one answer's sentences against the sources it was given (numbered 1..len)."""

    sources: list[Hit]
    embedder: Embedder
    threshold: float
    margin: float
    question: str | None = None  # set: sentences that only restate it are replaced
    # this turn's own words (`Standalone.own`), whose head noun says what is asked; default: question
    asks: str | None = None
    echo_margin: float = 0.3
    borrowed_words: int = 2  # a sentence taking this many question words its source lacks is replaced
    cite_margin: float = 0.1  # of several cited sources, keep those within this of the best support
    # a sentence citing only papers not cited before, this much further from the question than
    # the first cited sentence, is left out (a one-paper answer's aside; 1.0 or more: never)
    aside_margin: float = 1.0
    # the answer is about one paper (not a comparison): a sentence that only restates the
    # question is cited to the paper ranked first, and asides are left out
    one_paper: bool = False
    _vectors: list[np.ndarray] = field(default_factory=list)
    _sentences: list[list[str]] = field(default_factory=list)
    numbering: Numbering = field(default_factory=Numbering)  # the answer's numbers, in order of use
    results: list[SentenceSupport] = field(default_factory=list)
    removed: int = 0
    recited: int = 0
    restated: int = 0
    wrapped: int = 0  # unsupported sentences that wrapped their answer in the question's words
    borrowed: int = 0
    asides: int = 0  # sentences left out as asides about another paper
    denials: int = 0  # sentences asserting what their abstract denies, replaced by its sentence
    # unsupported sentences that state figures no source states
    unstated: list[Unstated] = field(default_factory=list)
    # unsupported sentences that give a figure for a name the question asks about, which the
    # abstract states only for something else
    misbound: list[Misbound] = field(default_factory=list)
    other_case: list[OtherCase] = field(default_factory=list)  # supported, about the opposite case
    _first_closeness: float | None = None  # the first cited sentence's cosine to the question
    _first_source: int = 0  # the source (1-based, in ranking order) it cites first
    _folded: dict[int, str] = field(default_factory=dict)
    _question: np.ndarray | None = None
    _question_words: set[str] = field(default_factory=set)
    _quantities: list[list[Quantity]] = field(default_factory=list)
    _sentence_quantities: dict[int, list[list[Quantity]]] = field(default_factory=dict)
    _question_quantities: list[Quantity] = field(default_factory=list)
    _asked: Kind | None = None  # what the question asks for by its head noun (`asked_kind`)
    _acronyms: list[dict[str, set[str]]] = field(default_factory=list)  # per source (`acronyms`)

    def __post_init__(self) -> None:
        self._sentences = [evidence_sentences(h.paper.abstract) for h in self.sources]
        self._acronyms = [acronyms(h.paper.abstract) for h in self.sources]
        flat = [s for group in self._sentences for s in group]
        vectors = self.embedder.encode_cached(flat) if flat else np.zeros((0, 1), dtype=np.float32)
        start = 0
        for group in self._sentences:
            self._vectors.append(vectors[start : start + len(group)])
            start += len(group)
        if self.question:
            self._question = self.embedder.encode_one(self.question)
            self._question_words = {w[:4] for w in content_words(self.question)}
            self._question_quantities = quantities(self.question)
            self._asked = asked_kind(self.asks or self.question)
        self._quantities = [
            quantities(" ".join([*group, h.paper.title or "", str(h.paper.year or ""), h.paper.venue or ""]))
            for h, group in zip(self.sources, self._sentences, strict=True)
        ]

    def check(self, raw_sentence: str) -> str:
        """The sentence with checked, renumbered citations (markers before the final stop)."""
        raw_sentence = _BRACKET_YEAR.sub("", raw_sentence)
        raw_sentence = _PAREN_CITATION.sub(self._as_marker, _ECHOED_NUMBER.sub("", raw_sentence))
        given, body = markers(raw_sentence)
        if not body:
            return ""
        template, nouns = noun_markers(raw_sentence)
        if nouns:  # scored without the slots; shown with them, renumbered
            _, template = markers(template)
            body = " ".join(SLOT.sub("", template).split())
        valid = [n for n in dict.fromkeys(given) if 1 <= n <= len(self.sources)]
        self.removed += len(given) - len(valid)
        vector = self.embedder.encode_one(body)
        words = content_words(body)
        stated = quantities(body)
        missing = [unstated(stated, q) for q in self._quantities]
        # figures in digits the answer adds to the question ("two" is too common in prose to count)
        new = [q for q in unstated(stated, self._question_quantities) if q.in_digits]
        figures = [q for q in new if not in_formula(body, q)]  # a formula's exponents have no role
        misbound = [self._misbound(i, figures, body) for i in range(len(self.sources))]
        support = [
            float(np.max(v @ vector))
            if len(v)
            and self._shares_words(i, words)
            and not missing[i]
            and misbound[i] is None
            and self._in_role(i, figures, body, v @ vector)
            and self._denial(i, body, v @ vector) is None
            else -1.0
            for i, v in enumerate(self._vectors)
        ]
        anchors = [  # only a cited source can anchor: a figure never moves a claim to another paper
            self._anchor(i, stated, body, vector) if new and not m and i + 1 in valid and not b else None
            for i, (m, b) in enumerate(zip(missing, misbound, strict=True))
        ]
        if self._asked == "name":  # the names asked for, copied from a cited abstract
            anchors = [
                self._name_anchor(i, body, vector) if a is None and not m and i + 1 in valid else a
                for i, (a, m) in enumerate(zip(anchors, missing, strict=True))
            ]
        support = [v if a is None else max(v, self.threshold) for v, a in zip(support, anchors, strict=True)]
        best = int(np.argmax(support)) if support else -1
        kept = [n for n in valid if support[n - 1] >= self.threshold]
        if len(kept) > 1 and not nouns:  # one claim, several papers: only those that support it
            top = max(support[n - 1] for n in kept)
            kept = [n for n in kept if support[n - 1] >= top - self.cite_margin]
        note = None
        recited = False
        if self.one_paper and self._echo(vector, support, anchors):
            # Only the question's words, no finding of its own: which paper matches them best
            # is noise, so it is about the paper retrieval ranks first, and is shown as that
            # paper's sentence closest to the question (below)
            if valid and 1 not in valid:
                self.recited += 1
                recited = True
            kept = [1]
        elif (
            best >= 0
            and support[best] >= self.threshold
            and (not kept or support[best] > max(support[n - 1] for n in kept) + self.margin)
        ):
            if valid and (best + 1) not in kept:
                self.recited += 1
                recited = True
                note = f"re-cited from {valid} to [{best + 1}]"
            elif not valid:
                note = f"citation [{best + 1}] added"
            kept = [best + 1]
        stated_by = None  # an unsupported claim's answer, as a cited abstract states it
        if not kept and not nouns:
            # an uncited answer ("… is Porteus.") is looked for in every source, in order
            looked_in = valid or list(range(1, len(self.sources) + 1))
            looked_in = [n for n in looked_in if misbound[n - 1] is None]
            stated_by, kept = self._stated_by_cited(looked_in, body, vector)
        denial = None  # the abstract's sentence that denies what the claim asserts
        if not kept and not nouns:
            shown = {r.text for r in self.results}
            for n in valid or range(1, len(self.sources) + 1):
                if missing[n - 1] or misbound[n - 1] is not None:
                    continue  # a figure it does not state, or states for something else: that note stands
                found = self._denial(n - 1, body, self._vectors[n - 1] @ vector)
                if found is not None and found not in shown:
                    denial, kept = found, [n]  # answered the other way, by the abstract's own sentence
                    break
        supported = bool(kept)
        if not supported:
            kept = []
            note = "no given abstract supports this sentence" + (
                f" (the model cited {valid})" if valid else ""
            )
            wrong = next((b for n in (valid or [best + 1]) if n > 0 and (b := misbound[n - 1])), None)
            if wrong is not None:
                note += f"; the abstract gives {wrong.figure} for something other than {wrong.name}"
                self.misbound.append(wrong)
            nowhere = [q for q in stated if all(q in m for m in missing)]
            if nowhere and self.sources:
                note += f"; no given abstract states {', '.join(dict.fromkeys(q.text for q in nowhere))}"
                added = unstated(nowhere, self._question_quantities)  # not a figure the question holds
                if added:
                    closest = self._closest_to(vector)
                    like = self._a_figure_like(added, body, closest)
                    self.unstated.append(Unstated(body, tuple(q.text for q in added), closest, like))
        score = max((support[n - 1] for n in kept), default=max(support, default=0.0))
        evidence_source = kept[0] - 1 if kept else best
        evidence = None
        if evidence_source >= 0 and len(self._vectors[evidence_source]):
            idx = anchors[evidence_source]
            if idx is None:
                idx = int(np.argmax(self._vectors[evidence_source] @ vector))
            evidence = self._sentences[evidence_source][idx]
        restates = bool(kept) and anchors[kept[0] - 1] is None and self._restates(vector, score)
        borrowed = self._borrowed(kept[0] - 1, words) if kept and not restates else []
        instead = stated_by or denial
        if instead is None and (borrowed or restates):
            # the abstract's own sentence that carries what the claim adds to the question
            # (a name, a figure, a formula), else the most of the words it adds
            # (`_states_added`: "… use the matched deviation as the criterion …"); else, when
            # it took the question's words, the sentence it was matched with (it says what is
            # known); else the one closest to the question
            shown_before = {r.text for r in self.results}
            carrier = self._carrier(kept[0] - 1, body, vector)
            if carrier is None or carrier in shown_before:
                carrier = self._states_added(kept[0] - 1, body, vector)
            matched = evidence if borrowed and evidence not in shown_before else None
            instead = (carrier if carrier not in shown_before else None) or matched
            if (
                self._asked is not None
                and self._question is not None
                and not self.gives_asked(body)  # the claim gave none: nothing of it to keep
                and not (instead is not None and self.states_asked(instead))
            ):
                # a question that asks for a figure or names: the sentence near the question
                # that gives one, before one that gives none ("… the top match rate?": not
                # "These users are drawn from five published user studies …")
                instead = self.stating_asked(source=kept[0] - 1, shown=frozenset(shown_before)) or instead
            instead = instead or self._closest_to_question(kept[0] - 1)
        # an answer's sentence is as close to the question as what it shows: a replaced
        # restatement is not (it took the question's words)
        if kept and self._aside(kept, vector if instead is None else self._vector_of(kept[0] - 1, instead)):
            self.asides += 1
            return ""
        numbers = tuple(self._number(n) for n in kept)
        if instead is not None:
            claimed, body, evidence = body, instead, instead
            score = 1.0
            if denial is not None:
                self.denials += 1
                which = "the cited abstract" if valid else f"abstract [{numbers[0]}]"
                note = f"said the opposite of {which}; the abstract's own sentence is shown instead"
            elif stated_by is not None:
                self.wrapped += 1
                source = "the cited abstract's" if valid else f"abstract [{numbers[0]}]'s"
                note = (
                    f"wrapped its answer in the question's words; {source} sentence that states "
                    "that answer is shown instead"
                )
            elif borrowed:
                self.borrowed += 1
                said = [w for w in dict.fromkeys(CONTENT_WORD.findall(fold(claimed))) if w[:5] in borrowed]
                note = (
                    f"took words of the question ({', '.join(said or borrowed)}) that the cited "
                    "abstract does not use; the abstract's own sentence is shown instead"
                )
            else:
                self.restated += 1
                note = "restated the question; the cited abstract's own sentence is shown instead"
        text = cite(body, numbers)
        if nouns and instead is None and kept:  # "[1] shows …" keeps its citation in place
            in_place = {n: self._number(n if n in kept else kept[0]) for n in nouns}
            trailing = tuple(n for n in numbers if n not in in_place.values())
            body = SLOT.sub(lambda m: f"[{in_place[int(m.group(1))]}]", cite(template, ()))
            text = SLOT.sub(lambda m: f"[{in_place[int(m.group(1))]}]", cite(template, trailing))
        self.results.append(
            SentenceSupport(
                body, numbers, round(max(score, 0.0), 4), evidence, supported, note, recited, shown=text
            )
        )
        if supported and kept and (other := self._other_case(kept[0] - 1, body)) is not None:
            self.other_case.append(other)
        return text

    def _denial(self, source: int, body: str, cosines: np.ndarray) -> str | None:
        """A sentence of the source that denies what the claim asserts ("these bounds do not
        grow with n at a polynomial rate" for "their bounds grow polynomially …"; `negation`).
        Any of its sentences, not only the closest: a short one that says "these bounds" is
        far from the claim in meaning. A claim that restates one of its sentences (`cosines`:
        to each of them; DENIAL_BELOW) says what the abstract says: abstracts deny what
        others do ("… fine-tuning, which requires retraining" beside "ours does not require
        retraining"), and an abstract's own sentences, quoted, were taken for denied 741
        times in SciFact's 44,991 without this."""
        if not len(cosines) or float(np.max(cosines)) >= DENIAL_BELOW:
            return None
        return next((s for s in self._sentences[source] if denied(s, body) is not None), None)

    def _other_case(self, source: int, body: str) -> OtherCase | None:
        """A sentence about the opposite of the case the question asks about ("near-perfect
        recovery across all … non-CoT variants" for "… on the chain-of-thought (CoT)
        variants?"; "after fine-tuning" for "before any fine-tuning?"): it uses the term only
        in the opposite case, and the abstract names the opposite case and never the one
        asked. It answers another question. Not for a yes/no question ("Does it need
        labels?" may be answered "It works without labels")."""
        if not self.question or _YES_NO.search(self.question):
            return None
        asked = _cases(fold(self.question))
        said = _cases(fold(body))
        named = _cases(self._source_text(source) + " " + fold(self.sources[source].paper.title or ""))
        for marker, term in sorted(asked):
            for opposite in _OPPOSITES.get(marker, ()):
                other = (opposite, term)
                only_other = all(m == opposite for m, t in said if t == term)
                # a question that names the opposite case too ("… CoT …? And on the non-CoT
                # variants?") asks about it
                if (
                    other in said
                    and only_other
                    and other in named
                    and (marker, term) not in named
                    and other not in asked
                ):
                    title = self.sources[source].paper.title or ""  # the case may be named there only
                    stated = next((t for t in self._sentences[source] if other in _cases(fold(t))), title)
                    return OtherCase(
                        body, _case_phrase(body, opposite, term), stated, self.sources[source].paper.label
                    )
        return None

    def _aside(self, kept: list[int], vector: np.ndarray) -> bool:
        """Is this supported sentence an aside: every paper it cites new to the answer and
        ranked below the paper of the answer's first cited sentence, and the sentence much
        further from the question than that one ("Flock, a KGFM, samples random walks [2]"
        in an answer about opinion dynamics)? Its paper supports it, but it does not answer
        the question, and citing it there makes a reader check a paper that has nothing on
        what was asked. A paper ranked above the first one cited may be the right one the
        model came to late: its sentence stays."""
        if self._question is None or not self.one_paper:
            return False
        closeness = float(self._question @ vector)
        if self._first_closeness is None:
            self._first_closeness, self._first_source = closeness, min(kept)
            return False
        cited = {c.paper.id for c in self.numbering.citations}
        new = all(self.sources[n - 1].paper.id not in cited for n in kept)
        below = min(kept) > self._first_source
        return new and below and closeness < self._first_closeness - self.aside_margin

    def _as_marker(self, m: re.Match[str]) -> str:
        number = int(m.group(2))
        return f"{m.group(1)} [{number}]" if 1 <= number <= len(self.sources) else m.group(0)

    @property
    def asked(self) -> Kind | None:
        """What the question asks for: a figure or names by its head noun, a number by its
        own "how many", or none of these (`asked_kind`)."""
        return self._asked

    def gives_asked(self, sentence: str) -> bool:
        """Does this sentence give what the question asks for (a figure; a name a given
        abstract uses that the question does not; a number this turn's own words do not hold)?"""
        assert self._asked is not None and self.question is not None
        question = (self.asks or self.question) if self._asked == "number" else self.question
        return gives(self._asked, sentence, question, " ".join(s for group in self._sentences for s in group))

    def closest_to_question(self) -> str | None:
        """The first source's sentence closest to the question."""
        if self._question is None or not self.sources or not len(self._vectors[0]):
            return None
        return self._sentences[0][int(np.argmax(self._vectors[0] @ self._question))]

    def stating_asked(
        self, closest: int | None = 3, source: int = 0, shown: frozenset[str] = frozenset()
    ) -> str | None:
        """Of a source's (the first's) `closest` sentences closest to the question (None:
        all of them), the first not in `shown` that gives what the question asks for
        (`states_asked`), if any."""
        assert self._asked is not None and self._question is not None and self.question is not None
        if len(self.sources) <= source or not len(self._vectors[source]):
            return None
        for i in np.argsort(-(self._vectors[source] @ self._question))[:closest]:
            text = self._sentences[source][int(i)]
            if text not in shown and self.states_asked(text):
                return text
        return None

    def states_asked(self, text: str) -> bool:
        """Does an abstract's sentence give what the question asks for: a figure other than
        a year, a count of things or one the question holds; a name of the kind asked?"""
        assert self._asked is not None and self.question is not None
        return states_kind(self._asked, text, self.asks or self.question, self._question_quantities)

    def _carrier(self, source: int, body: str, vector: np.ndarray) -> str | None:
        """The source's sentence that states the most of what the claim adds to the question:
        its named terms (`named_terms`), its figures (a quantity the question does not hold)
        and its formulas (`$…$`) — first those the claim puts next to the question's words,
        its answer, then all — the closer to the claim on a tie; None when the claim adds
        none or no sentence states one. A sentence replaced for restating the question or
        taking its words is then replaced by the abstract sentence its answer came from
        ("Seven real-world datasets were used to test …" by "Across seven real-world
        datasets, we evaluate …"), not by one that drops the answer."""
        if self.question is None:
            return None
        sentences = self._sentences[source]
        terms = [fold(t) for t in named_terms(body, self.question, " ".join(sentences))]
        figures = unstated(quantities(body), self._question_quantities)
        formulas = [_bare(m) for m in _FORMULA.findall(body) if _bare(m) not in _bare(self.question)]
        if not (terms or figures or formulas):
            return None
        cosines = self._vectors[source] @ vector
        # what the claim puts next to the question's words answers it ("… reached a hit rate
        # of 40.4% …"); what it copied from elsewhere ("PrivacySIM, … of 1,000 users") is
        # background, and counts only after
        folded_body = fold(body)
        answers_terms = [self._by_question(_words_around(folded_body, t)) for t in terms]
        answers_figures = [self._by_question(around(body, q, FIGURE_WINDOW)) for q in figures]

        def states(i: int) -> tuple[int, int]:
            text = sentences[i]
            folded, bare, found = fold(text), _bare(text), self._figures(source)[i]
            has_terms = [t in folded for t in terms]
            has_figures = [any(q.stated_by(f) for f in found) for q in figures]
            answering = sum(h and a for h, a in zip(has_terms, answers_terms, strict=True)) + sum(
                h and a for h, a in zip(has_figures, answers_figures, strict=True)
            )
            return answering, sum(has_terms) + sum(has_figures) + sum(f in bare for f in formulas)

        counts = [states(i) for i in range(len(sentences))]
        if not counts or max(c[1] for c in counts) == 0:
            return None
        return sentences[max(range(len(sentences)), key=lambda i: (*counts[i], float(cosines[i])))]

    def _by_question(self, text: str) -> bool:
        """Does the text share a content word with the question (its first 4 letters)?"""
        return any(w[:4] in self._question_words for w in content_words(text))

    def _stated_by_cited(
        self, looked_in: list[int], body: str, vector: np.ndarray
    ) -> tuple[str | None, list[int]]:
        """For a sentence no source supports: the first of `looked_in` (the sources it cites;
        every source, in order, when it cites none) whose sentence states what the sentence
        adds to the question, that sentence and that source's number (`_states_added`).
        A model often answers by restating the question around the answer ("The authors
        obtain poly-logarithmic running time for … [1]"): the paraphrase it repeats keeps it
        far from every abstract sentence, yet the answer it adds is there."""
        for n in looked_in:
            found = self._states_added(n - 1, body, vector)
            if found is not None:
                return found, [n]
        return None, []

    def _states_added(self, source: int, body: str, vector: np.ndarray) -> str | None:
        """The source's sentence that holds the most of the content words the claim adds to
        the question, and every figure it adds in its role (`_roles`: "14 languages" is not
        "$14$ benchmarks") and every name ("MNIST" the abstract never writes is no answer of
        its), not far off in meaning (`ANCHOR_FLOOR`); the closer on a tie.
        None: the claim adds nothing, or no sentence states it. (A figure alone is an answer:
        "… cut the arithmetic needed at prediction time by up to 6.0× [1]".)"""
        if self.question is None or self._question is None or not len(self._vectors[source]):
            return None
        added = {w for w in content_words(body) if w[:4] not in self._question_words}
        figures = unstated(quantities(body), self._question_quantities)
        names = [fold(t) for t in named_terms(body, self.question, body)]
        # wider than an anchor's window: a restated answer puts "by up to" or "at most" in between
        in_role = set(self._roles(source, figures, body, WRAPPED_WINDOW)) if figures else set()
        cosines = self._vectors[source] @ vector
        best: tuple[int, float] | None = None
        found = None
        for i, text in enumerate(self._sentences[source]):
            if cosines[i] < self.threshold - ANCHOR_FLOOR or not all(n in fold(text) for n in names):
                continue
            if figures and i not in in_role:
                continue
            key = (len(added & content_words(text)) + len(figures), float(cosines[i]))
            if key[0] and (best is None or key > best):
                best, found = key, text
        return found

    def _name_anchor(self, source: int, body: str, vector: np.ndarray) -> int | None:
        """For a question that asks for names ("which benchmark"): of the source's sentences
        that hold every named term the answer sentence adds to the question (`named_terms`:
        "was evaluated on the W-Bench benchmark" adds W-Bench), and are not far off in
        meaning (`ANCHOR_FLOOR`), the closest, if any. The sentence then gives what was
        asked, from that abstract, however closely it repeats the question around it."""
        assert self.question is not None
        sentences = self._sentences[source]
        terms = named_terms(body, self.question, " ".join(sentences))
        if not terms:
            return None
        cosines = self._vectors[source] @ vector
        found = [
            i
            for i, text in enumerate(sentences)
            if all(t.casefold() in text.casefold() for t in terms)
            and cosines[i] >= self.threshold - ANCHOR_FLOOR
        ]
        return max(found, key=lambda i: float(cosines[i]), default=None)

    def _anchor(self, source: int, stated: list[Quantity], body: str, vector: np.ndarray) -> int | None:
        """Of the source's sentences that state every figure of the answer sentence in its role
        (`_roles`), and are not far off in meaning (`ANCHOR_FLOOR`), the closest, if any: the
        claim's figures and what they measure then come from that sentence, whatever
        paraphrase of the paper surrounds them."""
        cosines = self._vectors[source] @ vector
        found = [i for i in self._roles(source, stated, body) if cosines[i] >= self.threshold - ANCHOR_FLOOR]
        return max(found, key=lambda i: float(cosines[i]), default=None)

    def _in_role(self, source: int, figures: list[Quantity], body: str, cosines: np.ndarray) -> bool:
        """Does the source give each figure the answer sentence adds in the role the sentence
        gives it: stated by the source's sentence closest to the answer sentence, by a
        sentence with a word in common next to it (`_roles`), or by its title, year or
        venue? "runs 14 times faster" is not supported by "on $14$ benchmarks"."""
        if not figures:
            return True
        closest = self._figures(source)[int(np.argmax(cosines))]
        paper = self.sources[source].paper
        listing = quantities(" ".join([paper.title or "", str(paper.year or ""), paper.venue or ""]))
        return all(
            any(q.stated_by(f) and q.percent == f.percent for f in closest)  # "30%" is no "0.3"
            or any(q.stated_by(f) for f in listing)
            or self._roles(source, [q], body)
            for q in figures
        )

    def _misbound(self, source: int, figures: list[Quantity], body: str) -> Misbound | None:
        """A figure the claim gives for a name the question asks about ("an average test MSE
        of 0.014 on the World Values Survey") that the source states only in sentences
        without that name, nor in the sentence before ("Across 14 American Trends Panel
        waves, P2P achieves an average test MSE of 0.014 …"). A cosine sees every word of
        the claim in the abstract; the abstract gives the figure for something else."""
        if not self.question or not figures:
            return None
        asked = fold(self.question)
        sentences = self._sentences[source]
        for q in figures:
            name = _qualifier(words_after(body, q, QUALIFIER_WINDOW))
            if name is None or not _has(asked, name):
                continue
            stating = [
                i
                for i, found in enumerate(self._figures(source))
                if any(q.stated_by(f) and q.percent == f.percent for f in found)
            ]
            if stating and not any(
                _has(fold(sentences[j]), name) for i in stating for j in (i - 1, i) if j >= 0
            ):
                named_figure = any(_has(fold(text), name) and measures(text) for text in sentences)
                return Misbound(
                    body, q.text, name, sentences[stating[0]], self.sources[source].paper.label, named_figure
                )
        return self._respectively_misbound(source, figures, body)

    def _respectively_misbound(self, source: int, figures: list[Quantity], body: str) -> Misbound | None:
        """A figure the source states only in a "respectively" list for another setting than
        the one the claim names, or, when the claim names none of the list's settings, than
        the one the question names ("35% on next-token prediction" from "… on algorithmic
        and next-token-prediction tasks … by $35$\\% and $75$\\% respectively"). A claim that
        repeats figures of two settings of the list repeats the pairing: it is not judged."""
        sentences = self._sentences[source]
        for q in figures:
            wrong: list[tuple[str, str]] = []  # (the setting named instead, the sentence)
            stating = 0
            for text, found in zip(sentences, self._figures(source), strict=True):
                if not any(q.stated_by(f) and q.percent == f.percent for f in found):
                    continue
                stating += 1
                bound = bindings(text)
                own = [b for b in bound if any(q.stated_by(f) and q.percent == f.percent for f in b.figures)]
                repeated = sum(any(c.stated_by(f) for c in figures for f in b.figures) for b in bound)
                listed = {f.span for b in bound for f in b.figures}
                unbound = any(q.stated_by(f) and f.span not in listed for f in found)
                if len(own) != 1 or repeated > 1 or unbound:
                    break  # stated outside the list too, or the pairing repeated: may be right
                named = body if any(names(body, b) for b in bound) else (self.question or "")
                other = [b for b in bound if b is not own[0] and names(named, b)]
                if len(other) != 1 or names(named, own[0]):
                    break  # the claim (or question) names its own setting, none, or several
                wrong.append((other[0].setting, text))
            else:
                if stating and len(wrong) == stating:
                    setting, text = wrong[0]
                    return Misbound(body, q.text, setting, text, self.sources[source].paper.label, True)
        return None

    def _figures(self, source: int) -> list[list[Quantity]]:
        """The quantities of each of the source's sentences."""
        per_sentence = self._sentence_quantities.get(source)
        if per_sentence is None:
            per_sentence = [quantities(t) for t in self._sentences[source]]
            self._sentence_quantities[source] = per_sentence
        return per_sentence

    def _roles(
        self, source: int, figures: list[Quantity], body: str, window: int = FIGURE_WINDOW
    ) -> list[int]:
        """The source's sentences that state every one of the figures in its role: the same
        value (a percentage by a percentage) with a content word in common within
        `FIGURE_WINDOW` words of both ("12 benchmarks" / "$12$ benchmarks": what it measures),
        an acronym the abstract defines standing for its words ("22 state-of-the-art LLMs" /
        "22 large language models")."""
        spelled = self._acronyms[source]
        measured = [_spelled_out(self._measures(body, q, window), spelled) for q in figures]
        return [
            i
            for i, (text, fs) in enumerate(zip(self._sentences[source], self._figures(source), strict=True))
            if all(
                any(
                    q.stated_by(f)
                    and q.percent == f.percent
                    and m & _spelled_out(self._measures(text, f, window), spelled)
                    for f in fs
                )
                for q, m in zip(figures, measured, strict=True)
            )
        ]

    @staticmethod
    def _measures(text: str, figure: Quantity, window: int = FIGURE_WINDOW) -> set[str]:
        """What a figure measures: the content words next to it."""
        return content_words(around(text, figure, window))

    def _vector_of(self, source: int, sentence: str) -> np.ndarray:
        """The vector of one of the source's sentences, computed with the others."""
        return self._vectors[source][self._sentences[source].index(sentence)]

    def _echo(self, vector: np.ndarray, support: list[float], anchors: list[int | None]) -> bool:
        """A sentence some source supports that restates the question (`_restates` against
        its best support) and states no figure a source anchors."""
        best = max(support, default=-1.0)
        return best >= self.threshold and all(a is None for a in anchors) and self._restates(vector, best)

    def _restates(self, vector: np.ndarray, support: float) -> bool:
        """Closer to the question than to its evidence by `echo_margin`: an echo, not a finding."""
        if self._question is None:
            return False
        return float(vector @ self._question) - support >= self.echo_margin

    def _borrowed(self, source: int, words: set[str]) -> list[str]:
        """The sentence's words that come from the question but not from the cited abstract
        (or its title), when there are at least `borrowed_words` of them: the sentence then
        hands the question's own description to a paper that does not give it."""
        if self.borrowed_words <= 0 or not self._question_words:
            return []
        text = self._source_text(source) + " " + fold(self.sources[source].paper.title or "")
        taken = sorted(w for w in words if w[:4] in self._question_words and w[:4] not in text)
        return taken if len(taken) >= self.borrowed_words else []

    def _closest_to(self, vector: np.ndarray) -> str | None:
        """The sources' sentence closest to a claim."""
        best = max(
            ((float(np.max(v @ vector)), i) for i, v in enumerate(self._vectors) if len(v)), default=None
        )
        if best is None:
            return None
        i = best[1]
        return self._sentences[i][int(np.argmax(self._vectors[i] @ vector))]

    def _a_figure_like(self, figures: list[Quantity], body: str, closest: str | None) -> str | None:
        """A sentence of the sources that states a figure of the claim's kind (not a year; a
        percentage for a percentage) about what the claim speaks of: a figure in digits in
        the sentence closest to the claim or in one with a content word in common ("Flock …
        across 54 KGs" for "Flock was evaluated on 60 knowledge graphs"), or any figure next
        to a word the claim's figures stand next to ("under three settings" for "under two
        settings"). None: only the claim states such a figure ("three practical
        requirements" is no bit accuracy)."""
        words = content_words(body)
        measured = set().union(*(self._measures(body, q) for q in figures))
        percent = any(q.percent for q in figures)
        for source, sentences in enumerate(self._sentences):
            for text, found in zip(sentences, self._figures(source), strict=True):
                values = [f for f in found if not f.year and f.percent >= percent]
                if any(measured & self._measures(text, f) for f in values):
                    return text
                if any(f.in_digits for f in values) and (text == closest or words & content_words(text)):
                    return text
        return None

    def _closest_to_question(self, source: int) -> str | None:
        """The source's sentence closest to the question that the answer does not show yet."""
        assert self._question is not None
        shown = {r.text for r in self.results}
        for i in np.argsort(-(self._vectors[source] @ self._question)):
            if self._sentences[source][int(i)] not in shown:
                return self._sentences[source][int(i)]
        return None

    def _shares_words(self, source: int, words: set[str]) -> bool:
        """Does the sentence share a content word with this source's abstract?"""
        if not words:
            return False
        text = self._source_text(source)
        return any(w in text for w in words)

    def _source_text(self, source: int) -> str:
        text = self._folded.get(source)
        if text is None:
            text = self._folded[source] = " ".join(fold(s) for s in self._sentences[source])
        return text

    def _number(self, given: int) -> int:
        source = self.sources[given - 1]
        return self.numbering.number(source.paper, source.score)

    def citations(self) -> tuple[Citation, ...]:
        return tuple(self.numbering.citations)


@dataclass(frozen=True)
class Unstated:
    """An unsupported answer sentence that states figures no given abstract (nor the
    question) states."""

    sentence: str
    figures: tuple[str, ...]  # as the sentence writes them
    closest: str | None  # the given abstracts' sentence closest to it
    like: str | None  # a sentence of theirs stating a figure of that kind (`Checker._a_figure_like`)


@dataclass(frozen=True)
class Misbound:
    """An unsupported answer sentence that gives a figure for a name the question asks
    about, which the abstract states only for something else (`Checker._misbound`)."""

    sentence: str
    figure: str
    name: str  # as the sentence writes it ("the World Values Survey" → "World Values Survey")
    stated: str  # the abstract's sentence that states the figure
    paper: str  # the abstract's paper (`Paper.label`)
    named_figure: bool  # some sentence of the abstract does state a figure with that name


@dataclass(frozen=True)
class OtherCase:
    """A supported answer sentence about the opposite of the case the question asks about,
    from an abstract that names only the opposite case (`Checker._other_case`)."""

    sentence: str
    case: str  # as the sentence names it ("non-CoT", "after fine-tuning")
    stated: str  # the abstract's sentence that names the opposite case
    paper: str  # the abstract's paper (`Paper.label`)


_CASE_WORD = re.compile(r"[a-z0-9]+")
# A word that sets the case a term is used in, and the cases opposite to it ("" is the
# term used plainly): "CoT" asked, "non-CoT" said; "with predictions" asked, "without
# predictions" said; "before fine-tuning" asked, "after fine-tuning" said.
_OPPOSITES = {"": ("non",), "with": ("without",), "before": ("after",), "after": ("before",)}
_MARKERS = frozenset({"non", "without", "with", "before", "after"})
_DETERMINERS = "any|the|a|an|its|their|all"
_SKIPPED = frozenset(_DETERMINERS.split("|"))
# "compared with", "without loss of generality", "with respect to", "with high probability"
_NOT_A_CASE_AFTER = frozenset(
    {"compare", "compared", "comparing", "along", "deal", "deals", "associated", "consistent"}
)
_IDIOMS = frozenset({"loss", "respect", "regard", "high", "probability"})
_YES_NO = re.compile(
    r"(?:^|[,;:]\s*)\s*(?:is|are|was|were|does|do|did|can|could|will|would|should|has|have|had)\b",
    re.IGNORECASE,
)


def _cases(folded: str) -> set[tuple[str, str]]:
    """Each word of 3 letters or more (a plural's "s" dropped) with the word that sets its
    case: ("non", "cot") for "non-CoT", ("before", "fine") for "before any fine-tuning",
    ("", "variant") for "variants" used plainly."""
    words = [w for w in _CASE_WORD.findall(folded) if w not in _SKIPPED]
    found = set()
    for i, word in enumerate(words):
        if len(word) < 3 or word in _MARKERS:
            continue
        marker = words[i - 1] if i and words[i - 1] in _MARKERS else ""
        if marker == "with" and i > 1 and words[i - 2] in _NOT_A_CASE_AFTER:
            marker = ""
        if marker and word in _IDIOMS:
            continue
        found.add((marker, word[:-1] if len(word) > 3 and word.endswith("s") else word))
    return found


def _case_phrase(text: str, marker: str, term: str) -> str:
    """The words of the text that name a case ("non-CoT", "after fine-tuning")."""
    m = re.search(rf"\b{marker}[\s-]+(?:(?:{_DETERMINERS})\s+)?{re.escape(term)}[\w-]*", text, re.IGNORECASE)
    return m.group(0) if m else f"{marker} {term}"


def _has(folded: str, name: str) -> bool:
    """Does the folded text hold the name as words ("MATH" is not in "mathematical")?"""
    return re.search(r"(?<!\w)" + re.escape(fold(name)) + r"(?!\w)", folded) is not None


_QUALIFIER_OPENS = frozenset("on in for over across under with at".split())


def _qualifier(after: list[str]) -> str | None:
    """The name a figure is given for, in the words after it: the run of name-like words
    (capitalised, or a name such as "HH-RLHF") after a preposition ("on the World Values
    Survey" → "World Values Survey"); None when the figure is not given for a name."""
    words = [w.strip(".,;:()[]\"'“”") for w in after]
    for i, word in enumerate(words):
        if word.casefold() not in _QUALIFIER_OPENS:
            continue
        rest = words[i + 1 :]
        if rest and rest[0].casefold() in ("the", "a", "an"):
            rest = rest[1:]
        run = []
        for w in rest:
            if not (name_like(w, capitalised=True) and any(c.isalpha() for c in w)):
                break
            run.append(w)
        return " ".join(run) or None
    return None


_FORMULA = re.compile(r"\$[^$]+\$")  # inline math, as the abstracts write it


def _bare(text: str) -> str:
    """Text without spaces or dollars, to find a formula however it is spaced."""
    return re.sub(r"[\s$]+", "", text)


ANCHOR_FLOOR = 0.25  # an anchoring sentence's cosine may fall this far below the threshold, no further


def _words_around(folded: str, term: str, words: int = FIGURE_WINDOW) -> str:
    """The `words` words either side of a term's first use in a folded sentence."""
    at = folded.find(term)
    if at < 0:
        return ""
    return " ".join(folded[:at].split()[-words:] + folded[at + len(term) :].split()[:words])


_DEFINED = re.compile(r"\(([A-Z][A-Za-z]*[A-Z])s?\)")  # "(LLMs)", "(RMT)", "(CoT)"
_SPELLING = frozenset("of from for to the a an and in on with by".split())  # "chain of thought (CoT)"


def acronyms(abstract: str) -> dict[str, set[str]]:
    """The acronyms an abstract defines ("large language models (LLMs)", "chain-of-thought
    (CoT)": the words before the bracket whose initials spell its capitals, small words
    aside), each as `content_words` has it (four letters at least: "LLMs", "CoTs", not
    "LLM"), with the content words it stands for."""
    out: dict[str, set[str]] = {}
    for m in _DEFINED.finditer(abstract):
        letters = [c for c in m.group(1) if c.isupper()]
        before = re.findall(r"[A-Za-z]\w*", abstract[: m.start()].replace("-", " "))
        words: list[str] = []
        for word in reversed(before):
            if len(words) == len(letters):
                break
            if words and word.lower() in _SPELLING:
                continue
            words.insert(0, word)
        if len(words) == len(letters) and all(
            w[0].lower() == c.lower() for w, c in zip(words, letters, strict=True)
        ):
            meaning = content_words(" ".join(words))
            for stem in content_words(f"{m.group(1)} {m.group(1)}s"):
                out[stem] = meaning
    return out


def _spelled_out(words: set[str], spelled: dict[str, set[str]]) -> set[str]:
    """`words` with each acronym whose every word is among them ("large language models":
    "llms"), so that the acronym and its words meet; never a word of an acronym's meaning
    alone ("models" would meet "LLMs" as well as "diffusion models")."""
    return words | {stem for stem, meaning in spelled.items() if meaning and meaning <= words}
