"""CPU-side tests of ``python -m twinops.bench`` (the benchmark itself needs a GPU).

They cover the CLI contract (help, exit status 2 without CUDA, op selection), the HBM-floor
arithmetic, the table/markdown/JSON formatting, and -- on a CPU device, where the bench
times with perf_counter -- that the parity guard passes the real kernels and flags a wrong
one: resize's bench (``twinops.library.resize.bench``) first, then the generic harness with a toy
two-input op (``a * b`` against ``torch.mul``).
"""
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Tuple

import pytest
import torch

from twinops.bench import cli, harness, report, timing
from twinops.library.resize import bench as rb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_cli(*args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "twinops.bench", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


def _row(mode="bicubic", dtype="float32", shape=(1, 3, 1080, 1920), scale=2.0, direction="forward",
         torch_ms=0.5, twinops_ms=0.25, status=harness.STATUS_OK, bandwidth=4e12, copy_ms=0.05):
    case = rb.Case(mode, dtype, shape, scale, direction)
    nbytes = case.nbytes()
    return harness.Row(case, nbytes, timing.floor_ms(nbytes, bandwidth), torch_ms, twinops_ms, status,
                       copy_ms=copy_ms)


META = {
    "gpu": "Test GPU",
    "torch": "9.9.9",
    "cuda": "13.0",
    "twinops": "0.1.0",
    "date": "2026-01-01 00:00 UTC",
    "copy_bandwidth_tbps": 4.0,
    "warmup": 20,
    "reps": 100,
    "l2_flush": True,
}


# --- CLI -------------------------------------------------------------------------------

def test_help_works():
    res = _run_cli("resize", "--help")  # an op's own options are listed when it runs alone
    assert res.returncode == 0, res.stderr
    for opt in ("--shapes", "--modes", "--dtypes", "--quick", "--json", "--markdown", "--no-backward"):
        assert opt in res.stdout


def test_no_cuda_subprocess_exits_2_with_message(tmp_path):
    out = tmp_path / "rows.json"
    res = _run_cli("--quick", "--json", str(out), env_extra={"CUDA_VISIBLE_DEVICES": ""})
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "no CUDA GPU" in lines[0], res.stderr
    assert res.stdout == ""
    assert not out.exists()  # nothing timed, nothing written


def test_no_cuda_in_process_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cli.main(["--quick"]) == cli.EXIT_NO_CUDA == 2
    err = capsys.readouterr().err
    assert "no CUDA GPU" in err and err.count("\n") == 1


def test_no_cuda_kernels_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cli, "has_cuda_kernels", lambda: False)
    monkeypatch.setattr(cli, "run_benchmark", lambda *a, **k: pytest.fail("must not time anything"))
    assert cli.main([]) == 2
    assert "without its CUDA kernels" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--shapes", "1x2x3"], ["--modes", "nearest-antialias"], ["--dtypes", "int8"],
                                  ["--scales", "0"]])
