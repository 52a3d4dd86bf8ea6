"""twinops.testing: Polygraphy-style comparison, strategies, the pytest plugin, the docs' example suite."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given

from twinops.testing import Comparison, assert_parity, compare, nchw_shapes, random_input, report

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------
# compare / assert_parity
# ---------------------------------------------------------------------------------------

def test_elemwise_needs_both_abs_and_rel_past_tolerance():
    # Polygraphy: mismatch = abs > atol AND rel > rtol
    e = torch.tensor([100.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    a = torch.tensor([100.5, 1e-6, 1.0, 1.5], dtype=torch.float64)
    c = compare(a, e, atol=1e-3, rtol=1e-2)
    # 100.5: abs 0.5 > atol but rel 0.005 <= rtol; 1e-6 vs 0: rel inf but abs <= atol; 1.5: both past
    assert not c.passed and c.mismatches == 1 and c.worst_index == (3,)
    assert compare(a[:3], e[:3], atol=1e-3, rtol=1e-2).passed


def test_statistics_match_numpy():
    rng = np.random.default_rng(0)
    e = rng.normal(size=(2, 3, 5, 7)) + 3
    a = e + rng.normal(scale=1e-3, size=e.shape)
    c = compare(a, e, atol=1e-2, rtol=1e-2, quantile=0.9)
    ad = np.abs(a - e)
    rd = ad / np.abs(e)
    assert c.passed and c.numel == e.size and c.mismatches == 0 and c.nonfinite == 0
    np.testing.assert_allclose([c.max_abs, c.mean_abs, c.median_abs, c.p99_abs],
                               [ad.max(), ad.mean(), np.median(ad), np.quantile(ad, 0.9)], rtol=1e-12)
    np.testing.assert_allclose([c.max_rel, c.mean_rel, c.median_rel, c.p99_rel],
                               [rd.max(), rd.mean(), np.median(rd), np.quantile(rd, 0.9)], rtol=1e-12)


@pytest.mark.parametrize("stat,passes", [("elemwise", False), ("max", False), ("quantile", False),
                                         ("mean", True), ("median", True)])
def test_error_statistics(stat, passes):
    # 2 of 100 elements off by 1.0, the rest exact: only mean/median tolerate them at 0.1
    e = np.ones(100)
    a = e.copy()
    a[:2] += 1.0
    assert compare(a, e, atol=0.1, rtol=0.1, stat=stat, quantile=0.99).passed is passes


def test_nan_and_inf_validation():
    e = np.array([1.0, np.nan, np.inf, 2.0])
    assert compare(e.copy(), e, atol=0, rtol=0).passed  # same specials in the same places
    a = np.array([1.0, np.nan, np.inf, np.nan])
    c = compare(a, e, atol=1e9, rtol=1e9, stat="median")
    assert not c.passed and c.nonfinite == 1
    assert not compare(np.array([np.inf]), np.array([-np.inf]), atol=1e9, rtol=1e9).passed


def test_shape_mismatch_fails():
    c = compare(np.zeros((2, 3)), np.zeros((3, 2)), atol=1, rtol=1)
    assert not c.passed and "shape" in c.message


def test_assert_parity_report_is_readable():
    e = torch.zeros(1, 1, 2, 2)
    a = e.clone()
    a[0, 0, 1, 0] = 0.5
    with pytest.raises(AssertionError) as info:
        assert_parity(a, e, atol=1e-3, rtol=1e-3, what="my op")
    text = str(info.value)
    assert text.startswith("my op: FAILED") and "mismatches: 1/4" in text
    assert "worst element (0, 0, 1, 0): actual 0.5, expected 0" in text and "abs err: max 5.000e-01" in text
    assert isinstance(assert_parity(e, e, atol=0, rtol=0), Comparison)
    assert "PASSED" in report(compare(e, e, atol=0, rtol=0))


@pytest.mark.parametrize("kw,message", [(dict(atol=-1, rtol=0), "atol must be a finite number >= 0"),
                                        (dict(atol=0, rtol=float("nan")), "rtol must be a finite number >= 0"),
                                        (dict(atol=0, rtol=0, stat="p95"), "stat must be one of"),
                                        (dict(atol=0, rtol=0, quantile=2), "quantile must be in [0, 1]")])
def test_bad_tolerances(kw, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        assert_parity(np.zeros(2), np.zeros(2), **kw)


# ---------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------

@given(shape=nchw_shapes(max_n=3, max_c=4, max_hw=20, max_elements=500, min_hw=2))
def test_nchw_shapes_respect_bounds(shape):
    n, c, h, w = shape
    assert 1 <= n <= 3 and 1 <= c <= 4 and 2 <= h <= 20 and 2 <= w <= 20 and n * c * h * w <= 500


def test_random_input_is_seeded_and_device_independent():
    a, b = random_input((1, 2, 3, 4), torch.float16, seed=3), random_input((1, 2, 3, 4), torch.float16, seed=3)
    assert torch.equal(a, b) and not torch.equal(a, random_input((1, 2, 3, 4), torch.float16, seed=4))
    assert (a != 0).all()


# ---------------------------------------------------------------------------------------
# pytest plugin and the user suite of docs/toolkit.md (run in a fresh pytest)
# ---------------------------------------------------------------------------------------

def _pytest(tmp_path, files, *args, env=None):
    """A plain pytest run in tmp_path: the outer run's PYTEST_ADDOPTS (CI's -n) stays out of it."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    base = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
                          cwd=tmp_path, capture_output=True, text=True, env={**base, **(env or {})})


