"""Per-op specs: what ``twinops check`` and ``twinops regress`` run for each registered op.

A spec says how to draw cases (a Hypothesis strategy of ``(shape, kwargs)`` plus fixed edge
cases), how to run the op (torch function, exportable module), the float64 reference and the
tolerances. Users register their own ops with :func:`register`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import resize_ref, strategies

Config = Tuple[tuple, dict]  # (input shape, keyword arguments)


@dataclass
class OpSpec:
    """One op as the parity tools see it.

    Attributes:
        name: the name used by ``--ops``.
        fn: ``fn(x, **kwargs) -> Tensor`` (the op under test; runs on x's device).
        reference: ``reference(x_cpu, **kwargs) -> Tensor`` in float64 (or exact).
        strategy: a Hypothesis strategy of ``(shape, kwargs)``.
        edge_cases: fixed ``(shape, kwargs)`` pairs checked before the drawn ones.
        module: ``module(**kwargs) -> nn.Module`` whose ``forward(input)`` computes ``fn``
            (exported to ONNX for the onnx.reference, plugin-host and TensorRT backends).
        tolerances: ``{dtype: (atol, rtol)}``; ``output_tolerances`` overrides per output name.
        dtypes: the dtypes checked by default.
        unsuitable: ``unsuitable(shape, kwargs) -> Optional[str]``: why a draw is skipped
            (e.g. the reference itself is unreliable there), or None.
        regress_cases: ``(label, shape, kwargs)`` triples stored as golden baselines.
        outputs: output names (one tensor each).
    """

    name: str
    fn: Callable
    reference: Callable
    strategy: object
    edge_cases: Sequence[Config] = ()
    module: Optional[Callable] = None
    tolerances: Dict[torch.dtype, Tuple[float, float]] = field(default_factory=lambda: dict(resize_ref.TOLERANCES))
    output_tolerances: Dict[str, Dict[torch.dtype, Tuple[float, float]]] = field(default_factory=dict)
    dtypes: Sequence[torch.dtype] = (torch.float32,)
    unsuitable: Callable = lambda shape, kw: None
    regress_cases: Sequence[Tuple[str, tuple, dict]] = ()
    outputs: Sequence[str] = ("output",)

    def tolerance(self, dtype: torch.dtype, output: str = "output") -> Tuple[float, float]:
        """(atol, rtol) for ``output`` in ``dtype``: the per-output override, else the per-op table."""
        table = self.output_tolerances.get(output, self.tolerances)
        if dtype not in table:
            raise ValueError(f"op {self.name!r} has no tolerance for dtype {dtype}")
        return table[dtype]


_REGISTRY: Dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    """Adds (or replaces) ``spec`` under ``spec.name``; returns it."""
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> Dict[str, OpSpec]:
    """``{name: OpSpec}`` of every registered op (the twinops ops are registered on import)."""
    return dict(_REGISTRY)


def get(name: str) -> OpSpec:
    """The spec named ``name``; ``KeyError`` naming the known ops otherwise."""
    if name not in _REGISTRY:
        raise KeyError(f"unknown op {name!r} (registered: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[name]


# ---------------------------------------------------------------------------------------
# the twinops ops
# ---------------------------------------------------------------------------------------

def _interpolate(x, **kw):
    import twinops

    return twinops.interpolate(x, **kw)


def _resize(x, **kw):
    import twinops

    return twinops.resize(x, **kw)


def _interpolate_module(**kw):
    import twinops

    return twinops.Interpolate(**kw)


def _resize_module(**kw):
    import twinops

    kw = dict(kw)
    return twinops.Resize(roi=kw.pop("roi", None), scales=kw.pop("scales", None), sizes=kw.pop("sizes", None), **kw)


def _resize_unsuitable(shape, kw) -> Optional[str]:
    if resize_ref.onnx_reference_is_unstable(shape, kw):
        return "onnx.reference picks a shifted tap window here (a source coordinate an ulp above an integer)"
    return None


INTERPOLATE_REGRESS = [
    (f"{mode}{'-ac' if ac else ''}{'-aa' if aa else ''}", (1, 2, 7, 9),
     dict(mode=mode, **({"align_corners": True} if ac else {}), **({"antialias": True} if aa else {}),
          **({"size": (11, 5)} if i % 2 else {"scale_factor": (1.5, 0.75)})))
    for i, (mode, ac, aa) in enumerate([("nearest", 0, 0), ("nearest-exact", 0, 0), ("area", 0, 0),
                                        ("bilinear", 0, 0), ("bilinear", 1, 0), ("bilinear", 0, 1),
                                        ("bicubic", 0, 0), ("bicubic", 1, 0), ("bicubic", 0, 1)])
]
RESIZE_REGRESS = [
    (f"{mode}-{coord}", (1, 2, 6, 8),
     dict(mode=mode, coordinate_transformation_mode=coord, sizes=[1, 2, 9, 5],
          **({"roi": [0, 0, 0.1, -0.2, 1, 1, 0.8, 1.1], "extrapolation_value": -3.5}
             if coord == "tf_crop_and_resize" else {})))
    for mode in ("nearest", "linear", "cubic")
    for coord in ("half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric", "tf_crop_and_resize")
] + [("linear-antialias", (1, 2, 6, 8), dict(mode="linear", antialias=1, scales=[1, 1, 0.5, 0.6])),
     ("cubic-antialias-exclude", (1, 2, 6, 8), dict(mode="cubic", antialias=1, exclude_outside=1,
                                                     cubic_coeff_a=-0.5, scales=[1, 1, 0.5, 0.6]))]

register(OpSpec(
    name="interpolate",
    fn=_interpolate,
    reference=resize_ref.interpolate_reference,
    # float32 scale factors: the graph backends (ONNX, plugin, TensorRT) get the same scale
    strategy=strategies.interpolate_configs(float32_scales=True),
    edge_cases=[
        ((1, 1, 1, 1), dict(mode="bicubic", size=(3, 2))),
        ((1, 2, 5, 4), dict(mode="bilinear", align_corners=True, size=(1, 1))),
        ((1, 1, 1, 10), dict(mode="nearest", scale_factor=(1.0, 1.05))),  # ATen CPU short cut
        ((1, 2, 6, 7), dict(mode="bicubic", antialias=True, size=(3, 1))),  # ATen CPU aa W_out=1
        ((2, 3, 17, 13), dict(mode="bilinear", antialias=True, scale_factor=0.25)),
        ((1, 2, 4, 5), dict(mode="area", size=(3, 7))),
    ],
    module=_interpolate_module,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    regress_cases=INTERPOLATE_REGRESS,
))

_RESIZE_TOL = dict(resize_ref.TOLERANCES)
# onnx.reference computes cubic weights in float32 (its cubic_coeff_a is a float32 attribute):
# float64 results can only be held to float32's tolerance against it.
_RESIZE_TOL[torch.float64] = resize_ref.TOLERANCES[torch.float32]

register(OpSpec(
    name="resize",
    fn=_resize,
    reference=resize_ref.onnx_reference,
    strategy=strategies.onnx_configs(),
    edge_cases=[
        ((1, 1, 4, 4), dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                            roi=[0, 0, -0.5, -0.5, 1, 1, 1.5, 1.5], sizes=[1, 1, 5, 5], extrapolation_value=7.25)),
        ((2, 3, 8, 11), dict(mode="cubic", coordinate_transformation_mode="half_pixel_symmetric", antialias=1,
                             scales=[1.0, 1.0, 0.6, 2.4])),
        ((2, 3, 8, 11), dict(mode="nearest", nearest_mode="ceil", sizes=[9, 5], axes=[2, 3],
                             keep_aspect_ratio_policy="not_larger")),
        ((1, 2, 5, 6), dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5, scales=[0.45, 1.5], axes=[-2, -1])),
    ],
    module=_resize_module,
    tolerances=_RESIZE_TOL,
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    unsuitable=_resize_unsuitable,
    regress_cases=RESIZE_REGRESS,
))