def test_bad_options_are_usage_errors(args, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_options_build_config():
    p = cli.build_parser([rb.BENCH])
    cfg = cli.config_from_args(rb.BENCH, p.parse_args(["--shapes", "2x3x4x5,6x7x8x9", "--modes", "bilinear",
                                               "bicubic-antialias", "--dtypes", "float16", "--no-backward"]))
    assert cfg.shapes == [(2, 3, 4, 5), (6, 7, 8, 9)]
    assert cfg.modes == ["bilinear", "bicubic-antialias"] and cfg.dtypes == ["float16"] and not cfg.backward
    quick = cli.config_from_args(rb.BENCH, p.parse_args(["--quick", "--shapes", "2x3x4x5", "6x7x8x9"]))
    assert quick.shapes == [(2, 3, 4, 5)] and quick.reps <= 10
    default = cli.config_from_args(rb.BENCH, p.parse_args([]))
    assert list(default.shapes) == [(8, 64, 256, 256), (1, 3, 1080, 1920)]
    assert list(default.modes) == ["bicubic", "bilinear", "nearest", "bicubic-antialias"]
    assert list(default.dtypes) == ["float32", "float16", "bfloat16"] and list(default.scales) == [2.0, 0.5]
    cases = rb.build_cases(default)
    assert len(cases) == 2 * 4 * 3 * 2 * 2


def test_case_mode_split():
    c = rb.Case("bicubic-antialias", "bfloat16", (1, 3, 1080, 1920), 0.5, "backward")
    assert (c.interp_mode, c.antialias, c.torch_dtype) == ("bicubic", True, torch.bfloat16)
    assert c.output_shape == (1, 3, 540, 960)
    assert rb.Case("nearest", "float32", (1, 1, 5, 7), 0.5, "forward").output_shape == (1, 1, 2, 3)
    assert c.title() == "bicubic-antialias bfloat16 1x3x1080x1920 0.5x backward"


# --- floor arithmetic ------------------------------------------------------------------

def test_floor_known_case():
    # 1x3x1080x1920 fp32 upsampled 2x: 6,220,800 + 24,883,200 elements, 4 bytes each.
    nbytes = timing.tensor_bytes([(1, 3, 1080, 1920), (1, 3, 2160, 3840)], torch.float32)
    assert nbytes == 124_416_000 == rb.Case("bicubic", "float32", (1, 3, 1080, 1920), 2.0, "forward").nbytes()
    assert timing.floor_ms(nbytes, 4e12) == pytest.approx(0.031104)
    assert timing.pct_of_floor(0.031104, 0.062208) == pytest.approx(50.0)
    assert timing.pct_of_floor(1.0, None) is None
    with pytest.raises(ValueError):
        timing.floor_ms(1, 0)


def test_backward_bytes_equal_forward_bytes():
    fwd = _row(direction="forward", dtype="float16", scale=0.5)
    bwd = _row(direction="backward", dtype="float16", scale=0.5)
    # 6,220,800 input + 1,555,200 output elements at 2 bytes.
    assert fwd.nbytes == bwd.nbytes == (6_220_800 + 1_555_200) * 2


def test_row_derived_values():
    r = _row(torch_ms=0.5, twinops_ms=0.25)
    assert r.speedup == pytest.approx(2.0)
    assert r.twinops_pct == pytest.approx(r.floor_ms / 0.25 * 100)
    assert r.copy_pct == pytest.approx(r.floor_ms / 0.05 * 100)
    d = r.to_dict()
    assert d["speedup"] == pytest.approx(2.0) and d["shape"] == [1, 3, 1080, 1920]
    assert d["copy_ms"] == 0.05 and d["copy_pct_of_floor"] == pytest.approx(r.copy_pct)
    assert d["output_shape"] == [1, 3, 2160, 3840] and d["pass"] == "forward"
    json.dumps(d)
    assert _row(torch_ms=None).speedup is None
    assert _row(copy_ms=None).copy_pct is None


# --- formatting ------------------------------------------------------------------------

def test_format_rows_columns():
    rows = [_row(), _row(direction="backward", status=harness.STATUS_MISMATCH, twinops_ms=None)]
    cells = report.format_rows(rb.BENCH, rows)
    assert len(cells) == 2 and all(len(c) == len(rb.COLUMNS) for c in cells)
    by_col = [dict(zip(rb.COLUMNS, c)) for c in cells]
    assert by_col[0]["mode"] == "bicubic" and by_col[0]["dtype"] == "float32"
    assert by_col[0]["input"] == "1x3x1080x1920" and by_col[0]["scale"] == "2x" and by_col[0]["pass"] == "fwd"
    assert by_col[0]["floor ms"] == "0.0311" and by_col[0]["copy % floor"] == "62%"
    assert by_col[0]["F.interpolate ms"] == "0.5000" and by_col[0]["twinops ms"] == "0.2500"
    assert by_col[0]["F % floor"] == "6%" and by_col[0]["twinops % floor"] == "12%"
    assert by_col[0]["speed-up"] == "2.00x" and by_col[0]["check"] == "OK"
    assert by_col[1]["pass"] == "bwd" and by_col[1]["check"] == "MISMATCH"
    assert by_col[1]["twinops ms"] == "n/a" and by_col[1]["speed-up"] == "n/a"


def test_markdown_table():
    rows = [_row(), _row(mode="nearest", scale=0.5)]
    rows[1].detail = "something broke"
    md = report.to_markdown(rb.BENCH, META, rows)
    lines = md.splitlines()
    for needle in ("Test GPU", "torch 9.9.9", "CUDA 13.0", "2026-01-01", "4.00 TB/s"):
        assert any(needle in ln for ln in lines[:6]), needle
    table = [ln for ln in lines if ln.startswith("|")]
    assert len(table) == 2 + len(rows)
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header == list(rb.COLUMNS)
    assert set(table[1].strip("|").split("|")) <= {"---", "---:"}
    assert all(ln.count("|") == len(rb.COLUMNS) + 1 for ln in table)
    assert "| nearest | float32 | 1x3x1080x1920 | 0.5x | fwd |" in table[3]
    assert "something broke" in md


def test_text_and_rich_output(capsys):
    rows = [_row(), _row(mode="bicubic-antialias", dtype="bfloat16")]
    text = report.render_text(rb.BENCH, META, rows)
    assert "copy bandwidth (read + write): 4.00 TB/s" in text
    table_lines = text.splitlines()[len(report.header_lines(rb.BENCH, META)) + 1:]
    assert table_lines[0].split() == "mode dtype input scale pass floor ms copy % floor F.interpolate ms F % floor " \
                                     "twinops ms twinops % floor speed-up check".split()
    assert len(table_lines) == 2 + len(rows) + 1
    assert table_lines[-1].startswith("target: forwards at 1x3x1080x1920: 0 of 2 reach 60% of the floor; below: ")
    report.print_table(rb.BENCH, META, rows)  # rich when installed, else the text above; must not squeeze columns
    out = capsys.readouterr().out
    assert "Test GPU" in out and "bicubic-antialias" in out and "F.interpolate ms" in out
    assert "target: forwards at 1x3x1080x1920: 0 of 2 reach 60%" in out


def _row_at(pct, copy_pct=100.0, **kw):
    """A row whose twinops time is `pct` % of its floor and whose copy reaches `copy_pct` %."""
    r = _row(**kw)
    r.twinops_ms = r.floor_ms * 100.0 / pct
    r.copy_ms = r.floor_ms * 100.0 / copy_pct
    return r


def test_target_lines():
    big = (8, 64, 256, 256)
    rows = [
        _row_at(79, shape=big),
        _row_at(58, mode="bicubic-antialias", scale=0.5, shape=big, copy_pct=89),  # below, the copy is not
        _row_at(42, mode="bilinear", scale=0.5, copy_pct=51),  # 1080p: below, and so is the copy
        _row_at(61, mode="nearest"),
        _row_at(33, direction="backward", shape=big, torch_ms=1.0),
        _row_at(29, direction="backward", dtype="float16", shape=big, torch_ms=1.0),
        _row(direction="backward", status=harness.STATUS_ERROR, twinops_ms=None, shape=big),  # not timed: left out
    ]
    rows[4].torch_ms = rows[4].twinops_ms * 5.0  # bicubic float32 2x backward: 5x F.interpolate
    rows[5].torch_ms = rows[5].twinops_ms * 4.0  # float16: 4x, below its 10x target
    lines = rb.target_lines(rows)
    assert lines == [
        "forwards at 8x64x256x256: 1 of 2 reach 60% of the floor; below: bicubic-antialias float32 0.5x 58%",
        "backwards at 8x64x256x256: 1 of 2 reach 30% of the floor; below: bicubic float16 2x 29%",
        "forwards at 1x3x1080x1920: 1 of 2 reach 60% of the floor; below: bilinear float32 0.5x 42% (copy 51%)",
        "bicubic float32 2x backward at 8x64x256x256: 5.0x F.interpolate's speed (meets the 3x target)",
        "bicubic float16 2x backward at 8x64x256x256: 4.0x F.interpolate's speed (below the 10x target)",
    ]
    md = report.to_markdown(rb.BENCH, META, rows)
    assert "Targets:\n- forwards at 8x64x256x256: 1 of 2" in md
    assert rb.target_lines([]) == []


# --- the pipeline on a CPU device ------------------------------------------------------

def test_parity_tolerances():
    ref = torch.randn(2, 3, 8, 8)
    assert harness.check_parity(ref, ref.clone(), torch.float32)[0]
    assert not harness.check_parity(ref, ref * 1.01, torch.float32)[0]
    assert not harness.check_parity(ref, ref[:, :, :4], torch.float32)[0]
    nan = ref.clone()
    nan[0, 0, 0, 0] = float("nan")
    assert not harness.check_parity(ref, nan, torch.float32)[0]
    half = ref.half()
    assert harness.check_parity(half, half + 1e-3, torch.float16)[0]
    assert not harness.check_parity(half, half + 0.1, torch.float16)[0]


SMALL = dict(shapes=[(2, 3, 12, 10)], dtypes=["float32"], scales=[2.0, 0.5], warmup=1, reps=2, copy_bytes=1 << 20)


def test_cpu_pipeline_all_ok():
    cfg = rb.Config(modes=list(rb.DEFAULT_MODES), **SMALL)
    meta, rows = harness.run_benchmark(rb.BENCH, cfg, "cpu")
    assert meta["copy_bandwidth_tbps"] > 0
    assert len(rows) == 4 * 2 * 2
    for r in rows:
        assert r.status == harness.STATUS_OK, (r.case, r.detail)
        assert r.torch_ms > 0 and r.twinops_ms > 0 and r.max_abs_err <= r.allowed_err
        assert math.isfinite(r.speedup) and r.copy_ms > 0
    # One copy per byte count: forward and backward of a scale move the same bytes, 2x and 0.5x do not.
    by_bytes = {}
    for r in rows:
        by_bytes.setdefault(r.nbytes, set()).add(r.copy_ms)
    assert len(by_bytes) == 2 and all(len(v) == 1 for v in by_bytes.values())


def test_copy_ms_times_a_copy_of_the_bytes(monkeypatch):
    # copy_ms copies nbytes // 2 bytes (read + write = nbytes) through the case timer.
    seen = []

    class Timer:
        def median_ms(self, fn):
            fn()
            seen.append(fn)
            return 0.125

    copies = []
    real_copy = torch.Tensor.copy_
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, src: copies.append((self.numel(), src.min().item()))
                        or real_copy(self, src))
    assert timing.copy_ms(torch.device("cpu"), Timer(), 1000) == 0.125
    assert len(seen) == 1 and copies == [(500, copies[0][1])] and copies[0][1] > 0  # random bytes, no zeros