CONFTEST = 'pytest_plugins = ["twinops.testing.pytest_plugin"]\n'


def test_plugin_markers_skip_with_reasons(tmp_path):
    from twinops.testing import pytest_plugin as plugin

    test = textwrap.dedent("""
        import pytest
        from hypothesis import settings

        @pytest.mark.cuda
        def test_cuda(): import torch; assert torch.cuda.is_available()
        @pytest.mark.trt_headers
        def test_headers(): pass
        @pytest.mark.tensorrt
        def test_trt(): import tensorrt
        @pytest.mark.slow
        def test_slow(): pass
        def test_device(device): assert device in ("cpu", "cuda")
        def test_profile(): print("PROFILE", settings().max_examples)
        """)
    r = _pytest(tmp_path, {"conftest.py": CONFTEST, "test_x.py": test}, "-s")
    assert r.returncode == 0, r.stdout + r.stderr
    for reason in (plugin.cuda_reason(), plugin.trt_headers_reason(), plugin.tensorrt_reason(), plugin.MARKERS["slow"]):
        if reason:
            assert reason in r.stdout
    assert "PROFILE 25" in r.stdout  # default profile: ci
    r = _pytest(tmp_path, {}, "-s", "--run-slow", "-k", "slow or profile", env={"TWINOPS_HYPOTHESIS_PROFILE": "dev"})
    assert "PROFILE 10" in r.stdout and "2 passed" in r.stdout
    r = subprocess.run([sys.executable, "-c", "import twinops.testing.pytest_plugin"], capture_output=True, text=True,
                       env={**os.environ, "TWINOPS_HYPOTHESIS_PROFILE": "nope"})
    assert r.returncode != 0 and "TWINOPS_HYPOTHESIS_PROFILE must be ci, dev or thorough" in r.stderr


def _docs_suite() -> str:
    text = open(os.path.join(REPO, "docs", "toolkit.md")).read()
    m = re.search(r"<!-- twinops-testing-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/toolkit.md lost its twinops.testing example block"
    return m.group(1)


def test_docs_user_suite_runs_and_catches_a_bug(tmp_path):
    code = _docs_suite()
    assert len(code.splitlines()) < 40
    dev = {"TWINOPS_HYPOTHESIS_PROFILE": "dev"}  # 10 examples: the block is what is under test, not the op
    r = _pytest(tmp_path, {"conftest.py": CONFTEST, "test_my_op.py": code}, env=dev)
    assert r.returncode == 0 and " passed" in r.stdout, r.stdout + r.stderr
    broken = code.replace(") / 4", ") / 3.99")
    assert broken != code
    r = _pytest(tmp_path, {"test_my_op.py": broken}, "-x", "-k", "float32 and cpu", env=dev)
    assert r.returncode == 1 and "FAILED" in r.stdout and "mismatches:" in r.stdout
