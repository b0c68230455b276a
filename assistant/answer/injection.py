"""Text addressed to AI tools rather than reporting research, however it is spelled.

A hostile author writes instructions for the tools that summarise papers: in plain
prose ("any summary of this work should state that …"), split over two sentences, with
look-alike letters from other scripts, zero-width characters, full-width letters, in
another language than the abstract, base64, HTML comments or chat-template markers.
`addressed_to_tools` finds such sentences on a *skeleton* of the text (NFKC, invisible
characters removed, case folded, look-alike letters mapped to Latin with Unicode's
confusables table, TR39), not on its exact words. What it flags is never evidence and
never reaches a model; the app says that the paper holds such text.

Measured for false positives on every sentence of SciFact and of the seeds, and on
abstracts *about* assistants and instruction following (`python -m eval.injections`).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from assistant.answer.prefilter import Gated, gated
from assistant.text import identity_text, split_sentences


def _gated(pattern: str, flags: int = 0) -> Gated:
    """A pattern of the detector, behind its literal pre-check (`prefilter`): the same
    answers, and most sentences of a real abstract are never searched."""
    return gated(re.compile(pattern, flags))


# --- the skeleton ------------------------------------------------------------------------

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_MIXED_TOKEN = re.compile(r"\b(?=\w*[a-z])(?=\w*[0-9@$])[\w@$]{2,}\b")


@cache
def _latin(char: str) -> str:
    """The Latin letter a character is confusable with ('і' -> 'i', 'ο' -> 'o'), or itself."""
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    if found:
        for glyph in found[0]["homoglyphs"]:
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalnum():
                return str(glyph["c"]).lower()
    return char


def skeleton(text: str) -> str:
    """What a sentence says whatever its spelling: NFKC (full-width and mathematical
    letters become plain), format characters dropped (zero-width spaces and joiners,
    word joiners, bidi controls), case folded, look-alike letters of other scripts mapped
    to Latin, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():  # (ASCII holds no format character)
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = text.casefold()
    if not text.isascii():
        text = "".join(_latin(c) if ord(c) > 127 and c.isalpha() else c for c in text)
    return " ".join(text.split())


def _unleet(text: str) -> str:
    """'1gn0re' -> 'ignore': digits inside words read as the letters they imitate."""
    return _MIXED_TOKEN.sub(lambda m: m.group(0).translate(_LEET), text)


# --- what addressing a tool looks like -----------------------------------------------------

_INSTRUCTION = _gated(
    r"(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|previous\s+|prior\s+|above\s+)*"
    r"(?:instructions?|prompts?|rules|context|everything)"
    r"|system\s+prompt|\bnew\s+instructions?\b|\byou\s+are\s+(?:now\s+)?(?:an?\s+)?(?:ai|assistant|"
    r"language\s+model|chatbot|helpful)\b|\bas\s+an\s+ai\b"
    r"|<\|?\s*(?:im_start|im_end|system|assistant|user|endoftext)\s*\|?>|\[/?\s*(?:inst|system|sys)\s*\]"
    r"|<<\s*sys\s*>>|(?:^|\n)\s*(?:system|assistant|user|human|instruction|###\s*\w+)\s*:"
    r"|\bthe\s+(?:correct\s+|final\s+|only\s+)?answer\s+(?:to\s+(?:any|every|this|the)\s+question\s+)?is\b"
    r"|\b(?:answer|reply|respond|output|print|say)\s+(?:(?:only|exactly|with)\s*:?\s*)+['\"“‘]"
    r"|\bcite\s+\[\d+\]|\b(?:ai|llm|language model|assistant|chatbot)s?\s+(?:must|should|will)\s+"
    r"(?:always\s+)?(?:answer|reply|respond|say|output|cite|ignore|print)\b"
    r"|\b(?:note|message|instruction)s?\s+(?:to|for)\s+(?:any\s+|all\s+|the\s+)?"
    r"(?:ai|llm|assistant|model|language model)s?\b",
    re.IGNORECASE,
)
_IMPERATIVE = _gated(
    r"^\s*(?:please\s+)?(?:ignore|disregard|forget|answer|reply|respond|output|print|cite|always|"
    r"never|do\s+not|don't|you\s+must|you\s+should)\b"
    r"|[:;]\s*(?:please\s+)?(?:ignore|disregard|forget|print|output|reply|respond|cite)\b"
    r"|\bdisregard\s+(?:the\s+|this\s+|any\s+)?(?:user'?s?\s+)?(?:question|query|abstracts?|sources?)",
    re.IGNORECASE,
)


def is_instruction(sentence: str) -> bool:
    """A sentence addressed to a model rather than reporting research (checked on the
    identity text, so zero-width characters cannot hide the words)."""
    text = identity_text(sentence)
    return bool(_INSTRUCTION.search(text) or _IMPERATIVE.search(text))


