"""The inputs of a case: one tensor per input of an op, made by that input's factory.

``twinops check``, ``twinops regress``, the conformance tests and the bench make an op's inputs
with :func:`make_inputs`: input ``i`` of a case with seed ``s`` is ``factory(ctx)`` with
``ctx.seed == s + i``, where the factory is the declaration's (``TensorArg.factory``) or
:func:`default_factory`. A factory sees the case (every input's shape, the keyword arguments) and
the inputs made before it, so structured inputs (boxes with x1 < x2, indices within another
input's length, level shapes with their start indices) are valid by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Sequence

import torch

from .. import opdef


def random_input(shape, dtype=torch.float32, device="cpu", seed: int = 0) -> torch.Tensor:
    """Seeded normal data + 0.25 of ``shape`` (never all zeros: a kernel that writes nothing
    fails), generated in float64 on the CPU and then cast, so it is the same on every device."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape), generator=g, dtype=torch.float64) + 0.25
    return x.to(device=device, dtype=dtype)


@dataclass(frozen=True)
class InputContext:
    """What an input factory is given.

    Attributes:
        arg: the input's declaration (:class:`twinops.opdef.TensorArg`).
        shape: its shape in this case.
        dtype: its dtype in this case (``arg.dtype_for`` the case's dtype).
        seed: its seed (the case's seed + its index).
        shapes: every input's shape by name (None: an optional input left out).
        kwargs: the case's keyword arguments.
        made: the inputs made before this one, by name (None where left out).
    """

    arg: opdef.TensorArg
    shape: tuple
    dtype: torch.dtype
    seed: int
    shapes: Dict[str, Optional[tuple]] = field(default_factory=dict)
    kwargs: Dict[str, object] = field(default_factory=dict)
    made: Dict[str, Optional[torch.Tensor]] = field(default_factory=dict)

    def generator(self) -> torch.Generator:
        """A CPU generator seeded with :attr:`seed`."""
        return torch.Generator().manual_seed(self.seed)


# Integer inputs without a factory: values in [0, INT_HIGH), valid as indices of any dim of length
# INT_HIGH or more. An op whose integer input must fit another input's sizes declares a factory.
INT_HIGH = 4


def default_factory(ctx: InputContext) -> torch.Tensor:
    """:func:`random_input` for a floating (or complex) input; seeded ints in [0, :data:`INT_HIGH`)
    for an integer one; seeded booleans for a bool one."""
    if ctx.dtype.is_floating_point or ctx.dtype.is_complex:
        return random_input(ctx.shape, ctx.dtype, seed=ctx.seed)
    if ctx.dtype == torch.bool:
        return torch.randint(0, 2, tuple(ctx.shape), generator=ctx.generator()).bool()
    return torch.randint(0, INT_HIGH, tuple(ctx.shape), generator=ctx.generator(), dtype=ctx.dtype)


def make_inputs(inputs: Sequence[opdef.TensorArg], shapes: Sequence[Optional[tuple]], dtype: torch.dtype,
                seed: int, kwargs: Optional[dict] = None) -> list:
    """One CPU tensor per input of ``inputs``, in order (None for an optional input whose shape
    is None): input ``i`` from its factory with seed ``seed + i``, in ``arg.dtype_for(dtype)``.

    Raises ValueError for a shape count that is not the input count, a required input without a
    shape, or a factory whose tensor has another shape or dtype than asked (named)."""
    if len(shapes) != len(inputs):
        raise ValueError(f"{len(inputs)} inputs ({', '.join(t.name for t in inputs)}) need {len(inputs)} shapes, "
                         f"got {len(shapes)}")
    kwargs = dict(kwargs or {})
    by_name = {t.name: (tuple(s) if s is not None else None) for t, s in zip(inputs, shapes)}
    made: Dict[str, Optional[torch.Tensor]] = {}
    for i, (t, shape) in enumerate(zip(inputs, shapes)):
        if shape is None:
            if not t.optional:
                raise ValueError(f"input {t.name!r} is required: its shape cannot be None")
            made[t.name] = None
            continue
        ctx = InputContext(t, tuple(shape), t.dtype_for(dtype), seed + i, by_name, kwargs, dict(made))
        x = (opdef.resolve(t.factory) if t.factory is not None else default_factory)(ctx)
        if not isinstance(x, torch.Tensor) or tuple(x.shape) != ctx.shape or x.dtype != ctx.dtype:
            got = f"{x.dtype} of shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"the factory of input {t.name!r} must give a {ctx.dtype} tensor of shape {ctx.shape}, "
                             f"got {got}")
        made[t.name] = x
    return [made[t.name] for t in inputs]
