"""Regular expressions and word lists for the `rules` extractor (xfinder_ray/extractors/rules.py).

Every pattern here is bounded: no nested unbounded quantifiers, every gap is `{0,n}`, and the
callers only ever run a pattern over a capped slice of text or over text with a linear scan.
"""

from __future__ import annotations

import re

# Answer tiers: a later claim of a higher-or-equal tier overrides an earlier one; weaker tiers only
# count when nothing stronger is there (or when a correction marker comes in between).
HEDGED, INITIAL, WEAK, NORMAL, STRONG = 0, 1, 2, 3, 4

_I = re.I

# Where a long-scanned pattern can match, so it is tried only there (claims.finditer_anchored): one
# (firsts, keywords, near, far, word) for each of its alternatives, read as "a match starts with one
# of `firsts`, `near`..`far` characters before one of `keywords`, which starts a word when `word`"
# (all lower case; a keyword holding another is left out, the shorter one is looked for). An
# alternative changed here needs its anchor changed with it: a missing anchor loses matches silently.
Anchor = tuple[tuple[str, ...], tuple[str, ...], int, int, bool]


def _starting(words: tuple[str, ...], word: bool = True) -> tuple[Anchor, ...]:
    """Anchors of alternatives that start with their keyword."""
    return tuple(((w,), (w,), 0, 0, word) for w in words)


# ---------------------------------------------------------------------------------------------
# Forward claims: "<phrase> <value>".

# Nouns that name the answer itself; `option`/`choice` need a qualifier or a colon, because
# "this choice is a common distractor" is commentary, not an answer.
_ANSWER_NOUN = (
    r"(?:answer|label|classification|categori[sz]ation|category|prediction|verdict|sentiment|output)"
)
_OPTION_NOUN = r"(?:option|choice|pick|selection|guess)"
_WEAK_NOUN = r"(?:results?|solutions?|responses?|roots?|zeros?|answers)"
_QUALIFIER = (
    r"(?:final|correct|corrected|right|revised|updated|true|actual|best|only|proper|overall|initial|first|"
    r"original|previous|most\s{1,3}(?:likely|appropriate|suitable|plausible|reasonable|probable|accurate)|my|our)"
)
# "answer to this question", "label for the text", "answer I would choose", "option that best fits
# this description" (the relative clause qualifies the noun as "best" does: (?P<best>)).
_NOUN_TAIL = (
    r"(?:\s{1,3}(?:to|for|of|in)\s{1,3}(?:this|the|that|your|my|each)\s{1,3}[\w-]{1,20})?"
    r"(?:\s{1,3}that\s{1,3}(?P<best>best|most\s{1,3}(?:accurately|closely|appropriately))\s{1,3}[\w-]{1,20}"
    r"(?:\s{1,3}[^\s.!?:]{1,30}){0,12}?)?"
    r"(?:\s{1,3}(?:that\s{1,3})?(?:I|we)\s{1,3}(?:would\s{1,3}|will\s{1,3}|'d\s{0,3}|'ll\s{0,3}|shall\s{1,3})?"
    r"(?:choose|pick|select|give|go\s{1,3}with|settle\s{1,3}on)\b)?"
)
_COPULA = (
    r"(?:\s{0,3}(?:[:：=]|\bis\s{0,3}[:：])"
    r"|\s{1,3}(?P<hedge>(?:could|might|may|can)\s{1,3}(?:also\s{1,3}|possibly\s{1,3}|well\s{1,3})?be)\b"
    r"|\s{1,3}(?:(?:would|should|must|will|shall|has\s{1,3}to|ought\s{1,3}to)\s{1,3}be|is|are|was|remains|becomes"
    r"|seems\s{1,3}to\s{1,3}be|appears\s{1,3}to\s{1,3}be|lies\s{1,3}in)\b)"
)
FWD_ANSWER = re.compile(r"\b" + _ANSWER_NOUN + r"\b" + _NOUN_TAIL + _COPULA, _I)
# Starts at the noun (a leading literal keeps the scan fast); the qualifier is checked by
# QUALIFIER_BEFORE on the text just before the match.
FWD_OPTION = re.compile(
    r"\b" + _OPTION_NOUN + r"\b(?:(?P<colon>\s{0,3}[:：])|" + _NOUN_TAIL + _COPULA + ")", _I
)
QUALIFIER_BEFORE = re.compile(r"\b" + _QUALIFIER + r"\s{1,3}$", _I)
FWD_WEAK_NOUN = re.compile(
    r"\b(?:the|my|final|its|their)\s{1,3}" + _WEAK_NOUN + r"\b" + _NOUN_TAIL + _COPULA, _I
)

