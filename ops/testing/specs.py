"""Per-op specs: what ``twinops check`` and ``twinops regress`` run for each registered op.

A spec says how to draw cases (a Hypothesis strategy of ``(shapes, kwargs)`` plus fixed edge
cases; ``shapes`` holds one shape per tensor input, or is a single shape for a one-input op),
how to run the op (torch function, exportable module), the float64 reference and the
tolerances. Every op declared in ``twinops.opdef`` has a spec derived from its declaration
(:func:`from_opdef`); users register their own ops with :func:`register`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Sequence, Tuple

import torch

from .. import opdef
from .inputs import make_inputs
from .tolerances import TOLERANCES

Config = Tuple[tuple, dict]  # (input shapes, or one input shape; keyword arguments)


def is_shape(value) -> bool:
    """True for one shape (a sequence of ints), False for a sequence of shapes."""
    return isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value)


@dataclass
class OpSpec:
    """One op as the parity tools see it.

    Attributes:
        name: the name used by ``--ops``.
        fn: ``fn(*inputs, **kwargs) -> Tensor`` (the op under test; runs on its inputs' device).
        reference: ``reference(*inputs_cpu, **kwargs) -> Tensor`` in float64 (or exact).
        strategy: a Hypothesis strategy of ``(shapes, kwargs)`` (a single shape: one input).
        edge_cases: fixed ``(shapes, kwargs)`` pairs checked before the drawn ones.
        module: ``module(**kwargs) -> nn.Module`` whose ``forward(*inputs)`` computes ``fn``
            (exported to ONNX for the onnx.reference, plugin-host and TensorRT backends).
        tolerances: ``{dtype: (atol, rtol)}``; ``output_tolerances`` overrides per output name.
        dtypes: the dtypes checked by default.
        unsuitable: ``unsuitable(shapes, kwargs) -> Optional[str]``: why a draw is skipped
            (e.g. the reference itself is unreliable there), or None; ``shapes`` as the case gives it.
        regress_cases: ``(label, shapes, kwargs)`` triples stored as golden baselines.
        outputs: output names (one tensor each).
        inputs: input names, in call order (default one, ``input``); the exported graph's inputs.
        input_args: their declarations (:class:`twinops.opdef.TensorArg`: dtypes, factory); empty:
            one plain floating input per name.
        node: the op_type of the exported node the plugin backends run (None: the op declares no
            plugin creator of that name, so the plugin backends skip it).
        cuda_dtypes: the dtypes its CUDA kernels take (None: every one); the torch-cuda backend
            skips the others.
    """

    name: str
    fn: Callable
    reference: Callable
    strategy: object
    edge_cases: Sequence[Config] = ()
    module: Optional[Callable] = None
    tolerances: Dict[torch.dtype, Tuple[float, float]] = field(default_factory=lambda: dict(TOLERANCES))
    output_tolerances: Dict[str, Dict[torch.dtype, Tuple[float, float]]] = field(default_factory=dict)
    dtypes: Sequence[torch.dtype] = (torch.float32,)
    unsuitable: Callable = lambda shape, kw: None
    regress_cases: Sequence[Tuple[str, tuple, dict]] = ()
    outputs: Sequence[str] = ("output",)
    inputs: Sequence[str] = ("input",)
    input_args: Sequence[opdef.TensorArg] = ()
    node: Optional[str] = None
    cuda_dtypes: Optional[Sequence[torch.dtype]] = None

    def shapes(self, shapes) -> Tuple[tuple, ...]:
        """``shapes`` as one shape per input (None: an optional input left out); a single shape is
        the only input's."""
        out = (tuple(shapes),) if is_shape(shapes) else tuple(tuple(s) if s is not None else None for s in shapes)
        if len(out) != len(self.inputs):
            raise ValueError(f"op {self.name!r} takes {len(self.inputs)} inputs ({', '.join(self.inputs)}), "
                             f"got {len(out)} shapes")
        return out

    def make_inputs(self, shapes, dtype: torch.dtype, seed: int, kwargs: Optional[dict] = None) -> list:
        """The case's CPU inputs, one per input (:func:`twinops.testing.inputs.make_inputs`: input
        ``i`` from its factory with seed ``seed + i``)."""
        return make_inputs(self.declared_inputs(), self.shapes(shapes), dtype, seed, kwargs)

    def declared_inputs(self) -> Tuple[opdef.TensorArg, ...]:
        """``input_args``, or one plain floating input per name of ``inputs``."""
        return tuple(self.input_args) or tuple(opdef.TensorArg(n) for n in self.inputs)

    def tolerance(self, dtype: torch.dtype, output: str = "output") -> Tuple[float, float]:
        """(atol, rtol) for ``output`` in ``dtype``: the per-output override, else the per-op table."""
        table = self.output_tolerances.get(output, self.tolerances)
        if dtype not in table:
            raise ValueError(f"op {self.name!r} has no tolerance for dtype {dtype}")
        return table[dtype]


_REGISTRY: Dict[str, OpSpec] = {}


def from_opdef(op: "opdef.OpDef") -> OpSpec:
    """The spec of a declared op: its API, module, reference, cases, tolerances and dtypes."""
    tolerances = opdef.resolve(op.tolerances) if op.tolerances is not None else TOLERANCES
    unsuitable = opdef.resolve(op.unsuitable) if op.unsuitable is not None else (lambda shapes, kw: None)
    return OpSpec(
        name=op.name,
        fn=lambda *inputs, **kw: opdef.resolve(op.api)(*inputs, **kw),
        reference=lambda *inputs, **kw: opdef.resolve(op.reference)(*inputs, **kw),
        strategy=opdef.resolve(op.cases)(),
        edge_cases=list(op.edge_cases),
        module=lambda **kw: opdef.resolve(op.module)(**kw),
        tolerances=dict(tolerances),
        dtypes=tuple(op.dtypes),
        unsuitable=unsuitable,
        regress_cases=list(op.regress_cases),
        outputs=tuple(t.name for t in op.outputs),
        inputs=tuple(t.name for t in op.inputs),
        input_args=tuple(op.inputs),
        node=op.node.op_type if any(c.name == op.node.op_type for c in op.plugins) else None,
        cuda_dtypes=tuple(op.cuda_dtypes) if op.cuda_dtypes is not None else None,
    )


def _sync() -> None:
    # Declared ops get their spec on first use (their strategies import hypothesis); a spec
    # registered under the same name, or patched on the object get() returns, stays.
    for name, op in opdef.registered().items():
        if name not in _REGISTRY:
            _REGISTRY[name] = from_opdef(op)


def register(spec: OpSpec) -> OpSpec:
    """Adds (or replaces) ``spec`` under ``spec.name``; returns it."""
    _sync()
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> Dict[str, OpSpec]:
    """``{name: OpSpec}`` of every registered op (every op declared in ``twinops.opdef`` included)."""
    _sync()
    return dict(_REGISTRY)


def get(name: str) -> OpSpec:
    """The spec named ``name``; ``KeyError`` naming the known ops otherwise."""
    _sync()
    if name not in _REGISTRY:
        raise KeyError(f"unknown op {name!r} (registered: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[name]
