"""``python -m twinops.bench``: see :mod:`twinops.bench.cli`."""
import sys

from .cli import main

sys.exit(main())