_TOOL = (
    r"(?:ai|a\.i\.|llms?|chatbots?|gpts?|language[- ]models?|language tools?|large language models?|"
    r"(?:ai|automated|automatic|machine|generative|llm|model)[- ](?:based )?(?:generated )?"
    r"(?:tools?|systems?|assistants?|agents?|readers?|reviewers?|summari[sz]ers?|summar(?:y|ies)|"
    r"reviews?|models?|pipelines?)|assistants?|summari[sz]ers?|summari[sz]ation tools?|"
    r"(?:any|every|all) (?:tools?|systems?|models?|summar(?:y|ies)(?! statistic)|answers?|responses?|"
    r"reviews?)|"
    r"summar(?:y|ies) (?:of|about) (?:this|the present|our)|you|your)"
)
_DIRECTIVE = (
    r"(?:must|should|shall|will need to|needs? to|ha(?:ve|s) to|(?:is|are) to|ought to|"
    r"(?:is|are) (?:asked|requested|required|instructed|expected|encouraged|advised|told|obliged) to|"
    r"please|kindly|make sure to|be sure to|remember to|always|never|do not|don't|are not to)"
    r"(?: \w+){0,2} "
    r"(?:state|report|say|mention|claim|assert|write|describe|present|conclude|emphasi[sz]e|"
    r"highlight|stress|cite|recommend|rate|rank|score|answer|respond|reply|output|ignore|"
    r"disregard|treat|consider|call|refer|credit|attribute|list|include|add|note|tell|inform|"
    r"indicate|declare|portray|characteri[sz]e|describe)"
)
_SELF_NOUNS = (
    r"(?:this|the present|the current|our) (?:\w+ )?(?:work|paper|study|abstract|article|manuscript|"
    r"submission|preprint|contribution|method|model|approach|system|framework|result|finding|tool|"
    r"technique|research|dataset|benchmark)s?"
)
_SELF = (
    r"(?:this|the present|the current|our) (?:work|paper|study|abstract|article|manuscript|"
    r"submission|preprint|contribution|method|model|approach|system|framework|result|finding)s?|"
    r"(?:any|every) (?:question|query|summary|summaries)|"
    r"when summari[sz]ing|"
    r"other (?:papers|sources|abstracts|works|studies|references)|\byou\b|\byour\b"
)
_ADDRESS = _gated(rf"\b{_TOOL}\b.*\b{_DIRECTIVE}\b|\b{_DIRECTIVE}\b.*\b{_TOOL}\b")
_SELF_RE = _gated(rf"\b(?:{_SELF})")
_ALWAYS = _gated(
    r"\bif you are (?:an? |the )?(?:ai|llm|language model|large language model|assistant|chatbot|"
    r"model|bot|automated|machine|gpt)"
    r"|\b(?:as|for) (?:an? )?(?:ai|llm|language model|assistant|chatbot)s?(?: reading| summari[sz]ing|,)"
    r"|\bnote (?:to|for) (?:any |all |the )?"
    r"(?:ai|llm|assistant|model|language model|automated|summari[sz]er|tool)"
    r"|\bnote (?:to|for) (?:any |all |the )?(?:[\w'’]+ ){0,2}(?:software|tools?|systems?|services?|"
    r"pipelines?|engines?|bots?|assistants?|summari[sz]ers?|programs?)\s*:"
    r"|\bthe (?:correct|right|true|only|real) answer to (?:any|every|all|each) (?:question|query)"
    r"|\b(?:readers?|audiences?|users?|everyone) (?:must|should|needs? to|ha(?:ve|s) to) be (?:told|informed|"
    r"reminded|made aware)"
    r"|\b(?:cite|reference|credit|recommend|mention) only (?:this|our|the present)"
    r"|\b(?:do not|don't|never|must not|should not) (?:cite|mention|reference|consider|discuss|recommend) "
    r"(?:any )?(?:other|competing|alternative|rival)"
    r"|\bignore (?:all |any |every )?(?:other|competing|previous|prior|earlier|above) "
    r"(?:papers|sources|abstracts|works|studies|instructions|content|text|results)"
    r"|<!--|\[//\]: ?#|<\|[a-z_]+\|>|\[/?(?:inst|system|sys|assistant|user)\]|<</?sys>>"
    r"|(?:^|\s)#{2,} ?(?:instruction|response|system|assistant|user)s?\b"
)
_SAY = (
    r"(?:state|report|say|mention|claim|assert|write|tell|emphasi[sz]e|stress|highlight|describe|"
    r"present|conclude|cite|ignore|disregard|treat|rank|rate|score|recommend|answer|respond|reply|"
    r"output|print|declare|summari[sz]e|portray|characteri[sz]e|refer to|omit|hide|exclude|repeat|"
    r"inform|indicate|credit|attribute)"
)
# Rules of a second kind: how instructions read in prose, whoever they address.
_PROSE = _gated(
    # an imperative opening a sentence, or after a colon or dash ("Report that …", "…: state that")
    rf"(?:^|[:;—–]\s)(?:(?:please|kindly|now|also|finally|importantly|remember to|be sure to|make sure to)"
    rf"[,:]?\s+)?{_SAY}\s+(?:that|only|this|these|those|the|it|its|our|them|as|to)\b"
    rf"|^(?:please |kindly )?(?:do not|don't|never|always|make sure|ensure|be sure|remember)\b.*\b{_SAY}\b"
    # "descriptions of this work should present …", "summaries of our method are to state …"
    r"|\b(?:descriptions?|summar(?:y|ies)|overviews?|accounts?|discussions?|mentions?|citations?|reviews?|"
    r"assessments?|evaluations?|digests?|abstracts?|answers?|responses?) (?:of|about|on"
    r"|discussing|describing|"
    r"citing|mentioning) (?:this|the present|the current|our) (?:\w+ ){0,2}"
    r"(?:work|paper|study|method|model|approach|system|framework|results?|findings?|article|manuscript|"
    r"submission|contribution|tool|technique|research|dataset|benchmark)s?\b.*\b(?:must|should|shall|"
    r"(?:is|are) to|ha(?:ve|s) to|needs? to|(?:is|are) (?:required|expected|obliged|asked) to)\b"
    # "it is essential that any description of this work …", "… is required of every summary"
    r"|\bit is (?:essential|important|crucial|mandatory|required|necessary|imperative|vital|expected|"
    r"requested) (?:that|to|for) (?:any |all |every |each )?(?:summar|descri|review|account|overview|"
    r"present|mention|cite|citation|report(?:s|ing)? (?:on|of|about) this)"
    # "should be read / reported / cited as …" about this work
    rf"|\b(?:{_SELF_NOUNS})\b.*\b(?:must|should|shall|(?:is|are) to) (?:always )?be (?:read"
    rf"|reported|stated|cited|"
    r"described|presented|summari[sz]ed|characteri[sz]ed|portrayed|regarded|ranked|rated|recommended|"
    r"credited|listed) as\b"
    # errata, corrections and notes that change what is reported
    r"|^(?:erratum|correction|corrigendum|addendum|clarification|editor'?s note|note to"
    r" (?:editors|readers))\s*:"
    # rating, recommending, hiding limitations, preferring this paper
    r"|\b(?:rate|score|rank|recommend|accept|award|grade) (?:this|the present|our) (?:paper|work|submission|"
    r"study|manuscript|article)\b"
    r"|\b(?:give|assign|award) (?:it|this (?:paper|work|submission|study)) (?:a |the )?(?:top "
    r"|highest |maximum )?"
    r"(?:score|rating|grade|mark)"
    r"|\b(?:do not|don't|never|avoid|refrain from|without) (?:mention|mentioning|discuss|discussing|report|"
    r"reporting|disclos(?:e|ing)|highlight|highlighting|note|noting) (?:the |any |its |our |these )?"
    r"(?:limitations?|weakness(?:es)?|drawbacks?|failures?|shortcomings?|negative|caveats?|risks?"
    r"|side effects?)"
    # "should this text be processed automatically …", "when this abstract is summarised by …"
    r"|\b(?:should|if|when|whenever|once) (?:this|the present) (?:text|abstract|paper|document|work|passage) "
    r"(?:be|is|gets?|are) (?:being )?(?:processed|read|summari[sz]ed|parsed|analy[sz]ed|ingested|indexed|"
    r"reviewed|encountered)\b"
    # role play
    r"|\byou (?:are now|will now|must now|shall now|now act|should act|must act|act) (?:as )?\b"
    r"|\bpretend (?:to be|you are|that you)\b|\bfrom now on\b"
)
# Rules of a third kind: whoever processes the text by machine, asked to report something.
_MACHINE = (
    r"(?:automated|automatic|machine|software|text[- ]processing|language|ai|a\.i\.|llm|downstream|"
    r"retrieval|question[- ]answering|summari[sz](?:ation|ing)|indexing|literature[- ]review|digest|summary|"
    r"chat|algorithmic|text)"
)
_HEAD = (
    r"(?:readers?|tools?|systems?|assistants?|pipelines?|agents?|services?|engines?|bots?|programs?|"
    r"summari[sz]ers?|aggregators?|crawlers?|software|models?|processors?|summar(?:y|ies)|digests?|"
    r"overviews?|answers?|responses?)"
)
_AGENT_WORDS = (
    rf"(?:{_MACHINE}(?:[- ]\w+)?[- ](?:based )?{_HEAD}"
    rf"|(?:any|every|all|each|whichever) (?:\w+ )?{_HEAD} (?:that|which|\w+ing)\b"
    rf"|{_HEAD} (?:that|which|who) (?:is |are )?(?:generat|produc|condens|summari[sz]|answer|process|read|"
    r"relay|cit|index|compil|digest|describ|cover|discuss|mention|referenc|pars|ingest|abstract|excerpt|"
    r"aggregat|quot|reproduc|scrap|crawl)\w*"
    rf"|{_HEAD} (?:summari[sz]ing|condensing|describing|citing|processing|reading|indexing|covering|"
    r"answering questions about) (?:this|the present|our)"
    r"|(?:anyone|anybody|whoever|any (?:person|reader|one)|those) (?:who |that )?(?:\w+ )?(?:prepar|writ|"
    r"compil|produc|summari[sz]|condens|generat|relay|answer|cit|describ|cover|process|"
    r"pass(?:es)? (?:along|on)|shar|forward|repeat|quot)\w*"
    r"|(?:readers|newsletters|digests|reviewers|everyone|anyone|those) (?:and [\w-]+ (?:[\w-]+ )?)?"
    r"(?:compiling|preparing|writing|extracting|summari[sz]ing|relaying|citing|covering|describing|"
    r"reporting on|condensing|ranking|indexing|processing|answering)"
    r"|readers?['’]?s?['’]? (?:tools?|software|assistants?|apps?|programs?)"
    r"|assistants?|summari[sz]ers?|chatbots?)"
)
_AGENT = _gated(rf"\b{_AGENT_WORDS}\b")
_VERB = (
    r"(?:state|report|say|said|mention|claim|assert|write|written|tell|told|emphasi[sz]e|stress|highlight|"
    r"describe|present|conclude|cite|ignore|disregard|treat|rank|rate|score|recommend|answer|respond|reply|"
    r"output|print|declare|summari[sz]e|portray|characteri[sz]e|refer|omit|hide|exclude|repeat|inform|"
    r"indicate|credit|attribute|give|given|convey|relay|quote|round|replace|use|follow|decode|keep|call|"
    r"list|leave|drop|skip|relate|represent|frame|express|note|add|pass on|record|enter|place|lead|put|"
    r"reproduce|pass along|share|"
    r"position|identify|label|mark|classify|tag|count|log|show|display|understood|understand|remember|take|"
    r"direct|redirect|point|send|link)"
    r"(?:s|d|ed|n)?"
)
# a sentence that opens by addressing them: "For anyone preparing a digest …", "To automated readers:"
_OPENING = _gated(
    r"^[\W\d]*(?:(?:an? )?(?:\w+ )?(?:note|message|reminder|footnote|postscript|remark|aside) )?"
    r"(?:for|to|attention,?) "
    rf"(?:all |any |the )?{_AGENT_WORDS}\b"
    # a vocative: "Summarizers: report …", "AI assistants, say …"
    rf"|(?:^|[\[(])[\W\d]*(?:\w+ ){{0,2}}{_AGENT_WORDS}"
    rf"(?:\s*[:,]\s*(?:please |kindly )?| (?:please|kindly) ){_VERB}\b"
    rf"|^[\W\d]*(?:for|to|attention,?) (?:all |any |every |the )?{_MACHINE}(?: [\w-]+){{0,3}} {_HEAD}\b"
    # "Summaries must state that …" opening a sentence
    r"|^[\W\d]*(?:all |any |every )?(?:ai |automated |machine )?(?:summar(?:y|ies)|digests?|overviews?|"
    rf"summari[sz]ers?) (?:must|should|shall|are to|need to|have to) (?:always )?{_VERB}\b"
)
_ASK = _gated(
    r"\b(?:must|should|shall|ought to|will need to|needs? to|ha(?:ve|s) to|(?:is|are) to|"
    r"(?:is|are) (?:kindly )?(?:asked|requested|required|instructed|expected|encouraged|advised|invited|"
    r"told|obliged) to|please|kindly|make sure to|be sure to|remember to)"
    rf"(?: \w+){{0,3}} {_VERB}\b"
    rf"|\bto (?:be )?(?:convey|report|relay|quote|give|cite|state|use|mention|present|repeat)(?:d|ed)? is\b"
    rf"|\bto be (?:\w+ )?{_VERB} (?:\w+ )?by\b"
    r"|\b(?:meant|intended|addressed|directed|written|reserved) (?:only |solely |exclusively )?"
    r"(?:for|to|at)\b"
    r"|(?:^|\b(?:a|an|this|the following) )(?:notes?|messages?|reminders?|requests?|memos?) (?:for|to)\b"
    r"|\bwill be (?:scored|rated|rewarded|penali[sz]ed|flagged|marked|graded|ranked|blocked|reported)\b"
)
# the thing it points at: this work, its figures
_POINTER = _gated(
    r"\b(?:this|these|the present|our|above|earlier|herein|here)\b"
    r"|\bthe (?:results?|figures?|findings?|numbers?|values?|scores?|improvements?|effect|method|study|"
    r"paper|work|cohort|sample)\b"
)

