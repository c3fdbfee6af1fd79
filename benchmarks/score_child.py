"""Run one scoring job in this process and print a JSON line with its figures (for the benchmarks).

Peak RSS is this process's (the Ray driver's): the figure that must stay flat as input grows.
Object-store peak: the cluster's object-store bytes in use (the "Plasma memory usage" of
`ray memory --stats-only`, plus any fallback allocations on disk), sampled every 0.5 s from the raylet,
and the bytes spilled to disk.
"""

import json
import resource
import sys
import threading
import time

from xfinder_ray.config import load_config
from xfinder_ray.job import init_ray
from xfinder_ray.pipeline import run


class ObjectStoreSampler(threading.Thread):
    """Peak object-store use over the run (ray 2.60: the raylet's FormatGlobalMemoryInfo, all nodes)."""

    def __init__(self, interval_s: float = 0.5):
        super().__init__(daemon=True)
        self.interval_s = interval_s
        self.done = threading.Event()
        self.peak = self.spilled = self.samples = self.errors = 0

    def run(self) -> None:
        import ray
        from ray._private.internal_api import get_memory_info_reply, get_state_from_address

        state = get_state_from_address(ray.get_runtime_context().gcs_address)
        while not self.done.wait(self.interval_s):
            try:
                stats = get_memory_info_reply(state, timeout_seconds=10).store_stats
            except Exception:  # noqa: BLE001 - a missed sample must not fail the benchmark
                self.errors += 1
                continue
            self.samples += 1
            self.peak = max(self.peak, stats.object_store_bytes_used + stats.object_store_bytes_fallback)
            self.spilled = max(self.spilled, stats.spilled_bytes_total)

    def stop(self) -> dict:
        self.done.set()
        self.join(timeout=15)
        mb = 1024 * 1024
        return {
            "object_store_peak_mb": round(self.peak / mb, 1),
            "object_store_spilled_mb": round(self.spilled / mb, 1),
            "object_store_samples": self.samples,
            "object_store_sample_errors": self.errors,
        }


def main() -> None:
    config, *overrides = sys.argv[1:]
    cfg = load_config(config, overrides)
    t0 = time.time()
    init_ray(cfg)
    import ray

    ray.data.DataContext.get_current().enable_progress_bars = False
    sampler = ObjectStoreSampler()
    sampler.start()
    t1 = time.time()
    result = run(cfg)
    wall = time.time() - t1
    store = sampler.stop()
    n = result.manifest["counts"]["input"]
    print(
        "BENCH_JSON "
        + json.dumps(
            {
                "records": n,
                "judged": result.manifest["counts"]["judged"],
                "wall_s": round(wall, 2),
                "ray_start_s": round(t1 - t0, 2),
                "records_per_s": round(n / wall, 1),
                "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                **store,
                "extractor": result.manifest["extractor"],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