# Verb phrases that commit to a value.
FWD_VERB = re.compile(
    r"\b(?:I|we)(?:\s{1,3}(?:would|will|shall|must|should)|'d|'ll|\s{1,3}(?:am|are)\s{1,3}going\s{1,3}to)?"
    r"\s{1,3}(?:choose|pick|select|go\s{1,3}with|go\s{1,3}for|opt\s{1,3}for|settle\s{1,3}on)\b(?:\s{1,3}option\b)?"
    r"|\b(?:classify|label|categori[sz]e|tag|mark)\s{1,3}(?:it|this|that|them|the\s{1,3}[\w-]{1,20})\s{1,3}as\b"
    r"|\bI(?:'m|\s{1,3}am)\s{1,3}going\s{1,3}(?:with|for)\b"
    r"|\bI(?:'d|\s{1,3}would)\s{1,3}say\b"
    r"|\bthat\s{1,3}leaves(?:\s{1,3}us\s{1,3}with)?\b"
    r"|\b(?:is|be)\s{1,3}classified\s{1,3}as\b",
    _I,
)
FWD_STRONG_VERB = re.compile(
    r"\bchange\s{1,3}(?:my|the)\s{1,3}(?:answer|choice|selection)\s{1,3}to\b"
    r"|\b(?:it|this|that)(?:'s|\s{1,3}is|\s{1,3}must\s{1,3}be|\s{1,3}should\s{1,3}be)\s{1,3}actually\b"
    r"|\bcorrect\s{1,3}myself\s{0,3}[:：,]"
    r"|\b(?:wait|no|oops|hmm+|sorry)\s{0,3}[,.!]?\s{0,3}actually\s{0,3},?\s{1,3}(?:it's|it\s{1,3}is|it\s{1,3}should\s{1,3}be)\b",
    _I,
)
FWD_STRONG_VERB_ANCHORS: tuple[Anchor, ...] = (
    *_starting(("change", "hm")),  # "hmm+" has no bound on its length: found by its start
    # "it's actually" .. "that   should   be   actually"
    (("it", "this", "that"), ("actually",), 5, 21, True),
    (("correct",), ("myself",), 8, 10, True),
    # "noactually" .. "sorry   !   actually" (the keyword may follow a letter)
    (("wait", "no", "oops", "sorry"), ("actually",), 2, 12, False),
)
# Conclusions without the word "answer" ("so it's C", "therefore we get 12"): weak, because chains
# of reasoning say this of intermediate results too; they win only without a stronger claim, or
# after a correction marker ("Wait, I forgot the tax, so it's 12").
FWD_CONCLUDE = re.compile(
    r"\b(?:so|thus|therefore|hence|then)\s{0,3},?\s{1,3}(?:it's|it\s{1,3}is|it\s{1,3}must\s{1,3}be|we\s{1,3}get|"
    r"we\s{1,3}have|that's|that\s{1,3}is|that\s{1,3}gives(?:\s{1,3}us)?|that\s{1,3}makes|the\s{1,3}(?:total|sum|"
    r"difference|product|quotient)\s{1,3}is)\b",
    _I,
)
# A sentence that is just a conclusion word and the answer: "So C.", "Therefore, 84."
FWD_SO = re.compile(
    r"(?:^|(?<=[.!?\n]))[ \t]{0,3}(?:so|thus|therefore|hence|ergo|overall|in\s{1,3}conclusion|in\s{1,3}summary|"
    r"to\s{1,3}sum\s{1,3}up)[ \t]{0,3}[,:]?[ \t]{1,3}"
    # stacked conclusion words: "So, in conclusion, the product abc is -120."
    r"(?:(?:in\s{1,3}conclusion|in\s{1,3}summary|overall|finally|ultimately)[ \t]{0,3}[,:]?[ \t]{1,3})?(?=\S)",
    re.M | _I,
)
# Superlative statements without an answer noun: "the best conductor here is a steel spoon".
FWD_SUPERLATIVE = re.compile(
    r"\bthe\s{1,3}(?:best|likeliest|most\s{1,3}(?:likely|suitable|appropriate|plausible|reasonable|fitting|"
    r"probable|logical))\s{1,3}[\w-]{1,20}(?:\s{1,3}[\w-]{1,20})?(?:\s{1,3}here)?"
    r"\s{1,3}(?:is|would\s{1,3}be|must\s{1,3}be)\b",
    _I,
)
FWD_SUPERLATIVE_ANCHORS: tuple[Anchor, ...] = ((("the",), ("best", "likeliest", "most"), 4, 6, True),)
# The option nearest a value the response computed: "The answer is not listed, but the closest option
# is (J).", "the nearest one would be B", "the closest match to 298 K is (J)". A choice, made: it
# overrides the "not listed" before it (the computation's value is what is not listed).
FWD_CLOSEST = re.compile(
    r"\bthe\s{1,3}(?:closest|nearest)(?:\s{1,3}(?:one|match|option|choice|answer|value))?"
    r"(?:\s{1,3}(?:to|from)\s{1,3}[^\n]{1,60}?)?\s{0,3}(?:[:：]|\bis\b|\bwould\s{1,3}be\b)",
    _I,
)
FWD_CLOSEST_ANCHORS: tuple[Anchor, ...] = ((("the",), ("closest", "nearest"), 4, 6, True),)
# ... and disowned in the same line: "the closest option is C, but it is not the correct answer",
# "(J), but the values are not correct", "which is not the right answer", "but it is not listed".
CLOSEST_DISOWNED = re.compile(
    r"\b(?:but|which|though|although|however)\b[^\n]{0,40}?\b(?:is|are|'s)\s{1,3}(?:still\s{1,3})?not"
    r"\s{1,3}(?:the\s{1,3})?(?:correct|right|true|valid|listed|available|among|one\s{1,3}of|an\s{1,3}option)\b"
    # "..., but that's double the correct answer", "but it's quite far off", "but this is off by an
    # order of magnitude", "but this is still significantly different from our calculation"
    r"|\bbut\s{1,3}(?:it|this|that)(?:'s|\s{1,3}is)\s{1,3}(?:still\s{1,3})?(?:(?:quite|very|way|much|significantly|far)"
    r"\s{1,3}different|(?:quite\s{1,3}|very\s{1,3}|way\s{1,3})?(?:far\s{1,3}off|off\s{1,3}by)|double|twice|half|not\s{1,3}close)\b",
    _I,
)
CLOSEST_LINE = 200  # characters after a closest-option claim read for its disowning
# Multilingual answer markers (Chinese, Japanese, Korean, Spanish, French, Italian, Portuguese,
# German, Russian): "答案是 B", "答案：A", "la respuesta es B", "Antwort: B", "Ответ: B".
FWD_MULTI_CJK = re.compile(
    r"(?:最终|正确|最后)?答案(?:应该|应当|应)?(?:是|为|為|选|選|\s{0,3}[:：])"
    r"|(?:故|所以|因此|因而)\s{0,3}(?:应)?选(?:择)?(?=\s{0,3}[A-Za-z(（])"
    r"|(?:答え|正解)\s{0,3}(?:は|[:：])"
    r"|정답(?:은|는|\s{0,3}[:：])",
)
HAS_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
FWD_MULTI_LATIN = re.compile(
    r"(?:[rR](?:espuesta|[ée]ponse|isposta|esposta)(?:\s{1,3}(?:correcta|correcte|corretta|correta|final|finale))?"
    r"|(?:[rR]ichtige\s{1,3}|[kK]orrekte\s{1,3})?[aA]ntwort"
    r")\s{0,3}(?:[:：]|\s(?:es|est|è|é|ist|lautet)\b)"
    r"|[оО]твет\s{0,3}(?:[:：—]|\s-\s|\sэто\b)",
)
# `#### 42` (GSM8K style) and a markdown heading "## Final Answer" whose value is on the next line.
HASHES = re.compile(r"^[ \t]{0,8}####(?!#)[ \t]{0,8}(?=\S)", re.M)
HEADING = re.compile(
    r"^[ \t]{0,8}#{1,6}[ \t]{0,8}(?:the\s{1,3})?(?:final\s{1,3}|correct\s{1,3})?"
    r"(?:answer|conclusion|label|classification|prediction)[ \t]{0,8}:?[ \t]{0,8}$",
    re.M | _I,
)
BOXED = re.compile(r"\\(?:boxed|fbox)\s{0,3}\{")
# Few-shot "Q: ... A: ..." format: "A:" at a line start is an answer label only when "Q:" is used.
QA_Q = re.compile(r"^[ \t]{0,8}Q\d{0,3}\s{0,3}[:：]", re.M)
QA_A = re.compile(r"^[ \t]{0,8}A\d{0,3}\s{0,3}[:：]", re.M)