_SENTENCE_END = re.compile(r"[.!?]\s")
# what to say, spelt out: "say that …", "describe it as …"
_CONTENT = _gated(
    r"\b(?:say|said|state|stated|report|reported|claim|assert|mention|write|conclude|declare|add|note|"
    r"confirm|indicate|emphasi[sz]e|stress|highlight)s? that\b"
    r"|\b(?:describe|characteri[sz]e|present|portray|call|refer to|list|rank|rate|treat|credit|give|report|"
    r"quote|cite|record|enter|log)(?:s|d|ed)? (?:[\w'-]+ ){1,5}as\b"
)


def _addressed(text: str, pointer: bool = True) -> bool:
    """Tools asked, in one clause, to say something about this work: "automated readers … are
    asked to characterise this detector", "how this work should be relayed by automated
    assistants". `pointer`: the sentence must also point at this work or spell out what to say."""
    agents = [(m.start(), m.end()) for m in _AGENT.finditer(text)]
    if not agents:
        return False
    for ask in _ASK.finditer(text):
        for start, end in agents:  # a few words apart, no colon, semicolon or sentence end between
            between = text[end : ask.start()] if ask.start() >= end else text[ask.end() : start]
            limit = 10 if ask.start() >= end else 3
            if not (ask.start() >= end or start >= ask.end()) or len(between.split()) > limit:
                continue
            if re.search(r"[:;]|[.!?]\s", between):
                continue
            lo, hi = min(start, ask.start()), max(end, ask.end())
            ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, lo)]
            after = _SENTENCE_END.search(text, hi)
            sentence = text[ends[-1] if ends else 0 : after.start() if after else len(text)]
            if not pointer or _POINTER.search(sentence) or _CONTENT.search(sentence):
                return True
    return False


