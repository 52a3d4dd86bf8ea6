"""twinops.nms / batched_nms: torchvision's results on inputs without ties (CPU, float32 and
float64), the kernels' own rules (ops/library/nms/reference.py) exactly on Hypothesis-drawn boxes
with ties, NaN and Inf, CUDA equal to the CPU in every dtype, the tie rule, empty input, bad
input, and the fake kernels' data-dependent length."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings

import twinops
from twinops.library.nms.reference import nms_reference, score_order
from twinops.library.nms.strategies import nms_inputs

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _random(k, seed=0, dtype=torch.float64, spread=100.0, device="cpu"):
    gen = torch.Generator().manual_seed(seed)
    xy = torch.rand(k, 2, generator=gen, dtype=torch.float64) * spread
    wh = torch.rand(k, 2, generator=gen, dtype=torch.float64) * spread / 5
    boxes = torch.cat([xy, xy + wh], 1)
    scores = torch.randperm(k, generator=gen).double() / max(k, 1)  # distinct: no ties
    return boxes.to(device, dtype), scores.to(device, dtype)


def _torchvision():
    return pytest.importorskip("torchvision", reason="torchvision (the reference) is not installed")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.7, 1.0])
@pytest.mark.parametrize("k", [1, 10, 300, 2000])
def test_matches_torchvision_without_ties(dtype, threshold, k):
    tv = _torchvision()
    boxes, scores = _random(k, seed=k, dtype=dtype)
    want = tv.ops.nms(boxes, scores, threshold)
    assert torch.equal(twinops.nms(boxes, scores, threshold), want)
    assert torch.equal(nms_reference(boxes, scores, threshold), want)


@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.0])
def test_batched_matches_torchvision_per_class_loop(threshold):
    """torchvision's per-class loop (its `_batched_nms_vanilla`, used from 4,000 boxes on) is the
    semantics; its coordinate-offset trick (below) rounds the IoU of offset boxes differently."""
    tv = _torchvision()
    from torchvision.ops.boxes import _batched_nms_vanilla
    boxes, scores = _random(500, seed=3)
    idxs = torch.randint(0, 7, (500,), generator=torch.Generator().manual_seed(4))
    want = _batched_nms_vanilla(boxes, scores, idxs, threshold)
    assert torch.equal(twinops.batched_nms(boxes, scores, idxs, threshold), want)
    assert torch.equal(twinops.batched_nms(boxes, scores, idxs.int(), threshold), want)
    assert torch.equal(tv.ops.batched_nms(boxes, scores, idxs, threshold), want)  # float64: no rounding here


@settings(deadline=None)
@given(nms_inputs())
def test_cpu_follows_the_rules_exactly(drawn):
    boxes, scores, classes, threshold = drawn
    for dtype in (torch.float32, torch.float64):
        b, s = boxes.to(dtype), scores.to(dtype)
        assert torch.equal(twinops.nms(b, s, threshold), nms_reference(b, s, threshold))
        assert torch.equal(twinops.batched_nms(b, s, classes, threshold), nms_reference(b, s, threshold, classes))


@pytest.mark.cuda
@settings(deadline=None, max_examples=40)
@given(nms_inputs())
def test_cuda_equals_the_cpu_in_every_dtype(drawn):
    boxes, scores, classes, threshold = drawn
    for dtype in DTYPES:
        b, s = boxes.to(dtype), scores.to(dtype)
        want = twinops.nms(b, s, threshold)
        assert torch.equal(twinops.nms(b.cuda(), s.cuda(), threshold).cpu(), want), dtype
        want = twinops.batched_nms(b, s, classes, threshold)
        assert torch.equal(twinops.batched_nms(b.cuda(), s.cuda(), classes.cuda(), threshold).cpu(), want), dtype


@pytest.mark.cuda
@pytest.mark.parametrize("k", [63, 64, 65, 4097, 20000])
def test_cuda_equals_the_cpu_at_many_boxes(k):
    """Partial and whole blocks of 64, and a mask of many blocks (tied scores in half of them)."""
    boxes, scores = _random(k, seed=k, dtype=torch.float32, spread=400.0)
    scores[k // 2:] = scores[: k - k // 2].round(decimals=1)
    want = twinops.nms(boxes, scores, 0.5)
    assert torch.equal(twinops.nms(boxes.cuda(), scores.cuda(), 0.5).cpu(), want)
    idxs = torch.randint(0, 80, (k,), generator=torch.Generator().manual_seed(k))
    want = twinops.batched_nms(boxes, scores, idxs, 0.5)
    assert torch.equal(twinops.batched_nms(boxes.cuda(), scores.cuda(), idxs.cuda(), 0.5).cpu(), want)


@pytest.mark.cuda
@pytest.mark.slow
@pytest.mark.parametrize("k", [360_448, 390_000])
def test_cuda_removed_bits_in_shared_and_global_memory(k, exclusive_gpu_memory):
    """Up to 360,448 boxes the reduce block keeps its removed bits in shared memory (the largest
    such K here), above it in global memory (390,000: a count whose bits once overflowed the 48
    KiB a block takes without opting in); every box is far from every other, so all are kept
    and the mask is all zeros beyond the diagonal. The mask takes K^2 / 8 bytes (19 GB at
    390,000), hence the exclusive fixture."""
    i = torch.arange(k, dtype=torch.float32)
    boxes = torch.stack([i * 10, i * 0, i * 10 + 1, i * 0 + 1], 1)
    scores = torch.rand(k, generator=torch.Generator().manual_seed(0))
    got = twinops.nms(boxes.cuda(), scores.cuda(), 0.5).cpu()
    assert torch.equal(got, torch.from_numpy(score_order(scores.numpy())))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_ties_keep_the_lower_index_first(device):
    """Equal scores rank the lower index first; identical boxes keep that one; a NaN score ranks
    first; -0 ties +0."""
    box = [0.0, 0.0, 10.0, 10.0]
    far = [100.0, 100.0, 110.0, 110.0]
    boxes = torch.tensor([far, box, box, box, far], device=device)
    scores = torch.tensor([0.5, 0.9, 0.9, 0.9, 0.5], device=device)
    assert twinops.nms(boxes, scores, 0.5).tolist() == [1, 0]
    scores = torch.tensor([0.0, -0.0, 0.0, float("nan"), -0.0], device=device)
    assert twinops.nms(boxes, scores, 1.0).tolist() == [3, 0, 1, 2, 4]
    assert twinops.nms(boxes, scores, 0.5).tolist() == [3, 0]  # 1, 2 overlap 3 and 4 overlaps 0


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_nan_boxes_neither_suppress_nor_are_suppressed(device):
    boxes = torch.tensor([[0, 0, 10, 10], [0, 0, float("nan"), 10], [0, 0, 10, 10], [1, 1, 9, 9]], device=device)
    scores = torch.tensor([0.9, 0.8, 0.7, 0.6], device=device)
    assert twinops.nms(boxes, scores, 0.5).tolist() == [0, 1]
    boxes[0, 0] = float("nan")
    assert twinops.nms(boxes, scores, 0.5).tolist() == [0, 1, 2]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_empty_and_single(device):
    e = torch.empty(0, 4, device=device)
    out = twinops.nms(e, torch.empty(0, device=device), 0.5)
    assert out.shape == (0,) and out.dtype == torch.int64 and out.device.type == device
    out = twinops.batched_nms(e, torch.empty(0, device=device), torch.empty(0, dtype=torch.int64, device=device), 0.5)
    assert out.shape == (0,)
    one = torch.tensor([[1.0, 2.0, 3.0, 4.0]], device=device)
    assert twinops.nms(one, torch.tensor([0.3], device=device), 0.0).tolist() == [0]


def test_strided_inputs():
    boxes, scores = _random(100, seed=5, dtype=torch.float32)
    want = twinops.nms(boxes, scores, 0.5)
    wide = torch.zeros(100, 8)
    wide[:, ::2] = boxes
    assert torch.equal(twinops.nms(wide[:, ::2], torch.stack([scores, scores], 1)[:, 0], 0.5), want)


@pytest.mark.parametrize("call, message", [
    (lambda b, s, i: twinops.nms(b[:, :3], s, 0.5), "twinops.nms: boxes must be a 2-D (K, 4) tensor of (x1, y1, x2, y2), got shape (5, 3)"),
    (lambda b, s, i: twinops.nms(b, s[:4], 0.5), "twinops.nms: scores must be a 1-D (K) tensor with one score per box (K = 5), got shape (4)"),
    (lambda b, s, i: torch.ops.twinops.nms(b, s.double(), 0.5), "torch.ops.twinops.nms: scores must have boxes' dtype (Float), got Double"),
    (lambda b, s, i: twinops.nms(b, s, 1.5), "twinops.nms: iou_threshold must be in [0, 1], got 1.5"),
    (lambda b, s, i: torch.ops.twinops.nms(b, s, float("nan")), "torch.ops.twinops.nms: iou_threshold must be in [0, 1], got nan"),
    (lambda b, s, i: twinops.nms(b, s, -0.1), "twinops.nms: iou_threshold must be in [0, 1], got -0.1"),
    (lambda b, s, i: twinops.batched_nms(b, s, i[:2], 0.5), "twinops.batched_nms: idxs must be a 1-D (K) tensor with one class per box (K = 5), got shape (2)"),
])
def test_bad_input_value_errors(call, message):
    b, s, i = _random(5)[0].float(), _random(5)[1].float(), torch.zeros(5, dtype=torch.int64)
    with pytest.raises(RuntimeError) as e:
        call(b, s, i)
    assert str(e.value).splitlines()[0] == message


@pytest.mark.parametrize("call, error, message", [
    (lambda b, s, i: twinops.nms(b.int(), s, 0.5), TypeError, "twinops.nms: boxes must be float32, float64, float16 or bfloat16, got torch.int32"),
    (lambda b, s, i: twinops.nms(b[0], s, 0.5), ValueError, "twinops.nms: boxes must be a 2-D (K, 4: x1, y1, x2, y2) tensor, got 1-D with shape (4,)"),
    (lambda b, s, i: twinops.nms(b.tolist(), s, 0.5), TypeError, "twinops.nms: boxes must be a torch.Tensor, got list"),
    (lambda b, s, i: twinops.nms(b, s, "0.5"), TypeError, "twinops.nms: iou_threshold must be a float, got str"),
    (lambda b, s, i: twinops.nms(b, s, True), TypeError, "twinops.nms: iou_threshold must be a float, got bool"),
    (lambda b, s, i: twinops.nms(b, s, float("nan")), ValueError, "twinops.nms: iou_threshold must be finite, got nan"),
    (lambda b, s, i: twinops.nms(b, s.double(), 0.5), TypeError, "twinops.nms: scores must have boxes' dtype (float32), got torch.float64"),
    (lambda b, s, i: twinops.batched_nms(b, s, i.float(), 0.5), TypeError, "twinops.batched_nms: idxs must be int64 or int32, got torch.float32"),
])
def test_bad_input_type_errors(call, error, message):
    b, s, i = _random(5)[0].float(), _random(5)[1].float(), torch.zeros(5, dtype=torch.int64)
    with pytest.raises(error) as e:
        call(b, s, i)
    assert str(e.value) == message


@pytest.mark.cuda
def test_devices_must_agree():
    b, s = _random(5, dtype=torch.float32)
    with pytest.raises(RuntimeError, match=r"twinops.nms: scores must be on boxes' device \(cpu\), got cuda:0"):
        twinops.nms(b, s.cuda(), 0.5)


def test_fake_kernel_gives_an_unbacked_length():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        b = mode.from_tensor(torch.rand(7, 4))
        s = mode.from_tensor(torch.rand(7))
        out = torch.ops.twinops.nms(b, s, 0.5)
        assert out.dtype == torch.int64 and out.dim() == 1 and isinstance(out.shape[0], torch.SymInt)
        with pytest.raises(RuntimeError, match="iou_threshold must be in"):
            torch.ops.twinops.nms(b, s, 2.0)
        out = torch.ops.twinops.batched_nms(b, s, mode.from_tensor(torch.zeros(7, dtype=torch.int64)), 0.5)
        assert isinstance(out.shape[0], torch.SymInt)


def test_opcheck():
    b, s = _random(40, seed=9, dtype=torch.float32)
    torch.library.opcheck(torch.ops.twinops.nms, (b, s, 0.5), test_utils=("test_schema", "test_faketensor"))
    torch.library.opcheck(torch.ops.twinops.batched_nms, (b, s, torch.zeros(40, dtype=torch.int64), 0.5),
                          test_utils=("test_schema", "test_faketensor"))


def test_torch_compile_with_dynamic_output():
    import torch._dynamo
    torch._dynamo.reset()
    b, s = _random(50, seed=11, dtype=torch.float32)

    def f(b, s):
        keep = twinops.nms(b, s, 0.5)
        return b[keep]

    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        got = torch.compile(f, fullgraph=True, backend="aot_eager")(b, s)
    assert torch.equal(got, f(b, s))


@pytest.mark.parametrize("seed", range(5))
def test_tie_rule_is_onnx_nonmaxsuppressions(seed):
    """ONNX NonMaxSuppression (onnx.reference) orders equal scores by lower index: so does
    twinops. Boxes are stacks of identical squares far apart (IoU 1 or 0, nowhere near the
    threshold), scores from three values (ties within and across stacks)."""
    pytest.importorskip("onnx", reason="onnx is not installed")
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
    rng = np.random.default_rng(seed)
    k = 60
    corner = rng.integers(0, 8, k) * 100.0
    boxes = np.stack([corner, corner, corner + 10, corner + 10], 1).astype(np.float32)  # square: (y, x) order moot
    scores = (rng.integers(0, 3, k) / 3).astype(np.float32)
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"], ["selected"], center_point_box=0)
    graph = helper.make_graph(
        [node], "nms",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, k, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, k]),
         helper.make_tensor_value_info("max_out", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    selected, = ReferenceEvaluator(model).run(None, {"boxes": boxes[None], "scores": scores[None, None],
                                                     "max_out": np.array([k]), "iou": np.array([0.5], np.float32)})
    got = twinops.nms(torch.from_numpy(boxes), torch.from_numpy(scores), 0.5)
    assert got.tolist() == selected[:, 2].tolist()
