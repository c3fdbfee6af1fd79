"""Hard bounds of judge(): adversarial inputs, threads, forks, memory, no code execution, fuzzing."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xfinder_ray.judging import MATH_COMPARATORS, judge, stats, warm_up
from xfinder_ray.judging.bounded import get_verifier
from xfinder_ray.records import MATH_ANSWER_RANGE

BOUND_S = 2.0

ADVERSARIAL = {
    "tower of powers": "10^{10^{10}}",
    "right-assoc power": "9^9^9^9",
    "deep tower": "2^{2^{2^{2^{2^{2}}}}}",
    "10k nested parens": "(" * 10_000 + "1" + ")" * 10_000,
    "900 nested parens": "(" * 900 + "1" + ")" * 900,
    "900 nested braces": "{" * 900 + "1" + "}" * 900,
    "1 MB of digits": "7" * 1_000_000,
    "1999 digits": "9" * 1_999,
    "huge factorial": "1000000000!",
    "factorial of a power": "(10^{10})!",
    "huge exponent": "1.5\\times10^{100000000}",
    "huge e-notation": "1e999999999",
    "negative tower": "10^{-10^{10}}",
    "exp tower": "e^{e^{e^{e^{100}}}}",
    "huge sum": "\\sum_{n=1}^{10^{12}} n",
    "huge product": "\\prod_{k=1}^{10^9} k",
    "huge binomial": "\\binom{10^{10}}{10^5}",
    "cancelling huge powers": "x^{10^{10}} - x^{10^{10}}",
    "many symbols": "x" * 1_999,
    "many fractions": "\\frac{1}{3}" * 150,
    "nested sqrt": "\\sqrt{" * 300 + "2" + "}" * 300,
    "big matrix": "\\begin{pmatrix}" + "1&" * 300 + "1\\end{pmatrix}",
    "dollars": "$" * 1_999,
    "boxed chain": "\\boxed{" * 280,
    "oxed chain": "oxed{" * 390,
    "text chain": "\\text{(" * 300,
    "comma list": "1," * 999,
    "1 MB of latex": "\\frac{1}{2}+" * 90_000,
}

# The readers for real-output formats (docs/judging.md): repeating decimals, ellipses, decimal
# commas, mixed numbers, chains, scripts, escapes. Under the 2,000-character cap unless said otherwise.
REAL_FORMAT_ADVERSARIAL = {
    "huge overline": "0.\\overline{" + "1" * 1_980 + "}",
    "overline under the digit cap": "0.\\overline{" + "7" * 990 + "}",
    "huge paren repeat": "0." + "1" * 900 + "(" + "2" * 900 + ")",
    "10^6-digit decimal": "0." + "3" * 1_000_000,
    "999-digit decimal": "0." + "3" * 998,
    "999-digit sci mantissa": "3." + "3" * 990 + "e-999",
    "long ellipsis": "0." + "3" * 1_990 + "...",
    "long ellipsis, no period": "0." + "1234567890" * 199 + "...",
    "many ellipses": "0.1... " * 250,
    "long decimal comma": "0," + "1" * 1_995,
    "long euro grouping": "1" + ".000" * 450 + ",5",
    "huge mixed number": "9" * 500 + "\\frac{" + "1" * 490 + "}{" + "2" * 495 + "}",
    "huge mixed slash": "9" * 500 + " " + "1" * 490 + "/" + "2" * 495,
    "long chain": "1+" * 300 + "1 = " * 15 + "600",
    "many equals": "1=" * 999,
    "control characters": "\x0c" * 1_999,
    "tab commands": "\tab" * 660,
    "doubled backslashes": "\\\\frac" * 330,
    "backslash run": "\\" * 1_999,
    "superscript run": "2" + "\u2079" * 1_998,
    "subscript run": "1" + "\u2082" * 1_998,
    "vulgar fractions": "\u00bd" * 1_999,
    "quotes": '"' * 1_999,
    "emphasis": "**" * 999,
    "clock-like": "1:" * 999,
    "or chain": "x < 1 or " * 220,
    "scale words": "1 million " * 199,
    "huge power of ten": "10^{" + "9" * 1_990 + "}",
    "1/(999 sevens)": "\\frac{1}{" + "7" * 990 + "}",
}
ADVERSARIAL.update(REAL_FORMAT_ADVERSARIAL)

PWNED = "/tmp/xfinder_ray_judging_pwned"
INJECTIONS = [
    f"__import__('os').system('touch {PWNED}')",
    f"exec(\"__import__('os').system('touch {PWNED}')\")",
    f"eval(\"__import__('os').system('touch {PWNED}')\")",
    f"lambda: __import__('os').system('touch {PWNED}')",
    f"(lambda: __import__('os').system('touch {PWNED}'))()",
    f"\\mathrm{{__import__}}('os').system('touch {PWNED}')",
    f"$__import__('os').system('touch {PWNED}')$",
    f"\\boxed{{__import__('os').system('touch {PWNED}')}}",
    f"The answer is 1 + __import__('os').system('touch {PWNED}')",
    f"1/__import__('os').system('touch {PWNED}')",
    f"[__import__('os').system('touch {PWNED}') for _ in (1,)]",
]


@pytest.fixture(scope="module", autouse=True)
def _worker_started():
    warm_up()


def _timed(fn, *args, **kwargs):
    start = time.monotonic()
    out = fn(*args, **kwargs)
    return out, time.monotonic() - start


def _mj(extracted: str, correct: str, comparator: str = "math-verify") -> bool:
    return judge("math", MATH_ANSWER_RANGE, extracted, correct, math=comparator)


@pytest.mark.parametrize("comparator", MATH_COMPARATORS)
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_is_bounded(name, comparator):
    text = ADVERSARIAL[name]
    for extracted, correct in ((text, "1"), ("1", text), (text, text[:60])):
        verdict, elapsed = _timed(_mj, extracted, correct, comparator)
        assert isinstance(verdict, bool)
        assert elapsed < BOUND_S, f"{name}: {elapsed:.2f}s"


@pytest.mark.parametrize("name", ["tower of powers", "10k nested parens", "1 MB of digits", "huge factorial"])
def test_adversarial_in_a_thread(name):
    result: dict = {}

    def run():
        result["verdict"], result["elapsed"] = _timed(_mj, ADVERSARIAL[name], "1")

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=10)
    assert not t.is_alive()
    assert result["verdict"] is False
    assert result["elapsed"] < BOUND_S


def test_normal_comparison_right_after_a_timeout():
    before = stats()["worker_timeouts"]
    assert _mj("10^{10^{10}}", "7") is False
    assert stats()["worker_timeouts"] == before + 1
    verdict, elapsed = _timed(_mj, "\\frac{x-3}{2}", "\\frac{x}{2} - \\frac{3}{2}")
    assert verdict is True
    assert elapsed < BOUND_S


def test_threads_share_the_worker_correctly():
    cases = [
        ("2\\sqrt{2}", "\\sqrt{8}", True),
        ("(1,2)", "(2,1)", False),
        ("\\frac{x+1}{2}", "\\frac{x}{2}+\\frac{1}{2}", True),
        ("x^2-1", "(x-1)(x+1)", True),
        ("\\sqrt{3}", "3", False),
    ]
    errors: list = []

    def run(k: int):
        for i in range(6):
            a, b, want = cases[(k + i) % len(cases)]
            # Distinct strings per call so the result cache does not answer.
            a = f"{a}+{k}{i}-{k}{i}" if want is not None and "(" not in a else a
            verdict, elapsed = _timed(_mj, a, b)
            if verdict is not want or elapsed >= BOUND_S:
                errors.append((a, b, verdict, want, elapsed))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not errors


@pytest.mark.parametrize("comparator", MATH_COMPARATORS)
def test_injected_code_never_runs(comparator):
    Path(PWNED).unlink(missing_ok=True)
    for text in INJECTIONS:
        for extracted, correct in ((text, "0"), ("0", text), (text, text + " ")):
            _mj(extracted, correct, comparator)
            for kat, rng in (("short_text", [text, "0"]), ("alphabet_option", [["A", text], ["B", "0"]])):
                judge(kat, rng, extracted, correct, math=comparator)
    assert not os.path.exists(PWNED)


def test_worker_child_has_address_space_limit():
    _mj("\\sqrt{50}", "5\\sqrt{2}")  # make sure a child exists
    verifier = get_verifier()
    assert verifier._proc is not None
    sup = verifier._proc.pid
    children = Path(f"/proc/{sup}/task/{sup}/children")
    if not children.exists():
        pytest.skip("/proc children listing not available")
    pids = children.read_text().split()
    assert pids, "the supervisor has no child"
    limits = Path(f"/proc/{pids[0]}/limits").read_text()
    line = next(ln for ln in limits.splitlines() if ln.startswith("Max address space"))
    assert int(line.split()[3]) <= 500 * 1024 * 1024


def test_memory_hungry_input_does_not_grow_the_parent():
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for text in ("10^{10^{9}}", "2^{10^{9}}", "(10^{7})!", "\\binom{10^{8}}{10^{6}}"):
        verdict, elapsed = _timed(_mj, text, "3")
        assert verdict is False and elapsed < BOUND_S
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 100 * 1024  # KiB: the heavy lifting happened in the bounded child


REAL_FORMAT_GOLDS = ["\\frac{1}{3}", "\\frac{1}{7}", "1", "0." + "3" * 998, "\\frac{1}{" + "7" * 990 + "}"]


def test_real_format_normalization_is_fast_and_small():
    """The pure-Python readers (no worker) on the adversarial inputs: milliseconds, a few MB at most."""
    import tracemalloc

    from xfinder_ray.judging.math_normalize import compare_fast, prepare

    tracemalloc.start()
    try:
        worst = 0.0
        for text in REAL_FORMAT_ADVERSARIAL.values():
            for gold in REAL_FORMAT_GOLDS:
                start = time.monotonic()
                a, b = prepare(text), prepare(gold)
                compare_fast(a, b)
                compare_fast(b, a)
                worst = max(worst, time.monotonic() - start)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert worst < 0.5, worst
    assert peak < 50 * 1024 * 1024, peak


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_works_in_a_forked_child():
    assert _mj("\\sqrt{12}", "2\\sqrt{3}")  # the parent has a live worker
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            ok = _mj("\\sqrt{18}", "3\\sqrt{2}") and not _mj("\\sqrt{18}", "2\\sqrt{3}")
            os.write(w, b"1" if ok else b"0")
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    out = os.read(r, 1)
    os.close(r)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert out == b"1"
    # The parent's worker is untouched by the child.
    assert _mj("\\sqrt{27}", "3\\sqrt{3}")


_LATEXISH = st.sampled_from(
    [
        "\\frac", "\\sqrt", "\\boxed", "\\text", "\\left(", "\\right)", "^", "_", "{", "}", "(", ")", "[", "]",
        "\\{", "\\}", ",", ".", "/", "-", "+", "=", "\\%", "%", "$", "\\$", "\\infty", "\\pi", "x", "y", "e", "i",
        "0", "1", "2", "9", "10", "1,000", " ", "\\times", "\\cdot", "!", "\\le", "^\\circ", "\\begin{pmatrix}",
        "\\end{pmatrix}", "&", "\\\\", "and", "cm", "e8", "_2", "'", '"', "\\", "\u00b0", "\u221a", "\u03c0",
    ]
)  # fmt: skip
_ANSWERS = st.one_of(
    st.lists(_LATEXISH, max_size=14).map("".join),
    st.text(max_size=40),
    st.lists(st.one_of(_LATEXISH, st.characters()), max_size=12).map("".join),
)


@settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(extracted=_ANSWERS, correct=_ANSWERS, comparator=st.sampled_from(MATH_COMPARATORS))
def test_fuzz_math_never_raises_and_is_bounded(extracted, correct, comparator):
    verdict, elapsed = _timed(_mj, extracted, correct, comparator)
    assert isinstance(verdict, bool)
    assert elapsed < BOUND_S


@settings(max_examples=150, deadline=None, database=None)
@given(
    kat=st.sampled_from(["alphabet_option", "short_text", "categorical_label"]),
    extracted=st.text(max_size=60),
    correct=st.text(min_size=1, max_size=30),
    comparator=st.sampled_from(MATH_COMPARATORS),
)
def test_fuzz_text_never_raises(kat, extracted, correct, comparator):
    rng = [["A", correct], ["B", "other"]] if kat == "alphabet_option" else [correct, "other"]
    verdict, elapsed = _timed(judge, kat, rng, extracted, correct, math=comparator)
    assert isinstance(verdict, bool)
    assert elapsed < BOUND_S


@pytest.mark.parametrize("text", [r"\sqrt{(-8)^{0.5}}", r"(-8)^{0.5}+1", r"\frac{1}{(-2)^{1.5}}"])
def test_complex_intermediate_values_are_a_verdict_not_an_error(text):
    # The bounded numeric reader meets a negative base to a fractional power: no real value, so no
    # number, and the judge still answers (it must never raise for any answer text).
    from xfinder_ray.judging.math_normalize import numeric_value

    assert numeric_value(text) is None
    assert judge("math", None, text, "3") is False
    assert judge("math", None, "3", text) is False
