"""The `math-verify` comparator: mathematical equivalence, bounded in time and memory.

Two tiers. (1) Pure-Python fast path (`math_normalize`): normalized-string equality and exact
`Fraction` comparison of plain numbers; this decides most benchmark answers in microseconds.
(2) Everything else goes to math-verify's LaTeX parser and `verify` in the bounded worker
(`bounded.py`); a timeout, crash or memory error there is a "not equivalent" verdict, counted in
`stats()`. The default comparator adds the precision rule (`precision.py`) before the worker.
"""

from __future__ import annotations

import threading

from .bounded import get_verifier
from .math_normalize import MathAnswer, compare_fast, prepare
from .precision import precision_equal

_stats_lock = threading.Lock()
_counts = {"comparisons": 0, "fast_path": 0, "worker": 0, "over_cap": 0, "precision": 0}


def _count(key: str) -> None:
    with _stats_lock:
        _counts[key] += 1


def math_equivalent(extracted: str, correct: str, *, precision: bool = False) -> bool:
    """Whether `extracted` is mathematically equivalent to `correct` (the gold answer).

    With `precision`, an answer that agrees with a limited-precision plain-decimal gold at the gold's
    stated precision is also equal (`precision.precision_equal`; it can only turn False into True).
    """
    _count("comparisons")
    pred = prepare(extracted)
    gold = prepare(correct)
    pred, gold = _same_tuple_form(pred, gold)
    if pred.over_cap or gold.over_cap:
        _count("over_cap")
    fast = compare_fast(pred, gold)
    if fast is not True and precision and precision_equal(pred, gold):
        _count("precision")
        return True
    if fast is not None:
        _count("fast_path")
        return fast
    _count("worker")
    return _worker_equivalent(gold, pred)


def _same_tuple_form(pred: MathAnswer, gold: MathAnswer) -> tuple[MathAnswer, MathAnswer]:
    """ "(-2, -2)" against "-2,-2": a bare list that repeats a value is the same ordered tuple written
    without its parentheses (math-verify reads a bare list as a set, which drops the repeated -2)."""
    a, b = pred.text.strip(), gold.text.strip()
    if _is_paren_tuple(a) and _is_bare_list(b) and _top_commas(a[1:-1]) == _top_commas(b):
        return pred, prepare("(" + b + ")")
    if _is_paren_tuple(b) and _is_bare_list(a) and _top_commas(b[1:-1]) == _top_commas(a):
        return prepare("(" + a + ")"), gold
    return pred, gold


def _top_commas(s: str) -> int:
    depth = n = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


def _is_paren_tuple(s: str) -> bool:
    return (
        len(s) <= 400
        and s.startswith("(")
        and s.endswith(")")
        and _top_commas(s[1:-1]) >= 1
        and _top_commas(s) == 0
    )


def _is_bare_list(s: str) -> bool:
    """A bare list that repeats an element: only a tuple lists one value twice. (A bare list of
    distinct values stays a set: "1, 2" is answered by "(2, 1)" as well.)"""
    if len(s) > 400 or s[:1] in "([{" or "(" in s or _top_commas(s) < 1:
        return False
    items = [x.strip() for x in s.split(",")]
    return len(set(items)) < len(items)


def _worker_equivalent(gold: MathAnswer, pred: MathAnswer) -> bool:
    ok, _status = get_verifier().verify(gold.worker_candidates(pred), pred.worker_candidates(gold))
    return ok


def warm_up() -> None:
    """Start the math-verify worker now (about a second, once per process)."""
    get_verifier().warm_up()


def stats() -> dict[str, int]:
    """Counters for this process: comparisons, fast-path verdicts, worker calls, timeouts, crashes..."""
    with _stats_lock:
        out = dict(_counts)
    out.update({f"worker_{k}": v for k, v in vars(get_verifier().stats).items()})
    return out


def bound_counts() -> tuple[int, int, int, int]:
    """(timeouts, crashes, busy, over the size cap): this process's comparisons a bound stopped.
    Read before and after one comparison (per math row), so it must cost next to nothing."""
    w = get_verifier().stats
    return w.timeouts, w.crashes, w.busy, _counts["over_cap"]