# Context before a claim that makes it an explicitly earlier answer, or a stronger final one.
INITIAL_CTX = re.compile(
    r"(?:initial|first|original|previous|earlier|old)\s{1,3}(?:answer|guess|choice|thought|pick|impression|"
    r"instinct|reaction)\b|\bat\s{1,3}first\b|\binitially\b|\boriginally\b|\bI\s{1,3}first\s{1,3}(?:thought|said)"
    r"|最初|一开始|起初",
    _I,
)
STRONG_CTX = re.compile(
    r"\b(?:final|finally|correct|corrected|revised|updated|actual|actually|definitive|right|true)\b"
    r"|最终|正确|综上",
    _I,
)

# ---------------------------------------------------------------------------------------------
# Backward claims: "<value> is the correct answer", "..., which must be the answer".

# (Same shape as HEDGE below and the other word-list patterns here: declarations, each its own vocabulary.)
BWD = re.compile(
    r"\b(?:is|must\s{1,3}be|would\s{1,3}be|should\s{1,3}be|seems\s{1,3}to\s{1,3}be|has\s{1,3}to\s{1,3}be)"
    r"\s{1,3}(?:definitely\s{1,3}|clearly\s{1,3}|therefore\s{1,3}|thus\s{1,3}|indeed\s{1,3}|probably\s{1,3})?"
    r"(?:the\s{1,3})?(?P<q>correct|right|best|final|true|only\s{1,3}(?:correct|right|possible|valid)|most\s{1,3}"
    r"(?:likely|appropriate|suitable|plausible|reasonable|logical|fitting|accurate))?\s{0,3}"
    r"(?P<noun>answer|option|choice|label|one)\b",
    _I,
)
# The words BWD's noun can follow (whitespace aside): each alternative's last word before it. A noun
# after any other word ("done", "someone", "an answer") is passed over without trying BWD; an
# alternative changed above needs its last word here.
BWD_NOUN_AFTER = (
    "is", "be", "definitely", "clearly", "therefore", "thus", "indeed", "probably", "the", "correct", "right",
    "best", "final", "true", "possible", "valid", "likely", "appropriate", "suitable", "plausible",
    "reasonable", "logical", "fitting", "accurate",
)  # fmt: skip
# "..., which must be the answer": the relative pronoun before a backward claim belongs to it.
BWD_LEAD = re.compile(r"\s{0,3},?\s{0,3}\b(?:which|that|this|it|so\s{1,3}it)\s{1,3}$", _I)
# "B is correct.", "A is the best, because ..." (the clause ends there; "is correct about" is not a claim).
BWD_CORRECT = re.compile(
    r"\b(?:is|are)\s{1,3}(?:the\s{1,3})?(?:correct|right|best)\b"
    r"(?=\s{0,3}(?:[.!,;:)\n]|$)|\s{1,3}(?:because|since|as|here|choice|option|answer)\b)",
    _I,
)
BWD_WEAK = re.compile(
    r"\b(?:fits|matches|suits|describes)\s{1,3}(?:(?:the|this|that)\s{1,3}[\w-]{1,20}\s{1,3})?(?:best|most)\b"
    r"|\bis\s{1,3}the\s{1,3}most\s{1,3}(?:reasonable|likely|plausible|appropriate|suitable|logical|sensible|"
    r"fitting|accurate|probable)\b"
    r"|\bmatches\s{1,3}what\s{1,3}the\s{1,3}question\b",
    _I,
)
BWD_WEAK_CJK = re.compile(r"(?<!不)(?:是)?(?:最合适|最合理|最符合|最恰当|正确答案|正确选项)")

