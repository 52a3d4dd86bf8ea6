"""Shared by the grid_sample kernel tests (test_grid_sample_kernels.py, test_grid_sample_backward.py):
the combinations they sweep, the ops called directly, and the float64 reference F.grid_sample."""
import torch
import torch.nn.functional as F

import twinops  # noqa: F401  (loads twinops._C: registers torch.ops.twinops)

ops = torch.ops.twinops

# F.grid_sample's mode names -> the op's (ONNX GridSample-20) names.
MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
PADDINGS = ("zeros", "border", "reflection")
# (spatial dims, F.grid_sample mode, padding_mode, align_corners); bicubic is 4-D only.
COMBOS = [(dims, mode, pad, ac) for dims in (2, 3) for mode in MODES for pad in PADDINGS for ac in (False, True)
          if not (dims == 3 and mode == "bicubic")]


def combo_id(c):
    """pytest id of a COMBOS entry, e.g. "4d-bilinear-zeros-ac0"."""
    dims, mode, pad, ac = c
    return f"{dims + 2}d-{mode}-{pad}-ac{int(ac)}"


def run_op(x, grid, mode, pad, ac):
    """torch.ops.twinops.grid_sample with F.grid_sample's mode name; ac: bool."""
    return ops.grid_sample(x, grid, MODES[mode], pad, int(ac))


def run_backward(go, x, grid, mode, pad, ac, mask=(True, True)):
    """torch.ops.twinops.grid_sample_backward -> (grad_input, grad_grid); mask: output_mask."""
    return ops.grid_sample_backward(go, x, grid, MODES[mode], pad, int(ac), list(mask))


def reference(x, grid, mode, pad, ac, go=None):
    """F.grid_sample in float64 on the CPU; with `go` also (grad_input, grad_grid) by autograd:
    (out, grad_input, grad_grid)."""
    x = x.detach().double().cpu().requires_grad_(go is not None)
    grid = grid.detach().double().cpu().requires_grad_(go is not None)
    out = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
    if go is None:
        return out
    gi, gg = torch.autograd.grad(out, (x, grid), go.detach().double().cpu())
    return out.detach(), gi, gg


def close(actual, expected, atol=1e-10, rtol=1e-10, msg=""):
    """assert_close in float64 on the CPU, NaN equal to NaN; msg starts the failure message."""
    torch.testing.assert_close(actual.detach().cpu().double(), expected.detach().cpu().double(), atol=atol,
                               rtol=rtol, equal_nan=True, msg=lambda m: f"{msg}\n{m}")
