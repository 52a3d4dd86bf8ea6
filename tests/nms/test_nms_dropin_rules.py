"""The rules of the TRTBatchedNMS drop-in (twinops.library.nms.reference.trt_batched_nms_reference;
csrc/trt/nms/README.md, "The drop-ins: what they match"), held to torchvision on inputs without
ties and to each rule on hand-made cases. CPU only: tests/nms/test_nms_trt_batched_plugin.py holds
the plugin to them."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from twinops.library.nms.reference import trt_batched_nms_reference as ref

torchvision = pytest.importorskip("torchvision")


def _torchvision_way(boxes, scores, bg, topk, keep_topk, thr, iou):
    """Per image: each class's top-k candidates above thr, torchvision's batched_nms over them
    (classes apart), sorted by score, the first keep_topk: (dets, labels, index)."""
    N, P, C = scores.shape
    k = topk if 0 < topk <= P else P
    shared = boxes.shape[2] == 1
    out = []
    for b in range(N):
        bx, sc, cl, ix = [torch.zeros(0, 4)], [torch.zeros(0)], [torch.zeros(0, dtype=torch.int64)], \
            [torch.zeros(0, dtype=torch.int64)]
        for c in range(C):
            if c == bg:
                continue
            s = scores[b, :, c]
            cand = torch.nonzero(s > thr).flatten()
            cand = cand[torch.argsort(s[cand], descending=True, stable=True)][:k]
            bx.append(boxes[b, cand, 0 if shared else c])
            sc.append(s[cand])
            cl.append(torch.full_like(cand, c))
            ix.append(cand if shared else c * P + cand)
        bx, sc, cl, ix = (torch.cat(t) for t in (bx, sc, cl, ix))
        keep = torchvision.ops.batched_nms(bx.double(), sc.double(), cl, iou)[:keep_topk]
        out.append((torch.cat([bx[keep], sc[keep, None]], 1), cl[keep], ix[keep]))
    return out


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3), p=st.integers(1, 40), c=st.integers(1, 5),
       shared=st.booleans(), bg=st.integers(-1, 4), topk=st.integers(-1, 45), keep_topk=st.integers(1, 60),
       thr=st.sampled_from([0.0, 0.05, 0.3]), iou=st.sampled_from([0.0, 0.3, 0.5, 0.9]))
def test_equals_torchvision_without_ties(seed, n, p, c, shared, bg, topk, keep_topk, thr, iou):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, p, 1 if shared else c, 2, generator=g) * 0.8
    boxes = torch.cat([xy, xy + torch.rand(xy.shape, generator=g) * 0.4 + 0.01], -1)  # some past 1: clipped
    scores = torch.randperm(n * p * c, generator=g).reshape(n, p, c).float() / (n * p * c)  # distinct
    dets, labels, index = ref(boxes, scores, bg, c, topk, keep_topk, thr, iou, clip_boxes=False, return_index=True)
    for b, (want_dets, want_labels, want_index) in enumerate(_torchvision_way(boxes, scores, bg, topk, keep_topk,
                                                                               thr, iou)):
        m = len(want_labels)
        assert torch.equal(dets[b, :m], want_dets) and torch.equal(labels[b, :m], want_labels.int())
        assert torch.equal(index[b, :m], want_index.int())
        assert (dets[b, m:] == 0).all() and (labels[b, m:] == -1).all() and (index[b, m:] == -1).all()
    clipped, _ = ref(boxes, scores, bg, c, topk, keep_topk, thr, iou)
    assert torch.equal(clipped[..., :4], dets[..., :4].clamp(0, 1)) and torch.equal(clipped[..., 4], dets[..., 4])


def _boxes(*rows):
    return torch.tensor(rows, dtype=torch.float32).reshape(1, len(rows), 1, 4)


def test_topk_is_per_class_before_nms():
    # class 0: three far-apart boxes; topk=2 drops the lowest even though nothing suppresses it
    boxes = _boxes([0, 0, .1, .1], [.5, .5, .6, .6], [.8, .8, .9, .9])
    scores = torch.tensor([[[.9], [.8], [.7]]])
    dets, labels = ref(boxes, scores, -1, 1, 2, 5, 0.0, 0.5)
    assert labels.tolist() == [[0, 0, -1, -1, -1]] and dets[0, :2, 4].tolist() == pytest.approx([.9, .8])


def test_background_class_and_threshold():
    boxes = _boxes([0, 0, .1, .1], [.5, .5, .6, .6])
    scores = torch.tensor([[[.9, .2, .6], [.95, .3, float("nan")]]])  # class 0 is the background
    dets, labels, index = ref(boxes, scores, 0, 3, -1, 4, 0.25, 0.5, return_index=True)
    assert labels.tolist() == [[2, 1, -1, -1]] and index.tolist() == [[0, 1, -1, -1]]  # NaN and 0.2 are out
    assert dets[0, :2, 4].tolist() == pytest.approx([.6, .3])


def test_equal_scores_rank_by_class_then_prior():
    boxes = _boxes([0, 0, .1, .1], [.5, .5, .6, .6])
    scores = torch.tensor([[[.5, .5], [.5, .5]]])
    _, labels, index = ref(boxes, scores, -1, 2, -1, 4, 0.0, 0.5, return_index=True)
    assert labels.tolist() == [[0, 0, 1, 1]] and index.tolist() == [[0, 1, 0, 1]]


def test_per_class_boxes_and_their_index():
    boxes = torch.tensor([[[[0, 0, .1, .1], [0, 0, .1, .1]], [[0, 0, .1, .1], [.5, .5, .6, .6]]]])  # (1, P=2, C=2, 4)
    scores = torch.tensor([[[.9, .8], [.7, .6]]])
    _, labels, index = ref(boxes, scores, -1, 2, -1, 4, 0.0, 0.5, return_index=True)
    # class 0: prior 1's box equals prior 0's: suppressed; class 1: its two boxes are apart
    assert labels.tolist() == [[0, 1, 1, -1]] and index.tolist() == [[0, 2, 3, -1]]


def test_keep_topk_above_topk_is_padded():
    boxes = _boxes([0, 0, .1, .1], [.5, .5, .6, .6])
    scores = torch.tensor([[[.9], [.8]]])
    dets, labels = ref(boxes, scores, -1, 1, 1, 3, 0.0, 0.5)
    assert labels.tolist() == [[0, -1, -1]] and (dets[0, 1:] == 0).all()