# ---------------------------------------------------------------------------------------------
# Repetition loops: a new few-shot turn the model hallucinated after answering.
_TURN_HEADER_BODY = (
    r"[ \t>#*]{0,8}(?:Q\d{0,3}|Question\s{0,3}\d{0,3}|Problem\s{0,3}\d{0,3}|Premise(?:\s{0,3}/\s{0,3}Hypothesis)?"
    r"|Hypothesis|Sentence\s{0,3}\d{0,2}|Passage|Article|Review|Context|Word|Human|User|Instruction|Input"
    r"|Example\s{0,3}\d{0,3}|Exercise\s{0,3}\d{0,3}|Claim|Statement|Answer\s{1,3}Choices|Choices|Options"
    r"|问题|题目)[ \t]{0,3}[:：.]"
)
TURN_HEADER = re.compile("^" + _TURN_HEADER_BODY, re.M | _I)
# A header after a newline, found where a "\n" is (a literal first character scans ~2x faster):
# TURN_HEADER.search(text) is TURN_HEADER.match(text) or this, as "^" matches at 0 and after "\n".
# The first lookahead, the first letters of the header words, fails most lines in one character
# test instead of one per alternative (a long thought has hundreds of lines).
TURN_HEADER_FIRST_LETTERS = "qphsarcwuieo问题"
TURN_HEADER_AFTER_NEWLINE = re.compile(
    r"\n(?=[ \t>#*]{0,8}[" + TURN_HEADER_FIRST_LETTERS + "])(?=" + _TURN_HEADER_BODY + ")", _I
)

# ---------------------------------------------------------------------------------------------
# Fluctuation, correction, refusal, truncation.