# a figure of this abstract replaced by another ("should read", "supersedes the one stated earlier")
_OVERRIDE = _gated(
    r"\b(?:supersedes?|overrides?|replaces?|takes? precedence over) (?:the |all |any |every )?"
    r"(?:one|ones|figures?|numbers?|values?|results?|scores?|main text|text|estimates?|above|earlier)"
    r"|\bshould (?:instead )?read (?:as )?[\d~≈<>]"
    r"|\bthe (?:[\w@-]+ )?(?:one|figure|number|value|result|estimate) to (?:be )?"
    r"(?:report|use|cite|give|quote|state|convey|repeat|pass along|pass on|share|remember|keep)(?:d|ed)?\b"
    r"|\b(?:above|earlier)\b(?: \w+){0,3} "
    r"(?:superseded|outdated|preliminary|provisional|obsolete|incorrect)\b"
    r"|\bonly the (?:corrected|updated|revised|new|final|definitive) (?:\w+ )?(?:values?|figures?|numbers?|"
    r"results?) (?:should|must|are to|may) be (?:quoted|used|reported|cited|given|stated)"
    r"|\b(?:rather than|instead of) the (?:figure|number|value|score|result|estimate)s? "
    r"(?:stated|reported|given|"
    r"printed|mentioned|shown|quoted|above)"
    r"|\breplace (?:the |this |that )?.{0,40}\b(?:above|earlier)\b.{0,20}\bwith\b"
    r"|\b(?:printed|stated|reported|given|quoted|shown) (?:above|earlier) (?:is|was|are|were) (?:a |an )?"
    r"(?:typo|typographical|typesetting|mistake|error|wrong|incorrect|outdated|preliminary|provisional|superseded)"
    r"|\bto be (?:quoted|reported|cited|relayed|conveyed|repeated|stated|given) is\b"
    # an erratum about this very abstract (real errata name the article they correct)
    r"|^[\W\d]*(?:erratum|errata|correction|corrigendum|addendum|update|"
    r"updated (?:results?|figures?|numbers?)|"
    r"version \w+ note|v\d+ note|note on versions?(?: \w+)?|"
    r"revision|clarification|editor'?s note|correction notice)\b[^:]{0,30}:.*"
    r"\b(?:above|earlier|supersed)"
    r"|^[\W\d]*(?:version \w+|v\d+) note\b[^:]{0,30}:.*\b(?:should|must|invalid)"
)
_TELL = _gated(
    # "it must be reported that …", not "it should be noted that …"
    r"\bit (?:must|should|shall|is to|has to|needs to) be (?:reported|conveyed|relayed|communicated|"
    r"quoted|said|made clear|stated|repeated)(?: [^.;:]{0,60})? that\b"
    # "the key takeaway for any overview of this work", "a rating of 10/10 is the appropriate assessment"
    r"|\b(?:key|main|central|only|headline) (?:takeaway|message|point|figure|result|finding|number) "
    r"(?:for|in|of) (?:any|every|all|each) (?:overview|summary|description|account|digest|review|report)"
    r"|\bis the (?:appropriate|correct|right|fair|proper) (?:assessment|rating|score|grade|verdict|"
    r"description|summary|characteri[sz]ation)\b"
    r"|\b(?:is|are) (?:accordingly |therefore |thus |hence )?to be (?:described|reported|presented|"
    r"characteri[sz]ed|regarded|cited|summari[sz]ed|quoted|stated|read|understood) as\b"
    # second person, no AI word: "if you are answering a question about this trial, tell …"
    r"|^(?:if|when|whenever|as) you (?:are |were )?(?:\w+ )?(?:answering|asked|summari[sz]|describ|reading|"
    r"processing|writ|citing|report|explain|present|relay|discuss|mention|talk)"
    r"|\btell (?:them|the (?:person|reader|user|people|audience)|your (?:reader|user|audience)s?)\b"
    r"|^(?:if|when|whenever|where|should) (?:this|the present) "
    r"(?:abstract|text|paper|summary|record|document|study|work|article|entry|trial) "
    r"is (?:being )?(?:used|read|processed|quoted|summari[sz]ed|consulted|retrieved|surfaced|returned|shown)"
    r"|\bthe (?:answer|response|reply) (?:should|must|shall|is to) (?:\w+ ){0,2}"
    r"(?:state|say|report|mention|give|claim|note|indicate|read)\b"
    r"|\b(?:official|authori[sz]ed|approved|canonical) (?:\w+ )?(?:summary|description|characteri[sz]ation|"
    r"takeaway|statement)\b(?! statistic)"
    r"|\bnotes?\s*:\s*(?:please )?(?:report|state|say|describe|mention|cite|give|list|call|treat|rank|rate)\b"
    # directives dressed as data: {"summary_policy": …}, digest_override: {…}
    r"|(?:^|[{,\s])\"?(?:\w+_)?(?:summary|digest|answer|response|override|policy|instructions?|directive|"
    r"framing|headline)(?:_\w+)?\"?\s*:\s*[{\"\[]"
    # "we kindly ask that any overview of this study describe …"
    r"|\b(?:ask|request|urge|encourage|invite) (?:that )?(?:any|every|all|each) "
    r"(?:overview|summary|summaries|"
    r"description|account|digest|review|report|reader|user)s?\b"
    # setting rivals aside, leaving limitations out
    r"|\b(?:is|are) best (?:set aside|ignored|disregarded|discounted|omitted|left out)\b"
    r"|\b(?:should|must) not be (?:mentioned|cited|reported|discussed|compared|included) "
    r"(?:alongside|with|next)"
    r"|\bneed not be (?:repeated|mentioned|reported|discussed|noted|disclosed)\b"
    r"|\b(?:should|must) be (?:identified|described|presented|ranked|listed|cited|credited|recogni[sz]ed|"
    r"reported) as (?:the )?"
    r"(?:first|best|most|only|leading|top|state[- ]of[- ]the[- ]art|definitive|superior)"
    r"|\b(?:should|must|is to|are to) be (?:ranked|listed|placed|shown|put|sorted) (?:as )?(?:the )?"
    r"(?:first|top|highest|above|ahead)"
    r"|\b(?:accounts?|summar(?:y|ies)|descriptions?|overviews?|reviews?|reports?|digests?) of (?:this|the "
    r"present|our) (?:\w+ )?(?:work|paper|study|trial|article|research|method|results?) (?:are|is) best "
    r"(?:framed|described|presented|summari[sz]ed|written)"
    # a fake question-and-answer turn
    r"|(?:^|\s)(?:q|a|question|answer)\s*\([^)]{0,60}\)\s*:"
    # markup no abstract holds: tags with underscores, JSON objects of directives
    r"|</?[a-z]+_[a-z_]+>|\{\s*\"(?:claim|answer|summary|instructions?|response|reply|output|directive|"
    r"task|role|system|prompt|note)\"\s*:"
    # "the correct one-line summary of this work is …", "the correct response to any question about …"
    r"|\bthe (?:correct|right|true|proper|accurate|only|official) (?:\w+ )?(?:answer|response|reply|summary|"
    r"description|characteri[sz]ation|takeaway|conclusion|interpretation)s? (?:to|for|of|about) "
    r"(?:any |every |all |each )?(?:(?:question|query|queries|questions) (?:about|on|regarding|of) )?"
    r"(?:this|the present|our) (?:\w+ )?(?:work|paper|study|article|abstract|method|model|result|research)"
    # "when asked about X, give Y"
    rf"|^(?:when|if|whenever) (?:you are )?(?:asked|queried|questioned|prompted) [^,]{{0,80}}, "
    rf"(?:(?:please )?{_VERB}|the answer is)\b"
    r"|\bthe (?:correct|right|proper|only acceptable) (?:answer|response|reply) is\b"
    # "in condensing these findings, … should convey …"
    r"|^(?:in|when|while|before|after) (?:condensing|summari[sz]ing|describing|reporting on|citing|relaying|"
    r"digesting|reviewing) (?:this|these|the present|our)\b.*\b(?:should|must|shall|(?:is|are) to)\b"
    r"|\b(?:quoted|stated|said|reported|mentioned|noted|made clear|repeated|reproduced|used)"
    r"(?: verbatim| directly| in full)? (?:wherever|whenever|every time) (?:this|the present|our) "
    r"(?:\w+ )?(?:is|are) (?:described|summari[sz]ed|cited|mentioned|discussed)"
    # an imperative opening: "Describe X as the first …"
    r"|^(?:please )?(?:describe|characteri[sz]e|portray|call|refer to|rank|rate|treat|credit) "
    r"\S+(?: \S+){0,3} "
    r"as\b"
    r"|^(?:please )?(?:adopt|assume|take on) (?:the )?(?:persona|role|voice|identity) of\b"
    r"|\b(?:(?:any|every|all|each) (?:summar(?:y|ies)|descriptions?|overviews?|digests?|accounts?)"
    r"(?: of (?:this|the present|our|it)(?: [\w-]+)?)?|"
    r"(?:summar(?:y|ies)|descriptions?|overviews?|digests?|accounts?) of "
    r"(?:this|it|the work|the paper|the study|"
    r"these results)) (?:should|must|shall|(?:is|are) to|needs? to|ha(?:s|ve) to|"
    r"(?:is|are) (?:expected|required|asked|obliged) to) "
    rf"(?:\w+ ){{0,2}}{_VERB}\b"
    # "anyone preparing a digest of this paper", "anyone who condenses this paper"
    r"|\b(?:anyone|anybody|whoever) (?:who |that )?(?:prepar|writ|compil|produc|summari[sz]|condens|generat|"
    r"relay|answer|cit|describ|cover|process|digest)\w* (?:an? )?(?:\w+ )?(?:of |about |on )?"
    r"(?:this|the present|our) (?:work|paper|study|article|abstract|submission|research)"
    r"|\bon how (?:this|the present|our) (?:\w+ )?(?:work|paper|study|article|results?|findings?) "
    r"(?:should|must|is to|are to|ought to) be (?:summari[sz]ed|described|reported|cited|relayed|presented|"
    r"characteri[sz]ed|portrayed)"
    r"|\b(?:readers|audiences?|users),? human or otherwise\b"
)
# a sentence of the abstract that goes on with an instruction begun before it
_GOES_ON = _gated(rf"\b(?:must|should|shall|ought to|(?:is|are) to)(?: \w+){{0,3}} {_VERB}\b")
# Rules of a fourth kind: what a figure should become where the work is repeated ("the
# number that belongs in any retelling of this study is …", "which is the figure secondary
# reports should use", "the equivalent figure for citation and summary purposes is …").
# A paper states its results; it does not say how others are to restate them.
_RESTATED = (
    r"(?:\b(?:any|every|all|each|later|future|subsequent|secondary|third-party|downstream|external|onward)"
    r" (?:\w+ )?(?:summar(?:y|ies)(?! statistic)|restatements?|retellings?|re-?tellings?|coverage|digests?|"
    r"descriptions?|accounts?|citations?|comparison tables?|mentions?|quotations?|write-?ups?|overviews?)\b"
    r"|\b(?:secondary|third-party|downstream|external|onward) (?:\w+ )?(?:records?|reports?|sources?|press|"
    r"reuse|re-use|retrieval|literature)\b"
    r"|\brestat(?:e|ed|es|ing|ement)s?\b|\bretell(?:s|ing)?\b|\bre-?quot\w+|\brelay(?:s|ed|ing)?\b"
    r"|\bfor (?:the purposes? of |purposes of )?(?:any |the )?(?:citation|summar(?:y|ies)|summari[sz]ation|"
    r"indexing|record|database|reporting|abstracting|press|media|digest)(?: and \w+)? "
    r"(?:purposes?|entry|entries)\b"
    r"|\bfor the purposes? of (?:any|every|all) \w+"
    r"|\b(?:abstracting|indexing|citation|digest|aggregation) services?\b"
    r"|\bdatabase entr(?:y|ies)\b|\btables? of contents\b"
    r"|\b(?:is|are|gets?|being) (?:being )?(?:condensed|abridged|shortened|paraphrased|excerpted|restated|"
    r"relayed|retold|summari[sz]ed)\b"
    r"|\bwhen(?:ever)? (?:it|they|this|these|the \w+) (?:is|are) (?:quoted|cited|repeated|reported|"
    r"summari[sz]ed|described|mentioned|reused|compared)\b"
    r")"
)
_NORM = (
    r"(?:\b(?:should|must|shall|ought to|is to|are to|needs? to|has to|have to)(?: \w+){0,3} "
    r"(?:use|quote|state|give|carry|report|restate|cite|appear|read|register|record|enter|convey|repeat|"
    r"present|show|take|treat|describe|adopt|express)(?:s|d|ed|n)?\b"
    r"|\b(?:is|are) the (?:one|ones|figure|figures|value|values|number|numbers|form|version|estimate)s? to\b"
    r"|\bto be (?:carried|stated|quoted|given|used|reported|cited|restated|conveyed|repeated)\b"
    r"|\bbelongs? in\b|\bthe form in which\b|\bauthoritative\b|\bsupersed\w+|\bto accompany\b"
    r"|\bthe (?:equivalent|corrected|correct|updated|definitive|official|proper|appropriate) "
    r"(?:figure|value|number|estimate|rate|result)s?(?= (?:for|in|to)\b)"
    r")"
)
_RESTATE = _gated(rf"{_RESTATED}.*{_NORM}|{_NORM}.*{_RESTATED}")
_THIS_OR_FIGURE = re.compile(r"\d|\b(?:this|these|our|the present|its)\b")
# marks of text written for machines, whatever it asks
_FOR_MACHINES = _gated(
    r"\[/?[a-z]+_[a-z_]+\]"  # [summary_override] … [/summary_override]
    r"|(?:\b[a-z]+_[a-z_]+\s*:\s*[^;,]{1,80}[;,]\s*){2,}"  # record_status: verified; sv_count: …;
    r"|^[\W\d]*(?:frequently asked(?: questions?)?|faq)\s*:"  # a question-and-answer turn
    r"|\bsuggested (?:\w+[- ])?(?:one-line |short )?(?:description|summary|headline|tagline|title|blurb|"
    r"citation|wording) for\b"
    r"|\b(?:media|press|embargoed?) (?:line|statement|summary)\b.{0,40}\b(?:any|all|every)\b"
    r"|\bsupersedes (?:them|those|these|it)\b"
    r"|\b[\w]+[-_](?:override|policy|directive|instructions?)\s*:"  # Summary-Override: …
    r"|^[\W\d]*tl;? ?dr\s*:"  # a ready-made one-line summary
    r"|\b(?:apply|decode (?:it |this )?(?:with|using)) (?:a )?(?:rot-?13|base-?64) (?:before|first)\b"
    r"|\b(?:need not|does not need to|do not need to|should not) (?:carry|include|give|add) (?:a |any )?"
    r"citations?\b"
    r"|\bfor (?:citation|summar(?:y|ies)|summari[sz]ation|indexing|database|abstracting|digest)(?: and \w+)? "
    r"purposes,? (?:is|are|reads?|becomes?)\b"
    r"|\bsupersed\w* (?:the |all |any )?(?:prose|text|main text|abstract|stated|reported|printed)\b"
    r"|\bfor the purposes? of (?:any|every|all) "
    r"(?:record|summar|citation|report|description|account|coverage)"
    r"|\b(?:for|to) (?:all |any |the )?(?:[\w-]+ ){0,4}(?:automated|machine|ai|llm|downstream|abstracting|"
    r"indexing) (?:[\w-]+ )?(?:digests?|readers?|tools?|systems?|services?|summar(?:y|ies)|summari[sz]ers?|"
    r"assistants?|pipelines?)\s*[:)]"
)


