"""``python -m twinops.bench``: see :mod:`twinops.bench.cli`."""
import sys

from .._cli import run_cli
from .cli import main

sys.exit(run_cli(main))
