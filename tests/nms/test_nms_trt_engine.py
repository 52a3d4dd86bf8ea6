"""nms on real TensorRT engines (T3): skipped where `tensorrt` or a GPU is missing.

twinops.nms / batched_nms exported (TwinopsNMS / TwinopsBatchedNMS, keep of data-dependent
length) and built with a dynamic box count: the plugin's second output, the size tensor, stays
inside the engine, and TRTRunner receives keep through its IOutputAllocator. Run at two box
counts of the profile and compared exactly with the torch op (the same kernels). And
batched_nms_padded (TwinopsBatchedNMSPadded, fixed-shape outputs) with a dynamic batch and box
count, its five outputs compared exactly.
"""
import pytest
import torch

import twinops
from twinops import trt as ttrt

REASON = ttrt.unavailable_reason()
needs_trt = pytest.mark.skipif(REASON is not None, reason=f"real TensorRT engine tests: {REASON}")


def _boxes(k, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(k, 2, generator=g) * 200
    wh = torch.rand(k, 2, generator=g) * 40 + 1
    scores = torch.rand(k, generator=g)
    idxs = torch.randint(0, 5, (k,), generator=g)
    return torch.cat([xy, xy + wh], 1).to("cuda", dtype), scores.to("cuda", dtype), idxs.cuda()


class _Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args, 0.5)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("batched", [False, True], ids=["nms", "batched_nms"])
def test_engine_equals_the_torch_op(dtype, batched):
    fn, node = (twinops.batched_nms, "TwinopsBatchedNMS") if batched else (twinops.nms, "TwinopsNMS")
    names = ["boxes", "scores", "idxs"][: 3 if batched else 2]
    args = _boxes(300, dtype, 0)[: len(names)]
    proto = twinops.export_onnx(_Call(fn), args, dynamo=False, input_names=names, output_names=["keep"],
                                dynamic_axes={n: {0: "k"} for n in names})
    assert [n.op_type for n in proto.graph.node if n.domain == "twinops"] == [node]
    profiles = {"boxes": ((1, 4), (300, 4), (600, 4)), "scores": ((1,), (300,), (600,)),
                "idxs": ((1,), (300,), (600,))}
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, {n: profiles[n] for n in names}))
    for seed, k in enumerate((300, 577)):
        args = _boxes(k, dtype, seed)[: len(names)]
        (keep,) = runner(**dict(zip(names, args))).values()
        torch.cuda.synchronize()
        assert keep.dtype == torch.int64
        assert torch.equal(keep, fn(*args, 0.5)), f"{node} at K = {k}"


class _Padded(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, boxes, scores):
        return twinops.batched_nms_padded(boxes, scores, 0.3, 0.5, 50, **self.kw)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("kw", [dict(), dict(pre_nms_top_k=200, class_agnostic=True)], ids=["classes", "agnostic"])
def test_padded_engine_equals_the_torch_op(dtype, kw):
    """TwinopsBatchedNMSPadded in an engine with a dynamic batch and box count: the five fixed-shape
    outputs equal the torch op's (detection_indices int32 on TensorRT 8.6, int64 after)."""
    names, outs = ["boxes", "scores"], ["num", "det_boxes", "det_scores", "det_classes", "det_indices"]

    def inputs(b, n, seed):
        g = torch.Generator().manual_seed(seed)
        xy = torch.rand(b, n, 2, generator=g) * 200
        boxes = torch.cat([xy, xy + torch.rand(b, n, 2, generator=g) * 40 + 1], -1)
        return boxes.to("cuda", dtype), torch.rand(b, n, 3, generator=g).to("cuda", dtype)

    proto = twinops.export_onnx(_Padded(**kw), inputs(2, 300, 0), dynamo=False, input_names=names, output_names=outs,
                                dynamic_axes={n: {0: "b", 1: "n"} for n in names})
    assert [n.op_type for n in proto.graph.node if n.domain == "twinops"] == ["TwinopsBatchedNMSPadded"]
    profiles = {"boxes": ((1, 1, 4), (2, 300, 4), (4, 600, 4)), "scores": ((1, 1, 3), (2, 300, 3), (4, 600, 3))}
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, profiles))
    for seed, (b, n) in enumerate(((2, 300), (3, 577))):
        args = inputs(b, n, seed)
        got = list(runner(**dict(zip(names, args))).values())
        torch.cuda.synchronize()
        want = _Padded(**kw)(*args)
        for name, g, w in zip(outs, got, want):
            assert g.shape == w.shape, name
            assert torch.equal(g.to(w.dtype), w), f"{name} at B = {b}, N = {n}"
