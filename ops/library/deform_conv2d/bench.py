"""deform_conv2d's bench: ``twinops.deform_conv2d`` against torchvision's CUDA kernel (im2col + GEMM,
atomic col2im backward) and, forward only, a dense cuDNN ``F.conv2d`` of the same shape, the speed
of light for the GEMM part (``python -m twinops.bench deform_conv2d``; the method is the
harness's, see ``harness.py``).

Shapes (3x3 kernels, padding 1, mask and bias): ``r50-c4`` input (1, 256, 50, 76) and
(8, 256, 50, 76), 256 output channels, stride 1 and 2; ``edvr`` (4, 64, 128, 128), 64 output
channels, offset_groups 8. Offsets N(0, 1) pixels, mask uniform in [0, 1). Forward and backward
(every gradient) against torchvision; the half rows are checked against torchvision in float32.
Bytes: every input and output read or written once.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import torch

from ...bench.harness import BenchCase, Config, OpBench, Row, speedup_lines
from ...bench.timing import tensor_bytes

# (label, N, C_in, H, W, C_out, stride, offset_groups)
SHAPES = (("r50-c4", 1, 256, 50, 76, 256, 1, 1), ("r50-c4", 8, 256, 50, 76, 256, 1, 1),
          ("r50-c4", 8, 256, 50, 76, 256, 2, 1), ("edvr", 4, 64, 128, 128, 64, 1, 8))
K = 3


@functools.lru_cache(maxsize=None)
def _tvo():
    from .reference import torchvision_ops

    return torchvision_ops()


@dataclass(frozen=True)
class Case(BenchCase):
    shape: str
    n: int
    c_in: int
    h: int
    w: int
    c_out: int
    stride: int
    offset_groups: int
    baseline_kind: str  # "torchvision" | "dense conv"
    dtype: str
    direction: str
    differentiable: Tuple[int, ...] = (0, 1, 2, 3, 4)
    backward_op: str = "twinops::deform_conv2d_backward"

    @property
    def out_hw(self) -> Tuple[int, int]:
        return ((self.h + 2 - K) // self.stride + 1, (self.w + 2 - K) // self.stride + 1)

    def labels(self) -> Tuple[str, ...]:
        return (self.shape, f"{self.n}x{self.c_in}x{self.h}x{self.w} -> {self.c_out} s{self.stride} "
                            f"og{self.offset_groups}", self.baseline_kind, self.dtype)

    def make_inputs(self, device, generator):
        ho, wo = self.out_hw
        t = self.torch_dtype
        x = torch.randn(self.n, self.c_in, self.h, self.w, generator=generator, device=device)
        off = torch.randn(self.n, 2 * self.offset_groups * K * K, ho, wo, generator=generator, device=device)
        w = torch.randn(self.c_out, self.c_in, K, K, generator=generator, device=device) / (self.c_in * K * K) ** 0.5
        b = torch.randn(self.c_out, generator=generator, device=device)
        m = torch.rand(self.n, self.offset_groups * K * K, ho, wo, generator=generator, device=device)
        return tuple(v.to(t) for v in (x, off, w, b, m))

    def _geometry(self):
        return dict(stride=(self.stride, self.stride), padding=(1, 1))

    def baseline(self, x, off, w, b, m):
        if self.baseline_kind == "dense conv":
            return torch.nn.functional.conv2d(x, w, b, stride=self.stride, padding=1)
        return _tvo().deform_conv2d(x, off, w, b, mask=m, **self._geometry())

    def expected(self, inputs, baseline_out):
        if self.baseline_kind == "torchvision" and self.torch_dtype == torch.float32:
            return baseline_out
        f = [v.float() for v in inputs]
        return _tvo().deform_conv2d(f[0], f[1], f[2], f[3], mask=f[4], **self._geometry()).to(self.torch_dtype)

    def candidate(self, x, off, w, b, m):
        import twinops
        return twinops.deform_conv2d(x, off, w, b, mask=m, **self._geometry())

    def output_shapes(self):
        return ((self.n, self.c_out, *self.out_hw),)

    def nbytes(self) -> int:
        ho, wo = self.out_hw
        shapes = [(self.n, self.c_in, self.h, self.w), (self.n, 2 * self.offset_groups * K * K, ho, wo),
                  (self.c_out, self.c_in, K, K), (self.c_out,), (self.n, self.offset_groups * K * K, ho, wo)]
        forward = tensor_bytes(shapes + [self.output_shapes()[0]], self.torch_dtype)
        return forward if self.direction == "forward" else forward + tensor_bytes(shapes, self.torch_dtype)


# The targets (docs/perf/deform_conv2d-notes.md): forward at least 2x torchvision and within 3x of
# the dense conv; the deterministic backward at least 2x torchvision's atomic one.
SPEEDUP, DENSE = 2.0, 3.0


def target_lines(rows: Sequence[Row]) -> List[str]:
    """Where the rows stand against the targets."""
    out = speedup_lines(rows, SPEEDUP, "torchvision", keep=lambda r: r.case.baseline_kind == "torchvision")
    dense = [r for r in rows if r.case.baseline_kind == "dense conv" and r.speedup is not None]
    far = [f"{' '.join(r.case.labels()[:2])} {r.case.dtype} {1 / r.speedup:.2f}x" for r in dense
           if r.speedup < 1 / DENSE]
    if dense:
        line = f"forward: {len(dense) - len(far)} of {len(dense)} rows within {DENSE:g}x of the dense conv"
        out.append(line + ("; slower: " + ", ".join(far) if far else ""))
    return out


def build_cases(cfg: Config) -> List[Case]:
    if _tvo() is None:
        return []  # no torchvision kernels for this torch: nothing to compare with
    cases = []
    for dtype in cfg.dtypes:
        for shape, n, c_in, h, w, c_out, stride, og in SHAPES:
            common = dict(shape=shape, n=n, c_in=c_in, h=h, w=w, c_out=c_out, stride=stride, offset_groups=og,
                          dtype=dtype)
            cases.append(Case(baseline_kind="torchvision", direction="forward", **common))
            if cfg.backward:
                cases.append(Case(baseline_kind="torchvision", direction="backward", **common))
            cases.append(Case(baseline_kind="dense conv", direction="forward", **common))
    return cases


BENCH = OpBench(
    name="deform_conv2d",
    summary="twinops deform_conv2d against torchvision's kernel and a dense cuDNN conv of the same shape",
    baseline_name="torchvision / dense conv",
    baseline_short="base",
    candidate_name="twinops.deform_conv2d",
    columns=("shape", "sizes", "baseline", "dtype"),
    build_cases=build_cases,
    targets=target_lines,
)
