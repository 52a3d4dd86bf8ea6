"""`python -m twinops` dispatches to check (the README's main job), regress and table."""
import subprocess
import sys

import pytest
import torch

import twinops.__main__ as entry
import twinops.library.resize.table as table


def test_table_passes_on_cpu(capsys):
    assert entry.main(["table", "--devices", "cpu", "--dtypes", "float32"]) == 0
    out = capsys.readouterr().out
    assert "bicubic" in out and "9 passed, 0 failed" in out


def test_table_fails_on_a_wrong_kernel(monkeypatch, capsys):
    real = table.twinops.interpolate
    monkeypatch.setattr(table.twinops, "interpolate", lambda x, **kw: real(x, **kw) * (1 + 1e-3))
    assert entry.main(["table", "--devices", "cpu", "--dtypes", "float32"]) == 1
    assert "0 passed, 9 failed" in capsys.readouterr().out


def test_table_rejects_missing_device():
    if torch.cuda.is_available() and table.twinops.has_cuda_kernels():
        pytest.skip("CUDA is available here: there is no missing device to reject")
    r = subprocess.run([sys.executable, "-m", "twinops", "table", "--devices", "cuda"], capture_output=True, text=True)
    assert r.returncode == 2 and "device 'cuda' is not available here" in r.stderr


def test_main_job_is_check(tmp_path):
    # The README's main job, through the real entry point; no command means check.
    r = subprocess.run([sys.executable, "-m", "twinops", "--ops", "interpolate", "--examples", "2", "--dtypes",
                        "float32", "--no-progress", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "twinops check" in r.stdout and " 0 failed" in r.stdout


def test_unknown_command(capsys):
    assert entry.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_help_lists_commands(capsys):
    assert entry.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(c in out for c in ("check", "regress", "table"))


def test_ops_lists_every_registered_op_with_its_faces(capsys):
    from twinops import opdef

    assert entry.main(["ops", "--plain"]) == 0
    out = capsys.readouterr().out
    for op in opdef.registered().values():
        line = next(l for l in out.splitlines() if l.startswith(op.name + " "))
        assert op.node.op_type in line and op.node.torch_op in line
        assert all(c.name in out for c in op.plugins)
    assert "DynamicTRTResize 1: v3, legacy: v2" in out and "twinops.dynamic_resize(input, size_tensor, ...)" in out


def test_ops_json_is_the_same_registry(capsys):
    import json

    from twinops import opdef

    assert entry.main(["ops", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in doc] == list(opdef.registered())
    dyn = next(d for d in doc if d["name"] == "dynamic_resize")
    assert dyn["inputs"] == ["input", "size_tensor"] and dyn["onnx"] == {
        "op_type": "DynamicTRTResize", "domain": "twinops", "attributes": {"align_corners": "INT"}}
    assert dyn["torch_ops"] == ["twinops::dynamic_resize", "twinops::resize_backward"]
    interp = next(d for d in doc if d["name"] == "interpolate")
    bicubic = next(p for p in interp["plugins"] if p["name"] == "TRTBicubicInterpolate")
    assert bicubic["fields"] == ["scale_factor", "align_corners"] and bicubic["versions"] == {"1": "v3", "legacy": "v2"}
    assert interp["dtypes"] == ["float32", "float64", "float16", "bfloat16"]  # the API's
    assert interp["tensorrt_dtypes"] == ["float32", "float16", "bfloat16"]
    assert interp["check_dtypes"] == ["float32", "float16", "bfloat16", "float64"]  # twinops check's default


def test_ops_bad_option_exits_2_with_one_line():
    r = subprocess.run([sys.executable, "-m", "twinops", "ops", "--frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == "python -m twinops ops: error: unrecognized arguments: --frobnicate"


@pytest.mark.parametrize("command", [
    ["twinops", "ops", "--json"],
    ["twinops", "ops"],
    ["twinops", "table", "--devices", "cpu", "--dtypes", "float32"],
    ["twinops", "regress", "--device", "cpu", "--ops", "grid_sample"],
    ["twinops", "check", "--ops", "grid_sample", "--examples", "1", "--dtypes", "float32", "--no-progress"],
    ["twinops.bench", "--help"],
], ids=lambda c: " ".join(c[:2]))
def test_a_closed_output_pipe_ends_quietly(command, tmp_path):
    """`python -m twinops ops --json | head`: the reader is gone before the command writes. The
    command ends without a traceback, as `git log | head` does (SIGPIPE's status, 141); argparse's
    --help swallows the error itself (status 0)."""
    from twinops._cli import EXIT_CLOSED_PIPE

    if command[1] == "check":
        command = command + ["--out", str(tmp_path)]
    p = subprocess.Popen([sys.executable, "-m", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()
    err = p.stderr.read()
    rc = p.wait()
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err, err
    assert rc == (0 if "--help" in command else EXIT_CLOSED_PIPE), err


def test_the_main_job_prints_no_warnings(tmp_path):
    """`python -m twinops check` on a clean run: its table and summary, nothing else (the TorchScript
    exporter's "shape inference ... is missing" warnings once filled the screen above the table)."""
    r = subprocess.run([sys.executable, "-m", "twinops", "check", "--examples", "3", "--no-progress", "--out",
                        str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr == "", r.stderr
    assert "warning" not in r.stdout.lower(), r.stdout
    assert " 0 failed" in r.stdout
