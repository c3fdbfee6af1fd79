"""Run one scoring job in this process and print a JSON line with its figures (for the benchmarks).

Peak RSS is this process's (the Ray driver's): the figure that must stay flat as input grows.
"""

import json
import resource
import sys
import time

from xfinder_ray.config import load_config
from xfinder_ray.pipeline import init_ray, run


def main() -> None:
    config, *overrides = sys.argv[1:]
    cfg = load_config(config, overrides)
    t0 = time.time()
    init_ray(cfg)
    import ray

    ray.data.DataContext.get_current().enable_progress_bars = False
    t1 = time.time()
    result = run(cfg)
    wall = time.time() - t1
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
                "extractor": result.manifest["extractor"],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
