"""nms's bench cases (ops/library/nms/bench.py) on the CPU: the inputs they draw give torchvision's
results exactly (distinct scores), so a CUDA run's parity check can only fail on a real difference."""
import pytest
import torch

from twinops.bench.harness import Config, Row, check_parity
from twinops.library.nms.bench import BENCH, Case, PaddedCase, target_lines


def test_cases_cover_both_ops_and_every_dtype():
    cases = BENCH.build_cases(Config(dtypes=("float32", "float16")))
    ops = ("nms", "batched_nms", "batched_nms_padded")
    assert {(c.op, c.dtype) for c in cases} == {(o, d) for o in ops for d in ("float32", "float16")}
    assert all(c.direction == "forward" for c in cases)


@pytest.mark.parametrize("op, classes", [("nms", 1), ("batched_nms", 80)])
def test_case_inputs_give_torchvision_results(op, classes):
    pytest.importorskip("torchvision", reason="torchvision (the baseline) is not installed")
    case = Case(op=op, boxes=600, classes=classes, dtype="float32", direction="forward")
    inputs = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(0))
    got, want = case.candidate(*inputs), case.baseline(*inputs)
    assert got.numel() > 0 and torch.equal(got, want)
    assert case.labels() == (op, "600", str(classes), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_case_scores_are_distinct_in_every_dtype(dtype):
    """Ties would leave torchvision's order open and make the parity check fail by chance."""
    case = Case(op="nms", boxes=20000, classes=1, dtype=dtype, direction="forward")
    _, scores = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(1))
    assert scores.dtype == case.torch_dtype and torch.isfinite(scores).all() and (scores > 0).all()
    assert scores.unique().numel() == 20000


def test_target_lines():
    def row(op, boxes, classes, tv_ms, ms):
        case = Case(op=op, boxes=boxes, classes=classes, dtype="float32", direction="forward")
        return Row(case, case.nbytes(), 0.001, tv_ms, ms)

    rows = [row("nms", 1000, 1, 1.0, 0.5), row("nms", 5000, 1, 2.4, 0.4), row("nms", 20000, 1, 9.5, 4.5),
            row("batched_nms", 8400, 80, 6.6, 3.1)]
    lines = target_lines(rows)
    assert lines[0] == "nms: 1 of 2 rows >= 5x torchvision from 5000 boxes on; below: 20000 float32 2.11x"
    assert lines[1] == "batched_nms: 0 of 1 rows under 0.5 ms; below: 8400x80 float32 3.100 ms"


def test_padded_case_gives_torchvision_steps_results():
    """The padded case's parity reference (torchvision's steps, per-class loop) equals twinops on
    inputs with many tied half-precision-like scores; the timed baseline gives the same here."""
    pytest.importorskip("torchvision", reason="torchvision (the baseline) is not installed")
    case = PaddedCase(op="batched_nms_padded", boxes=900, classes=12, dtype="float32", direction="forward", images=3)
    inputs = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(2))
    inputs = (inputs[0], (inputs[1] * 64).round() / 64)  # ties
    got, base = case.candidate(*inputs), case.baseline(*inputs)
    want = case.expected(inputs, base)
    assert (got[0] > 0).all() and (got[0] == 100).any()
    assert check_parity(want, got, torch.float32, BENCH.tolerance)[0]
    assert check_parity(base, got, torch.float32, BENCH.tolerance)[0]
    assert case.labels() == ("batched_nms_padded", "3x900", "12", "float32")
