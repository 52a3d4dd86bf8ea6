"""CPU-side tests of ``python -m twinops.bench`` (the benchmark itself needs a GPU).

They cover the CLI contract (help, exit status 2 without CUDA, op selection), the HBM-floor
arithmetic, the table/markdown/JSON formatting, and -- on a CPU device, where the bench
times with perf_counter -- that the parity guard passes the real kernels and flags a wrong
one: resize's bench (``twinops.bench.resize``) first, then the generic harness with a toy
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

from twinops.bench import cli, harness, report
from twinops.bench import resize as rb

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
    return harness.Row(case, nbytes, harness.floor_ms(nbytes, bandwidth), torch_ms, twinops_ms, status,
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
    res = _run_cli("--help")
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
    nbytes = harness.tensor_bytes([(1, 3, 1080, 1920), (1, 3, 2160, 3840)], torch.float32)
    assert nbytes == 124_416_000 == rb.Case("bicubic", "float32", (1, 3, 1080, 1920), 2.0, "forward").nbytes()
    assert harness.floor_ms(nbytes, 4e12) == pytest.approx(0.031104)
    assert harness.pct_of_floor(0.031104, 0.062208) == pytest.approx(50.0)
    assert harness.pct_of_floor(1.0, None) is None
    with pytest.raises(ValueError):
        harness.floor_ms(1, 0)


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
    assert harness.copy_ms(torch.device("cpu"), Timer(), 1000) == 0.125
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
    timer = harness.Timer(torch.device("cpu"), 0, 1)
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
