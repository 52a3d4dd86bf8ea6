"""nms's bench: ``twinops.nms`` / ``batched_nms`` vs torchvision's (``python -m twinops.bench nms``;
the method is the harness's, see ``harness.py``).

Cases (forward only: NMS has no gradient): ``nms`` over 1,000 / 5,000 / 20,000 boxes,
``batched_nms`` over 8,400 boxes in 80 classes (a YOLO head), IoU threshold 0.5, and
``batched_nms_padded`` on 1 and 8 images of that head (:class:`PaddedCase`). Boxes are
detector-like: centres uniform in a 640 x 640 image, sides 8 to 128 pixels; scores are
distinct (``_distinct_scores``), so torchvision's order is defined and both results must be
equal. In float16 and bfloat16, torchvision's CUDA kernel rounds each box side to the half type
before its float IoU, which twinops does not (docs/ops/nms.md, "Semantics"): those rows are
timed against torchvision on the half boxes and checked against torchvision on the same boxes
in float32 (exact widening). Both sides' time is the whole call: torchvision's CUDA nms copies
its suppression mask to the host and finishes there; twinops' runs on the device and reads back
only the kept count (to size its output). Bytes = boxes + scores read, kept indices written (the
floor is tiny: NMS is bound by its O(K^2) comparisons and by latency, not by memory). Without
torchvision the rows are ``NO-REF`` (twinops timed, unchecked). After the table, ``target:``
lines say where the run stands against the speed targets (:func:`target_lines`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence, Tuple

import torch

from ...bench.harness import BenchCase, Config, OpBench, Row

NMS_BOXES = (1000, 5000, 20000)
BATCHED = (8400, 80)
IOU = 0.5


def _torchvision_ops():
    try:
        import torchvision
    except ImportError as e:  # NO-REF rows
        raise RuntimeError(f"torchvision is not installed: {e}") from None
    return torchvision.ops


def _distinct_scores(k: int, dtype: torch.dtype, generator, device) -> torch.Tensor:
    """k distinct positive scores of ``dtype`` in random order: a permutation of k / K in float32
    and float64; in float16 and bfloat16, which hold too few values in [0, 1) for 20,000
    distinct ones, k distinct positive finite values drawn from all of them (their bit
    patterns 1 .. 0x7BFF, 0x7F7F)."""
    if dtype in (torch.float32, torch.float64):
        return (torch.randperm(k, generator=generator, device=device).to(dtype) + 1) / k
    top = 0x7BFF if dtype == torch.float16 else 0x7F7F
    if k > top:
        raise ValueError(f"at most {top} distinct positive {dtype} scores, asked for {k}")
    bits = torch.randperm(top, generator=generator, device=device)[:k] + 1
    return bits.to(torch.int16).view(dtype)


@dataclass(frozen=True)
class Case(BenchCase):
    op: str  # "nms" | "batched_nms" | "batched_nms_padded"
    boxes: int
    classes: int
    dtype: str
    direction: str  # "forward" (NMS has no gradient)

    def labels(self) -> Tuple[str, ...]:
        return (self.op, str(self.boxes), str(self.classes), self.dtype)

    def make_inputs(self, device, generator):
        k = self.boxes
        centre = torch.rand(k, 2, generator=generator, device=device) * 640
        side = 8 + torch.rand(k, 2, generator=generator, device=device) * 120
        boxes = torch.cat([centre - side / 2, centre + side / 2], 1).to(self.torch_dtype)
        scores = _distinct_scores(k, self.torch_dtype, generator, device)
        if self.op == "nms":
            return boxes, scores
        return boxes, scores, torch.randint(0, self.classes, (k,), generator=generator, device=device)

    def baseline(self, *inputs):
        ops = _torchvision_ops()
        return ops.nms(*inputs, IOU) if self.op == "nms" else ops.batched_nms(*inputs, IOU)

    def expected(self, inputs, baseline_out):
        if self.torch_dtype in (torch.float32, torch.float64):
            return baseline_out
        boxes, scores, *idxs = inputs
        return self.baseline(boxes.float(), scores.float(), *idxs)

    def candidate(self, *inputs):
        import twinops
        return twinops.nms(*inputs, IOU) if self.op == "nms" else twinops.batched_nms(*inputs, IOU)

    def nbytes(self) -> int:
        itemsize = torch.empty(0, dtype=self.torch_dtype).element_size()
        return self.boxes * (5 * itemsize + (8 if self.op != "nms" else 0)) + self.boxes * 8

    def output_shapes(self):
        return ()


# The padded form's case: score threshold, top-k and detections of a YOLO deployment.
PADDED_SCORE, PADDED_TOP_K, PADDED_K = 0.25, 5000, 100


def _torchvision_padded(boxes, scores, vanilla: bool):
    """batched_nms_padded's outputs from torchvision's steps, image by image: threshold, a stable
    sort (the tie rule), top-k, ``batched_nms`` (``vanilla``: its per-class loop, which the
    twinops rules follow at every size; else the public function, which offsets the boxes per
    class below 20,000 coordinates on CUDA), the first K kept, padded. torchvision is handed
    scores that rank the candidates as sorted (distinct, so its own sort cannot reorder ties)."""
    from torchvision.ops.boxes import _batched_nms_vanilla

    run = _batched_nms_vanilla if vanilla else _torchvision_ops().batched_nms
    B, N, C = scores.shape
    K, dev = PADDED_K, boxes.device
    num = torch.zeros((B, 1), dtype=torch.int32, device=dev)
    out_boxes = torch.zeros((B, K, 4), dtype=boxes.dtype, device=dev)
    out_scores = torch.zeros((B, K), dtype=scores.dtype, device=dev)
    out_classes = torch.zeros((B, K), dtype=torch.int32, device=dev)
    out_indices = torch.full((B, K), -1, dtype=torch.int64, device=dev)
    for b in range(B):
        s = scores[b].reshape(-1)
        cand = torch.nonzero(s > PADDED_SCORE).squeeze(1)
        cand = cand[torch.sort(s[cand], stable=True, descending=True).indices[:PADDED_TOP_K]]
        n, c = cand // C, cand % C
        bx = boxes[b][n]
        rank = torch.arange(len(cand), 0, -1, device=dev, dtype=torch.float32).to(bx.dtype)
        keep = run(bx, rank, c, IOU)[:K]
        m = len(keep)
        num[b, 0] = m
        out_boxes[b, :m], out_scores[b, :m] = bx[keep], s[cand][keep]
        out_classes[b, :m], out_indices[b, :m] = c[keep].to(torch.int32), n[keep]
    return num, out_boxes, out_scores, out_classes, out_indices


@dataclass(frozen=True)
class PaddedCase(Case):
    """``batched_nms_padded`` on ``images`` images of ``boxes`` anchors x ``classes`` classes
    (shared boxes), scores ``rand() ** 4`` (most below the threshold, as a detector's), score
    threshold 0.25, top-k 5,000, 100 detections, IoU 0.5. The baseline is torchvision's steps
    (:func:`_torchvision_padded`), timed as a user runs them; the parity reference is the same
    steps with the per-class loop in float32 (exact for the half types; see ``Case``)."""

    images: int = 1

    def labels(self) -> Tuple[str, ...]:
        return (self.op, f"{self.images}x{self.boxes}", str(self.classes), self.dtype)

    def make_inputs(self, device, generator):
        shape = (self.images, self.boxes)
        centre = torch.rand(*shape, 2, generator=generator, device=device) * 640
        side = 8 + torch.rand(*shape, 2, generator=generator, device=device) * 120
        boxes = torch.cat([centre - side / 2, centre + side / 2], -1).to(self.torch_dtype)
        scores = torch.rand(*shape, self.classes, generator=generator, device=device) ** 4
        return boxes, scores.to(self.torch_dtype)

    def baseline(self, *inputs):
        return _torchvision_padded(*inputs, vanilla=False)

    def expected(self, inputs, baseline_out):
        boxes, scores = inputs
        out = _torchvision_padded(boxes.float(), scores, vanilla=True)
        return (out[0], out[1].to(boxes.dtype), *out[2:])

    def candidate(self, *inputs):
        import twinops
        return twinops.batched_nms_padded(*inputs, PADDED_SCORE, IOU, PADDED_K, pre_nms_top_k=PADDED_TOP_K)

    def nbytes(self) -> int:
        itemsize = torch.empty(0, dtype=self.torch_dtype).element_size()
        return self.images * (self.boxes * (4 + self.classes) * itemsize + PADDED_K * (5 * itemsize + 16) + 4)


# The speed targets (docs/perf/nms-notes.md): at least 5x torchvision from 5,000 boxes on, and
# the 8,400 x 80 batched case (a YOLO head) under 0.5 ms.
SPEEDUP_FROM, SPEEDUP = 5000, 5.0
BATCHED_MS = 0.5


def target_lines(rows: Sequence[Row]) -> List[str]:
    """Where the timed rows stand against the targets, one line per op."""
    out = []
    for op in ("nms", "batched_nms"):
        timed = [r for r in rows if r.case.op == op and r.twinops_ms is not None]
        if op == "nms":
            timed = [r for r in timed if r.case.boxes >= SPEEDUP_FROM and r.speedup is not None]
            below = [f"{r.case.boxes} {r.case.dtype} {r.speedup:.2f}x" for r in timed if r.speedup < SPEEDUP]
            goal = f">= {SPEEDUP:g}x torchvision from {SPEEDUP_FROM} boxes on"
        else:
            below = [f"{r.case.boxes}x{r.case.classes} {r.case.dtype} {r.twinops_ms:.3f} ms" for r in timed
                     if r.twinops_ms >= BATCHED_MS]
            goal = f"under {BATCHED_MS:g} ms"
        if timed:
            line = f"{op}: {len(timed) - len(below)} of {len(timed)} rows {goal}"
            out.append(line + ("; below: " + ", ".join(below) if below else ""))
    return out


def build_cases(cfg: Config) -> List[Case]:
    cases = []
    for dtype in cfg.dtypes:
        cases += [Case(op="nms", boxes=k, classes=1, dtype=dtype, direction="forward") for k in NMS_BOXES]
        cases.append(Case(op="batched_nms", boxes=BATCHED[0], classes=BATCHED[1], dtype=dtype, direction="forward"))
        cases += [PaddedCase(op="batched_nms_padded", boxes=BATCHED[0], classes=BATCHED[1], dtype=dtype,
                             direction="forward", images=images) for images in (1, 8)]
    return cases


BENCH = OpBench(
    name="nms",
    summary="twinops nms / batched_nms against torchvision.ops.nms / batched_nms",
    baseline_name="torchvision",
    baseline_short="tv",
    candidate_name="twinops.nms",
    columns=("op", "boxes", "classes", "dtype"),
    build_cases=build_cases,
    targets=target_lines,
    tolerance={torch.float32: 0.0, torch.float16: 0.0, torch.bfloat16: 0.0, torch.float64: 0.0},
)
