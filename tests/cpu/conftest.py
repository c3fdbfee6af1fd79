import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")


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
