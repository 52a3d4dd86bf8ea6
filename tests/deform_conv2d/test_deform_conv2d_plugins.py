"""deform_conv2d's own plugin cases, through the TensorRT-free plugin host (twinops.plugin_host).

What every creator gets (lifecycle of a declared example, field fuzzing, corrupted serialized
forms, enqueue parity with the torch op) is in tests/test_conformance.py. Here: each creator's
input order and (H, W) reading of its fields (the output size of a geometry whose H and W values
all differ), MMDeploy's padding form, ONNX's asymmetric pads and absent attributes, the group
fields against the shapes, and the shapes and types the plugins refuse, with their messages.
CPU tests need TensorRT headers and the plugin library; enqueue tests a GPU and the CUDA kernels.
"""
import pytest
import torch

from twinops import plugin_host as ph
from plugin_checks import host_marks

needs_lib, needs_gpu = host_marks()
F32, F16 = torch.float32, torch.float16
N, C_IN, H, W, C_OUT, KH, KW = 2, 4, 11, 13, 6, 3, 2
# stride (2, 1), padding (1, 0), dilation (1, 2): H_out = (11 + 2 - 3) // 2 + 1 = 6, W_out = 13 - 2 = 11
HO, WO = 6, 11
SHAPES = {"input": (N, C_IN, H, W), "offset": (N, 2 * KH * KW, HO, WO), "weight": (C_OUT, C_IN, KH, KW),
          "bias": (C_OUT,), "mask": (N, KH * KW, HO, WO)}
ORDER = {"TwinopsDeformConv2d": ("input", "offset", "weight", "bias", "mask"),
         "MMCVModulatedDeformConv2d": ("input", "offset", "mask", "weight", "bias"),
         "MMCVDeformConv2d": ("input", "offset", "weight"),
         "DeformConv": ("input", "weight", "offset", "bias", "mask")}
FIELDS = {"TwinopsDeformConv2d": dict(stride=[2, 1], padding=[1, 0], dilation=[1, 2]),
          "MMCVModulatedDeformConv2d": dict(stride=[2, 1], padding=[1, 0], dilation=[1, 2], groups=1, deform_groups=1),
          "MMCVDeformConv2d": dict(stride=[2, 1], padding=[1, 1, 0, 0], dilation=[1, 2], groups=1, deform_groups=1),
          "DeformConv": dict(dilations=[1, 2], pads=[1, 0, 1, 0], strides=[2, 1])}


def _specs(names, t=F32, **shapes):
    return [ph.TensorSpec(t, shapes.get(n, SHAPES[n]), opt=shapes.get(n, SHAPES[n])) for n in names]


def _plugin(creator, version="1", **attrs):
    host = ph.get_host()
    info = host.find(creator, version)
    assert info is not None, f"{creator} v{version} is not in the plugin library"
    plugin = host.create(info, ph.node_fields(ph.attributes_node(creator, attrs, ORDER[creator]), info))
    assert plugin is not None, host.take_log()
    return plugin


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("creator", list(ORDER))
def test_each_creator_reads_its_inputs_and_fields_as_h_w(creator, version):
    plugin = _plugin(creator, version, **FIELDS[creator])
    assert plugin.build(_specs(ORDER[creator], F16)).outputs[0]["dims"] == (N, C_OUT, HO, WO)


@needs_lib
def test_optional_inputs_may_be_left_out():
    for names in (ORDER["TwinopsDeformConv2d"][:3], ORDER["TwinopsDeformConv2d"][:4]):
        assert _plugin("TwinopsDeformConv2d", **FIELDS["TwinopsDeformConv2d"]).build(_specs(names))
    assert _plugin("DeformConv", **FIELDS["DeformConv"]).build(_specs(ORDER["DeformConv"][:3]))
    assert _plugin("MMCVModulatedDeformConv2d", **FIELDS["MMCVModulatedDeformConv2d"]).build(
        _specs(ORDER["MMCVModulatedDeformConv2d"][:4]))


@needs_lib
def test_onnx_node_takes_asymmetric_pads_and_absent_attributes():
    # pads (h_begin, w_begin, h_end, w_end) = (1, 0, 2, 1): H_out = (11 + 3 - 3) // 2 + 1 = 6, W_out = 13 + 1 - 2 = 12
    plugin = _plugin("DeformConv", dilations=[1, 2], pads=[1, 0, 2, 1], strides=[2, 1])
    shapes = dict(offset=(N, 2 * KH * KW, 6, 12), mask=(N, KH * KW, 6, 12))
    assert plugin.build(_specs(ORDER["DeformConv"], **shapes)).outputs[0]["dims"] == (N, C_OUT, 6, 12)
    # no attributes at all: ONNX's defaults (stride 1, no padding, dilation 1)
    shapes = dict(offset=(N, 2 * KH * KW, H - 2, W - 1), mask=(N, KH * KW, H - 2, W - 1))
    assert _plugin("DeformConv").build(_specs(ORDER["DeformConv"], **shapes)).outputs[0]["dims"] == (N, C_OUT, 9, 12)


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("creator", list(ORDER))
def test_workspace_covers_the_columns_for_any_profile_maxima(creator, version):
    """The workspace asked for at the profile's maxima holds the sampled columns (float32, C_in *
    kh * kw rows, one column per (image, output position)) of every shape within the profile,
    also where the maxima of the inputs are not consistent with each other (each input's range
    is set on its own: here every input's dims doubled, so input's and weight's maxima give
    another output size than offset's 12 x 22)."""
    plugin = _plugin(creator, version, **FIELDS[creator])
    columns = 4 * C_IN * KH * KW * HO * WO  # bytes of one image's columns
    exact = plugin.build(_specs(ORDER[creator]))
    assert exact.workspace >= N * columns
    doubled = [ph.TensorSpec(F32, SHAPES[n], opt=SHAPES[n], max=[2 * v for v in SHAPES[n]]) for n in ORDER[creator]]
    # N, C_in and the output positions (offset's maxima) doubled; the kernel is what weight says
    assert _plugin(creator, version, **FIELDS[creator]).build(doubled).workspace >= 2 * N * 2 * 4 * columns


