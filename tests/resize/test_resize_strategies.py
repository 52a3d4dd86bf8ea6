"""resize's Hypothesis strategies (twinops.library.resize.strategies) draw valid calls."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import twinops
from twinops.library.resize.strategies import interpolate_configs, onnx_configs, size_or_scale
from twinops.testing import random_input


@given(data=st.data())
def test_size_or_scale_follows_interpolate_rules(data):
    in_hw = data.draw(st.tuples(st.integers(1, 12), st.integers(1, 12)))
    kw = data.draw(size_or_scale(in_hw, max_out=20))
    x = torch.zeros((1, 1) + in_hw)
    y = twinops.interpolate(x, mode="nearest", **kw)  # raises on an invalid size/scale pair
    assert 1 <= min(y.shape[2:]) and max(y.shape[2:]) <= 60


@settings(max_examples=15)
@given(cfg=interpolate_configs())
def test_interpolate_configs_are_valid(cfg):
    shape, kw = cfg
    assert twinops.interpolate(random_input(shape), **kw).dim() == 4


@settings(max_examples=15)
@given(cfg=onnx_configs())
def test_onnx_configs_are_valid(cfg):
    shape, kw = cfg
    assert twinops.resize(random_input(shape), **kw).dim() == 4
