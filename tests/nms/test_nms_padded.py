"""twinops.batched_nms_padded: torchvision's per-class NMS over the thresholded candidates on inputs
without ties, its own rules (ops/library/nms/reference.py) exactly on Hypothesis-drawn inputs with
ties, NaN scores and every argument, the padding, pre_nms_top_k and max_output_boxes, per-class
boxes, CUDA equal to the CPU, bad input, no gradient, torch.compile."""
import re

import pytest
import torch
from hypothesis import given, settings

import twinops
from twinops.library.nms.reference import batched_nms_padded_reference
from twinops.library.nms.strategies import padded_inputs

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _random(b, n, c, seed=0, per_class=False):
    """Boxes in a 100 x 100 image and distinct scores in (0, 1] (no ties), float64."""
    gen = torch.Generator().manual_seed(seed)
    shape = (b, n, c) if per_class else (b, n)
    xy = torch.rand(*shape, 2, generator=gen, dtype=torch.float64) * 100
    wh = torch.rand(*shape, 2, generator=gen, dtype=torch.float64) * 30 + 1
    scores = (torch.randperm(b * n * c, generator=gen).double() + 1).reshape(b, n, c) / (b * n * c)
    return torch.cat([xy, xy + wh], -1), scores


def _equal(got, want):
    names = ("num_detections", "detection_boxes", "detection_scores", "detection_classes", "detection_indices")
    for name, g, w in zip(names, got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, name
        # exact; a NaN box coordinate is passed through as a NaN
        torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True, msg=name)


@pytest.mark.parametrize("class_agnostic", [False, True])
@pytest.mark.parametrize("per_class", [False, True])
@pytest.mark.parametrize("top_k", [-1, 25])
def test_matches_torchvision_on_the_candidates(class_agnostic, per_class, top_k):
    tv = pytest.importorskip("torchvision", reason="torchvision (the reference) is not installed")
    from torchvision.ops.boxes import _batched_nms_vanilla
    boxes, scores = _random(3, 40, 4, seed=7, per_class=per_class)
    got = twinops.batched_nms_padded(boxes, scores, 0.3, 0.5, 12, pre_nms_top_k=top_k, class_agnostic=class_agnostic)
    for b in range(3):
        flat = scores[b].reshape(-1)
        cand = torch.nonzero(flat > 0.3).squeeze(1)
        cand = cand[flat[cand].argsort(descending=True)]  # distinct scores: the order is defined
        if top_k != -1:
            cand = cand[:top_k]
        n, c = cand // 4, cand % 4
        bx = boxes[b].reshape(-1, 4)[cand] if per_class else boxes[b][n]
        keep = (tv.ops.nms(bx, flat[cand], 0.5) if class_agnostic else
                _batched_nms_vanilla(bx, flat[cand], c, 0.5))[:12]
        m = len(keep)
        assert got[0][b, 0] == m
        assert torch.equal(got[1][b, :m], bx[keep]) and torch.equal(got[2][b, :m], flat[cand][keep])
        assert torch.equal(got[3][b, :m], c[keep].int()) and torch.equal(got[4][b, :m], n[keep])
        # padding: zeros (EfficientNMS_TRT's layout), indices -1
        assert not got[1][b, m:].any() and not got[2][b, m:].any() and not got[3][b, m:].any()
        assert (got[4][b, m:] == -1).all()
    assert got[0].max() == 12  # some image is cut at max_output_boxes


@settings(deadline=None, max_examples=60)
@given(padded_inputs())
def test_cpu_follows_the_rules_exactly(drawn):
    boxes, scores, kw = drawn
    for dtype in DTYPES:
        b, s = boxes.to(dtype), scores.to(dtype)
        _equal(twinops.batched_nms_padded(b, s, **kw), batched_nms_padded_reference(b, s, **kw))


def test_ties_rank_the_lower_flat_index_first():
    # One box in three classes, all scoring 0.5, far from each other: every pair is a candidate of
    # equal score, ranked by n * C + c; max_output_boxes cuts the ranking.
    boxes = torch.tensor([[[0.0, 0, 1, 1], [10, 10, 11, 11]]])
    scores = torch.full((1, 2, 3), 0.5)
    num, bx, sc, cls, idx = twinops.batched_nms_padded(boxes, scores, 0.1, 0.5, 4)
    assert num.item() == 4 and idx[0].tolist() == [0, 0, 0, 1] and cls[0].tolist() == [0, 1, 2, 0]
    # class-agnostic: the box suppresses itself in the other classes (IoU 1)
    num, bx, sc, cls, idx = twinops.batched_nms_padded(boxes, scores, 0.1, 0.5, 4, class_agnostic=True)
    assert num.item() == 2 and idx[0].tolist() == [0, 1, -1, -1] and cls[0].tolist() == [0, 0, 0, 0]


