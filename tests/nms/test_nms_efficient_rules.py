"""The rules of the EfficientNMS_TRT drop-in (twinops.library.nms.reference.efficient_nms_reference;
csrc/trt/nms/README.md, "The drop-ins: what they match"), held to torchvision on inputs without
ties (where the inclusive thresholds and corner ordering change nothing) and to each rule on
hand-made cases. CPU only: tests/nms/test_nms_efficient_plugin.py holds the plugin to them."""
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from twinops.library.nms.reference import efficient_nms_reference as ref

torchvision = pytest.importorskip("torchvision")


def _torchvision_way(boxes, scores, thr, iou, k, agnostic):
    """Per image: pairs scoring at least thr, torchvision's (batched_)nms over them, the first k."""
    B, N, C = scores.shape
    out = []
    for b in range(B):
        s = scores[b].reshape(-1)
        cand = torch.nonzero(s >= thr).flatten()
        n, c = cand // C, cand % C
        bx = boxes[b, n, c] if boxes.dim() == 4 else boxes[b, n]
        idx = torch.zeros_like(c) if agnostic else c
        keep = torchvision.ops.batched_nms(bx.double(), s[cand].double(), idx, iou)[:k]
        out.append((bx[keep], s[cand][keep], c[keep]))
    return out


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 3), st.integers(1, 60), st.integers(1, 4), st.booleans(), st.booleans(),
       st.sampled_from([0.3, 0.5, 0.7]), st.integers(1, 30), st.integers(0, 2 ** 31))
def test_matches_torchvision_without_ties(b, n, c, per_class, agnostic, iou, k, seed):
    g = torch.Generator().manual_seed(seed)
    shape = (b, n, c) if per_class else (b, n)
    xy = torch.rand(*shape, 2, generator=g) * 50
    boxes = torch.cat([xy, xy + torch.rand(*shape, 2, generator=g) * 20 + 0.5], -1)
    scores = torch.randperm(b * n * c, generator=g).float().reshape(b, n, c) / (b * n * c) + 0.001
    num, bx, sc, cl = ref(boxes, scores, score_threshold=0.25, iou_threshold=iou, max_output_boxes=k,
                          class_agnostic=agnostic)
    for i, (wb, ws, wc) in enumerate(_torchvision_way(boxes, scores, 0.25, iou, k, agnostic)):
        m = len(ws)
        assert int(num[i, 0]) == m
        assert torch.equal(bx[i, :m], wb) and torch.equal(sc[i, :m], ws) and torch.equal(cl[i, :m], wc.int())
        assert not bx[i, m:].any() and not sc[i, m:].any() and not cl[i, m:].any()  # zeros past them


def _one(boxes, scores, **kw):
    kw = {"score_threshold": 0.5, "iou_threshold": 0.5, "max_output_boxes": 4, **kw}
    return ref(torch.tensor([boxes], dtype=torch.float32), torch.tensor([scores], dtype=torch.float32), **kw)


def test_thresholds_are_inclusive():
    # IoU of (0, 0, 2, 1) and (0, 0, 1, 1) is exactly 0.5: suppressed; a score equal to the threshold is a candidate
    num, _, sc, _ = _one([[0, 0, 2, 1], [0, 0, 1, 1], [5, 5, 6, 6]], [[0.9], [0.8], [0.5]])
    assert int(num) == 2 and sc[0, :2].tolist() == [pytest.approx(0.9), 0.5]


def test_a_zero_iou_threshold_keeps_one_box_per_class():
    # IoU 0 (boxes apart) is still at least a threshold of 0: each class keeps only its best box
    boxes = [[0, 0, 1, 1], [5, 5, 6, 6], [9, 9, 10, 10]]
    num, _, sc, cl = _one(boxes, [[0.9, 0.4], [0.8, 0.7], [0.6, 0.3]], iou_threshold=0.0, score_threshold=0.25)
    assert int(num) == 2 and cl[0, :2].tolist() == [0, 1] and sc[0, :2].tolist() == pytest.approx([0.9, 0.7])


