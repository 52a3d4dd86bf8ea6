"""roi_align's bench cases (ops/library/roi_align/bench.py) on the CPU: the baselines the bench times
(torchvision.ops.roi_align, and mmdet's rule over a per-level torchvision loop) agree with twinops
on the cases' inputs (small maps: the bench's own shapes are for a GPU)."""
import pytest
import torch

from twinops.bench.harness import Config, Row, check_parity
from twinops.library.roi_align.bench import BENCH, Case, target_lines

pytest.importorskip("torchvision")


def _small(**kw):
    base = dict(shape="fpn", levels=((40, 60), (20, 30), (10, 15), (5, 8)), k=50, size=7, dtype="float32",
                direction="forward", differentiable=(1, 2, 3, 4), backward_op="twinops::multi_level_roi_align_backward")
    return Case(**{**base, **kw})


def test_cases_cover_every_shape_dtype_and_direction():
    cases = BENCH.build_cases(Config(dtypes=("float32", "float16", "bfloat16")))
    assert {(c.shape, c.k, c.size, len(c.levels)) for c in cases} == {("P2", 1000, 7, 1), ("mask", 100, 14, 1),
                                                                      ("fpn", 1000, 7, 4)}
    assert {(c.direction, c.dtype) for c in cases} == {(d, t) for d in ("forward", "backward")
                                                       for t in ("float32", "float16", "bfloat16")}
    assert all(c.differentiable == tuple(range(1, len(c.levels) + 1)) for c in cases)


@pytest.mark.parametrize("levels", [((40, 60),), ((40, 60), (20, 30), (10, 15), (5, 8))])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_baseline_and_twinops_agree_on_the_case_inputs(levels, dtype):
    # 1/4 of the bench image: the rois of an 800 x 1344 image would mostly lie outside these maps,
    # so scale them down with the maps.
    case = _small(levels=levels, dtype=dtype)
    rois, *feats = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(0))
    rois = torch.cat([rois[:, :1], rois[:, 1:] / 5], 1)
    inputs = (rois, *feats)
    got = case.candidate(*inputs)
    # torchvision's CPU kernels have no bfloat16: expected() recomputes half rows in float32
    base = case.baseline(*inputs) if dtype == "float32" else None
    assert check_parity(case.expected(inputs, base), got, case.torch_dtype, BENCH.tolerance)[0]


def test_target_lines():
    def row(direction, base_ms, ms):
        case = _small(direction=direction)
        return Row(case, case.nbytes(), 0.001, base_ms, ms)

    lines = target_lines([row("forward", 0.34, 0.1), row("backward", 1.48, 1.0)])
    assert lines[0] == "forward: 1 of 1 rows >= 2x torchvision"
    assert lines[1].startswith("backward: 0 of 1 rows >= 2x torchvision; below: fpn") and "1.48x" in lines[1]