def test_threshold_nan_scores_and_empty_images():
    boxes, scores = _random(2, 5, 2, seed=1)
    scores[0] = 0.1  # image 0: nothing above the threshold
    scores[1, 0, 0] = float("nan")  # never a candidate
    num, bx, sc, cls, idx = twinops.batched_nms_padded(boxes, scores, 0.1, 1.0, 20)
    assert num[0].item() == 0 and (idx[0] == -1).all() and not bx[0].any()
    # IoU threshold 1: nothing is suppressed, so every candidate but the NaN one is detected
    assert num[1].item() == (scores[1] > 0.1).sum().item() > 0
    assert not ((idx[1] == 0) & (cls[1] == 0)).any() and not torch.isnan(sc).any()
    empty = twinops.batched_nms_padded(torch.zeros(3, 0, 4), torch.zeros(3, 0, 5), 0.0, 0.5, 2)
    assert empty[0].tolist() == [[0]] * 3 and empty[1].shape == (3, 2, 4) and (empty[4] == -1).all()


@pytest.mark.parametrize("kw, message", [
    (dict(score_threshold=float("nan")), "score_threshold must be finite"),
    (dict(iou_threshold=1.5), "iou_threshold must be in [0, 1], got 1.5"),
    (dict(max_output_boxes=0), "max_output_boxes must be at least 1, got 0"),
    (dict(pre_nms_top_k=0), "pre_nms_top_k must be -1 (every candidate) or at least 1, got 0"),
    (dict(class_agnostic=1), "class_agnostic must be a bool, got int"),
    (dict(max_output_boxes=2.0), "max_output_boxes must be an int, got float"),
])
def test_bad_arguments_name_themselves(kw, message):
    boxes, scores = _random(1, 4, 2)
    args = dict(score_threshold=0.2, iou_threshold=0.5, max_output_boxes=3)
    args.update(kw)
    with pytest.raises((TypeError, ValueError, RuntimeError), match="^" + re.escape(
            f"twinops.batched_nms_padded: {message}")):
        twinops.batched_nms_padded(boxes, scores, **args)


@pytest.mark.parametrize("boxes_shape, scores_shape, message", [
    ((2, 5, 3), (2, 5, 2), "boxes must be a 3-D (B, N, 4) or 4-D (B, N, C, 4) tensor"),
    ((2, 5, 4), (2, 6, 2), "scores must be a 3-D (B, N, C) tensor with boxes' B and N (boxes: (2, 5, 4)), got shape (2, 6, 2)"),
    ((2, 5, 3, 4), (2, 5, 2), "scores must be a 3-D (B, N, C) tensor with boxes' B and N and C"),
])
def test_bad_shapes_are_named(boxes_shape, scores_shape, message):
    with pytest.raises(RuntimeError) as e:
        twinops.batched_nms_padded(torch.rand(boxes_shape), torch.rand(scores_shape), 0.2, 0.5, 3)
    assert str(e.value).startswith("twinops.batched_nms_padded: " + message)


def test_asking_for_a_gradient_says_it_is_not_differentiable():
    boxes, scores = _random(1, 6, 2)
    boxes.requires_grad_()
    out = twinops.batched_nms_padded(boxes, scores, 0.2, 0.5, 3)
    with pytest.raises(RuntimeError, match="batched_nms_padded is not differentiable"):
        out[1].sum().backward()


def test_torch_compile_fullgraph():
    import torch._dynamo
    torch._dynamo.reset()
    boxes, scores = _random(2, 30, 3, seed=5)
    m = twinops.BatchedNMSPadded(score_threshold=0.2, iou_threshold=0.5, max_output_boxes=8)
    got = torch.compile(m, fullgraph=True, dynamic=True, backend="aot_eager")(boxes, scores)
    _equal(got, m(boxes, scores))


