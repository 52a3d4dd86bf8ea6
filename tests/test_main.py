"""`python -m twinops` dispatches to check (the README's main job), regress and table."""
import subprocess
import sys

import pytest
import torch

import twinops.__main__ as entry
import twinops.table as table


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