REFUSED = [  # (creator, fields, specs, message)
    ("TwinopsDeformConv2d", {}, _specs(ORDER["TwinopsDeformConv2d"], offset=(N, 2 * KH * KW, HO + 1, WO)),
     "offset's H (7) must equal the output's (6"),
    ("TwinopsDeformConv2d", {}, _specs(ORDER["TwinopsDeformConv2d"], mask=(N, KH * KW + 1, HO, WO)),
     "mask's channels (7) must be offset_groups * kh * kw (6)"),
    ("TwinopsDeformConv2d", {}, _specs(ORDER["TwinopsDeformConv2d"], weight=(C_OUT, 3, KH, KW)),
     "input's channels (4) must be a multiple of weight's dim 1 (C_in / groups = 3)"),
    ("TwinopsDeformConv2d", {}, [*_specs(ORDER["TwinopsDeformConv2d"])[:2], ph.TensorSpec(F16, SHAPES["weight"]),
                                 *_specs(ORDER["TwinopsDeformConv2d"])[3:]],
     "input 2 must have input 0's type"),
    ("TwinopsDeformConv2d", dict(stride=[0, 1]), _specs(ORDER["TwinopsDeformConv2d"]),
     "stride's H value must be at least 1, got 0"),
    ("MMCVModulatedDeformConv2d", dict(groups=2), _specs(ORDER["MMCVModulatedDeformConv2d"]),
     "the node's groups / deform_groups (2 / 1) differ from the shapes' (1 / 1"),
    ("MMCVDeformConv2d", dict(padding=[1, 0, 0, 0]), _specs(ORDER["MMCVDeformConv2d"]),
     "padding must be (pad_h, pad_h, pad_w, pad_w) as MMDeploy writes it, got (1, 0, 0, 0)"),
    ("DeformConv", dict(kernel_shape=[3, 3]), _specs(ORDER["DeformConv"]),
     "kernel_shape (3, 3) differs from W's kernel size"),
    ("DeformConv", dict(offset_group=2), _specs(ORDER["DeformConv"]),
     "the node's group / offset_group (1 / 2) differ from the shapes' (1 / 1"),
    ("MMCVDeformConv2d", {}, _specs(ORDER["TwinopsDeformConv2d"]), "expects 3 inputs (input, offset, weight), got 5"),
]


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("creator,fields,specs,message", REFUSED, ids=[r[3][:40] for r in REFUSED])
def test_what_cannot_run_is_refused_with_its_reason(creator, fields, specs, message, version):
    base = dict(FIELDS[creator])
    base.update(fields)
    host = ph.get_host()
    info = host.find(creator, version)
    plugin = host.create(info, ph.node_fields(ph.attributes_node(creator, base, ORDER[creator][:len(specs)]), info))
    if plugin is None:  # refused when created (a field's value)
        assert message in host.take_log()
        return
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("creator", list(ORDER))
def test_enqueue_with_asymmetric_geometry_equals_the_torch_op_bitwise(creator, version, dtype):
    """stride (2, 1), padding (1, 0), dilation (1, 2) in each creator's own fields and input order:
    the plugin's output is the torch op's with (H, W) kept, bit for bit (the same kernels)."""
    if dtype == torch.bfloat16 and ph.get_host().trt_major < 10:
        pytest.skip("bfloat16 plugins need TensorRT 10 or later")
    g = torch.Generator().manual_seed(0)
    xs = {n: torch.randn(s, generator=g) for n, s in SHAPES.items()}
    xs["mask"] = torch.rand(SHAPES["mask"], generator=g)
    xs = {n: t.to("cuda", dtype) for n, t in xs.items()}
    (y,) = ph.run_plugin((creator, FIELDS[creator]), [xs[n] for n in ORDER[creator]], version=version)
    given = set(ORDER[creator])
    want = torch.ops.twinops.deform_conv2d(xs["input"], xs["offset"], xs["weight"],
                                           xs["bias"] if "bias" in given else None,
                                           xs["mask"] if "mask" in given else None, [2, 1], [1, 0], [1, 2])
    assert y.shape == (N, C_OUT, HO, WO)
    assert torch.equal(y, want)
