"""The generic parity tools and plugin classes on an op with every input kind (tests/kinds_op.py,
its plugin tests/trt_kinds_op.cpp): an int64/int32 index input made valid by its factory and read
by the plugin on the device, an optional input (a node of 2 or 3 inputs), two outputs of different
dtypes, and a non-differentiable input. The op exists only in the test tree, so these hold before
a real op needs them. The plugin's lifecycle needs the plugin host (TensorRT headers, a compiler,
nvcc); its enqueue a CUDA GPU."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kinds_op  # noqa: E402

from twinops import check, regress  # noqa: E402
from twinops import plugin_host as ph  # noqa: E402
from twinops.testing import specs  # noqa: E402
from twinops.testing.inputs import make_inputs  # noqa: E402

OP = kinds_op.KINDS_GATHER
HOST_REASON = ph._host_reason()
needs_host = pytest.mark.skipif(HOST_REASON is not None, reason=f"plugin host: {HOST_REASON}")


@pytest.fixture
def registered(monkeypatch):
    """The op's spec in the parity tools' registry for one test."""
    specs.registered()  # the declared ops first, so the registry is complete without it
    monkeypatch.setitem(specs._REGISTRY, OP.name, specs.from_opdef(OP))
    return specs.get(OP.name)


@pytest.fixture
def declared(monkeypatch, registered):
    """The op in twinops' op registry too (the exporters and onnx.reference kernels read it)."""
    from twinops import opdef

    monkeypatch.setitem(opdef._REGISTRY, OP.name, OP)
    return registered


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
def test_each_input_takes_its_own_dtype_and_valid_values(dtype):
    for seed in range(10):
        data, index, weight = make_inputs(OP.inputs, [(3, 4), (25,), (4,)], dtype, seed)
        assert (data.dtype, index.dtype, weight.dtype) == (dtype, torch.int64, dtype)
        assert 0 <= int(index.min()) and int(index.max()) < 3  # rows of data, from the factory
    data, index, weight = make_inputs(OP.inputs, [(3, 4), (5,), None], torch.int32, 0)
    assert index.dtype == torch.int32 and weight is None


def test_check_compares_every_output_with_and_without_the_optional_input(registered, tmp_path, capsys):
    report = tmp_path / "r.json"
    rc = check.main(["--ops", OP.name, "--backends", "torch-cpu", "--examples", "12", "--no-progress",
                     "--out", str(tmp_path), "--report", str(report)])
    out = capsys.readouterr().out
    assert rc == 0, out
    import json

    rows = json.loads(report.read_text())["comparisons"]
    assert {r["output"] for r in rows} == {"rows", "counts"}
    shapes = [r["input_shape"] for r in rows]
    assert any(s[2] is None for s in shapes) and any(s[2] is not None for s in shapes), shapes


def test_check_fails_when_one_output_is_wrong(registered, tmp_path, capsys, monkeypatch):
    good = registered.fn

    def wrong_counts(*xs, **kw):
        rows, counts = good(*xs, **kw)
        return rows, counts + (counts == counts.max()).long()

    monkeypatch.setattr(registered, "fn", wrong_counts)
    rc = check.main(["--ops", OP.name, "--backends", "torch-cpu", "--examples", "6", "--no-progress",
                     "--out", str(tmp_path)])
    assert rc == 1 and "counts" in capsys.readouterr().out
    # the reproducers give back each input in its own dtype, and None for one left out
    replayed = [check.read_reproducer(str(p))[0] for p in tmp_path.glob("*.npz")]
    assert replayed
    for case in replayed:
        data, index, weight = case.xs()
        assert data.dtype == case.dtype and index.dtype == torch.int64
        assert (weight is None) == (case.shapes[2] is None)
        assert int(index.max()) < data.shape[0] if index.numel() else True


def test_regress_stores_each_output_and_an_omitted_input(registered, tmp_path):
    cases = regress.compute(OP.name)
    dtypes = [str(d).replace("torch.", "") for d in regress.REGRESS_DTYPES]
    assert set(cases) == {f"{label}:{name}|{d}" for label in ("weighted", "plain") for name in ("rows", "counts")
                          for d in dtypes}
    assert cases["plain:rows|float64"]["meta"]["shape"] == [[5, 2], [7], None]
    counts = cases["weighted:counts|float32"]["output"]
    assert counts.sum() == 6 and counts.dtype.kind == "f"
    path = str(tmp_path / "k.npz")
    regress.save(path, cases)
    loaded = regress.load(path)
    assert all(regress.drift(k, cases[k], loaded.get(k))["status"] == "ok" for k in cases)