def test_wrong_forward_kernel_is_flagged(monkeypatch):
    right = rb._twinops_forward
    monkeypatch.setattr(rb, "_twinops_forward", lambda x, case: right(x, case) * 1.01)
    cfg = rb.Config(modes=["bilinear"], backward=False, **SMALL)
    _, rows = harness.run_benchmark(rb.BENCH, cfg, "cpu")
    assert [r.status for r in rows] == [harness.STATUS_MISMATCH] * 2
    assert all("max abs err" in r.detail and r.twinops_ms is not None for r in rows)


def test_backward_op_must_be_the_autograd_one(monkeypatch):
    # Timing an op other than the one autograd runs must not pass silently.
    def fake_op():
        real = torch.ops.twinops.resize_backward
        return lambda g, shape, *args: real(g, shape, *args) * 2
    monkeypatch.setattr(rb, "_twinops_backward_op", fake_op)
    cfg = rb.Config(modes=["bicubic"], **SMALL)
    _, rows = harness.run_benchmark(rb.BENCH, cfg, "cpu")
    bwd = [r for r in rows if r.case.direction == "backward"]
    assert bwd and all(r.status == harness.STATUS_MISMATCH for r in bwd)
    assert all("differs from the timed resize_backward" in r.detail for r in bwd)
    assert all(r.status == harness.STATUS_OK for r in rows if r.case.direction == "forward")


