"""`python -m twinops` (the README's main job) runs, reports and fails when it should."""
import subprocess
import sys

import pytest
import torch

import twinops.__main__ as main_job


def test_main_job_passes_on_cpu(capsys):
    assert main_job.main(["--devices", "cpu", "--dtypes", "float32"]) == 0
    out = capsys.readouterr().out
    assert "bicubic" in out and "9 passed, 0 failed" in out


def test_main_job_fails_on_a_wrong_kernel(monkeypatch, capsys):
    real = main_job.twinops.interpolate
    monkeypatch.setattr(main_job.twinops, "interpolate", lambda x, **kw: real(x, **kw) * (1 + 1e-3))
    assert main_job.main(["--devices", "cpu", "--dtypes", "float32"]) == 1
    assert "0 passed, 9 failed" in capsys.readouterr().out


def test_main_job_rejects_missing_device():
    if torch.cuda.is_available() and main_job.twinops.has_cuda_kernels():
        pytest.skip("CUDA is available here: there is no missing device to reject")
    r = subprocess.run([sys.executable, "-m", "twinops", "--devices", "cuda"], capture_output=True, text=True)
    assert r.returncode == 2 and "device 'cuda' is not available here" in r.stderr
