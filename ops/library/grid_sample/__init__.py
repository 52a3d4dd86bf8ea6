"""grid_sample: F.grid_sample, 4-D and 5-D, over one kernel (docs/ops/grid_sample.md)."""
from . import export  # noqa: F401  (its ATen replacement)
from .api import GRID_SAMPLE_MODES, GRID_SAMPLE_PADDING_MODES, GridSample, GridSampleAttrs, grid_sample

__all__ = ["grid_sample", "GridSample", "GridSampleAttrs", "GRID_SAMPLE_MODES", "GRID_SAMPLE_PADDING_MODES"]
