import os
import tempfile

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
# The session's own shared math-verify verdicts (judging/verdict_cache.py), inherited by the jobs and
# Ray workers it starts: never the machine's, so no earlier run decides what a test sees.
os.environ.setdefault("XFINDER_VERDICT_CACHE_DIR", tempfile.mkdtemp(prefix="xfinder-verdicts-"))


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray instance for the session (the test run is inside a loopback-only namespace)."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield ray
    ray.shutdown()
