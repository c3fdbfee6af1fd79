"""Scoring the `rules` extractor on labelled data (KAF style): used by benchmarks/rules_accuracy.py and
tests/cpu/extractors/test_rules.py.

Extraction is correct when the extracted key answer equals `gold_key_answer` (for math: equivalent,
through the judge when `xfinder_ray.judging` is importable, else through `simple_math_equal`).
Judgment is correct when judging the extracted answer against `correct_answer` gives `gold_judgment`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

from xfinder_ray.extractors.rules import extract
from xfinder_ray.parsing import match_candidate
from xfinder_ray.records import NO_VALID_ANSWER, parse_answer_range

Judge = Callable[[str, Any, str, str], bool]


def load_judge() -> Judge | None:
    """The project's judge (`xfinder_ray.judging.judge`), or None while it does not exist."""
    try:
        from xfinder_ray.judging import judge  # type: ignore[attr-defined]
    except ImportError:
        return None
    return judge


_LATEX_NOISE = re.compile(r"\\left|\\right|\\!|\\,|\\;|\\ |\s|\$")
_FRAC = re.compile(r"^(-?)\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}$")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:/\d+)?$")


def _as_number(s: str) -> Fraction | None:
    m = _FRAC.match(s)
    if m:
        f = Fraction(int(m.group(2)), int(m.group(3)))
        return -f if m.group(1) else f
    if _NUMBER.match(s):
        try:
            return Fraction(s)
        except (ValueError, ZeroDivisionError):
            return None
    return None


def simple_math_equal(a: str, b: str) -> bool:
    """A small stand-in for the judge's math equivalence: LaTeX spacing, thousands separators,
    \\dfrac/\\frac, and numbers that are equal as fractions (0.5 == 1/2 == \\frac{1}{2})."""
    if NO_VALID_ANSWER in (a, b):
        return a == b
    na = _LATEX_NOISE.sub("", a).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    nb = _LATEX_NOISE.sub("", b).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    if na == nb:
        return True
    fa, fb = _as_number(na.replace(",", "")), _as_number(nb.replace(",", ""))
    return fa is not None and fa == fb


def _fallback_judge(kat: str, answer_range: Any, extracted: str, correct: str) -> bool:
    if extracted == NO_VALID_ANSWER:
        return False
    if kat == "math":
        return simple_math_equal(extracted, correct)
    return match_candidate(kat, answer_range, correct) == extracted


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def extraction_matches(
    kat: str, answer_range: Any, extracted: str, gold: str, judge: Judge | None = None
) -> bool:
    """An extraction is right when it equals `gold_key_answer`; for math also when both are real answers
    that `judge` (default: the simple stand-in above) finds equivalent."""
    if extracted == gold:
        return True
    if kat != "math" or NO_VALID_ANSWER in (extracted, gold):
        return False
    return bool((judge or _fallback_judge)(kat, answer_range, extracted, gold))


def score_rows(rows: Iterable[dict[str, Any]], judge: Judge | None = None) -> list[dict[str, Any]]:
    """Extract each row and score it; one dict per row with extracted, extraction_ok, judgment_ok."""
    use_judge = judge if judge is not None else _fallback_judge
    out = []
    for row in rows:
        kat = row["key_answer_type"]
        answer_range = parse_answer_range(row["standard_answer_range"], kat)
        extracted = extract(kat, row["question"], row["llm_output"], answer_range)
        gold = row["gold_key_answer"]
        extraction_ok = extraction_matches(kat, answer_range, extracted, gold, use_judge)
        verdict = (
            False
            if extracted == NO_VALID_ANSWER
            else bool(use_judge(kat, answer_range, extracted, row["correct_answer"]))
        )
        out.append(
            {
                "id": row.get("id", row.get("record_id")),
                "key_answer_type": kat,
                "tags": list(row.get("tags") or []),
                "extracted": extracted,
                "gold_key_answer": gold,
                "extraction_ok": extraction_ok,
                "judgment_ok": verdict == bool(row["gold_judgment"]),
            }
        )
    return out


def accuracy_table(scored: list[dict[str, Any]]) -> str:
    """Markdown: extraction and judgment accuracy overall, per key_answer_type and per tag."""

    def line(name: str, items: list[dict[str, Any]]) -> str:
        n = len(items)
        ext = sum(r["extraction_ok"] for r in items)
        jud = sum(r["judgment_ok"] for r in items)
        return f"| {name} | {n} | {ext / n:.1%} ({ext}) | {jud / n:.1%} ({jud}) |"

    head = "| {} | n | extraction | judgment |\n|---|---:|---:|---:|"
    by_type: dict[str, list] = defaultdict(list)
    by_tag: dict[str, list] = defaultdict(list)
    for r in scored:
        by_type[r["key_answer_type"]].append(r)
        for t in r["tags"]:
            by_tag[t].append(r)
    parts = [head.format("key_answer_type"), line("**all**", scored)]
    parts += [line(k, by_type[k]) for k in sorted(by_type)]
    parts += ["", head.format("tag")]
    parts += [line(k, by_tag[k]) for k in sorted(by_tag, key=lambda t: (-len(by_tag[t]), t))]
    return "\n".join(parts)