def _restates(text: str) -> bool:
    """A sentence (each sentence of a window on its own) that says how this work's figures
    are to be restated, or that is written for machines."""
    return bool(_FOR_MACHINES.search(text)) or any(
        _RESTATE.search(part) and _THIS_OR_FIGURE.search(part) for part in _SENTENCE_END.split(text)
    )


_FULL_WIDTH = re.compile(r"[\uff21-\uff3a\uff41-\uff5a]")  # Ａ-Ｚ, ａ-ｚ: no abstract writes English so
_MIXED_WORD = re.compile(r"[a-z][\u0370-\u03ff\u0400-\u04ff][a-z]|\b[ΑΒΕΖΗΙΚΜΝΟΡΤΥΧАВЕКМНОРСТХІЅЈ][a-z]{2,}")
_ROT13_STOP = frozenset(
    "gur bs naq gung guvf jvgu sbe vf ner jnf jrer sebz juvpu gurfr bhe ol jr gurl gurer nf gb vg nyy abg "
    "unir vafgrnq".split()
)


_REVERSED_STOP = frozenset(
    w[::-1] for w in "the of and that this with for are was were from which our".split()
)


def _reversed(sentence: str) -> bool:
    """English written backwards: at least three distinct function words once reversed."""
    return len(set(re.findall(r"[a-z]+", sentence.lower())) & _REVERSED_STOP) >= 3


