"""deform_conv2d's bench cases (ops/library/deform_conv2d/bench.py) on the CPU: the cases cover the
issue's shapes and baselines, twinops matches torchvision on a small case's inputs, and the target
lines read the rows right (the bench's own shapes are for a GPU)."""
import dataclasses

import pytest
import torch

from twinops.bench.harness import Config, Row, check_parity
from twinops.library.deform_conv2d.bench import BENCH, Case, target_lines
from twinops.library.deform_conv2d.reference import torchvision_ops

pytestmark = pytest.mark.skipif(torchvision_ops() is None, reason="torchvision with CPU kernels is not installed")


def _small(**kw):
    base = dict(shape="r50-c4", n=2, c_in=8, h=9, w=11, c_out=6, stride=1, offset_groups=2,
                baseline_kind="torchvision", dtype="float32", direction="forward")
    return Case(**{**base, **kw})


def test_cases_cover_every_shape_baseline_and_pass():
    cases = BENCH.build_cases(Config(dtypes=("float32", "float16")))
    assert {(c.n, c.c_in, c.h, c.w, c.c_out, c.stride, c.offset_groups) for c in cases} == {
        (1, 256, 50, 76, 256, 1, 1), (8, 256, 50, 76, 256, 1, 1), (8, 256, 50, 76, 256, 2, 1),
        (4, 64, 128, 128, 64, 1, 8)}
    assert {(c.baseline_kind, c.direction) for c in cases} == {("torchvision", "forward"), ("torchvision", "backward"),
                                                               ("dense conv", "forward")}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("stride", [1, 2])
def test_twinops_matches_torchvision_on_the_case_inputs(dtype, stride):
    case = _small(dtype=dtype, stride=stride)
    inputs = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(0))
    assert inputs[1].shape == (2, 36, *case.out_hw) and inputs[4].shape == (2, 18, *case.out_hw)
    got = case.candidate(*inputs)
    assert got.shape == (2, 6, *case.out_hw)
    want = case.expected(inputs, case.baseline(*inputs) if dtype == "float32" else None)
    assert check_parity(want, got, case.torch_dtype, BENCH.tolerance)[0]
    dense = dataclasses.replace(case, baseline_kind="dense conv")
    assert dense.baseline(*inputs).shape == got.shape


def test_target_lines():
    def row(kind, direction, base_ms, ms):
        case = _small(baseline_kind=kind, direction=direction)
        return Row(case, case.nbytes(), 0.001, base_ms, ms)

    lines = target_lines([row("torchvision", "forward", 1.2, 0.5), row("torchvision", "backward", 6.9, 4.0),
                          row("dense conv", "forward", 0.1, 0.5)])
    assert lines[0] == "forward: 1 of 1 rows >= 2x torchvision"
    assert lines[1].startswith("backward: 0 of 1 rows >= 2x torchvision; below: r50-c4") and "1.73x" in lines[1]
    assert lines[2].startswith("forward: 0 of 1 rows within 3x of the dense conv; slower: r50-c4") and "5.00x" in lines[2]
