"""Entry point for `ray job submit` — the same code path as `xfinder-ray score`.

ray job submit --working-dir . -- python jobs/score.py --config configs/default.yaml input=s3://...
"""

import sys
from pathlib import Path

# With --working-dir the project is the job's cwd but may not be installed on the cluster's image.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xfinder_ray.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["score", *sys.argv[1:]]))
