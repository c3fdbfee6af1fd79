"""The structure of reasoning-model output: a thought, then the final part that commits to an answer.

    segment(text) -> Segments(thought, final, state, family)

Marker families in use (docs/rules.md, "Reasoning output"):

    think     <think> ... </think> final       (the opening tag may have been in the prompt)
    kimi      ◁think▷ ... ◁/think▷ final
    sky       <|begin_of_thought|> ... <|end_of_thought|> <|begin_of_solution|> final <|end_of_solution|>
    harmony   <|channel|>analysis<|message|> ... <|channel|>final<|message|> final   (gpt-oss; also
              the text rendering with the special tokens dropped: "analysis... assistantfinal ...")
    tags      <reasoning> ... </reasoning> <answer> final </answer>   (or the answer tag alone)
    thinking  <thinking> ... </thinking> final
    seed      <seed:think> ... </seed:think> final   (ByteDance Seed-OSS)
    exaone    <thought> ... </thought> final   (LG EXAONE Deep)
    magistral [THINK] ... [/THINK] final   (Mistral's Magistral; the opening tag starts the response)
    granite   Here is my thought process: ... Here is my response: final   (IBM Granite's thinking
              mode; looked for only where the response starts with its opening line)

`state` says how the thought ended: "none" (no markers: plain output), "closed" (the thought ended and
the final part follows), "open" (the response stops inside the thought: cut off at the token cap, or
the model never closed it). Used by `rules` (the committed answer is in the final part) and by the
prompt stage (what of a long response to hand xFinder's 2,048-token window).

Only literal markers are searched (str.find, or the few "<" positions), so segmenting is linear in the
text and bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

NONE, CLOSED, OPEN = "none", "closed", "open"


# slots, not frozen: made for every record, and a frozen dataclass's __init__ costs ~4x (0.37 µs).
@dataclass(slots=True)
class Segments:
    thought: str  # the reasoning ("" without markers)
    final: str  # what follows the thought: the whole text without markers, "" when still open
    state: str  # none | closed | open
    family: str  # think | kimi | sky | harmony | tags | thinking | seed | exaone | magistral | granite | ""


# (family, thought opener, thought closer, final opener, final closer); the openers may be absent
# (a prompt that ends in "<think>\n"), the closers decide `closed`.
_PAIRED = (
    ("think", "<think>", "</think>", "", ""),
    ("kimi", "◁think▷", "◁/think▷", "", ""),
    ("sky", "<|begin_of_thought|>", "<|end_of_thought|>", "<|begin_of_solution|>", "<|end_of_solution|>"),
    ("tags", "<reasoning>", "</reasoning>", "<answer>", "</answer>"),
    ("thinking", "<thinking>", "</thinking>", "", ""),
    ("seed", "<seed:think>", "</seed:think>", "", ""),
    ("exaone", "<thought>", "</thought>", "", ""),
)
# Markers that hold no "<" (family, opener, closer): looked for only where the response starts with
# the opener (the model writes it), so other responses pay one short test, not a scan.
_AT_START = (
    ("magistral", "[THINK]", "[/THINK]"),
    ("granite", "Here is my thought process:", "Here is my response:"),
)
_HARMONY_FINAL = ("<|channel|>final<|message|>", "<|channel|>final <|constrain|>", "assistantfinal")
_HARMONY_ANALYSIS = ("<|channel|>analysis<|message|>", "<|channel|>analysis", "analysis<|message|>")
_HARMONY_END = ("<|return|>", "<|end|>", "<|call|>")


def segment(text: str) -> Segments:
    """Split `text` into its thought and final part (see the module docstring)."""
    head = text[:40].lstrip()
    for family, opener, closer in _AT_START:
        if head.startswith(opener):
            return _opened_at_start(text, family, opener, closer)
    if "<" not in text and "◁" not in text and "assistantfinal" not in text:
        return Segments("", text, NONE, "")  # the common case: no marker can be present
    markers = _Markers(text)
    if not markers.any_present():
        return Segments("", text, NONE, "")  # "<" only as in "x < 3" or "</s>": no family's marker
    harmony = _harmony(text, markers)
    if harmony is not None:
        return harmony
    for family, open_tag, close_tag, final_open, final_close in _PAIRED:
        close = markers.rfind(close_tag)
        if close >= 0:
            start = markers.find(open_tag)
            thought = text[start + len(open_tag) if 0 <= start < close else 0 : close]
            final = text[close + len(close_tag) :]
            return Segments(thought, _inner(final, final_open, final_close), CLOSED, family)
        start = markers.find(open_tag)
        if start >= 0:
            if final_open and markers.find(final_open) >= 0:  # a solution without the thought's closer
                return Segments(text[start:], _inner(text, final_open, final_close), CLOSED, family)
            return Segments(text[start + len(open_tag) :], "", OPEN, family)
    return _answer_tag(text, markers)


# With at most this many "<" in a text, the markers are looked for only where a "<" is.
MAX_MARKER_STARTS = 64


def marker_starts(text: str) -> list[int] | None:
    """Every position of "<" in text, in order; None when there are more than MAX_MARKER_STARTS."""
    starts: list[int] = []
    k = text.find("<")
    while k >= 0:
        if len(starts) == MAX_MARKER_STARTS:
            return None
        starts.append(k)
        k = text.find("<", k + 1)
    return starts


class _Markers:
    """str.find / str.rfind of markers in one text, read off its few "<" positions: a marker holding a
    "<" occurs only with that "<" at one of them. A reasoning response runs to 100k characters; one
    scan for "<" replaces a scan of it per marker looked for (a dozen, most of them absent)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = marker_starts(text)
        # What follows each "<" ("<|", "</", "<t", "< ", "<3"): a marker whose "<" is followed by
        # something else is not there, decided without a look at the starts.
        self.heads = None if self.starts is None else {text[k : k + 2] for k in self.starts}

    def any_present(self) -> bool:
        """Whether any marker segment() looks for is in the text (one test a "<", not one a marker)."""
        if self.starts is None:
            return True  # (too many "<" to test them: the markers are looked for one by one)
        text = self.text
        for k in self.starts:
            if text.startswith(_MARKERS_AT_LT, k):
                return True
            for marker, lt in _MARKERS_BEFORE_LT:
                if k >= lt and text.startswith(marker, k - lt):
                    return True
        return any(self._scan(marker, 0) >= 0 for marker in _MARKERS_WITHOUT_LT)

    def find(self, marker: str, start: int = 0) -> int:
        lt = marker.find("<")
        if self.starts is None or lt < 0:
            return self._scan(marker, start)
        if marker[lt : lt + 2] not in self.heads:
            return -1
        for k in self.starts:
            if k - lt >= start and self.text.startswith(marker, k - lt):
                return k - lt
        return -1

    def rfind(self, marker: str) -> int:
        lt = marker.find("<")
        if self.starts is None or lt < 0:
            return self._scan(marker, 0, reverse=True)
        if marker[lt : lt + 2] not in self.heads:
            return -1
        for k in reversed(self.starts):
            if k >= lt and self.text.startswith(marker, k - lt):
                return k - lt
        return -1

    def _scan(self, marker: str, start: int, reverse: bool = False) -> int:
        if self.text.isascii() and not marker.isascii():  # ("◁think▷" in an ASCII text; isascii is a flag)
            return -1
        return self.text.rfind(marker, start) if reverse else self.text.find(marker, start)