def test_corners_in_any_order_and_degenerate_boxes():
    # an inverted box is reordered (it suppresses its twin); a zero-area box has IoU 0 with all
    num, bx, _, _ = _one([[2, 1, 0, 0], [0, 0, 2, 1], [3, 3, 3, 4], [3, 3, 3, 4]], [[0.9], [0.8], [0.7], [0.6]])
    assert int(num) == 3 and bx[0, 0].tolist() == [2, 1, 0, 0]  # written as given
    assert bx[0, 1].tolist() == [3, 3, 3, 4] and bx[0, 2].tolist() == [3, 3, 3, 4]


def test_background_class_and_classes_apart():
    boxes = [[0, 0, 1, 1], [0, 0, 1, 1]]
    num, _, _, cl = _one(boxes, [[0.9, 0.8], [0.7, 0.95]], background_class=1)
    assert int(num) == 1 and cl[0, 0] == 0  # class 1 skipped; box 1 in class 0 suppressed by box 0
    num, _, _, cl = _one(boxes, [[0.9, 0.8], [0.7, 0.95]])
    assert int(num) == 2 and cl[0, :2].tolist() == [1, 0]  # one per class
    num, _, _, _ = _one(boxes, [[0.9, 0.8], [0.7, 0.95]], class_agnostic=True)
    assert int(num) == 1


def test_ties_rank_the_lower_flat_index_first():
    num, _, _, cl = _one([[0, 0, 1, 1], [0, 0, 1, 1]], [[0.6, 0.6], [0.6, 0.6]], class_agnostic=True)
    assert int(num) == 1 and cl[0, 0] == 0  # flat index n * C + c = 0 first
    num, bx, _, _ = _one([[0, 0, 1, 1], [5, 5, 6, 6]], [[0.6], [0.6]], max_output_boxes=1)
    assert bx[0, 0].tolist() == [0, 0, 1, 1]


def test_score_activation():
    logit = math.log(0.6 / 0.4)
    num, _, sc, _ = _one([[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]], [[logit + 0.01], [logit - 0.01], [3.0]],
                         score_threshold=0.6, score_activation=True)
    assert int(num) == 2
    assert sc[0, :2].tolist() == pytest.approx([1 / (1 + math.exp(-3.0)), 1 / (1 + math.exp(-logit - 0.01))])
    num, _, _, _ = _one([[0, 0, 1, 1]], [[-50.0]], score_threshold=0.0, score_activation=True)
    assert int(num) == 1  # a threshold of 0 admits every score


def test_center_size_coding_and_anchors():
    num, bx, _, _ = _one([[1, 1, 2, 4]], [[0.9]], box_coding=1)
    assert bx[0, 0].tolist() == [0, -1, 2, 3]
    an = torch.tensor([[[10, 10, 20, 20]]], dtype=torch.float32)
    num, bx, _, _ = _one([[1, 2, 3, 4]], [[0.9]], anchors=an)
    assert bx[0, 0].tolist() == [11, 12, 23, 24]  # corners: offsets added
    an = torch.tensor([[[10, 20, 4, 8]]], dtype=torch.float32)  # center (10, 20), size (4, 8)
    num, bx, _, _ = _one([[0.5, -0.25, 0, math.log(2)]], [[0.9]], anchors=an, box_coding=1)
    # center (0.5 * 4 + 10, -0.25 * 8 + 20) = (12, 18), size (4, 16) -> corners (10, 10, 14, 26)
    assert bx[0, 0].tolist() == pytest.approx([10, 10, 14, 26])


def test_the_candidate_cut_and_padding():
    boxes = [[i * 10, 0, i * 10 + 1, 1] for i in range(6)]
    num, bx, sc, cl = _one(boxes, [[0.9 - 0.05 * i] for i in range(6)], max_candidates=3, max_output_boxes=5)
    assert int(num) == 3 and not bx[0, 3:].any() and not sc[0, 3:].any() and not cl[0, 3:].any()
