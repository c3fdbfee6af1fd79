"""The math-verify worker: a supervisor process that relays requests to one forked child.

Run as a script by `bounded.py` (never imported by the parent). Protocol, one JSON object per line:

    parent -> supervisor   {"id": 7, "gold": ["..."], "pred": ["..."], "deadline": 12345.6}
    supervisor -> parent   {"id": 7, "ok": true, "status": "ok"}      status: ok | error | timeout | crash
    supervisor -> parent   {"ready": true}                             once, after the warm-up

Why this shape: the supervisor imports sympy/math-verify and warms the parser once, then forks the
child that does the work. The child has RLIMIT_AS set and is SIGKILLed when it overruns its time;
a replacement is forked from the already-warm supervisor in milliseconds, so a pathological input
costs one kill, not a multi-second re-import. The supervisor itself never parses an answer.
`deadline` is on the shared CLOCK_MONOTONIC (time.monotonic() is system-wide on Linux), so a request
that waited in the pipe behind a slow one gets only what is left of its own budget.

Only math-verify's LaTeX path is used: its ExprExtractionConfig runs sympy's parse_expr (which
evaluates Python), so it is never configured here.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time

_CHILD_MEM_BYTES = 500 * 1024 * 1024
_READ_CHUNK = 65536
# A request line is at most a few KiB (inputs are capped by the parent); refuse anything absurd.
_MAX_LINE = 4 * 1024 * 1024


def _quiet_logging() -> None:
    import logging

    for name in ("math_verify", "latex2sympy2_extended"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _compare(gold: list[str], pred: list[str]) -> bool:
    from math_verify import LatexExtractionConfig, parse, verify

    config = [LatexExtractionConfig(boxed_match_priority=0)]

    def parsed(text: str) -> list:
        # `$...$` makes the extraction regexes take the whole answer; timeouts are ours, not SIGALRM.
        return parse("$" + text + "$", config, parsing_timeout=None)

    preds = [p for p in (parsed(t) for t in pred) if p]
    if not preds:
        return False
    for g_text in gold:
        g = parsed(g_text)
        if not g:
            continue
        for p in preds:
            # allow_set_relation_comp: "x > 3" answers "(3, \infty)" as well as the other way round.
            if verify(g, p, timeout_seconds=None, allow_set_relation_comp=True) or _hyperbolic_equal(g, p):
                return True
    return False


def _hyperbolic_equal(gold: list, pred: list) -> bool:
    """`\\frac{1}{a}\\sinh(at)` against `\\frac{1}{2a}(e^{at}-e^{-at})`: math-verify does not rewrite
    hyperbolic functions, so an expression that holds one is compared again written with exp."""
    import sympy

    g, p = gold[0], pred[0]
    hyperbolic = (sympy.sinh, sympy.cosh, sympy.tanh)
    if not (isinstance(g, sympy.Expr) and isinstance(p, sympy.Expr)) or not (
        g.has(*hyperbolic) or p.has(*hyperbolic)
    ):
        return False
    return sympy.simplify((g - p).rewrite(sympy.exp)) == 0


def _set_pdeathsig() -> None:
    # Linux only: the child dies with the supervisor even if the supervisor is SIGKILLed.
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _child_main(req_fd: int, resp_fd: int) -> None:
    import resource

    _set_pdeathsig()
    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_MEM_BYTES, _CHILD_MEM_BYTES))
    sys.setrecursionlimit(3000)
    req = os.fdopen(req_fd, "rb", buffering=_READ_CHUNK)
    # Preformatted so that a reply can still be written after a MemoryError.
    fail = b'{"ok": false, "status": "error", "exit": true}\n'
    while True:
        line = req.readline(_MAX_LINE)
        if not line:
            return
        try:
            msg = json.loads(line)
            ok = _compare(list(msg["gold"]), list(msg["pred"]))
            out = json.dumps({"ok": bool(ok), "status": "ok"}).encode() + b"\n"
        except (MemoryError, RecursionError):
            # State after these is not trusted: answer, then exit so a clean child is forked.
            os.write(resp_fd, fail)
            return
        except Exception:
            out = b'{"ok": false, "status": "error"}\n'
        os.write(resp_fd, out)


class _Child:
    def __init__(self) -> None:
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            code = 0
            try:
                os.close(req_w)
                os.close(resp_r)
                # The supervisor's stdin/stdout are the parent's pipes: the child must not touch them.
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)
                os.dup2(devnull, 1)
                _child_main(req_r, resp_w)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(resp_w)
        self.pid = pid
        self.req_w = req_w
        self.resp_r = resp_r
        self.buf = b""

    def alive(self) -> bool:
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return done == 0

    def signal_kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self.signal_kill()
        try:
            os.waitpid(self.pid, 0)  # tearing down a big address space takes a moment
        except ChildProcessError:
            pass
        for fd in (self.req_w, self.resp_r):
            try:
                os.close(fd)
            except OSError:
                pass

    def ask(self, line: bytes, deadline: float) -> dict | None:
        """Send one request; the reply, or None on timeout / crash."""
        try:
            os.write(self.req_w, line)
        except OSError:
            return None
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.resp_r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.resp_r, _READ_CHUNK)
            if not chunk:  # the child died
                return None
            self.buf += chunk
        out, _, self.buf = self.buf.partition(b"\n")
        try:
            return json.loads(out)
        except ValueError:
            return None


# One comparison of each kind: sympy imports and initialises much of itself lazily (polys,
# simplify, sets, matrices...), which costs up to a second per kind on a loaded machine. Done in the
# supervisor before any fork, so that every child, including one forked after a kill, starts warm.
_WARM_UP = (
    ("\\frac{1}{2}", "0.5"),
    ("(1, 2]", "(1,2]"),
    ("\\{1,2\\}", "2, 1"),
    ("x=2", "2"),
    ("(x-1)(x+1)", "x^2-1"),
    ("\\frac{x}{2}+\\frac{1}{2}", "\\frac{x+1}{2}"),
    ("\\sqrt{8}", "2\\sqrt{2}"),
    ("(3,\\infty)", "x>3"),
    ("(-\\infty,3]", "x \\le 3"),
    ("(-\\infty,-2)\\cup(3,\\infty)", "(-\\infty, -2) \\cup (3, \\infty)"),
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
    ("1", "\\sin^2x+\\cos^2x"),
    ("-1", "e^{i\\pi}"),
    ("3", "\\log_2 8"),
    ("2x+3", "y=2x+3"),
    ("2.5", "2\\frac12"),
    ("\\frac{\\pi}{2}", "\\pi/2"),
    ("2i+3", "3+2i"),
    ("10", "\\binom{5}{2}"),
    ("120", "5!"),
    ("\\frac12", "\\int_0^1 x dx"),
    ("a_{1}", "a_1"),
    ("\\text{yes}", "yes"),
    ("(5,3)", "(5, 3)"),
)


def _warm_up() -> None:
    for gold, pred in _WARM_UP:
        try:
            _compare([gold], [pred])
        except Exception:
            pass


def main() -> None:
    global _CHILD_MEM_BYTES
    if len(sys.argv) > 1:
        _CHILD_MEM_BYTES = int(sys.argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _quiet_logging()
    _warm_up()
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    stdout.write(b'{"ready": true}\n')
    stdout.flush()
    child: _Child | None = _Child()  # forked now, so the first request does not wait for it
    while True:
        line = stdin.readline(_MAX_LINE)
        if not line:  # the parent closed the pipe or died
            break
        try:
            msg = json.loads(line)
            rid = msg["id"]
            deadline = float(msg["deadline"])
            payload = json.dumps({"gold": msg["gold"], "pred": msg["pred"]}).encode() + b"\n"
        except Exception:
            continue
        dying: _Child | None = None
        if deadline <= time.monotonic():
            reply = {"ok": False, "status": "timeout"}  # expired while queued: do not even start
        else:
            if child is not None and not child.alive():
                child.kill()
                child = None
            if child is None:
                child = _Child()
            reply = child.ask(payload, deadline)
            if reply is None:
                status = "timeout" if child.alive() else "crash"
                child.signal_kill()
                dying, child = child, None
                reply = {"ok": False, "status": status}
            elif reply.get("exit"):
                dying, child = child, None
        out = {"id": rid, "ok": bool(reply.get("ok")), "status": reply.get("status", "error")}
        stdout.write(json.dumps(out).encode() + b"\n")
        stdout.flush()
        if dying is not None:
            dying.kill()  # reap after answering: the parent is not kept waiting for the teardown
    if child is not None:
        child.kill()


if __name__ == "__main__":
    main()