@pytest.mark.cuda
@settings(deadline=None, max_examples=40)
@given(padded_inputs())
def test_cuda_equals_the_cpu_in_every_dtype(drawn):
    boxes, scores, kw = drawn
    for dtype in DTYPES:
        b, s = boxes.to(dtype), scores.to(dtype)
        want = twinops.batched_nms_padded(b, s, **kw)
        got = twinops.batched_nms_padded(b.cuda(), s.cuda(), **kw)
        assert all(g.is_cuda for g in got)
        _equal(tuple(g.cpu() for g in got), want)


@pytest.mark.cuda
def test_cuda_refuses_more_candidates_than_nms_takes():
    n = 4_194_241  # one more than the CUDA nms takes
    boxes, scores = torch.zeros(1, n, 4, device="cuda"), torch.ones(1, n, 1, device="cuda")
    with pytest.raises(RuntimeError, match="image 0 has 4194241 candidates, more than the 4194240 NMS takes on "
                                           "CUDA: raise score_threshold or set pre_nms_top_k"):
        twinops.batched_nms_padded(boxes, scores, 0.5, 0.5, 10)
    num = twinops.batched_nms_padded(boxes, scores, 0.5, 0.5, 10, pre_nms_top_k=1000)[0]
    assert num.item() == 10  # zero-area boxes suppress nothing


def _clustered(b, n, c, seed, per_class, levels):
    """Clustered boxes (many overlaps) and scores from `levels` values in [0, 1] (ties), float64."""
    gen = torch.Generator().manual_seed(seed)
    shape = (b, n, c) if per_class else (b, n)
    centre = torch.randint(0, 4, (*shape, 2), generator=gen).double() * 30 + torch.rand(*shape, 2, generator=gen) * 8
    half = torch.rand(*shape, 2, generator=gen, dtype=torch.float64) * 12 + 2
    scores = torch.randint(0, levels + 1, (b, n, c), generator=gen).double() / levels
    return torch.cat([centre - half, centre + half], -1), scores


@pytest.mark.cuda
@pytest.mark.parametrize("b, n, c, per_class, levels", [
    (1, 700, 1, False, 1000), (3, 500, 4, False, 7), (2, 300, 9, True, 1000), (4, 129, 3, False, 3),
    (1, 64, 2, False, 2)])
@pytest.mark.parametrize("class_agnostic", [False, True])
@pytest.mark.parametrize("top_k, k", [(-1, 1), (-1, 300), (100, 7), (130, 1000)])
def test_cuda_device_pass_equals_the_cpu_across_blocks(b, n, c, per_class, levels, class_agnostic, top_k, k):
    # Sizes past one 64-position block, runs of one class crossing block boundaries, the early
    # stop of a run at max_output_boxes, images with and without padding slots; every output
    # element (the padding too) equal to the CPU's.
    boxes, scores = _clustered(b, n, c, seed=b * 1000 + n + c, per_class=per_class, levels=levels)
    for dtype in (torch.float32, torch.float16):
        bx, sc = boxes.to(dtype), scores.to(dtype)
        kw = dict(score_threshold=0.3, iou_threshold=0.45, max_output_boxes=k, pre_nms_top_k=top_k,
                  class_agnostic=class_agnostic)
        want = twinops.batched_nms_padded(bx, sc, **kw)
        got = twinops.batched_nms_padded(bx.cuda(), sc.cuda(), **kw)
        _equal(tuple(g.cpu() for g in got), want)


@pytest.mark.cuda
def test_cuda_device_pass_and_the_per_image_path_agree():
    # pre_nms_top_k = -1 over 400,000 scores exceeds the device pass's 360,448 candidates per
    # image: that call takes the per-image ATen path; a top-k above the candidate count takes the
    # device pass with the same result.
    n, c = 100_000, 4
    boxes, scores = _clustered(2, n, c, seed=7, per_class=False, levels=1000)
    scores = torch.where(scores > 0.996, scores, torch.zeros_like(scores))  # about 1,600 candidates
    bx, sc = boxes.float().cuda(), scores.float().cuda()
    kw = dict(score_threshold=0.5, iou_threshold=0.5, max_output_boxes=100)
    per_image = twinops.batched_nms_padded(bx, sc, **kw)
    device = twinops.batched_nms_padded(bx, sc, pre_nms_top_k=4096, **kw)
    assert int((sc > 0.5).sum(dim=(1, 2)).max()) < 4096
    _equal(tuple(g.cpu() for g in device), tuple(g.cpu() for g in per_image))
    assert int(per_image[0].min()) > 0