# (Same shape as BWD above: a word-list declaration, nothing shared but the form.)
HEDGE = re.compile(
    r"\b(?:it|this|that|answer|one|they)\s{1,3}(?:could|might|may)\s{1,3}(?:also\s{1,3}|possibly\s{1,3}|"
    r"equally\s{1,3}|well\s{1,3})?be\b"
    r"|\b(?:could|might|may)\s{1,3}also\s{1,3}be\b"
    r"|\bmaybe\b|\bperhaps\b|\bor\s{1,3}possibly\b|\byes\s{1,3}and\s{1,3}no\b"
    # "either" before an answer ("either (B) or (C)", "either 6 or 8", "either yes or no", "either the
    # first or the second"), not before what is wrong with the other options ("are either incorrect
    # or not the primary differences", "either don't apply or ...", "either describe ... or ...")
    r"|\beither\s{1,3}(?=\(?[A-Z]\)?[\s,.)]|(?:option|choice|answer)s?\b|[-+−$]?\d|\\|yes\b|no\b|true\b|false\b"
    r"|positive\b|negative\b|neutral\b|the\s{1,3}(?:first|second|third|former|latter|one)\b)(?=[^.\n]{0,80}\bor\b)"
    r"|\bnot\s{1,3}(?:entirely\s{1,3}|completely\s{1,3}|totally\s{1,3}|quite\s{1,3}|100%\s{1,3}|really\s{1,3})?"
    r"(?:sure|certain)\b|\bunsure\b|\btorn\s{1,3}between\b"
    r"|\bhard\s{1,3}to\s{1,3}(?:decide|say|tell|choose|determine|pick)\b"
    r"|\b(?:can(?:not|'t|\s{1,3}not)|unable\s{1,3}to|couldn't)\s{1,3}(?:decide|say|tell|determine|choose|pick|"
    r"be\s{1,3}sure)\b"
    r"|\bboth\b[^.\n]{0,60}?\b(?:seem|seems|sound|look|appear|make\s{1,3}sense|could|are\s{1,3}(?:possible|"
    r"plausible|reasonable|valid|correct|right|good|likely|equally))"
    r"|不确定|可能是|也可能|或许|也许",
    _I,
)
_HEDGE_WORDS = (
    "could",
    "might",
    "may",
    "perhaps",
    "yes",
    "either",
    "unsure",
    "torn",
    "hard",
    "can",
    "unable",
    "both",
)
_HEDGE_CJK = ("不确定", "可能是", "也可能", "或许", "也许")
HEDGE_ANCHORS: tuple[Anchor, ...] = (
    (("it", "this", "that", "answer", "one", "they"), ("could", "might", "may"), 3, 9, True),
    # Alternatives that start with their keyword: "couldn't" with "could", "maybe" with "may",
    # "cannot" and "can't" with "can".
    *_starting(_HEDGE_WORDS),
    (("or",), ("possibly",), 3, 5, True),
    (("not",), ("sure", "certain"), 4, 19, True),  # "not sure" .. "not   completely   certain"
    *_starting(_HEDGE_CJK, word=False),
)
# Doubts about the question rather than the answer: they make hedging only where the response
# commits to nothing ("both could apply, it depends on the reader").
# A closing verdict on the options themselves: "Therefore, none of the options are correct.",
# "there's no correct answer among the choices". After the chosen claim it withdraws that claim
# (a closest option named and then rejected), as an out-of-range answer would.
NONE_CORRECT = re.compile(
    r"\b[Nn]one\s{1,3}of\s{1,3}the\s{1,3}(?:given\s{1,3}|provided\s{1,3}|listed\s{1,3}|available\s{1,3}|answer\s{1,3})?"
    r"(?:options|choices|answers)(?:\s{1,3}(?:provided|given|listed))?\s{1,3}(?:(?:is|are)\s{1,3}(?:correct|right|valid)\b"
    r"|(?:match(?:es)?|fits?)\s{0,3}(?:[.!;]|$|\s{1,3}(?:the|this|our|my)\s{1,3}(?:[a-z]{1,15}\s{1,3})?(?:answer|result|value|calculation)))"
    r"|\b[Nn]o\s{1,3}correct\s{1,3}(?:answer|option|choice)\s{1,3}(?:among|in)\s{1,3}the\s{1,3}(?:options|choices)\b"
    # "The options are incorrect." (the options as a whole, as the closing verdict)
    r"|\b[Tt]he\s{1,3}(?:given\s{1,3}|provided\s{1,3})?(?:options|choices|answer\s{1,3}choices)\s{1,3}(?:are|all\s{1,3}seem)"
    r"\s{1,3}(?:all\s{1,3})?(?:incorrect|wrong)\s{0,3}[.!]"
)
# After the chosen option, the response says it cannot choose one: "Therefore, I cannot confidently
# select an answer from the given options.", "we can't choose one answer over the other".
NO_SELECTION = re.compile(
    r"\b(?:cannot|can't|can\s{1,3}not|unable\s{1,3}to|not\s{1,3}able\s{1,3}to)\s{1,3}"
    r"(?:(?:confidently|definitively|reliably|accurately)\s{1,3})?(?:select|choose|pick|determine)\s{1,3}"
    r"(?:an?|the|one|any)\s{1,3}(?:(?:single|correct|right|best)\s{1,3})?(?:answer|option|choice)\b",
    _I,
)
HEDGE_QUESTION = re.compile(r"\bdepend(?:s|ing)?\s{1,3}on\b|\bambiguous\b|\bunclear\b", _I)
CORRECTION = re.compile(
    r"\b(?:wait|actually|on\s{1,3}second\s{1,3}thought|re-?read(?:ing)?|re-?check(?:ing)?|double-?check(?:ing)?|"
    r"correct(?:ion|\s{1,3}myself)|I\s{1,3}was\s{1,3}wrong|mistake|not\s{1,3}right|that's\s{1,3}wrong|however)\b"
    r"|不对|错了|更正",
    _I,
)
# A self-retraction at a sentence start ("Wait, that's not right.", "Oops, I made an error."): the
# answer before it is withdrawn; whatever the response settles on after it replaces it.
RETRACTION = re.compile(
    r"(?:^|[.!?\n]|\b(?:wait|hmm+|oh|oops|no|actually|hold\s{1,3}on))[,.!\s]{0,4}"
    r"(?:(?:that's|that\s{1,3}is)\s{1,3}(?:not\s{1,3}(?:right|correct)|wrong|incorrect)"
    r"|I\s{1,3}(?:was|am)\s{1,3}wrong|I\s{1,3}(?:made|have\s{1,3}made)\s{1,3}(?:a|an)\s{1,3}(?:mistake|error)"
    r"|my\s{1,3}(?:mistake|bad)|scratch\s{1,3}that|let\s{1,3}me\s{1,3}(?:redo|recalculate|reconsider))\b"
    r"|不对|错了",
    re.M | _I,
)
REFUSAL = re.compile(
    r"\bI(?:'m|\s{1,3}am)\s{1,3}(?:so\s{1,3}|very\s{1,3})?sorry\b|\bI\s{1,3}apologi[sz]e\b"
    r"|\bI(?:\s{1,3}(?:cannot|can't|can\s{1,3}not|am\s{1,3}unable\s{1,3}to|am\s{1,3}not\s{1,3}able\s{1,3}to|"
    r"won't|will\s{1,3}not|must\s{1,3}decline\s{1,3}to)|'m\s{1,3}(?:unable|not\s{1,3}able)\s{1,3}to)\s{1,3}(?:provide|answer|help|assist|determine|give|make|"
    r"comply|classify|diagnose|offer|respond|solve"
    # "I cannot confidently select an answer from the given options."
    r"|(?:(?:confidently|definitively|reliably|accurately)\s{1,3})?(?:select|choose|pick)\s{1,3}(?:an?|the|one)\s{1,3}(?:answer|option|choice)"
    r"|find\s{1,3}(?:a|an|any|the)\s{1,3}(?:(?:valid|correct|exact|final|definitive)\s{1,3})?(?:answer|value|solution))\b"
    # "... so we cannot compute the answer.", "we are unable to determine the exact value"
    r"|\bwe\s{1,3}(?:cannot|can't|can\s{1,3}not|are\s{1,3}unable\s{1,3}to)\s{1,3}(?:determine|compute|calculate|find|give|provide)"
    r"\s{1,3}(?:the|its|their)\s{1,3}(?:(?:exact|numerical|final|specific|correct)\s{1,3})?(?:answer|value|result|solution)s?"
    r"(?=\s{0,3}(?:[.!]|$|without\b|with\s{1,3}(?:the|this|only)\b))"  # (not "the value of c that ...")
    r"|\bI\s{1,3}(?:don't|do\s{1,3}not)\s{1,3}know\s{1,3}(?:the\s{1,3}answer|how\s{1,3}to\s{1,3}(?:solve|answer))\b"
    # "... we cannot proceed as intended.", "..., which is beyond the information provided"
    r"|\bwe\s{1,3}(?:cannot|can't|can\s{1,3}not)\s{1,3}proceed\b"
    r"|\b(?:is|are|lies)\s{1,3}beyond\s{1,3}(?:the\s{1,3})?(?:information|data)\s{1,3}(?:provided|given)\b"
    r"|\bas\s{1,3}an?\s{1,3}(?:ai|artificial|language\s{1,3}model|responsible|ethical|helpful)\b"
    r"|\bI(?:'m|\s{1,3}am)\s{1,3}(?:just|only)?\s{0,3}an?\s{1,3}(?:ai|language\s{1,3}model)\b"
    r"|\b(?:don't|do\s{1,3}not)\s{1,3}have\s{1,3}(?:enough|sufficient)\s{1,3}(?:context|information)\b"
    r"|\b(?:it's|it\s{1,3}is)\s{1,3}(?:impossible|not\s{1,3}possible)\s{1,3}to\s{1,3}(?:answer|determine|say|tell|know)\b"
    r"|\bcannot\s{1,3}be\s{1,3}(?:answered|determined|solved|computed|calculated)(?:\s{1,3}without\b|\s{0,3}[.!]"
    r"|\s{1,3}(?:from|with)\s{1,3}the\s{1,3}(?:given|information|data)\b)"
    r"|\bcould\s{1,3}you\s{1,3}(?:please\s{1,3})?(?:clarify|rephrase|provide)\b"
    r"|\b(?:don't|do\s{1,3}not)\s{1,3}understand\s{1,3}(?:what|the\s{1,3}question)\b"
    # "This question requires additional information or context to solve.", "Insufficient information."
    r"|\b(?:question|problem)\s{1,3}(?:requires|needs)\s{1,3}(?:additional|more|further)\s{1,3}"
    r"(?:information|context|data|details)\b"
    r"|\b(?:insufficient|not\s{1,3}enough)\s{1,3}(?:information|data|context)\s{0,3}(?:[.!]|$|to\b|is\s{1,3}(?:given|provided)\b)"
    r"|抱歉|对不起|无法回答|不能回答|作为一个?(?:AI|人工智能)",
    _I,
)

