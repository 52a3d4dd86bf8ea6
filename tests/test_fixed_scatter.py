"""The fixed-point scatter (csrc/kernels/fixed_scatter.cuh), a deterministic scatter-add for the
gradients of ops that sample their input: tests/fixed_scatter_check.cu, built with nvcc, checks
the scale, the rounding, the non-finite flags and the error bound on adversarial contributions
(dynamic range 1e-30 .. 1e30 in one plane, one huge value, 100000 contributions to one element)
on the host, and on a GPU that the atomics give the host emulation's accumulators bit for bit
in three launch orders and configurations. Needs nvcc; the GPU part a CUDA device."""
import os
import subprocess

import pytest
import torch

import build_tools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    nvcc = build_tools.nvcc()
    if nvcc is None:
        pytest.skip("needs nvcc (set CUDA_HOME)")
    exe = str(tmp_path_factory.mktemp("fixed_scatter") / "fixed_scatter_check")
    build = subprocess.run([nvcc, "-std=c++17", "-O2", "-arch=sm_90", "-I", os.path.join(ROOT, "csrc"),
                            os.path.join(ROOT, "tests", "fixed_scatter_check.cu"), "-o", exe],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    lines = run.stdout.splitlines()
    return run.returncode, lines, run.stdout + run.stderr


def test_host_checks(results):
    rc, lines, out = results
    assert not [ln for ln in lines if ln.startswith("FAIL")], out
    ok = [ln for ln in lines if ln.startswith("ok ")]
    assert len([ln for ln in ok if "error bound" in ln]) == 5, out
    assert any("frac_bits" in ln for ln in ok) and any("fixed_value" in ln for ln in ok), out


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the atomics' checks need a CUDA GPU")
def test_gpu_atomics_are_bitwise_the_host_emulation(results):
    rc, lines, out = results
    gpu = [ln for ln in lines if ln.startswith(("ok gpu", "FAIL gpu"))]
    assert rc == 0 and len(gpu) == 5 and all(ln.startswith("ok") for ln in gpu), out