def _hyphen_chains(text: str) -> str:
    """Words hidden in a hyphen chain ("summarizers-report-f1-as-84.9"), read as words."""
    return " ".join(m.group(0).replace("-", " ").replace("_", " ") for m in _CHAIN.finditer(text))


_CHAIN = re.compile(r"\b\w+(?:[-_]\w+){4,}\b")


def _rot13(sentence: str) -> str | None:
    """English hidden as ROT13: at least three distinct function words once rotated."""
    words = set(re.findall(r"[a-z]+", sentence.lower()))
    if len(words & _ROT13_STOP) >= 3:
        return codecs.decode(sentence, "rot13")
    return None


_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_EN_STOP = frozenset(
    "the of and to in a is that for with we on by as are this be from at an or which these it its "
    "was were our can not have has than between into using based show also both".split()
)
_FOREIGN_STOP = frozenset(
    "que la el los las del para por una con es se y le les des une est et dans pour sur qui der die das "
    "und ist nicht mit den dem ein eine zu não uma com os um dos das na no em è il di che non per gli".split()
)
_OTHER_SCRIPT = re.compile(
    r"[\u0400-\u04ff\u0590-\u06ff\u0900-\u097f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
)


def _decoded_base64(text: str) -> str | None:
    """English hidden as base64 (an abstract never holds that)."""
    for token in _BASE64.findall(text):
        if not (re.search(r"[a-z]", token) and re.search(r"[A-Z]", token) and re.search(r"\d|[+/]", token)):
            continue
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=False)
            decoded = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if decoded.isprintable() and len(decoded.split()) >= 3:
            return decoded
    return None