# The response says it left the work undone: an offer to do it ("Let me know if you'd like me to work
# through the detailed calculations."), a pointer to a computer for it ("it's best to use a computer
# program to compute the final answer"), or an outline that calls itself one ("This outline provides the
# general steps"). What it inferred before that is not a committed answer. Offers to explain work
# already done ("... to elaborate on any step", "... walk you through it") are not in it.
DEFERRAL = re.compile(
    r"\b(?:let\s{1,3}me\s{1,3}know\s{1,3}if|if)\s{1,3}you(?:'d|\s{1,3}would|\s{1,3}want)\s{1,3}(?:like\s{1,3})?me\s{1,3}to\s{1,3}"
    r"(?:work\s{1,3}(?:through|out)|continue|complete|finish|carry\s{1,3}out|perform|calculate|compute|solve"
    r"|find|derive|proceed|fill\s{1,3}in"
    r"|walk\s{1,3}(?:you\s{1,3})?through\s{1,3}the\s{1,3}(?:solution|calculations?|algebra|rest|system)"
    r"|demonstrate\s{1,3}how\s{1,3}to\s{1,3}(?:find|solve|calculate|compute))\b"
    r"|\bI\s{1,3}can\s{1,3}help\s{1,3}you\s{1,3}(?:complete|finish|with\s{1,3}the\s{1,3}rest)\b"
    r"|\b(?:best|easiest)\s{1,3}(?:to\s{1,3}use|done\s{1,3}(?:with|using))\s{1,3}a\s{1,3}(?:computer|calculator|program)"
    r"|\b(?:outline|roadmap|guide)\s{1,3}(?:provides|outlines|gives)\s{1,3}the\s{1,3}(?:general|logical|main|overall)\b"
    # ... or to the reader: "After solving the equation, you'll find the value of n.", "Once you solve for x"
    r"|\byou(?:'ll|\s{1,3}will|\s{1,3}should)\s{1,3}(?:then\s{1,3})?(?:arrive\s{1,3}at|find|get|obtain|have)\s{1,3}(?:the|a|your)"
    r"\s{1,3}(?:final\s{1,3}|numerical\s{1,3}|exact\s{1,3})?(?:answer|value|result|solution)\b"
    r"|\bonce\s{1,3}you\s{1,3}(?:solve|find|calculate|compute|have\s{1,3}(?:solved|found|calculated))\b",
    _I,
)
# The response says the answer cannot be had from what it was given: "We cannot determine the value of
# f(4) with the information provided." What it inferred before that is not an answer (a refusal).
UNDETERMINED = re.compile(
    r"\bwe\s{1,3}(?:cannot|can't|can\s{1,3}not)\s{1,3}(?:determine|find|calculate|compute|provide|give)\b[^.\n]{0,120}?"
    r"\b(?:with(?:out)?|from|based\s{1,3}on|using)\s{1,3}(?:the\s{1,3}|any\s{1,3})?"
    r"(?:given|information|provided|additional|more|further|data)\b",
    _I,
)
DEFERRAL_WINDOW = 600  # characters at the end of the response where the offer is read