def test_gradients_reach_the_differentiable_inputs_only():
    data, index, weight = make_inputs(OP.inputs, [(4, 3), (9,), (3,)], torch.float64, 3)
    wanted = [t.differentiable for t in OP.inputs]
    assert wanted == [True, False, True]
    args = [x.requires_grad_(w) for x, w in zip((data, index, weight), wanted)]
    assert torch.autograd.gradcheck(lambda d, i, w: kinds_op.kinds_gather(d, i, w, 0.5)[0], args)
    rows, _ = kinds_op.kinds_gather(*args, 0.5)
    grads = torch.autograd.grad(rows.sum(), [args[0], args[2]])
    assert all(g is not None for g in grads) and not args[1].requires_grad


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("weighted", [False, True], ids=["2-inputs", "3-inputs"])
def test_both_exporters_write_the_node_with_its_inputs_and_outputs(declared, dynamo, weighted):
    """The generic symbolic and translation: a node of 2 or 3 inputs (a trailing optional input
    left out), two outputs, the attribute; onnx.reference runs it to the op's values."""
    pytest.importorskip("onnxscript")
    from onnx.reference import ReferenceEvaluator

    import twinops

    xs = make_inputs(OP.inputs, [(5, 3), (8,), (3,) if weighted else None], torch.float32, seed=2)
    model = twinops.export_onnx(kinds_op.KindsGather(scale=-0.5).eval(), tuple(x for x in xs if x is not None),
                                dynamo=dynamo)
    nodes = [n for n in model.graph.node if n.op_type == OP.node.op_type]
    assert len(nodes) == 1 and len(nodes[0].input) == (3 if weighted else 2) and len(nodes[0].output) == 2
    feeds = {i.name: x.numpy() for i, x in zip(model.graph.input, [x for x in xs if x is not None])}
    rows, counts = ReferenceEvaluator(model, new_ops=twinops.onnx_reference_ops()).run(None, feeds)
    want_rows, want_counts = kinds_op.reference(*xs, scale=-0.5)
    torch.testing.assert_close(torch.from_numpy(rows), want_rows.float())
    assert torch.equal(torch.from_numpy(counts), want_counts)


def test_check_runs_the_exported_node_on_onnx_reference(declared, tmp_path, capsys):
    pytest.importorskip("onnx")
    rc = check.main(["--ops", OP.name, "--backends", "torch-cpu", "onnx-reference", "--examples", "6",
                     "--no-progress", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0 and "onnx-reference" in out, out


# ---------------------------------------------------------------------------------------
# the plugin: generic classes around tests/trt_kinds_op.cpp
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kinds_host(tmp_path_factory):
    from plugin_checks import kinds_library_host

    return kinds_library_host(tmp_path_factory.mktemp("kinds"))


def _int64_tensors(host) -> bool:
    return host.trt_major >= 10  # TensorRT 8.6 has no int64 tensors


@needs_host
@pytest.mark.parametrize("interface", ["v3", "v2"])
@pytest.mark.parametrize("weighted", [False, True], ids=["2-inputs", "3-inputs"])
def test_plugin_lifecycle_with_an_optional_input_and_an_integer_output(kinds_host, interface, weighted):
    if interface == "v3" and kinds_host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    index_dtype = torch.int64 if _int64_tensors(kinds_host) else torch.int32
    xs = [torch.zeros(5, 3, dtype=torch.float16), torch.zeros(7, dtype=index_dtype)]
    xs += [torch.zeros(3, dtype=torch.float16)] if weighted else []
    rt, _, _ = ph.prepare_plugin(("TwinopsTestKindsGather", {"scale": 0.5}), xs, interface=interface, host=kinds_host)
    outs = rt.result.outputs
    assert [o["dims"] for o in outs] == [(7, 3), (5,)]
    assert [o["type"] for o in outs] == [ph.DATA_TYPES[torch.float16], ph.DATA_TYPES[index_dtype]]
    nb_in = len(xs)
    from plugin_checks import formats

    index_types = {t for t, _ in formats(rt.result, 1)}
    assert ph.DATA_TYPES[torch.int32] in index_types and (ph.DATA_TYPES[torch.int64] in index_types) == _int64_tensors(
        kinds_host)
    assert {t for t, _ in formats(rt.result, nb_in + 1)} == {ph.DATA_TYPES[index_dtype]}  # counts
    if weighted and interface == "v3":  # a weight of another length than C is refused before enqueue (onShapeChange)
        bad = xs[:2] + [torch.zeros(4, dtype=torch.float16)]
        with pytest.raises(ph.HostError, match="weight must have C = 3 entries, got 4"):
            ph.prepare_plugin(("TwinopsTestKindsGather", {"scale": 0.5}), bad, interface=interface, host=kinds_host)


@needs_host
@pytest.mark.skipif(not torch.cuda.is_available(), reason="enqueue needs a CUDA GPU")
@pytest.mark.parametrize("interface", ["v3", "v2"])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("weighted", [False, True], ids=["2-inputs", "3-inputs"])
def test_plugin_reads_the_index_on_the_device(kinds_host, interface, index_dtype, weighted):
    if interface == "v3" and kinds_host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    if index_dtype == torch.int64 and not _int64_tensors(kinds_host):
        pytest.skip("TensorRT 8.6 has no int64 tensors")
    shapes = [(6, 4), (11,), (4,) if weighted else None]
    data, index, weight = make_inputs(OP.inputs, shapes, torch.float32, seed=5)
    index = index.to(index_dtype)
    index[3] = 6  # out of range: NaN rows, not counted (the plugin reads the value, never aborts)
    want_rows, _ = kinds_op.reference(data, index.clamp(max=5), weight, scale=0.5)
    want_rows[3] = float("nan")
    want_counts = torch.bincount(index[index < 6].long(), minlength=6)
    xs = [t.cuda() for t in (data, index, weight) if t is not None]
    rows, counts = ph.run_plugin(("TwinopsTestKindsGather", {"scale": 0.5}), xs, interface=interface,
                                 host=kinds_host)
    torch.cuda.synchronize()
    torch.testing.assert_close(rows.cpu(), want_rows.float(), equal_nan=True)
    assert counts.dtype == (torch.int64 if _int64_tensors(kinds_host) else torch.int32)
    assert torch.equal(counts.cpu().long(), want_counts)
