"""A test-tree op with every kind of input the declaration can express, so the generic code
(input factories, per-input dtypes, optional inputs, several outputs, non-differentiable inputs)
is tested before a real op needs it. It exists only here; tests/test_op_kinds.py drives it.

``kinds_gather(data, index, weight=None, scale=1.0) -> (rows, counts)``:

* ``data`` (N, C) floating; ``index`` (M,) int64 or int32 rows of ``data`` (its factory keeps
  them in [0, N); not differentiable); ``weight`` (C,) floating, optional;
* ``rows`` (M, C) = ``data[index] * scale`` (times ``weight`` where given), in data's dtype;
  ``counts`` (N,) int64: how often each row is taken (an integer output next to a float one).

The torch op is ``twinops_test::kinds_gather`` (torch.library.custom_op, CPU in Python) with a
fake kernel and autograd; its declaration is an OpDef that tests register into the parity
tools' spec registry for the duration of a test (never into twinops' op registry).
"""
from typing import Optional, Tuple

import torch
from torch import Tensor

from twinops.opdef import DOMAIN, FLOATING, Attr, Node, OpDef, TensorArg, check_arg, check_tensor


def _rows_of_data(ctx):
    """Indices into data's rows: valid by construction, whatever N the case draws."""
    rows = ctx.shapes["data"][0]
    return torch.randint(0, max(rows, 1), ctx.shape, generator=ctx.generator(), dtype=ctx.dtype)


DATA = TensorArg("data", ranks=(2,), layout="N, C", dtypes=FLOATING, doc="the rows")
INDEX = TensorArg("index", ranks=(1,), layout="M", dtypes=(torch.int64, torch.int32), differentiable=False,
                  factory=_rows_of_data, doc="rows of data to take, in [0, N)")
WEIGHT = TensorArg("weight", ranks=(1,), layout="C", dtypes=FLOATING, optional=True, doc="per-column factor")
ROWS = TensorArg("rows", ranks=(2,), layout="M, C", dtypes=FLOATING)
COUNTS = TensorArg("counts", ranks=(1,), layout="N", dtypes=(torch.int64,))
SCALE = Attr("scale", "float", 1.0, finite=True)


@torch.library.custom_op("twinops_test::kinds_gather", mutates_args=())
def _op(data: Tensor, index: Tensor, weight: Optional[Tensor], scale: float) -> Tuple[Tensor, Tensor]:
    rows = data[index.long()] * scale
    if weight is not None:
        rows = rows * weight
    return rows.contiguous(), torch.bincount(index.long(), minlength=data.shape[0])


@_op.register_fake
def _fake(data, index, weight, scale):
    return data.new_empty((index.shape[0], data.shape[1])), data.new_empty((data.shape[0],), dtype=torch.int64)


def _setup(ctx, inputs, output):
    data, index, weight, scale = inputs
    ctx.save_for_backward(data, index, weight)
    ctx.scale, ctx.n = scale, data.shape[0]


def _backward(ctx, grad_rows, grad_counts):
    data, index, weight = ctx.saved_tensors
    g = grad_rows * ctx.scale
    grad_data = torch.zeros_like(data).index_add(0, index.long(), g * weight if weight is not None else g)
    grad_weight = (g * data[index.long()]).sum(0) if weight is not None else None
    return grad_data, None, grad_weight, None


_op.register_autograd(_backward, setup_context=_setup)


def kinds_gather(data: Tensor, index: Tensor, weight: Optional[Tensor] = None, scale: float = 1.0):
    """The API: the declaration's generic checks, then the op (shapes in the module docstring)."""
    who = "kinds_gather"
    check_tensor(DATA, data, who)
    check_tensor(INDEX, index, who)
    if weight is not None:
        check_tensor(WEIGHT, weight, who)
    check_arg(SCALE, scale, who)
    return _op(data, index, weight, float(scale))


class KindsGather(torch.nn.Module):
    def __init__(self, scale: float = 1.0):
        super().__init__()
        self.scale = scale

    def forward(self, data, index, weight=None):
        return kinds_gather(data, index, weight, self.scale)


def reference(data, index, weight=None, scale=1.0):
    """float64 reference (exact counts)."""
    rows = data.double()[index.long()] * scale
    if weight is not None:
        rows = rows * weight.double()
    return rows, torch.bincount(index.long(), minlength=data.shape[0])


def node_reference(data, index, weight=None, scale=1.0):
    """The node's onnx.reference kernel (numpy in, numpy out): rows in data's dtype, int64 counts."""
    rows, counts = reference(torch.from_numpy(data), torch.from_numpy(index),
                             torch.from_numpy(weight) if weight is not None else None, scale)
    return rows.numpy().astype(data.dtype), counts.numpy()


def cases():
    """Hypothesis strategy of (shapes, kwargs): weight given or left out (None)."""
    from hypothesis import strategies as st

    @st.composite
    def draw(draw):
        n, c, m = draw(st.integers(1, 6)), draw(st.integers(1, 5)), draw(st.integers(0, 9))
        weight = (c,) if draw(st.booleans()) else None
        return ((n, c), (m,), weight), dict(scale=draw(st.sampled_from([1.0, -0.5, 2.0])))

    return draw()


KINDS_GATHER = OpDef(
    name="kinds_gather", api=kinds_gather, module=KindsGather,
    inputs=(DATA, INDEX, WEIGHT), outputs=(ROWS, COUNTS), args=(SCALE,),
    node=Node("TwinopsTestKindsGather", DOMAIN, inputs=(DATA, INDEX, WEIGHT), outputs=(ROWS, COUNTS),
              attrs=(SCALE,), torch_op="twinops_test::kinds_gather", reference=node_reference),
    reference=reference, dtypes=(torch.float32, torch.float64), cases=cases,
    edge_cases=((((3, 2), (4,), None), dict(scale=1.0)), (((1, 3), (0,), (3,)), dict(scale=2.0))),
    regress_cases=(("weighted", ((4, 3), (6,), (3,)), dict(scale=0.5)),
                   ("plain", ((5, 2), (7,), None), dict(scale=1.0))),
    doc="test-tree op: a gather with an index input, an optional input and two outputs",
)
