"""Structured answers: the `"answer": ...` fields of the JSON objects a prompt asked for.

Real responses break JSON in every way (raw line breaks and LaTeX backslashes inside strings,
comments, unclosed objects, prose around or between several blocks), so fields are found by a
lenient scan rather than a JSON parser, and a strict parse is only tried to tell a response that is
exactly the requested object (the `certain` tier).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from xfinder_ray.extractors.rules import patterns as P
from xfinder_ray.extractors.rules.text import lowered

MAX_FIELDS = 50  # answer fields read per response (loops repeat the block hundreds of times)
MAX_VALUE = 2_000  # characters a quoted value may span before it counts as unclosed
MAX_STRICT = 20_000  # longer responses are never tried with the strict JSON parser
MAX_OBJECT_STARTS = 20  # object starts looked at for an unanswered object (code holds many dicts)

# An object the prompt asked for, opened: `{ "reasoning": ...`.
_OBJECT_START = re.compile(r"""\{\s{0,20}["'][A-Za-z_ ]{1,30}["']\s{0,3}:""")
_OBJECT_CLOSE = re.compile(r"""["']\s{0,20}\}""")
_BARE_END = re.compile(r"[,}\]\n]|//")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FENCE_CLOSE = re.compile(r"\s{0,8}```")
_INNER_VALUE = re.compile(r""":\s{0,3}(?:"([^"\n]{0,200})"|(-?[\d.,]{1,30}))""")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_UNESCAPE = {'"': '"', "\\": "\\", "/": "/"}


# slots, not frozen: made for every record, and a frozen dataclass's __init__ costs ~4x (0.37 µs).
@dataclass(slots=True)
class Field:
    start: int  # where the key starts
    end: int  # where the value ends
    value: str | None  # the decoded value; None for null
    closed: bool  # a complete JSON value: a closed string, null, a number


def _unescape(raw: str) -> str:
    # JSON escapes the models use on purpose; "\frac" or "\n" before a letter is LaTeX, kept as written.
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if nxt in _UNESCAPE:
                out.append(_UNESCAPE[nxt])
                i += 2
                continue
            if nxt == "u" and _HEX4.fullmatch(raw, i + 2, i + 6):  # "1994 \\u221A2" is "1994 √2"
                out.append(chr(int(raw[i + 2 : i + 6], 16)))
                i += 6
                continue
            if nxt in "nt" and (i + 2 >= len(raw) or not raw[i + 2].isalpha()):
                out.append(" ")
                i += 2
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _quoted(text: str, pos: int) -> tuple[str, int, bool]:
    """The string value whose opening quote is at pos: (raw content, end, closed)."""
    quote = text[pos]
    i = pos + 1
    limit = min(len(text), pos + 1 + MAX_VALUE)
    while i < limit:
        j = text.find(quote, i, limit)
        if j < 0:
            break
        backslashes = 0
        while text[j - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return text[pos + 1 : j], j + 1, True
        i = j + 1
    nl = text.find("\n", pos + 1, limit)
    end = nl if nl >= 0 else limit
    return text[pos + 1 : end], end, False


def _inner_json_value(value: str) -> str:
    """A value that is itself a JSON object ("{"change": "5.00"}"): its last string or number."""
    found = _INNER_VALUE.findall(value[:1000])
    if not found:
        return value
    s, n = found[-1]
    return s or n


def find_fields(text: str) -> list[Field]:
    """Every answer field in text, in order (at most MAX_FIELDS)."""
    low = lowered(text)
    fields: list[Field] = []
    for key_start, pos in _keys(low):
        if len(fields) >= MAX_FIELDS:
            break
        if pos >= len(text):
            fields.append(Field(key_start, pos, "", False))
            continue
        ch = text[pos]
        if text.startswith('\\"', pos):  # a field quoted inside a string: \"answer\": \"220\"
            j = text.find('\\"', pos + 2, pos + 2 + MAX_VALUE)
            closed = j >= 0
            end = j + 2 if closed else min(len(text), pos + 2 + MAX_VALUE)
            value = _unescape(text[pos + 2 : j if closed else end])
        elif ch in "\"'`":
            raw, end, closed = _quoted(text, pos)
            value: str | None = _unescape(raw)
            if value.lstrip().startswith("{") and '":' in value:
                value = _inner_json_value(value)
        elif ch in "{[":  # an object or a list: several answers, or none that resolves
            end = min(len(text), pos + 300)
            value, closed = text[pos:end], False
        elif text.startswith(("null", "None", "undefined"), pos):
            value, end, closed = None, pos + 4, True
        else:
            b = _BARE_END.search(text, pos, pos + 300)
            end = b.start() if b else min(len(text), pos + 300)
            value = text[pos:end].strip()
            closed = bool(_NUMBER.fullmatch(value))
        fields.append(Field(key_start, end, value, closed))
    return fields


def _keys(low: str):
    """(start, value start) of each `"answer":` key in the lower-cased text: `'answer':`,
    `"final_answer":` and `\\"answer\\":` (a field quoted inside a string) too -- a key, not the word
    in prose. Plain string search: this runs on every record."""
    k = low.find("answer")
    while k >= 0:
        end = k + 6
        if low.startswith("\\", end):
            end += 1
        if end < len(low) and low[end] in "\"'":
            start = k
            for prefix in ("final_", "final ", "final"):
                if low.startswith(prefix, k - len(prefix)):
                    start = k - len(prefix)
                    break
            if start > 0 and low[start - 1] in "\"'":
                start -= 1
                if start > 0 and low[start - 1] == "\\":
                    start -= 1
                pos = end + 1
                spaces = 0
                while spaces < 3 and pos < len(low) and low[pos] in " \t":
                    pos += 1
                    spaces += 1
                if pos < len(low) and low[pos] == ":":
                    pos += 1
                    spaces = 0
                    while spaces < 3 and pos < len(low) and low[pos] in " \t\n":
                        pos += 1
                        spaces += 1
                    yield start, pos
        k = low.find("answer", k + 6)


def block_end(text: str, field: Field) -> int:
    """Where the JSON object holding `field` ends: after its closing brace and code fence, if any."""
    k = text.find("}", field.end, field.end + 400)
    if k < 0:
        return field.end
    k += 1
    m = _FENCE_CLOSE.match(text, k)
    return m.end() if m else k


def keep_answered_question(text: str, fields: list[Field]) -> list[Field]:
    """Drop the fields of questions the model invented after answering the one it was asked."""
    if len(fields) < 2:
        return fields
    first_end = block_end(text, fields[0])
    header = P.TURN_HEADER.search(text, first_end)
    if header is None:
        return fields
    return [f for f in fields if f.start < header.start()]


def is_strict_object(text: str) -> bool:
    """The whole response is one JSON object (optionally in a ```json fence) a strict parser accepts."""
    t = text.strip()
    if len(t) > MAX_STRICT or not (t.startswith("{") or t.startswith("```")):
        return False
    if t.startswith("```"):
        t = t[t.find("\n") + 1 :] if "\n" in t else ""
    if t.endswith("```"):
        t = t[:-3]
    t = t.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return False
    # json.loads(t) without its Python wrapper (a third of its time on a short object): t starts
    # with "{" and ends with "}", so the parse must end exactly at the end.
    try:
        value, end = _SCAN_JSON(t, 0)
    except (StopIteration, ValueError):
        return False
    return end == len(t) and isinstance(value, dict)


_SCAN_JSON = json.JSONDecoder().scan_once


# Values that stand for no answer: the prompt's placeholder copied, an empty string, "N/A".
PLACEHOLDER = re.compile(
    r"^(?:|_+|\.{2,}|…|-+|\?+|x+|n/?a|none|null|nil|tbd|unknown|undefined|not\s{1,3}applicable\b.*"
    r"|<[^<>]{0,40}>|\[[^\[\]]{0,40}\]|\{[^{}]{0,40}\}|your\s{1,3}answer.*|answer\s{1,3}here|insert.*"
    r"|no\s{1,3}(?:valid\s{1,3}|correct\s{1,3})?(?:answer|option|choice)\b.*"
    r"|none\s{1,3}of\s{1,3}(?:the\s{1,3})?(?:above|options|choices|these|them|given)\b.*"
    r"|\(?none\s{1,3}of\s{1,3}the\s{1,3}above.*|cannot\s{1,3}be\s{1,3}determined.*|indeterminate)$",
    re.I | re.S,
)


def is_placeholder(value: str | None) -> bool:
    if value is None:
        return True
    v = value.strip().strip("\"'`*_ .").strip()
    return len(v) <= 200 and bool(PLACEHOLDER.match(v))


def unanswered_object(text: str) -> int:
    """Where an opened JSON object starts that never closes (the response was cut off inside it,
    before any answer field), or -1. A dict written in code (`cons = {'type': 'eq', 'fun': f}`,
    `f({"a": 1})`) is not the object the prompt asked for."""
    for n, m in enumerate(_OBJECT_START.finditer(text, 0, 20_000)):
        if n >= MAX_OBJECT_STARTS:
            return -1
        line = text[text.rfind("\n", 0, m.start()) + 1 : m.start()].rstrip()
        if line.endswith(_CODE_BEFORE_DICT):
            continue
        return -1 if _OBJECT_CLOSE.search(text, m.end()) else m.start()
    return -1


# Before a dict on its line: an assignment, an argument, an item, a key (a nested value).
_CODE_BEFORE_DICT = ("=", "(", "[", ",", '":', "':")