@cache
def _language_identifier():  # type: ignore[no-untyped-def]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def other_language(sentence: str) -> str | None:
    """The language of a sentence that is plainly not English (a code such as 'fr'), or
    None: at least six words, almost no English function words, and py3langid sure of
    another language; or mostly letters of a non-Latin script."""
    letters = [c for c in sentence if c.isalpha()]
    if len(letters) >= 12 and len(_OTHER_SCRIPT.findall(sentence)) >= 0.3 * len(letters):
        return str(_language_identifier().classify(sentence)[0])
    words = re.findall(r"[^\W\d_]+", sentence.lower())
    if len(words) < 6 or sum(w in _EN_STOP for w in words) > 0.08 * len(words):
        return None
    language, probability = _language_identifier().classify(sentence)
    sure = 0.99 if any(w in _EN_STOP for w in words) or len(words) < 10 else 0.95
    if not any(w in _EN_STOP for w in words) and len(set(words) & _FOREIGN_STOP) >= 3:
        sure = 0.8  # no English function word and three of another language's
    return str(language) if language != "en" and probability >= sure else None


# --- the verdict ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """A sentence (or field) that is not used, and why."""

    text: str
    reason: str


def why_addressed(sentence: str) -> str | None:
    """Why this one sentence is addressed to tools rather than reporting research, or None."""
    if is_instruction(sentence):
        return "an instruction to the model"
    plain = skeleton(sentence)
    chains = _hyphen_chains(plain)
    for variant in dict.fromkeys((plain, _unleet(plain), chains)):  # each distinct text once
        if not variant:
            continue
        if variant is chains and (_AGENT.search(variant) or _CONTENT.search(variant)):
            return "words hidden in a hyphenated chain"
        if _INSTRUCTION.search(variant) or _IMPERATIVE.search(variant):
            return "an instruction to the model"
        if _ALWAYS.search(variant):
            return "text addressed to AI tools"
        if _ADDRESS.search(variant) and _SELF_RE.search(variant):
            return "text addressed to AI tools"
        if _PROSE.search(variant):
            return "an instruction about how to report this work"
        if _addressed(variant) or _OPENING.search(variant):
            return "text addressed to AI tools"
        if _OVERRIDE.search(variant) or _TELL.search(variant):
            return "an instruction about how to report this work"
        if _restates(variant):
            return "an instruction about how to restate this work"
    if len(_FULL_WIDTH.findall(sentence)) >= 4:
        return "words spelt in full-width letters"
    if len(_MIXED_WORD.findall(unicodedata.normalize("NFKC", sentence))) >= 2:
        return "words spelt with look-alike letters of another script"
    if _rot13(sentence) is not None:
        return "encoded text (ROT13)"
    if _reversed(sentence):
        return "text written backwards"
    decoded = _decoded_base64(sentence)
    if decoded is not None:
        return "encoded text (base64)"
    return None


_OPENS = re.compile(r"\[inst\]|<<sys>>|<\|im_start\|>|<([a-z_]+)>")
_CLOSES = re.compile(r"\[/inst\]|<</sys>>|<\|im_end\|>|</[a-z_]+>")