# Every marker segment() looks for, by where its "<" is.
_ALL_MARKERS = (
    *(m for family in _PAIRED for m in family[1:] if m),
    *_HARMONY_FINAL,
    *_HARMONY_ANALYSIS,
    "<answer>",
    "</answer>",
)
_MARKERS_AT_LT = tuple(m for m in _ALL_MARKERS if m.startswith("<"))
_MARKERS_BEFORE_LT = tuple((m, m.find("<")) for m in _ALL_MARKERS if m.find("<") > 0)
_MARKERS_WITHOUT_LT = tuple(m for m in _ALL_MARKERS if "<" not in m)


def _opened_at_start(text: str, family: str, opener: str, closer: str) -> Segments:
    """opener ... closer final ([THINK] ... [/THINK], Magistral); no closer: still inside the thought."""
    start = text.find(opener) + len(opener)
    close = text.find(closer, start)
    if close < 0:
        return Segments(text[start:], "", OPEN, family)
    return Segments(text[start:close], text[close + len(closer) :], CLOSED, family)


def _answer_tag(text: str, markers: _Markers) -> Segments:
    """An answer tag without a reasoning tag ("... <answer>42</answer>"): its content is the final
    part; an answer tag never closed was cut off ("<answer>(8")."""
    k = markers.rfind("<answer>")
    if k < 0:
        return Segments("", text, NONE, "")
    begin = k + len("<answer>")
    end = markers.find("</answer>", begin)
    if end < 0:
        return Segments(text, "", OPEN, "tags")
    return Segments(text[:k], text[begin:end], CLOSED, "tags")


def _inner(final: str, opener: str, closer: str) -> str:
    """The final part inside its own markers, where the family has them (<answer>...</answer>)."""
    if opener:
        k = final.find(opener)
        if k >= 0:
            final = final[k + len(opener) :]
        k = final.rfind(closer)
        if k >= 0:
            final = final[:k]
    return final


def _harmony(text: str, markers: _Markers) -> Segments | None:
    """gpt-oss Harmony channels: the `final` channel answers; `analysis` alone was cut off."""
    for marker in _HARMONY_FINAL:
        k = markers.rfind(marker)
        if k >= 0:
            final = text[k + len(marker) :]
            if marker.endswith("<|constrain|>"):  # "<|constrain|>json<|message|>{...}"
                m = final.find("<|message|>")
                final = final[m + len("<|message|>") :] if m >= 0 else final
            for end in _HARMONY_END:
                e = final.find(end)
                if e >= 0:
                    final = final[:e]
            return Segments(_strip_harmony(text[:k]), final, CLOSED, "harmony")
    for marker in _HARMONY_ANALYSIS:
        k = markers.find(marker)
        if k >= 0:
            return Segments(_strip_harmony(text[k + len(marker) :]), "", OPEN, "harmony")
    return None


def _strip_harmony(thought: str) -> str:
    for token in (*_HARMONY_ANALYSIS, *_HARMONY_END, "<|start|>assistant", "<|message|>"):
        thought = thought.replace(token, " ")
    return thought


def tail(text: str, chars: int) -> str:
    """The last `chars` characters of text, starting at a line boundary where one is near."""
    if len(text) <= chars:
        return text
    cut = len(text) - chars
    nl = text.find("\n", cut, cut + 400)
    return text[nl + 1 if nl >= 0 else cut :]
