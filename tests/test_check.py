"""`python -m twinops check`: backends, seeded cases, statistics, reports, failure artifacts, replay."""
import json

import numpy as np
import pytest

import twinops
from twinops import check
from twinops.testing import specs

FAST = ["--ops", "interpolate", "--examples", "2", "--dtypes", "float32", "--no-progress"]


def _wrong(monkeypatch, factor=1 + 1e-3, only_first=False):
    """Makes the interpolate op deliberately wrong on every backend that calls spec.fn."""
    spec = specs.get("interpolate")
    real = spec.fn

    def wrong(x, **kw):
        y = real(x, **kw)
        if only_first:
            y = y.clone()
            y.view(-1)[0] *= factor
            return y
        return y * factor
    monkeypatch.setattr(spec, "fn", wrong)


def test_passes_on_cpu_and_reports(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert check.main(FAST + ["--dtypes", "float32", "bfloat16", "--report", str(report), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "torch-cpu" in out and "0 failed" in out
    doc = json.loads(report.read_text())
    assert doc["summary"]["failed"] == 0 and doc["summary"]["comparisons"] == len(doc["comparisons"]) > 0
    edge = len(specs.get("interpolate").edge_cases)
    assert doc["summary"]["cases"] == 2 * (edge + 2)
    c = doc["comparisons"][0]
    for key in ("max_abs", "mean_abs", "median_abs", "p99_abs", "max_rel", "mean_rel", "median_rel", "p99_rel",
                "mismatches", "nonfinite", "atol", "rtol", "passed"):
        assert key in c
    # every backend vs the reference, and the backends against each other
    pairs = {(c["backend"], c["against"]) for c in doc["comparisons"]}
    assert ("torch-cpu", "reference") in pairs
    if "onnx-reference" in {p[0] for p in pairs}:
        assert ("onnx-reference", "torch-cpu") in pairs


def test_says_which_backends_are_missing_and_why(capsys):
    check.main(FAST + ["--examples", "0"])
    out = capsys.readouterr().out
    for b in twinops.testing.backends.discover():
        line = next(l for l in out.splitlines() if l.strip().startswith(b.name))
        assert ("missing: " + b.reason) in line if b.reason else "used" in line


def test_seeded_draws_are_reproducible():
    spec = specs.get("interpolate")
    a, b, c = check.draw_configs(spec, 8, 1), check.draw_configs(spec, 8, 1), check.draw_configs(spec, 8, 2)
    assert a == b and len(a) == 8 and a != c


def test_bad_arguments_name_the_argument(tmp_path, capsys):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file")
    cases = [(["--ops", "nope"], "argument --ops: unknown op 'nope'"),
             (["--backends", "nope"], "argument --backends: invalid choice"),
             (["--atol", "-1"], "argument --atol: --atol must be a finite number >= 0"),
             (["--rtol", "x"], "argument --rtol: --rtol must be a number"),
             (["--examples", "-3"], "argument --examples: expected an integer >= 0"),
             (["--replay", str(tmp_path / "missing.npz")], "argument --replay: cannot read reproducer"),
             (["--replay", str(garbage)], "argument --replay: cannot read reproducer")]
    missing = [b for b in twinops.testing.backends.discover() if b.reason]
    if missing:
        cases.append((["--backends", missing[0].name], f"argument --backends: backend '{missing[0].name}' is not "
                                                       "available here"))
    for argv, message in cases:
        with pytest.raises(SystemExit) as e:
            check.main(argv)
        assert e.value.code == 2
        assert message in capsys.readouterr().err, argv


def test_wrong_backend_leaves_reproducer_heatmap_and_replay(tmp_path, monkeypatch, capsys):
    _wrong(monkeypatch)
    out_dir, plots = tmp_path / "out", tmp_path / "plots"
    argv = FAST + ["--backends", "torch-cpu", "--out", str(out_dir), "--plots", str(plots),
                   "--report", str(tmp_path / "r.json")]
    assert check.main(argv) == 1
    out = capsys.readouterr().out
    repros = sorted(out_dir.glob("*.npz"))
    pngs = sorted(plots.glob("*.png"))
    assert repros and len(pngs) == len(repros)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    cmd = f"python -m twinops check --replay {repros[0]}"
    assert cmd in out and "FAILED" in out and "mismatches:" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["summary"]["failed"] == len(doc["failures"]) == len(repros)
    with np.load(repros[0]) as f:
        meta = json.loads(str(f["meta"]))
        assert meta["op"] == "interpolate" and meta["backend"] == "torch-cpu" and f["input"].ndim == 4
    # the replay reproduces the failure while the kernel is wrong ...
    assert check.main(["--replay", str(repros[0]), "--out", str(tmp_path / "replay")]) == 1
    assert "FAILED interpolate-float32" in capsys.readouterr().out
    # ... and passes once it is fixed
    monkeypatch.undo()
    assert check.main(["--replay", str(repros[0]), "--out", str(tmp_path / "replay2")]) == 0


def test_fail_fast_stops_at_the_first_failing_case(tmp_path, monkeypatch, capsys):
    _wrong(monkeypatch)
    assert check.main(FAST + ["--backends", "torch-cpu", "--fail-fast", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().out.count("\nFAILED ") == 1


def test_error_stat_mean_tolerates_one_bad_element(tmp_path, monkeypatch, capsys):
    _wrong(monkeypatch, factor=1.001, only_first=True)
    base = FAST + ["--backends", "torch-cpu", "--out", str(tmp_path)]
    assert check.main(base) == 1
    assert check.main(base + ["--check-error-stat", "mean", "--atol", "1e-3", "--rtol", "1e-3"]) == 0


def test_nan_output_fails_whatever_the_tolerance(tmp_path, monkeypatch, capsys):
    spec = specs.get("interpolate")
    real = spec.fn
    monkeypatch.setattr(spec, "fn", lambda x, **kw: real(x, **kw) * float("nan"))
    assert check.main(FAST + ["--backends", "torch-cpu", "--atol", "1e9", "--rtol", "1e9", "--out",
                              str(tmp_path), "--report", str(tmp_path / "r.json")]) == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    assert all(c["nonfinite"] == c["numel"] for c in doc["comparisons"] if c["backend"] == "torch-cpu")


def test_resize_op_checks_on_cpu(tmp_path, capsys):
    # The ONNX Resize-19 op against onnx.reference, with the edge cases only (fast).
    assert check.main(["--ops", "resize", "--examples", "0", "--dtypes", "float32", "--no-progress",
                       "--out", str(tmp_path)]) == 0


def test_group_by_mode_gives_the_per_mode_table(tmp_path, capsys):
    assert check.main(FAST + ["--backends", "torch-cpu", "--group-by", "mode", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "bicubic" in out and "antialias" in out


def test_plugin_host_and_tensorrt_backends_follow_their_contracts(tmp_path, monkeypatch, capsys):
    # Stand-ins for twinops.plugin_host / twinops.trt that compute with the torch op from exactly
    # what the backends hand over (exported node attributes + sizes; the exported module), with
    # .cuda() made a no-op: checks the glue here, the real modules run on a GPU.
    import sys
    import types

    import onnx
    import torch

    from twinops.library.resize.api import ResizeAttrs

    seen = []

    def run_plugin(node, inputs, shape_inputs=None):
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        sizes = shape_inputs[1]
        seen.append((node.op_type, attrs, len(inputs), tuple(sizes)))
        fields = {k: v for k, v in attrs.items() if k in ResizeAttrs.__dataclass_fields__}
        a = ResizeAttrs(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
        return [torch.ops.twinops.resize(inputs[0], list(sizes), *a.op_args())]

    host = types.ModuleType("twinops.plugin_host")
    host.unavailable_reason, host.run_plugin = (lambda: None), run_plugin
    engine = types.ModuleType("twinops.trt")
    engine.unavailable_reason = lambda: None
    engine.export_and_build = lambda module, inputs, dynamic_shapes=None, dynamo=True: (
        lambda x: {"output": module(x)})
    monkeypatch.setitem(sys.modules, "twinops.plugin_host", host)
    monkeypatch.setitem(sys.modules, "twinops.trt", engine)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    report = tmp_path / "r.json"
    argv = ["--ops", "interpolate", "resize", "--examples", "2", "--dtypes", "float32", "float64", "--no-progress",
            "--backends", "torch-cpu", "plugin-host", "tensorrt", "--out", str(tmp_path), "--report", str(report)]
    assert check.main(argv) == 0
    doc = json.loads(report.read_text())
    pairs = {(c["backend"], c["against"]) for c in doc["comparisons"]}
    assert {("plugin-host", "reference"), ("plugin-host", "torch-cpu"), ("tensorrt", "plugin-host")} <= pairs
    # the exported TwinopsResize node, its one tensor input and its declared shape input (sizes)
    assert seen and all(t == "TwinopsResize" and isinstance(a["mode"], str) and n == 1 and len(s) == 2
                        for t, a, n, s in seen)
    # float64 has no TensorRT I/O: reported as skipped with the reason, not run
    assert any("float64 I/O" in s["reason"] for s in doc["skipped"])
    assert not any(c["backend"] in ("plugin-host", "tensorrt") and c["dtype"] == "float64" for c in doc["comparisons"])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_plugin_host_backend_takes_an_absent_optional_input(monkeypatch, dtype):
    """A case whose optional input is None (deform_conv2d's bias, with a mask after it) reaches the
    plugin host as the exported node has it: the zeros the export wrote in its place, in the
    inputs' dtype (the plugin refuses a float32 bias beside half inputs)."""
    import sys
    import types

    import torch

    from twinops.testing import backends, specs

    spec = specs.get("deform_conv2d")
    kw = {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1]}
    dtype = getattr(torch, dtype)
    xs = spec.make_inputs(((2, 4, 5, 6), (2, 24, 4, 4), (2, 2, 2, 3), None, (2, 12, 4, 4)), dtype, 0, kw)
    seen = []

    def run_plugin(node, inputs, shape_inputs=None):
        seen.append([(tuple(t.shape), t.dtype) for t in inputs])
        return [spec.fn(*inputs, **kw)]

    host = types.ModuleType("twinops.plugin_host")
    host.unavailable_reason, host.run_plugin = (lambda: None), run_plugin
    monkeypatch.setitem(sys.modules, "twinops.plugin_host", host)
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    got = backends._plugin_host(spec, xs, kw, None)
    assert seen == [[((2, 4, 5, 6), dtype), ((2, 24, 4, 4), dtype), ((2, 2, 2, 3), dtype), ((2,), dtype),
                     ((2, 12, 4, 4), dtype)]]
    torch.testing.assert_close(got["output"], spec.fn(*xs, **kw), rtol=0, atol=0)


def test_a_user_registered_op_is_checked(tmp_path, monkeypatch, capsys):
    import torch
    import torch.nn.functional as F
    from hypothesis import strategies as st

    from twinops.testing import OpSpec, nchw_shapes

    def pool(x, **kw):
        return (x[..., 0::2, 0::2] + x[..., 1::2, 0::2] + x[..., 0::2, 1::2] + x[..., 1::2, 1::2]) / 4

    spec = OpSpec(name="pool2", fn=pool, reference=lambda x, **kw: F.avg_pool2d(x.double(), 2),
                  strategy=st.tuples(nchw_shapes(min_hw=2, max_hw=8).map(lambda s: s[:2] + (s[2] // 2 * 2, s[3] // 2 * 2)),
                                     st.just({})),
                  edge_cases=[((1, 1, 2, 2), {})], output_tolerances={"output": {torch.float32: (0.0, 0.0)}})
    monkeypatch.setitem(specs._REGISTRY, "pool2", spec)
    argv = ["--ops", "pool2", "--examples", "3", "--backends", "torch-cpu", "--no-progress", "--out", str(tmp_path)]
    # the per-output override (exact) is applied: float32 rounding of the sums fails it ...
    assert check.main(argv) == 1
    assert "atol=0, rtol=0" in capsys.readouterr().out
    # ... and the per-dtype table passes
    spec.output_tolerances = {}
    assert check.main(argv) == 0
    assert spec.tolerance(torch.float32) == twinops.testing.TOLERANCES[torch.float32]
    with pytest.raises(ValueError, match="no tolerance for dtype torch.int32"):
        spec.tolerance(torch.int32)


def test_a_two_input_op_is_checked_and_replayed(tmp_path, monkeypatch, capsys):
    # dynamic_resize: (input, size_tensor) drawn together; a failure writes both inputs and replays them.
    argv = ["--ops", "dynamic_resize", "--examples", "2", "--dtypes", "float32", "--no-progress", "--out", str(tmp_path)]
    assert check.main(argv) == 0
    spec = specs.get("dynamic_resize")
    assert spec.inputs == ("input", "size_tensor")
    real = spec.fn
    monkeypatch.setattr(spec, "fn", lambda x, s, **kw: real(x, s, **kw) * 1.01)
    assert check.main(argv + ["--backends", "torch-cpu", "--fail-fast"]) == 1
    (repro,) = tmp_path.glob("dynamic_resize-*.npz")
    with np.load(repro) as f:
        meta = json.loads(str(f["meta"]))
        assert sorted(k for k in f.files if k.startswith("input")) == ["input", "input1"]
        assert list(f["input1"].shape) == meta["shapes"][1]
    case, _ = check.read_reproducer(str(repro))
    assert case.shapes == tuple(tuple(s) for s in meta["shapes"]) and len(case.xs()) == 2
    assert check.main(["--replay", str(repro), "--no-progress", "--out", str(tmp_path / "again")]) == 1
    monkeypatch.setattr(spec, "fn", real)
    assert check.main(["--replay", str(repro), "--no-progress", "--out", str(tmp_path / "again")]) == 0


def test_replay_of_a_one_input_reproducer_without_shapes(tmp_path, monkeypatch):
    # The format before several inputs: meta "shape" and one "input" entry.
    x = np.random.default_rng(0).normal(size=(1, 2, 4, 5))
    meta = dict(op="interpolate", dtype="float32", shape=[1, 2, 4, 5], kwargs={"mode": "bilinear", "size": [3, 7]},
                index=0, origin="edge", input_seed=0, backend="torch-cpu", against="reference", atol=None, rtol=None,
                check_error_stat="elemwise", error_quantile=0.99, error="")
    old = tmp_path / "old.npz"
    np.savez_compressed(old, input=x, meta=np.array(json.dumps(meta)))
    case, _ = check.read_reproducer(str(old))
    assert case.shapes == ((1, 2, 4, 5),) and case.kwargs["size"] == (3, 7)
    assert check.main(["--replay", str(old), "--no-progress", "--out", str(tmp_path)]) == 0
    # a reproducer whose input count does not fit the op: one line, exit 2
    meta.update(op="dynamic_resize")
    np.savez_compressed(old, input=x, meta=np.array(json.dumps(meta)))
    with pytest.raises(check.BadFile, match="op 'dynamic_resize' takes 2 inputs .*the reproducer holds 1"):
        check.read_reproducer(str(old))
    with pytest.raises(SystemExit) as e:
        check.main(["--replay", str(old)])
    assert e.value.code == 2


def test_an_op_without_a_plugin_is_skipped_on_the_plugin_backends(tmp_path, monkeypatch):
    # An op whose declaration lists no TensorRT creator for its node (batched_nms_padded's spec
    # with its node taken away): with a plugin host and TensorRT "present", its cases must be
    # skipped with the reason on those two backends (never run, never failed).
    import dataclasses
    import sys
    import types

    import torch

    def run_plugin(*a, **k):
        raise AssertionError("the plugin host must not be asked to run an op without a plugin")

    host = types.ModuleType("twinops.plugin_host")
    host.unavailable_reason, host.run_plugin = (lambda: None), run_plugin
    engine = types.ModuleType("twinops.trt")
    engine.unavailable_reason = lambda: None
    engine.export_and_build = run_plugin
    monkeypatch.setitem(sys.modules, "twinops.plugin_host", host)
    monkeypatch.setitem(sys.modules, "twinops.trt", engine)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    spec = specs.get("batched_nms_padded")
    assert spec.node == "TwinopsBatchedNMSPadded"
    monkeypatch.setitem(specs._REGISTRY, spec.name, dataclasses.replace(spec, node=None))
    report = tmp_path / "r.json"
    argv = ["--ops", "batched_nms_padded", "--examples", "2", "--dtypes", "float32", "--no-progress",
            "--backends", "torch-cpu", "plugin-host", "tensorrt", "--out", str(tmp_path), "--report", str(report)]
    assert check.main(argv) == 0
    doc = json.loads(report.read_text())
    assert not any(c["backend"] in ("plugin-host", "tensorrt") for c in doc["comparisons"])
    reasons = [s["reason"] for s in doc["skipped"]]
    assert any("has no TensorRT plugin" in r for r in reasons), reasons


def test_dtypes_without_cuda_kernels_are_skipped_on_cuda(tmp_path, monkeypatch):
    # ms_deform_attn's CUDA kernels take no float64 (its declaration's cuda_dtypes): with a GPU
    # "present", its float64 cases are skipped on torch-cuda with the reason, never run or failed;
    # float32 still runs there.
    import torch

    calls = []
    spec = specs.get("ms_deform_attn")
    assert spec.cuda_dtypes is not None and torch.float64 not in spec.cuda_dtypes
    real = spec.fn
    monkeypatch.setattr(twinops, "cuda_unavailable_reason", lambda: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    monkeypatch.setattr(spec, "fn", lambda *xs, **kw: calls.append(xs[0].dtype) or real(*xs, **kw))
    report = tmp_path / "r.json"
    argv = ["--ops", "ms_deform_attn", "--examples", "1", "--dtypes", "float32", "float64", "--no-progress",
            "--backends", "torch-cpu", "torch-cuda", "--out", str(tmp_path), "--report", str(report)]
    assert check.main(argv) == 0
    doc = json.loads(report.read_text())
    cuda = [c for c in doc["comparisons"] if "torch-cuda" in c.get("backend", "")]
    assert cuda and all(c["dtype"] == "float32" for c in cuda)
    assert torch.float64 in calls  # float64 still ran, on the CPU
    reasons = [s["reason"] for s in doc["skipped"]]
    assert any("ms_deform_attn's CUDA kernels take float32, float16, bfloat16; float64 runs on the CPU only" in r
               for r in reasons), reasons
