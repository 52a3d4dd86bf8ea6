"""ms_deform_attn's bench cases (ops/library/ms_deform_attn/bench.py) on the CPU: the composite the
bench times is the float64 reference's arithmetic, and twinops matches it on the cases' inputs
(small pyramids: the bench's own shapes are for a GPU)."""
import dataclasses

import pytest
import torch

from twinops.bench.harness import Config, Row, check_parity
from twinops.library.ms_deform_attn.bench import BENCH, Case, composite, target_lines
from twinops.library.ms_deform_attn.reference import ms_deform_attn_reference


def _small(**kw):
    base = dict(shape="encoder", levels=((6, 7), (3, 4), (2, 2)), n=2, lq=11, baseline_kind="eager", dtype="float32",
                direction="forward")
    return Case(**{**base, **kw})


def test_cases_cover_every_shape_baseline_and_pass():
    cases = BENCH.build_cases(Config(dtypes=("float32", "float16")))
    assert {(c.shape, c.n, c.lq) for c in cases} == {("encoder", 1, 22223), ("encoder", 4, 22223),
                                                     ("decoder", 4, 300), ("decoder", 4, 900), ("rtdetr", 1, 300)}
    assert {(c.baseline_kind, c.direction, c.dtype) for c in cases} == {
        (k, d, t) for k in ("eager", "compiled") for d in ("forward", "backward") for t in ("float32", "float16")}
    assert {c.s for c in cases} == {22223, 8400}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_composite_and_twinops_agree_on_the_case_inputs(dtype):
    case = _small(dtype=dtype)
    inputs = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(0))
    assert inputs[3].shape == (2, 11, 8, 3, 4, 2) and torch.allclose(inputs[4].float().sum((-1, -2)),
                                                                     torch.ones(2, 11, 8), atol=1e-2)
    want = ms_deform_attn_reference(*inputs)
    torch.testing.assert_close(composite(*(x.double() if x.is_floating_point() else x for x in inputs)), want)
    got = case.candidate(*inputs)
    assert check_parity(case.expected(inputs, case.baseline(*inputs)), got, case.torch_dtype, BENCH.tolerance)[0]


def test_backward_case_shapes_and_bytes():
    fwd, bwd = _small(), _small(direction="backward")
    assert fwd.output_shapes() == ((2, 11, 256),) and bwd.nbytes() > fwd.nbytes()
    assert dataclasses.replace(fwd, dtype="float16").nbytes() * 2 == fwd.nbytes()


def test_target_lines():
    def row(kind, direction, base_ms, ms):
        case = _small(baseline_kind=kind, direction=direction)
        return Row(case, case.nbytes(), 0.001, base_ms, ms)

    lines = target_lines([row("eager", "forward", 3.2, 0.2), row("compiled", "forward", 1.0, 0.2),
                          row("eager", "backward", 7.0, 1.0)])
    assert lines[0] == "forward: 1 of 1 rows >= 10x the eager composite"
    assert lines[1].startswith("backward: 0 of 1 rows >= 10x the eager composite; below: encoder") and "7.00x" in lines[1]