# An answer disowned in its own sentence: "\\boxed{7}, but that is wrong", "12 -- however, this is not
# right" (a stated value the response itself calls wrong commits to nothing).
DISOWNED = re.compile(
    r"[,;:]?\s{0,3}(?:--?|—)?\s{0,3}(?:but|however)\s{0,3},?\s{1,3}(?:that|this|it)(?:'s|\s{1,3}is|\s{1,3}was)\s{1,3}"
    r"(?:wrong|incorrect|not\s{1,3}(?:right|correct|the\s{1,3}(?:right|correct)\s{1,3}answer))\b",
    _I,
)
REFUSAL_ANCHORS: tuple[Anchor, ...] = (
    (("i",), ("sorry",), 4, 16, True),  # "I'm sorry" .. "I   am   very   sorry"
    # "I apologize", "I cannot", "I am unable to", "I won't", "I will not", "I must decline to"
    (("i",), ("apologi", "can", "am", "won", "will", "must"), 2, 4, True),
    (("i",), ("unable", "not"), 4, 6, True),  # "I'm unable", "I'm not able" .. "I'm   not"
    (("we",), ("can", "are"), 3, 5, True),  # "we cannot" .. "we   are"
    (("is", "are", "lies"), ("beyond",), 3, 7, True),  # "is beyond" .. "lies   beyond"
    (("i",), ("know",), 8, 15, True),  # "I don't know" .. "I   do   not   know"
    (("as",), ("ai", "artificial", "language", "responsible", "ethical", "helpful"), 5, 10, True),
    (("i",), ("ai", "language"), 6, 21, True),  # "I'm a AI" .. "I   am   just   an   AI"
    (("do",), ("enough", "sufficient"), 11, 18, True),  # "don't have enough" .. "do   not   have   enough"
    (("it",), ("impossible", "possible"), 5, 16, True),  # "it's impossible" .. "it   is   not   possible"
    *_starting(("cannot", "could")),
    (("do",), ("understand",), 6, 11, True),  # "don't understand" .. "do   not   understand"
    (("question", "problem"), ("requires", "needs"), 8, 11, True),  # "problem needs" .. "question   requires"
    *_starting(("insufficient",)),
    (("not",), ("enough",), 4, 6, True),  # "not enough" .. "not   enough"
    *_starting(("抱歉", "对不起", "无法回答", "不能回答", "作为"), word=False),
)

