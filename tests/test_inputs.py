"""Input factories (twinops.testing.inputs): every input of a case is made by its declaration's
factory, in its own dtype, valid by construction; the default keeps the seeded data of before."""
import pytest
import torch

from twinops.opdef import FLOATING, TensorArg
from twinops.testing.inputs import INT_HIGH, make_inputs, random_input

DATA = TensorArg("data", ranks=(2,), dtypes=FLOATING)
INDEX = TensorArg("index", ranks=(1,), dtypes=(torch.int64, torch.int32), differentiable=False)
WEIGHT = TensorArg("weight", ranks=(1,), dtypes=FLOATING, optional=True)


def _rows_of_data(ctx):
    """An index into data's rows: needs the shape of an earlier input."""
    rows = ctx.made["data"].shape[0]
    return torch.randint(0, rows, ctx.shape, generator=ctx.generator(), dtype=ctx.dtype)


def test_floating_inputs_follow_the_case_and_keep_their_seeds():
    xs = make_inputs((DATA, WEIGHT), [(3, 4), (5,)], torch.float16, seed=7)
    assert [x.dtype for x in xs] == [torch.float16, torch.float16]
    torch.testing.assert_close(xs[0], random_input((3, 4), torch.float16, seed=7), rtol=0, atol=0)
    torch.testing.assert_close(xs[1], random_input((5,), torch.float16, seed=8), rtol=0, atol=0)


def test_integer_inputs_keep_their_own_dtype():
    xs = make_inputs((DATA, INDEX), [(3, 4), (6,)], torch.float32, seed=0)
    assert xs[1].dtype == torch.int64 and int(xs[1].min()) >= 0 and int(xs[1].max()) < INT_HIGH
    assert xs[1].unique().numel() > 1  # not a constant
    assert INDEX.dtype_for(torch.int32) == torch.int32  # a case run in int32 gives it int32


def test_a_factory_sees_the_inputs_made_before_it():
    index = TensorArg("index", ranks=(1,), dtypes=(torch.int64,), factory=_rows_of_data)
    for seed in range(20):
        data, idx = make_inputs((DATA, index), [(2, 4), (50,)], torch.float64, seed=seed)
        assert set(idx.tolist()) <= {0, 1}


def test_an_optional_input_may_be_left_out_and_a_required_one_not():
    xs = make_inputs((DATA, WEIGHT), [(3, 4), None], torch.float32, seed=0)
    assert xs[1] is None
    with pytest.raises(ValueError, match="input 'data' is required: its shape cannot be None"):
        make_inputs((DATA, WEIGHT), [None, (3,)], torch.float32, seed=0)
    with pytest.raises(ValueError, match=r"2 inputs \(data, weight\) need 2 shapes, got 1"):
        make_inputs((DATA, WEIGHT), [(3, 4)], torch.float32, seed=0)


def test_a_factory_that_gives_the_wrong_tensor_is_named():
    bad = TensorArg("boxes", ranks=(2,), dtypes=FLOATING, factory=lambda ctx: torch.zeros(ctx.shape[0], 3))
    with pytest.raises(ValueError, match=r"the factory of input 'boxes' must give a torch.float32 tensor of shape "
                                         r"\(2, 4\), got torch.float32 of shape \(2, 3\)"):
        make_inputs((bad,), [(2, 4)], torch.float32, seed=0)
