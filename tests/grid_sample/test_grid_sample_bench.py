"""CPU-side tests of grid_sample's bench (``python -m twinops.bench grid_sample``; timing needs a
GPU): the case selection, bytes, options, target lines, and -- on a CPU device, where the harness
times with perf_counter -- that every case builds and runs on tiny sizes with its parity checks
passing, and that a wrong forward or backward kernel is flagged."""
import argparse
import math

import pytest
import torch

import twinops
from twinops.bench import cli, harness, report, timing
from twinops.library.grid_sample import bench as gb

needs_op = pytest.mark.skipif(not hasattr(twinops, "grid_sample") or not hasattr(torch.ops.twinops, "grid_sample"),
                              reason="twinops.grid_sample is not in this build")
TINY = dict(shapes=[(2, 3, 6, 7), (1, 2, 3, 4, 5)], dtypes=["float32"], warmup=1, reps=2, copy_bytes=1 << 20)


def test_registered_with_the_cli():
    assert cli.registered()["grid_sample"] is gb.BENCH
    assert gb.BENCH.table_columns[:5] == ("mode", "padding", "grid", "dtype", "input")


def test_default_selection():
    cases = gb.build_cases(gb.Config())
    assert len(cases) == 72
    assert not [c for c in cases if c.mode == "bicubic" and len(c.shape) == 5]
    # every dtype only for smooth bilinear rows; random grids with the first padding only
    assert {c.dtype for c in cases if not (c.grid == "smooth" and c.mode == "bilinear")} == {"float32"}
    assert {c.dtype for c in cases if c.grid == "smooth" and c.mode == "bilinear"} == {"float32", "float16",
                                                                                      "bfloat16"}
    assert {c.padding for c in cases if c.grid == "random"} == {"zeros"}
    assert {c.shape for c in cases} == set(gb.DEFAULT_SHAPES)
    assert [c.direction for c in cases[:2]] == ["forward", "backward"]
    every = gb.build_cases(gb.Config(all=True, backward=False))
    assert len(every) == 2 * (3 * 2 * 3 + 3 * 2 * 3 + 2 * 2 * 3)  # 4-D shapes: 3 modes, 5-D: 2


def test_bytes_and_shapes():
    c = gb.Case("bilinear", "zeros", "smooth", "float32", (8, 64, 128, 128), "forward")
    assert c.grid_shape == (8, 128, 128, 2) and c.output_shape == (8, 64, 128, 128)
    assert c.nbytes() == (2 * 8 * 64 * 128 * 128 + 8 * 128 * 128 * 2) * 4
    b = gb.Case("bilinear", "zeros", "smooth", "bfloat16", (2, 32, 32, 64, 64), "backward")
    assert b.grid_shape == (2, 32, 64, 64, 3) and b.output_shape == (2, 32, 32, 64, 64)
    assert b.nbytes() == (3 * 2 * 32 * 32 * 64 * 64 + 2 * 2 * 32 * 64 * 64 * 3) * 2
    assert c.title() == "bilinear zeros smooth float32 8x64x128x128 forward"
    assert c.to_dict()["grid_shape"] == [8, 128, 128, 2]


def test_grids():
    g = torch.Generator().manual_seed(0)
    smooth = gb.make_grid((2, 16, 20, 2), "smooth", g, "cpu")
    assert smooth.shape == (2, 16, 20, 2) and smooth.dtype == torch.float32
    # smooth: neighbours are close (an affine map plus a small flow), some points fall outside
    step = (smooth[:, :, 1:] - smooth[:, :, :-1]).abs().max().item()
    assert step < 0.2 and smooth.abs().max() > 1.0
    rand = gb.make_grid((1, 3, 4, 5, 3), "random", g, "cpu")
    assert rand.shape == (1, 3, 4, 5, 3) and -1.1 <= rand.min() and rand.max() <= 1.1
    assert (rand[:, :, :, 1:] - rand[:, :, :, :-1]).abs().max() > 0.5
    with pytest.raises(ValueError, match="smooth or random"):
        gb.make_grid((1, 2, 2, 2), "wavy", g, "cpu")


