"""The TensorRT-free plugin host's own rules (twinops.plugin_host): its expression builder, and the
generic plugin classes around ops that exist only in the test tree (tests/trt_multi_output_op.cpp;
tests/trt_size_tensor_op.cpp, a data-dependent output).

Tiers: the expression builder needs TensorRT headers and a compiler; the test op's lifecycle runs
on the CPU, its enqueue on a CUDA GPU. Each skips with the reason from twinops.plugin_host.
"""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from twinops import plugin_host as ph
from plugin_checks import copies_library_host, prefix_library_host
from plugin_checks import formats as _formats
from plugin_checks import rejected as _rejected

HOST_REASON = ph._host_reason()
needs_host = pytest.mark.skipif(HOST_REASON is not None, reason=f"plugin host: {HOST_REASON}")


# ---------------------------------------------------------------------------------------
# headers + compiler: the expression builder
# ---------------------------------------------------------------------------------------

@needs_host
@given(op=st.integers(0, 8), a=st.integers(-50, 50), b=st.integers(-6, 6), symbolic=st.booleans())
def test_expression_builder(op, a, b, symbolic):
    expect = [a + b, a * b, max(a, b), min(a, b), a - b, int(a == b), int(a < b),
              a // b if b else None, -((-a) // b) if b else None][op]
    got = ph.expr_selftest(op, a, b, symbolic)
    if expect is None:
        assert got is None  # division by zero is rejected, not a crash
    else:
        assert got == (expect, not symbolic)  # constants fold, symbols stay symbolic
    assert ph.expr_selftest(9, a, b, symbolic) is None  # not a DimensionOperation


@pytest.fixture(scope="module")
def copies_host(tmp_path_factory):
    return copies_library_host(tmp_path_factory.mktemp("copies"))


@needs_host
@pytest.mark.parametrize("interface", ["v3", "v2"])
def test_multi_output_lifecycle(copies_host, interface):
    """getNbOutputs comes from the op core: every build query, configurePlugin, the serialization
    round trip and onShapeChange see three outputs (enqueue too, on a GPU)."""
    if interface == "v3" and copies_host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    x = torch.zeros(2, 5, 3, dtype=torch.float16)
    node = ("TwinopsTestCopies", {"copies": 3})
    rt, built, tensors = ph.prepare_plugin(node, [x], interface=interface, host=copies_host)
    assert [o["dims"] for o in rt.result.outputs] == [(2, 5, 3)] * 3
    assert [o["max"] for o in rt.result.outputs] == [(4, 10, 6)] * 3
    assert {o["type"] for o in rt.result.outputs} == {ph.DATA_TYPES[torch.float16]}
    assert rt.result.formats.shape[0] == 4
    for pos in (1, 2, 3):  # each output follows the input
        assert _formats(rt.result, pos) == {(ph.DATA_TYPES[torch.float16], ph.LINEAR)}
    assert [f.name for f in built.serialize()] == (["copies"] if interface == "v3" else [""])
    bad = ph.attributes_node("TwinopsTestCopies", {"copies": 0}, ["x"])
    _rejected(copies_host, lambda: copies_host.create(rt.creator, ph.node_fields(bad, rt.creator)), "copies=0")
    if torch.cuda.is_available():
        xc = torch.randn(2, 5, 3, device="cuda").half()
        outs = ph.run_plugin(node, [xc], interface=interface, host=copies_host)
        torch.cuda.synchronize()
        assert len(outs) == 3 and all(torch.equal(o, xc) for o in outs)


@pytest.fixture(scope="module")
def prefix_host(tmp_path_factory):
    if ph.header_dir() is None or HOST_REASON is not None:
        pytest.skip(f"plugin host: {HOST_REASON}")
    host = prefix_library_host(tmp_path_factory.mktemp("prefix"))  # its own library: twinops' is not needed
    if host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no size tensors (IExprBuilder::declareSizeTensor)")
    return host


def _prefix_node(**fields):
    return "TwinopsTestPrefix", {"length": 3, "size_output": 1, "size_rank": 0, "size_type": 0, **fields}


def _prefix(host, k, **fields):
    return ph.prepare_plugin(_prefix_node(**fields), [torch.arange(k, dtype=torch.float32)], host=host)


@needs_host
@pytest.mark.parametrize("size_type,dtype", [(0, torch.int64), (1, torch.int32)])
def test_size_tensor_bounds(prefix_host, size_type, dtype):
    """A dimension declared with declareSizeTensor: min 0, the plugin's opt, the upper bound as the
    concrete (allocated) length; the size tensor a 0-D int output; both reported by the build."""
    rt, built, _ = _prefix(prefix_host, 7, size_type=size_type)
    keep, size = rt.result.outputs
    assert keep["size_tensor"] == {0: 1} and size["size_tensor"] == {} and rt.result.size_tensors == [1]
    # K = 7 with the host's profile min 1, opt 7, max 14: opt ceil(7 / 2), bound K
    assert (keep["min"], keep["opt"], keep["max"], keep["dims"]) == ((0,), (4,), (14,), (7,))
    assert size["dims"] == () and size["type"] == ph.DATA_TYPES[dtype]
    assert [f.name for f in built.serialize()] == ["length", "size_output", "size_rank", "size_type"]
    assert prefix_host.find("TwinopsTestPrefix", "legacy") is None, "a size tensor needs IPluginV3"
    if torch.cuda.is_available():
        x = torch.arange(7, dtype=torch.float32, device="cuda") + 0.5
        y, n = ph.run_plugin(_prefix_node(size_type=size_type), [x], host=prefix_host)
        assert torch.equal(y, x[:3]) and n.dtype == dtype and int(n) == 3
        with pytest.raises(ph.HostError, match="length of 9 along dim 0, outside"):
            ph.run_plugin(_prefix_node(length=9, size_type=size_type), [x], host=prefix_host)


@needs_host
@pytest.mark.parametrize("fields", [dict(size_output=0), dict(size_output=5), dict(size_output=-1), dict(size_rank=1),
                                    dict(size_type=2)],
                         ids=["names-itself", "no-such-output", "negative-output", "not-0-D", "float"])
def test_size_tensor_rules(prefix_host, fields):
    """TensorRT's rule: the output a size tensor names is a 0-D int32 or int64 output of the plugin."""
    with pytest.raises(ph.HostError, match="declareSizeTensor names output|declareSizeTensor returned nullptr"):
        _prefix(prefix_host, 5, **fields)
