"""Signal helpers for tests that interrupt a child process."""

from __future__ import annotations

import signal


def sigint_default() -> None:
    """Popen(preexec_fn=...): the child starts with SIGINT's default action. A job started in the
    background by a non-interactive shell (`ci &`) inherits SIGINT ignored, and Python then installs
    no KeyboardInterrupt handler, so a Ctrl-C test would see the child ignore the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