def test_options():
    p = cli.build_parser([gb.BENCH], named=True)
    cfg = cli.config_from_args(gb.BENCH, p.parse_args(
        ["--shapes", "2x3x4x5,1x2x3x4x5", "--modes", "nearest", "--paddings", "reflection", "--grids", "random",
         "--dtypes", "bfloat16", "--all", "--no-backward"]))
    assert cfg.shapes == [(2, 3, 4, 5), (1, 2, 3, 4, 5)] and cfg.modes == ["nearest"]
    assert cfg.paddings == ["reflection"] and cfg.grids == ["random"] and cfg.all and not cfg.backward
    assert len(gb.build_cases(cfg)) == 2
    quick = cli.config_from_args(gb.BENCH, p.parse_args(["--quick"]))
    assert quick.shapes == [gb.DEFAULT_SHAPES[0]]
    for bad in (["--modes", "linear"], ["--paddings", "wrap"], ["--grids", "wavy"], ["--shapes", "1x2x3"]):
        with pytest.raises(argparse.ArgumentTypeError):
            cli.config_from_args(gb.BENCH, p.parse_args(bad))


@needs_op
def test_channels_last_option():
    p = cli.build_parser([gb.BENCH], named=True)
    cfg = cli.config_from_args(gb.BENCH, p.parse_args(["--channels-last", "--shapes", "1x8x5x6,1x4x3x5x6",
                                                       "--modes", "bilinear", "--grids", "smooth", "--paddings",
                                                       "zeros", "--dtypes", "float32"]))
    cases = gb.build_cases(cfg)
    assert cases and all(c.channels_last for c in cases)
    assert cases[0].labels()[-1] == "1x8x5x6 channels_last" and cases[0].to_dict()["channels_last"]
    g = torch.Generator().manual_seed(0)
    x4, _ = cases[0].make_inputs("cpu", g)
    x5, _ = cases[-1].make_inputs("cpu", g)
    assert x4.is_contiguous(memory_format=torch.channels_last) and not x4.is_contiguous()
    assert x5.is_contiguous(memory_format=torch.channels_last_3d) and not x5.is_contiguous()
    _, rows = harness.run_benchmark(gb.BENCH, gb.Config(**{**cfg.__dict__, "warmup": 1, "reps": 2,
                                                           "copy_bytes": 1 << 20}), "cpu")
    assert rows and all(r.status == harness.STATUS_OK for r in rows), [r.detail for r in rows]
    assert not gb.build_cases(gb.Config(shapes=[(1, 8, 5, 6)]))[0].channels_last


def _row(mode="bilinear", dtype="float32", direction="forward", torch_ms=0.12, twinops_ms=0.03, grid="smooth",
         bandwidth=4e12, copy_ms=0.02):
    case = gb.Case(mode, "zeros", grid, dtype, (8, 64, 128, 128), direction)
    nbytes = case.nbytes()
    return harness.Row(case, nbytes, timing.floor_ms(nbytes, bandwidth), torch_ms, twinops_ms, copy_ms=copy_ms)


def test_target_lines():
    rows = [_row(), _row(mode="bicubic", twinops_ms=0.1, torch_ms=0.12),  # 4x (needs 1.5x), 1.2x (needs 1x)
            _row(mode="bilinear", dtype="float16", twinops_ms=0.1, torch_ms=0.12),  # 1.2x, needs 1.5x
            _row(direction="backward", torch_ms=0.46, twinops_ms=0.4),  # 1.15x, needs 1x
            _row(direction="backward", dtype="float16", torch_ms=0.9, twinops_ms=0.5),  # 1.8x, needs 2x
            _row(grid="random", twinops_ms=0.13)]  # 0.92x: random grids must not be slower either
    lines = gb.target_lines(rows)
    assert len(lines) == 2
    assert lines[0].startswith("forwards at 8x64x128x128: 2 of 4 reach their target")
    assert "bilinear zeros smooth float16 1.20x (needs 1.5x)" in lines[0]
    assert "bilinear zeros random float32 0.92x (needs 1x)" in lines[0] and "bicubic" not in lines[0]
    assert lines[1].startswith("backwards at 8x64x128x128: 1 of 2 reach their target")
    assert "float16 1.80x (needs 2x)" in lines[1]
    few = gb.Case("bilinear", "zeros", "smooth", "float32", (1, 3, 1080, 1920), "backward")
    assert gb.target_speedup(few) == 0.7
    md = report.to_markdown(gb.BENCH, {"gpu": "G", "torch": "t", "cuda": "c", "twinops": "v", "date": "d",
                                       "copy_bandwidth_tbps": 4.0, "warmup": 1, "reps": 1, "l2_flush": True}, rows)
    assert "| mode | padding | grid | dtype | input |" in md