# Negation around a mention: "not B", "rather than B" before; "B is incorrect", "B: this can be ruled
# out" after (within the same clause; NEG_AFTER is used with .match at the mention's end).
NEG_BEFORE = re.compile(
    r"(?:\bnot|n't|\bnor|\bneither|\bexcept|\brather\s{1,3}than|\binstead\s{1,3}of|\bthan|\brule\s{1,3}out|"
    r"\beliminate|\bexclude|\bagainst|\bwithout|\bunlike|不是|不选|排除)\W{0,6}(?:(?:the|an?)\s{1,3})?"
    r"(?:option\s{0,3}|choice\s{0,3})?\W{0,3}$",
    _I,
)
NEG_AFTER = re.compile(
    r"[\s\"'”’)\]]{0,4}(?:\([^()\n]{0,40}\)\s{0,3})?"  # a closing quote, an appositive "(Vitamin C)"
    r"(?:[:：\-–—]{1,3}\s{0,3}(?:(?:this|it|that)\s{1,3})?|(?:,\s{0,3})?(?:also\s{1,3}|too\s{1,3})?)"
    r"(?:(?:is|are|was|seems?|looks?|sounds?|appears?)\s{1,3}(?:also\s{1,3}|clearly\s{1,3}|definitely\s{1,3}|"
    r"simply\s{1,3}|probably\s{1,3}|obviously\s{1,3})?(?:not\b|incorrect|wrong|false|unlikely|implausible|"
    r"irrelevant|ruled\s{1,3}out|eliminated|a\s{1,3}(?:common\s{1,3})?(?:mistake|distractor|trap))"
    r"|isn't|aren't|wasn't|doesn't|does\s{1,3}not|don't|do\s{1,3}not|can't|cannot"
    r"|can\s{1,3}be\s{1,3}(?:ruled|eliminated|excluded)|not\s{1,3}(?:relevant|correct|right|likely)|(?:is\s{1,3})?tempting"
    r"|不符合|不正确|错误|不对|排除)",
    _I,
)

# Words after which a one-letter "A"/"I" is a real letter rather than the article or pronoun.
VERBISH = frozenset(
    "is was seems seem looks look fits fit matches match and or because since would could should must might may "
    "also as appears makes sounds best instead rather but too then only still can cannot will isn't wasn't "
    "doesn't has had vs versus remains if which though although being".split()
)
# First words of a claim value that is commentary, not an answer ("the answer is simple", "the
# answer is based on ..."); such a value never counts as an out-of-range answer.
NOT_AN_ANSWER_START = frozenset(
    "correct incorrect right wrong clear clearly obvious obviously simple straightforward easy as below above "
    "following this that these those it its based supported consistent given because since in at on by from "
    "with within found shown listed determined calculated derived also still important reasonable plausible "
    "valid sound justified due one what how why where when which who whether my our your his her their here "
    "there then therefore thus so supposed expected going meant likely probably definitely provided "
    "option options choice choices answer letter label of for not "
    # how the answer is presented, not what it is: "the final answer is clearly highlighted"
    "highlighted boxed presented stated displayed written indicated marked emphasized enclosed "
    "summarized summarised".split()
)

ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "sixth": 5, "last": -1}
ORDINAL = re.compile(
    r"^(?:the\s{1,3})?(first|second|third|fourth|fifth|sixth|last)\s{1,3}(?:option|choice|one|answer|candidate)\b",
    _I,
)
SENT_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
