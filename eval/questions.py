"""The question sets: our own questions over the seeds, and SciFact.

Gold papers are named by a quote from their abstract ("gold_quotes"), looked up in
the corpus when the set is loaded, so ids may change without the sets going stale.

- `heldout.jsonl`: written by a helper who never saw the code or the retriever's
  output: paraphrases with few of the abstract's words, catalogue questions,
  follow-ups, near-misses, comparisons, off-topic questions;
- `seeds.jsonl`: the older set (its questions share many of the abstracts' words);
- `heldout2.jsonl`: a second blind set by another helper (45 paraphrases, 41 of them on
  abstracts `heldout.jsonl` has no paraphrase for, mean content-word overlap with the gold
  abstract 0.17; 12 near-misses), written after the first was used for tuning: it checks
  that what was tuned on `heldout` carries over;
- `heldout3.jsonl`: a third blind set, committed on its own before the embedder change it
  measures (45 paraphrases on the 45 abstracts the other sets use least, content-word
  overlap 0.147; 15 near-misses, 15 near-topic off-corpus questions, 10 catalogue questions);
- `heldout4.jsonl`: a fourth blind set, committed on its own (9f50955) before the query
  encoder and off-topic changes it measures, by a helper who read only the seeds: 25
  near-topic off-corpus questions (9 in everyday words), 30 paraphrases on 30 abstracts,
  10 near-misses;
- `heldout5.jsonl`: a fifth blind set, committed on its own (d553431) before the relevance
  question it measures, by a helper who read only the seeds: 25 near-topic off-corpus
  questions (about 8 in everyday words), 25 paraphrases on 25 abstracts (13 of them "is
  there a paper that …"), 15 near-misses;
- `heldout6.jsonl`: a sixth blind set, committed on its own (951314b) before the citation
  check change it measures, by a helper who read only the seeds: 40 paraphrases that ask
  for a fact the abstract states (18 of the facts written in LaTeX there, 7 in other unusual
  forms), 10 "is there a paper" paraphrases, 12 near-topic off-corpus questions, 8 near-misses;
- `heldout7.jsonl`: a seventh blind set, committed on its own before anything was measured
  on it, by a helper who read only the seeds: 40 paraphrases that each ask for one figure
  (half name what it measures in other words; 16 figures in LaTeX, 11 are "two …"), 10
  near-misses asking for a figure the abstract does not give, 10 near-topic off-corpus
  questions. Written to measure the figure anchoring of the citation check blind;
- `heldout8.jsonl`: an eighth blind set, committed on its own (a864c9f) before anything was
  measured on it, by a helper who read only the seeds: 40 paraphrases asking for one fact
  each, on the 40 abstracts the other sets use least (one each), 10 near-misses, 10
  near-topic off-corpus questions;
- `heldout9.jsonl`: a ninth blind set, committed on its own (0801436) before the scored
  relevance question it measures, by a helper who read only the seeds: 30 near-topic
  off-corpus questions (10 in everyday words), 30 paraphrases asking for one fact each on
  30 abstracts, 10 near-misses;
- `heldout10.jsonl`: a tenth blind set, committed on its own before anything was measured
  on it, by a helper who read only the seeds: 40 paraphrases asking for one fact each, on
  the 40 abstracts the other sets use least (one each; content-word overlap 0.21), 10
  near-misses. Written to measure, blind, a rule made on the read sets that failed on
  heldout8 and heldout9;
- `heldout11.jsonl`: an eleventh blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 30 paraphrases asking for one fact
  each, on the 30 abstracts the other sets use least (one each; content-word overlap
  0.175), 15 near-misses (9 ask for a rate, percentage or factor the abstract does not
  give, 5 for datasets it does not name), 15 near-topic off-corpus questions (5 in
  everyday words);
- `heldout12.jsonl`: a twelfth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds (and, to avoid repeats, the
  questions the other sets already ask of each): 40 paraphrases asking for one fact each,
  on the 40 abstracts the other sets use least (one each; content-word overlap 0.150),
  15 near-misses on 15 other abstracts (7 ask for a number the abstract does not give, 4
  for names it does not list, 4 for other things: hardware, licence, training time,
  architecture), 15 near-topic off-corpus questions (5 in everyday words);
- `heldout13.jsonl`: a thirteenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds (grepping the other sets only to
  skip abstracts they ask about often): 30 paraphrases asking for one fact each, each on
  a different abstract (10 numbers, 8 names, 6 rates or bounds, 6 findings; content-word
  overlap 0.214 by the helper's own stopword list), 15 near-misses on 15 other abstracts
  (5 ask for a figure the abstract gives only for another setting, term or case; 10 for
  numbers, formulas, counts or names it does not give);
- `heldout14.jsonl`: a fourteenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds (grepping the other sets only to
  pick the abstracts they quote least): 30 paraphrases asking for one fact each, each on a
  different abstract (10 numbers, 8 names, 6 findings, 6 bounds, rates or settings), 20
  near-misses on 20 other abstracts (6 ask for a figure the abstract gives only for another
  setting, dataset or condition; 5 for a number it does not give; 4 for names it does not
  list; 5 for a hyperparameter, training time, code, formula or licence);
- `heldout15.jsonl`: a fifteenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 25 paraphrases asking for one fact
  each, each on a different abstract (8 numbers, 6 names, 5 findings, 6 bounds, settings
  or definitions; some "is there a paper that …", some typed as a busy researcher would),
  20 near-misses on 20 other abstracts (6 for a figure given only for another setting, 5
  for a number not given, 4 for names not listed, 5 for a hyperparameter, cost, code or
  formula), 10 near-topic off-corpus questions (4 in everyday words);
- `heldout16.jsonl`: a sixteenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 30 paraphrases asking for one fact
  each, each on a different abstract (10 numbers, 7 names, 6 findings, 7 bounds, metrics,
  settings, definitions or mechanisms), 15 near-misses on 15 other abstracts (5 for a
  figure given only for another setting, 4 for a number not given, 3 for names not
  listed, 3 for a hyperparameter, cost or licence), 10 near-topic off-corpus questions (4
  in everyday words);
- `heldout17.jsonl`: a seventeenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds and was asked for paraphrases that
  share almost no content word with their abstract (share of a question's words of four
  letters or more, function words aside, found in its gold abstract: mean 0.02, against
  0.14–0.24 for `heldout3` and `heldout11`–`13` and 0.64–0.72 for `heldout14`–`16`): 30
  paraphrases asking for one fact each on the abstracts the other sets use least, 15
  near-misses (a figure for another dataset or variant, an absolute value where only a
  relative gain is given, a count of other things, an unnamed model, a vague claim asked
  as a number), 10 near-topic off-corpus questions;
- `heldout18.jsonl`: an eighteenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 20 paraphrases asking for one fact
  each, 20 two-turn follow-ups whose second question does not name the paper ("it", "the
  authors", or no reference at all; 5 ask for the authors, 6 for a fact worded unlike the
  abstract), 12 near-misses, 8 near-topic off-corpus questions (3 in everyday words); no
  abstract is used twice. `heldout17` and `heldout18` were read after their blind
  measurements (stop 60): rules written since may have been shaped by them;
- `heldout19.jsonl`: a nineteenth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 20 paraphrases asking for one fact
  each (content-word share 0.20), 10 two-turn follow-ups that do not name the paper (2 ask
  for the authors), 12 near-misses (4 "which specific …" / "what exactly …", 3 as
  follow-ups), 10 near-topic off-corpus questions (4 "is there a paper …", 3 in everyday
  words) and 8 follow-ups that switch to a neighbouring topic the corpus does not cover
  ("what about …?"); no abstract is used twice, all 50 among those the other sets use least;
- `heldout20.jsonl`: a twentieth blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 20 paraphrases asking for one fact
  each (content-word share 0.16; 7 ask for a number or formula, most where the abstract
  also states a neighbouring figure), 10 two-turn follow-ups that do not name the paper (3
  ask for the authors), 14 near-misses ("how many …" where the abstract says "several" or
  "finite", unnamed datasets, a percentage for a qualitative claim; 4 as follow-ups), 10
  near-topic off-corpus questions (3 in everyday words) and 6 follow-ups that switch to a
  neighbouring subject the corpus lacks, each worded differently; no abstract used twice;
- `heldout21.jsonl`: a twenty-first blind set, committed on its own before anything was
  measured on it, by a helper who read only the seeds: 20 paraphrases asking for one fact
  each (content-word share 0.10; 7 ask for a number or formula, 5 of them where the abstract
  also states another figure), 10 two-turn follow-ups that do not name the paper (3 ask for
  the authors), 16 near-misses (exact figures, named baselines the abstract does not name,
  hardware, training time, a learning rate, a privacy budget, the lab, a city; 5 as
  follow-ups), 10 near-topic off-corpus questions (3 in everyday words) and 6 follow-ups
  that switch to a neighbouring subject the corpus lacks; no abstract used twice;
- `heldout22.jsonl`: a twenty-second blind set, committed on its own (stop 63, after that
  stop's last code change) and not measured there, by a helper who read only the seeds: 20
  paraphrases asking for one fact each (content-word share 0.11; 6 ask for a number or a
  formula), 10 two-turn follow-ups that do not name the paper (3 ask for the authors, in
  three wordings; some of one word: "Datasets?"), 16 near-misses (5 as follow-ups), 10
  near-topic off-corpus questions and 6 follow-ups that switch to a neighbouring subject the
  corpus lacks, worded unlike "What about X?"; no abstract used twice;
- `offcorpus.jsonl`: 50 questions no abstract answers, most about subjects next to
  the corpus's (dueling bandits, flow matching), written and checked by the same helper.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assistant.types import Paper

HERE = Path(__file__).resolve().parent
SEED_QUESTIONS = HERE / "questions" / "seeds.jsonl"
HELDOUT_QUESTIONS = HERE / "questions" / "heldout.jsonl"
HELDOUT2_QUESTIONS = HERE / "questions" / "heldout2.jsonl"
HELDOUT3_QUESTIONS = HERE / "questions" / "heldout3.jsonl"
HELDOUT4_QUESTIONS = HERE / "questions" / "heldout4.jsonl"
HELDOUT5_QUESTIONS = HERE / "questions" / "heldout5.jsonl"
HELDOUT6_QUESTIONS = HERE / "questions" / "heldout6.jsonl"
HELDOUT7_QUESTIONS = HERE / "questions" / "heldout7.jsonl"
HELDOUT8_QUESTIONS = HERE / "questions" / "heldout8.jsonl"
HELDOUT9_QUESTIONS = HERE / "questions" / "heldout9.jsonl"
HELDOUT10_QUESTIONS = HERE / "questions" / "heldout10.jsonl"
HELDOUT11_QUESTIONS = HERE / "questions" / "heldout11.jsonl"
HELDOUT12_QUESTIONS = HERE / "questions" / "heldout12.jsonl"
HELDOUT13_QUESTIONS = HERE / "questions" / "heldout13.jsonl"
HELDOUT14_QUESTIONS = HERE / "questions" / "heldout14.jsonl"
HELDOUT15_QUESTIONS = HERE / "questions" / "heldout15.jsonl"
HELDOUT16_QUESTIONS = HERE / "questions" / "heldout16.jsonl"
HELDOUT17_QUESTIONS = HERE / "questions" / "heldout17.jsonl"
HELDOUT18_QUESTIONS = HERE / "questions" / "heldout18.jsonl"
HELDOUT19_QUESTIONS = HERE / "questions" / "heldout19.jsonl"
HELDOUT20_QUESTIONS = HERE / "questions" / "heldout20.jsonl"
HELDOUT21_QUESTIONS = HERE / "questions" / "heldout21.jsonl"
HELDOUT22_QUESTIONS = HERE / "questions" / "heldout22.jsonl"
OFFCORPUS_QUESTIONS = HERE / "questions" / "offcorpus.jsonl"
SETS = {
    "heldout": HELDOUT_QUESTIONS,
    "heldout2": HELDOUT2_QUESTIONS,
    "heldout3": HELDOUT3_QUESTIONS,
    "heldout4": HELDOUT4_QUESTIONS,
    "heldout5": HELDOUT5_QUESTIONS,
    "heldout6": HELDOUT6_QUESTIONS,
    "heldout7": HELDOUT7_QUESTIONS,
    "heldout8": HELDOUT8_QUESTIONS,
    "heldout9": HELDOUT9_QUESTIONS,
    "heldout10": HELDOUT10_QUESTIONS,
    "heldout11": HELDOUT11_QUESTIONS,
    "heldout12": HELDOUT12_QUESTIONS,
    "heldout13": HELDOUT13_QUESTIONS,
    "heldout14": HELDOUT14_QUESTIONS,
    "heldout15": HELDOUT15_QUESTIONS,
    "heldout16": HELDOUT16_QUESTIONS,
    "heldout17": HELDOUT17_QUESTIONS,
    "heldout18": HELDOUT18_QUESTIONS,
    "heldout19": HELDOUT19_QUESTIONS,
    "heldout20": HELDOUT20_QUESTIONS,
    "heldout21": HELDOUT21_QUESTIONS,
    "heldout22": HELDOUT22_QUESTIONS,
    "seeds": SEED_QUESTIONS,
    "offcorpus": OFFCORPUS_QUESTIONS,
}
SCIFACT = HERE.parent.parent / "shared" / "benchmarks" / "scifact"


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    question: str
    gold: tuple[str, ...]
    facts: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    closest: str | None = None  # near-miss: the paper the question is about
    set: str = "heldout"

    @property
    def answerable(self) -> bool:
        return bool(self.gold)

    @property
    def retrieval_text(self) -> str:
        """What retrieval sees without an LLM: a follow-up borrows the previous question."""
        return f"{self.history[-1]} {self.question}" if self.history else self.question


def load_questions(path: Path = HELDOUT_QUESTIONS, papers: Sequence[Paper] | None = None) -> list[Question]:
    """Questions with their gold quotes resolved to the ids of `papers` (default: the seeds).
    A quote is looked up in the abstracts, then in the author lists (an author question's
    gold is the paper whose listing names them)."""
    if papers is None:
        from assistant.config import DEFAULT_SEEDS
        from assistant.corpus.readers import load_papers

        papers = load_papers([DEFAULT_SEEDS])[0]
    texts = [(p.id, " ".join(p.abstract.split())) for p in papers]
    authors = [(p.id, ", ".join(p.authors)) for p in papers]

    def find(quote: str) -> str:
        quote = " ".join(quote.split())
        found = [pid for pid, text in texts if quote in text] or [
            pid for pid, names in authors if quote in names
        ]
        if len(found) != 1:
            raise ValueError(f"{path.name}: quote {quote!r} is in {len(found)} abstracts, not 1")
        return found[0]

    name = next((k for k, v in SETS.items() if v == path), path.stem)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(
                Question(
                    id=d["id"],
                    type=d["type"],
                    question=d["question"],
                    gold=tuple(find(q) for q in d.get("gold_quotes", ())),
                    facts=tuple(d.get("facts", ())),
                    history=tuple(d.get("history", ())),
                    closest=find(d["closest_quote"]) if d.get("closest_quote") else None,
                    set=name,
                )
            )
    return out


@dataclass
class SciFact:
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, set[str]] = field(default_factory=dict)


def load_scifact(split: str = "test", root: Path = SCIFACT) -> SciFact:
    qrels: dict[str, set[str]] = {}
    with (root / "qrels" / f"{split}.tsv").open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            qrels.setdefault(row["query-id"], set()).add(row["corpus-id"])
    queries = {}
    for line in (root / "queries.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["_id"] in qrels:
            queries[d["_id"]] = d["text"]
    return SciFact(root / "corpus.jsonl", queries, qrels)