@needs_op
def test_cpu_pipeline_all_ok():
    cfg = gb.Config(all=True, paddings=list(gb.PADDINGS), **TINY)
    meta, rows = harness.run_benchmark(gb.BENCH, cfg, "cpu")
    # 4-D: 2 grids x 3 modes x 3 paddings; 5-D: 2 x 2 x 3; two passes each
    assert len(rows) == 2 * (18 + 12)
    for r in rows:
        assert r.status == harness.STATUS_OK, (r.case.title(), r.detail)
        assert r.torch_ms > 0 and r.twinops_ms > 0 and r.max_abs_err <= r.allowed_err
        assert math.isfinite(r.speedup) and r.copy_ms > 0


@needs_op
def test_half_types_run_on_cpu():
    # float16 only: the same-dtype parity check meets ATen's own CPU bfloat16 rounding, which
    # differs between releases (with torch 2.11, ATen's CPU bfloat16 forward was 0.050 from
    # twinops' where the tolerance allows 0.042; with 2.14 it passes). The CUDA rows check bfloat16.
    cfg = gb.Config(shapes=[(1, 2, 5, 6)], modes=["bilinear"], grids=["smooth"], paddings=["border"],
                    dtypes=["float16"], warmup=1, reps=2, copy_bytes=1 << 20)
    _, rows = harness.run_benchmark(gb.BENCH, cfg, "cpu")
    assert len(rows) == 2
    assert all(r.status in (harness.STATUS_OK, harness.STATUS_NO_REF) for r in rows), [r.detail for r in rows]


@needs_op
def test_wrong_forward_kernel_is_flagged(monkeypatch):
    right = gb._twinops_forward
    monkeypatch.setattr(gb, "_twinops_forward", lambda x, grid, case: right(x, grid, case) * 1.01 + 0.01)
    cfg = gb.Config(modes=["bilinear"], grids=["smooth"], backward=False, **TINY)
    _, rows = harness.run_benchmark(gb.BENCH, cfg, "cpu")
    assert rows and all(r.status == harness.STATUS_MISMATCH and "max abs err" in r.detail for r in rows)


@needs_op
def test_backward_op_must_be_the_autograd_one(monkeypatch):
    def fake_op():
        real = torch.ops.twinops.grid_sample_backward

        def op(*args):
            gi, gg = real(*args)
            return gi, gg * 2
        return op
    monkeypatch.setattr(gb, "_twinops_backward_op", fake_op)
    cfg = gb.Config(modes=["bilinear"], grids=["random"], **TINY)
    _, rows = harness.run_benchmark(gb.BENCH, cfg, "cpu")
    bwd = [r for r in rows if r.case.direction == "backward"]
    assert bwd and all(r.status == harness.STATUS_MISMATCH for r in bwd)
    assert all("differs from the timed grid_sample_backward" in r.detail for r in bwd)
    assert all(r.status == harness.STATUS_OK for r in rows if r.case.direction == "forward")


@needs_op
def test_autograd_calls_grid_sample_backward():
    case = gb.Case("bicubic", "border", "smooth", "float32", (1, 2, 5, 6), "backward")
    x, grid = case.make_inputs(torch.device("cpu"), torch.Generator().manual_seed(0))
    x.requires_grad_(True)
    grid.requires_grad_(True)
    out = gb._twinops_forward(x, grid, case)
    names = harness.ops_called(lambda: torch.autograd.grad(out, (x, grid), torch.randn_like(out)))
    assert "twinops::grid_sample_backward" in names
