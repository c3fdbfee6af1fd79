import sys

from xfinder_ray.cli import main

sys.exit(main())