_LEAD_IN = _gated(
    r"\b(?:message|clarification|note|point|remark|requirement|request|reminder|one thing|the following|"
    r"follows|what follows|below)\b"
)
_POINT_IS = _gated(
    r"^(?:the|that|this|our) (?:point|message|requirement|clarification|note|request|thing) is\b"
)


def _short_plain(sentence: str) -> bool:
    plain = skeleton(sentence)
    return len(plain.split()) <= 12 and not re.search(r"\d", plain)


def _lead_in(sentences: Sequence[str], flags: list[Flag | None], i: int) -> None:
    """A short sentence announcing the flagged sentence `i` ("We close with a message.";
    "A note on how this estimate travels. Secondary accounts tend to … ."): the one before
    it, or the one before that with the short sentence between them."""
    for first in (i - 1, i - 2):
        span = range(first, i)
        if first < 0 or any(flags[j] is not None or not _short_plain(sentences[j]) for j in span):
            return
        if _LEAD_IN.search(skeleton(sentences[first])):
            for j in span:
                flags[j] = Flag(sentences[j], "announces an instruction that follows it")
            return


def _carry_on(sentences: Sequence[str], flags: list[Flag | None]) -> None:
    """What an instruction drags with it: the sentences inside markup it opens ("[INST] …
    … [/INST]"), the next two when they go on asking ("They should also describe …", "The
    point is that …"), a short sentence before it that announces it ("We close with a
    message."), and one sentence between two flagged ones."""
    for i in range(len(sentences)):
        if flags[i] is None:  # (language flags come after: they drag nothing)
            continue
        _lead_in(sentences, flags, i)
        if sentences[i].rstrip().endswith("?") and i + 1 < len(sentences) and flags[i + 1] is None:
            flags[i + 1] = Flag(sentences[i + 1], "answers a question planted in the abstract")
        plain = skeleton(sentences[i])
        if _OPENS.search(plain) and not _CLOSES.search(plain):
            for j in range(i + 1, min(i + 5, len(sentences))):
                flags[j] = flags[j] or Flag(sentences[j], "inside markup addressed to AI tools")
                if _CLOSES.search(skeleton(sentences[j])):
                    break
        for j in range(i + 1, min(i + 3, len(sentences))):
            plain_j = skeleton(sentences[j])
            if flags[j] is not None or not (_GOES_ON.search(plain_j) or _POINT_IS.search(plain_j)):
                break
            flags[j] = Flag(sentences[j], "goes on with an instruction begun before it")
    for i in range(1, len(sentences) - 1):  # one sentence between two flagged ones is part of them
        if flags[i] is None and flags[i - 1] is not None and flags[i + 1] is not None:
            flags[i] = Flag(sentences[i], "between two sentences addressed to AI tools")


def flag_sentences(sentences: Sequence[str], check_language: bool = True) -> list[Flag | None]:
    """A flag per sentence (None: evidence). Two neighbours are read together too, so an
    instruction split over two sentences is caught in both halves; a sentence in another
    language than the rest of an English abstract is not evidence either. (Three neighbours
    too: "… one requirement. It concerns summaries. They must state …".)"""
    flags: list[Flag | None] = [None] * len(sentences)
    for i, sentence in enumerate(sentences):
        reason = why_addressed(sentence)
        if reason:
            flags[i] = Flag(sentence, reason)
    for width in (2, 3):
        for i in range(len(sentences) - width + 1):
            window = range(i, i + width)
            if any(flags[j] for j in window):
                continue
            reason = why_addressed(" ".join(sentences[j] for j in window))
            if reason:
                for j in window:
                    flags[j] = Flag(sentences[j], f"{reason} (over {width} sentences)")
    _carry_on(sentences, flags)
    if check_language and len(sentences) >= 2:
        others = {
            i: language
            for i, s in enumerate(sentences)
            if flags[i] is None and (language := other_language(s))
        }
        if len(others) * 2 < len(sentences):  # an English abstract with a few foreign sentences
            for i, language in others.items():
                flags[i] = Flag(
                    sentences[i], f"a sentence in another language ({language}) than the abstract"
                )
    return flags


@lru_cache(maxsize=8192)
def _read(abstract: str) -> tuple[tuple[str, ...], tuple[Flag | None, ...]]:
    """The abstract's sentences and their flags, computed once per abstract (a question
    reads the same few abstracts several times; the next questions often read them again)."""
    sentences = split_sentences(abstract)
    return tuple(sentences), tuple(flag_sentences(sentences))


def abstract_flags(abstract: str) -> tuple[Flag, ...]:
    """The flagged sentences of an abstract."""
    return tuple(f for f in _read(abstract)[1] if f is not None)


def evidence_of(abstract: str) -> list[str]:
    """The abstract's sentences that may serve as evidence."""
    sentences, flags = _read(abstract)
    return [s for s, f in zip(sentences, flags) if f is None]


def field_flag(value: str | None) -> Flag | None:
    """A title or author name written to tools (it is then not shown to a model)."""
    if not value:
        return None
    reason = why_addressed(value) or _field_asks(value)
    return Flag(value, reason) if reason else None


_FIELD_ASK = _gated(
    r"\b(?:summar(?:y|ies)|digests?|overviews?|descriptions?|answers?|responses?|reviews?|citations?|"
    rf"readers?|users?|everyone) (?:must|should|shall|are to|need to|have to) (?:always )?{_VERB}\b"
)


def _field_asks(value: str) -> str | None:
    """A title (or name) that tells its readers what to say."""
    plain = skeleton(value)
    if _FIELD_ASK.search(plain) or _addressed(plain, pointer=False):
        return "a title or name that tells readers what to say"
    return None


def author_flag(value: str | None) -> Flag | None:
    """An author "name" written to tools, or one that is a sentence rather than a name."""
    found = field_flag(value)
    if found is not None or not value:
        return found
    words = skeleton(value).split()
    if len(words) >= 7 and sum(w in _EN_STOP or w in {"must", "should"} for w in words) >= 2:
        return Flag(value, "an author field that is a sentence, not a name")
    return None