def test_autograd_calls_resize_backward():
    x = torch.randn(1, 2, 6, 6, requires_grad=True)
    out = rb._twinops_forward(x, rb.Case("bicubic", "float32", (1, 2, 6, 6), 2.0, "backward"))
    names = harness.ops_called(lambda: torch.autograd.grad(out, x, torch.randn_like(out)))
    assert "twinops::resize_backward" in names


def test_twinops_error_is_reported_not_raised(monkeypatch):
    def boom(x, case):
        raise RuntimeError("kernel exploded\nsecond line")
    monkeypatch.setattr(rb, "_twinops_forward", boom)
    cfg = rb.Config(modes=["nearest"], backward=False, **SMALL)
    _, rows = harness.run_benchmark(rb.BENCH, cfg, "cpu")
    assert all(r.status == harness.STATUS_ERROR and "kernel exploded" in r.detail for r in rows)
    assert all("second line" not in r.detail for r in rows)


def _l2_flush_tool():
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), os.pardir, "tools", "l2_flush.py")
    spec = importlib.util.spec_from_file_location("l2_flush", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_l2_flush_tool_needs_cuda(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _l2_flush_tool().main([]) == 2
    assert "needs a CUDA device" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [(["--reps", "0"], "--reps"), (["--mb", "0"], "--mb")])
def test_l2_flush_tool_rejects_bad_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        _l2_flush_tool().main(args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_timer_flush_reads_its_buffer_unless_told_to_write():
    # The benchmark's flush must not write (dirty L2 lines would be written back inside the
    # timed call); the write flush stays available for tools/l2_flush.py's comparison.
    calls = []
    timer = timing.Timer(torch.device("cpu"), 0, 1)
    timer.flush_buf = type("Buf", (), {"amax": lambda self: calls.append("read"),
                                       "zero_": lambda self: calls.append("write")})()
    timer._prepare()
    timer.flush_write = True
    timer._prepare()
    assert calls == ["read", "write"]


@pytest.mark.cuda
def test_l2_flush_tool_times_every_size_three_ways(capsys):
    assert _l2_flush_tool().main(["--mb", "16", "64", "--reps", "5"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("copy bandwidth")
    assert len(lines) == 3
    for line in lines[1:]:
        assert all(k in line for k in ("write flush", "read flush", "no flush"))


# --- the generic harness with a toy two-input op: a * b against torch.mul ---------------

@dataclass(frozen=True)
class MulCase(harness.BenchCase):
    """out = a * b: two inputs, both differentiable (grad_a = g * b, grad_b = g * a)."""

    dtype: str = "float32"
    direction: str = "forward"
    shape: Tuple[int, ...] = (3, 5)

    differentiable = (0, 1)

    def labels(self):
        return (self.dtype, report.fmt_shape(self.shape))

    def make_inputs(self, device, generator):
        return tuple(torch.randn(self.shape, generator=generator, device=device, dtype=self.torch_dtype)
                     for _ in range(2))

    def baseline(self, a, b):
        return torch.mul(a, b)

    def candidate(self, a, b):
        return a * b

    def nbytes(self):
        return timing.tensor_bytes([self.shape] * 3, self.torch_dtype)

    def output_shapes(self):
        return (self.shape,)


class WrongGradB(MulCase):
    def candidate(self, a, b):  # right values, grad_b off by 0.5 * g
        return a * b + (b - b.detach()) * 0.5


class DirectBackward(MulCase):
    backward_op = "aten::mul.Tensor"

    def candidate_backward(self, inputs, grad_outputs):
        (a, b), (g,) = inputs, grad_outputs
        return lambda: (g * b, g * a)


class WrongDirectBackward(DirectBackward):
    def candidate_backward(self, inputs, grad_outputs):
        (a, b), (g,) = inputs, grad_outputs
        return lambda: (g * b, 2 * g * a)


class NotTheAutogradOp(DirectBackward):
    backward_op = "twinops::mul_backward"


class NoBaseline(MulCase):
    def baseline(self, a, b):
        raise NotImplementedError("no such kernel\nmore")


class Broken(MulCase):
    def candidate(self, a, b):
        raise RuntimeError("candidate exploded")


def toy_bench(case_type=MulCase, name="mul"):
    return harness.OpBench(
        name=name, summary="a * b against torch.mul", baseline_name="torch.mul", baseline_short="torch",
        candidate_name="a * b", columns=("dtype", "shape"),
        build_cases=lambda cfg: [case_type(d, p) for d in cfg.dtypes
                                 for p in (harness.DIRECTIONS if cfg.backward else ("forward",))])


TOY_CFG = harness.Config(dtypes=["float32", "bfloat16"], warmup=1, reps=3, copy_bytes=1 << 16)
CPU = torch.device("cpu")


def _toy_row(case):
    return harness.run_case(toy_bench(type(case)), case, CPU, timing.Timer(CPU, 0, 2), 1e9)


def test_toy_op_runs_forward_and_backward_on_cpu():
    meta, rows = harness.run_benchmark(toy_bench(), TOY_CFG, "cpu")
    assert meta["gpu"] == "CPU (cpu)" and meta["copy_bandwidth_tbps"] > 0 and not meta["l2_flush"]
    assert [(r.case.dtype, r.case.direction) for r in rows] == [
        ("float32", "forward"), ("float32", "backward"), ("bfloat16", "forward"), ("bfloat16", "backward")]
    for r in rows:
        assert r.status == harness.STATUS_OK and not r.detail, r.detail
        assert r.torch_ms > 0 and r.twinops_ms > 0 and r.copy_ms > 0 and r.max_abs_err <= r.allowed_err
        assert r.nbytes == 3 * 15 * r.case.torch_dtype.itemsize
        assert r.floor_ms == pytest.approx(r.nbytes / (meta["copy_bandwidth_tbps"] * 1e12) * 1e3)
    assert rows[0].to_dict()["shape"] == [3, 5] and rows[0].to_dict()["pass"] == "forward"
    # bf16 backward against the float32 reference: rounding shows, within the bf16 tolerance.
    assert 0 < rows[3].max_abs_err <= rows[3].allowed_err
    assert rows[1].max_abs_err == 0.0


def test_toy_gradient_of_every_input_is_checked():
    assert _toy_row(WrongGradB(direction="forward")).status == harness.STATUS_OK
    r = _toy_row(WrongGradB(direction="backward"))
    assert r.status == harness.STATUS_MISMATCH and r.twinops_ms is not None
    assert "twinops vs torch.mul grad: max abs err" in r.detail


def test_toy_direct_backward_is_checked_against_autograd():
    ok = _toy_row(DirectBackward(direction="backward"))
    assert ok.status == harness.STATUS_OK and ok.max_abs_err == 0.0, ok.detail
    wrong = _toy_row(WrongDirectBackward(direction="backward"))
    assert wrong.status == harness.STATUS_MISMATCH
    assert "autograd gradient of a * b differs from the timed mul.Tensor call" in wrong.detail
    assert "twinops vs torch.mul grad" in wrong.detail  # the timed (direct) gradients are the ones checked
    other = _toy_row(NotTheAutogradOp(direction="backward"))
    assert other.status == harness.STATUS_MISMATCH
    assert "autograd of a * b does not call twinops::mul_backward (calls [" in other.detail


def test_toy_failures_are_reported_not_raised():
    for direction in harness.DIRECTIONS:
        r = _toy_row(NoBaseline(direction=direction))
        assert r.status == harness.STATUS_NO_REF and r.torch_ms is None and r.twinops_ms is not None
        assert "torch.mul" in r.detail and "NotImplementedError: no such kernel" in r.detail and "more" not in r.detail
        r = _toy_row(Broken(direction=direction))
        assert r.status == harness.STATUS_ERROR and r.twinops_ms is None and "candidate exploded" in r.detail
        assert r.detail.startswith("twinops: " if direction == "forward" else "twinops backward: ")
    with pytest.raises(ValueError, match="forward or backward"):
        _toy_row(MulCase(direction="sideways"))


def test_parity_of_several_outputs():
    a, b = torch.randn(4), torch.randn(3) * 10
    assert harness.check_parity((a, b), [a.clone(), b.clone()], torch.float32)[0]
    ok, err, allowed = harness.check_parity((a, b), (a, b + 0.5), torch.float32)
    assert not ok and err == pytest.approx(0.5) and allowed == pytest.approx(1e-4 * b.abs().max().item())
    assert not harness.check_parity((a, b), (a,), torch.float32)[0]
    assert harness.check_parity(a, a + 0.05, torch.float32, {torch.float32: 0.1})[0]


def test_toy_table_has_its_own_columns():
    op = toy_bench()
    assert op.table_columns == ("dtype", "shape", "pass", "floor ms", "copy % floor", "torch.mul ms",
                                "torch % floor", "twinops ms", "twinops % floor", "speed-up", "check")
    case = MulCase("float16", "backward")
    row = harness.Row(case, case.nbytes(), 0.001, 0.004, 0.002, copy_ms=0.001, detail="look here")
    assert report.format_rows(op, [row]) == [
        ["float16", "3x5", "bwd", "0.0010", "100%", "0.0040", "25%", "0.0020", "50%", "2.00x", "OK"]]
    md = report.to_markdown(op, META, [row])
    assert "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|" in md
    assert "speed-up = torch.mul / twinops" in md and "- float16 3x5 backward: look here" in md
    text = report.render_text(op, META, [row])
    assert text.splitlines()[7].split() == ["dtype", "shape", "pass", "floor", "ms", "copy", "%", "floor", "torch.mul",
                                           "ms", "torch", "%", "floor", "twinops", "ms", "twinops", "%", "floor",
                                           "speed-up", "check"]
    assert "target:" not in text  # the toy op has no targets


def test_registry_finds_resize():
    ops = cli.registered()
    assert ops["resize"] is rb.BENCH
    assert all(isinstance(b, harness.OpBench) for b in ops.values())


def test_parse_shape_takes_the_rank_from_its_dims():
    assert cli.parse_shape("2x5x7x2", "NxHxWx2") == (2, 5, 7, 2)
    with pytest.raises(Exception, match="a shape is NxHxWx2 with positive ints, got '2x5x7'"):
        cli.parse_shape("2x5x7", "NxHxWx2")
    assert cli.split(["a,b", "c"]) == ["a", "b", "c"] and cli.split(None) == []


@pytest.fixture
def two_toy_ops(monkeypatch):
    """`python -m twinops.bench` with the ops add and mul (toys) on a 'CUDA' that is the CPU."""
    ops = {"add": toy_bench(name="add"), "mul": toy_bench()}
    monkeypatch.setattr(cli, "registered", lambda: dict(ops))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cli, "has_cuda_kernels", lambda: True)
    real = cli.run_benchmark
    monkeypatch.setattr(cli, "run_benchmark", lambda op, cfg, device, *a: real(op, cfg, "cpu", *a))
    return ops


def test_cli_runs_the_named_op(two_toy_ops, tmp_path, capsys):
    js, md = tmp_path / "b.json", tmp_path / "b.md"
    assert cli.main(["mul", "--quick", "--dtypes", "float32", "--json", str(js), "--markdown", str(md)]) == 0
    out = capsys.readouterr().out
    assert "torch.mul ms" in out and "==" not in out
    rows = json.loads(js.read_text())["rows"]
    assert [(r["op"], r["pass"], r["status"]) for r in rows] == [("mul", "forward", "OK"), ("mul", "backward", "OK")]
    assert md.read_text().startswith("- GPU: CPU (cpu)")


def test_cli_runs_every_op_by_default(two_toy_ops, tmp_path, capsys):
    js, md = tmp_path / "b.json", tmp_path / "b.md"
    assert cli.main(["--quick", "--no-backward", "--json", str(js), "--markdown", str(md)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== add ==\n") and "\n== mul ==\n" in out
    assert [r["op"] for r in json.loads(js.read_text())["rows"]] == ["add"] * 3 + ["mul"] * 3
    assert md.read_text().startswith("## add\n\n- GPU") and "\n## mul\n\n- GPU" in md.read_text()


def test_cli_exit_1_when_an_op_mismatches(two_toy_ops, capsys):
    two_toy_ops["mul"] = toy_bench(WrongGradB)
    assert cli.main(["--quick", "--dtypes", "float32"]) == cli.EXIT_MISMATCH == 1
    err = capsys.readouterr().err
    assert "1 of 4 cases are MISMATCH or ERROR" in err


@pytest.mark.parametrize("args, message", [
    (["nope"], "unknown op 'nope' (ops with a bench: add, mul)"),
    (["--modes", "bicubic"], "unrecognized arguments: --modes"),  # resize's option, not these ops'
    (["mul", "--shapes", "1x2x3x4"], "unrecognized arguments: --shapes"),
    (["mul", "--dtypes", "int8"], "dtype must be one of float32, float16, bfloat16, got 'int8'"),
])
def test_cli_usage_errors_with_toy_ops(two_toy_ops, args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_cli_resize_named_accepts_its_options(capsys):
    assert "--shapes" in cli.build_parser([rb.BENCH], named=True).format_help()
    with pytest.raises(SystemExit) as exc:
        cli.main(["resize", "--help"])
    assert exc.value.code == 0 and "usage: python -m twinops.bench resize" in capsys.readouterr().out


@pytest.mark.cuda
def test_timer_and_toy_pipeline_on_cuda():
    dev = torch.device("cuda", torch.cuda.current_device())
    timer = timing.Timer(dev, 2, 5)
    assert timer.flush_buf is not None and timer.flush_buf.numel() * 4 == 256 << 20
    assert timer.median_ms(lambda: torch.cuda._sleep(1000)) > 0
    assert timing.measure_copy_bandwidth(dev, 64 << 20, 1, 3) > 1e9
    meta, rows = harness.run_benchmark(toy_bench(), TOY_CFG, "cuda")
    assert meta["l2_flush"] and all(r.status == harness.STATUS_OK and r.twinops_ms > 0 for r in rows)


def test_kernel_lines_split_the_time():
    from twinops.bench.kernels import kernel_lines
    lines = kernel_lines("nms 1000 1 float32 forward", [("reduce_kernel", 1.0, 30.0), ("mask_kernel", 1.0, 10.0)])
    assert lines[0] == "nms 1000 1 float32 forward: 40.0 us of device work per call"
    assert lines[1].split() == ["30.0", "us", "75.0%", "1x", "reduce_kernel"]
    assert lines[2].split()[2] == "25.0%"


def test_case_calls_run_each_direction_of_twinops_and_the_baseline():
    """--kernels profiles what the bench times: the forward, or the gradients (the direct backward
    where a case has one), for twinops and the baseline."""
    from twinops.bench.kernels import case_calls
    for cls in (MulCase, DirectBackward, WrongDirectBackward):
        inputs = MulCase().make_inputs("cpu", torch.Generator().manual_seed(0))
        a, b = inputs
        ours, theirs = case_calls(cls(direction="forward"), inputs)
        assert torch.equal(ours(), a * b) and torch.equal(theirs(), a * b)
        ours, theirs = case_calls(cls(direction="backward"), inputs)
        g = torch.randn(a.shape, generator=torch.Generator().manual_seed(1))
        want = (g * b, g * a)
        assert all(torch.equal(x, y) for x, y in zip(theirs(), want))
        assert all(torch.equal(x, y) for x, y in zip(theirs(), theirs()))  # the graph is kept
        assert all(torch.equal(x, y) for x, y in zip(ours(), want)) == (cls is not WrongDirectBackward)


def test_kernels_option_is_parsed_before_the_gpu_check(capsys):
    from twinops.bench import cli
    if torch.cuda.is_available():
        pytest.skip("this checks the CPU-only exit")
    assert cli.main(["nms", "--kernels", "--quick"]) == cli.EXIT_NO_CUDA
    assert "no CUDA GPU" in capsys.readouterr().err


@pytest.mark.cuda
def test_kernel_times_sees_the_kernels_of_a_call():
    from twinops.bench.kernels import kernel_times
    x = torch.rand(1 << 20, device="cuda")
    rows = kernel_times(lambda: (x * 2).sum(), reps=4)
    assert rows and all(us > 0 and calls >= 1 for _, calls, us in rows)
    assert rows == sorted(rows, key=lambda r: -r[2])
