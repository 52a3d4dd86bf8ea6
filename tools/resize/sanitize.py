"""resize's cases for tools/sanitize.py: every mode forward and backward on CUDA.

Small shapes, NCHW / channels_last / strided inputs, the tiled and per-element paths,
float32 and float16; then wide and many-plane NCHW inputs (several tiles per plane, several
planes per block, odd widths, misaligned and row-padded views, wide windows, nearest by
powers of two) in every dtype, ONNX's nearest downscale, and a large float32 image (the
larger upscaling tiles where one plane's tiles fill the device). ``quick`` runs only seven
cases: four of the shared-memory pipeline (many planes per block, a misaligned float16
view, a row-padded float16 view of an odd width, a downscale), a nearest downscale (the
one-tap kernel; its backward gathers through tiles) and float16 bicubic 0.5x and 2x
(halving_kernel and doubling_kernel: table entries in shared memory behind one barrier),
forward and backward: racecheck and synccheck are slow.
"""
import torch

import twinops

CASES = [
    dict(mode="nearest"), dict(mode="nearest-exact"), dict(mode="area"),
    dict(mode="bilinear"), dict(mode="bilinear", align_corners=True), dict(mode="bicubic"),
    dict(mode="bicubic", align_corners=True), dict(mode="bilinear", antialias=True),
    dict(mode="bicubic", antialias=True),
]
SIZES = [dict(scale_factor=2.0), dict(scale_factor=0.5), dict(size=(37, 5)), dict(scale_factor=(0.13, 3.1))]


# (dtype, shape, the view's columns, interpolate arguments)
PIPELINE = [(torch.float32, (2, 300, 6, 9), slice(None), dict(mode="bicubic", scale_factor=2.0)),
            (torch.float16, (1, 2, 37, 304), slice(3, None), dict(mode="bilinear", scale_factor=0.5)),
            (torch.float16, (1, 2, 37, 304), slice(None, 301), dict(mode="bicubic", scale_factor=2.0)),
            # 0.45x: the staged tiles, not halving_kernel
            (torch.float32, (1, 2, 64, 256), slice(None), dict(mode="bicubic", scale_factor=0.45)),
            # 0.45x: not a power of two, so the backward gathers through tiles (not pick_kernel)
            (torch.float16, (1, 3, 64, 256), slice(None), dict(mode="nearest", scale_factor=0.45)),
            (torch.float16, (1, 2, 64, 256), slice(None), dict(mode="bicubic", scale_factor=0.5)),
            (torch.float16, (1, 2, 64, 256), slice(None), dict(mode="bicubic", scale_factor=2.0))]


def pipeline_cases(device, g: torch.Generator) -> int:
    for dtype, shape, cols, kw in PIPELINE:
        x = torch.randn(*shape, device=device, dtype=dtype, generator=g)[..., cols].requires_grad_()
        y = twinops.interpolate(x, **kw)
        y.backward(torch.randn(y.shape, device=device, dtype=dtype, generator=g))
    return len(PIPELINE)


def cases(g: torch.Generator, quick: bool) -> int:
    """Runs resize's cases on g's device (CUDA under the sanitizer; the CPU in tests); returns how many."""
    if quick:
        return pipeline_cases(g.device, g)
    n = 0
    for dtype in (torch.float32, torch.float16):
        base = torch.randn(2, 3, 41, 70, device=g.device, dtype=dtype, generator=g)
        for layout, x in (("nchw", base), ("nhwc", base.contiguous(memory_format=torch.channels_last)),
                          ("strided", base[:, :, ::2, 1:])):
            for kw in CASES:
                for sz in SIZES:
                    xi = x.detach().requires_grad_()
                    y = twinops.interpolate(xi, **kw, **sz)
                    y.backward(torch.randn_like(y))
                    n += 1
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for shape, cols in (((1, 2, 37, 301), slice(None)), ((1, 2, 37, 304), slice(3, None)),
                            ((1, 2, 37, 304), slice(None, 301)), ((2, 300, 8, 16), slice(None)),
                            ((1, 3, 38, 200), slice(None))):
            base = torch.randn(*shape, device=g.device, dtype=dtype, generator=g)[..., cols]
            for kw in (dict(mode="bicubic", scale_factor=2.0), dict(mode="bilinear", scale_factor=0.5),
                       dict(mode="bicubic", scale_factor=0.5), dict(mode="bicubic", antialias=True, scale_factor=0.5),
                       dict(mode="bicubic", antialias=True, scale_factor=0.13), dict(mode="nearest", size=(5, 611)),
                       # replicate_kernel forward, pick_kernel backward (where rows and widths allow)
                       dict(mode="nearest", scale_factor=(4.0, 8.0)), dict(mode="nearest-exact", scale_factor=0.5)):
                xi = base.detach().requires_grad_()
                y = twinops.interpolate(xi, **kw)
                y.backward(torch.randn_like(y))
                n += 1
    x = torch.randn(1, 2, 9, 12, device=g.device, generator=g)
    y = twinops.resize(x, roi=[0, 0, -0.3, 0.2, 1, 1, 1.4, 0.7], sizes=[1, 2, 17, 6], mode="cubic",
                       coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=3.0)
    # A flipped crop: decreasing tables.
    flipped = twinops.resize(torch.randn(1, 2, 40, 300, device=g.device, generator=g), roi=[0, 0, 0.9, 0.95, 1, 1, 0.1, 0.05],
                             sizes=[1, 2, 70, 500], mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    # ONNX's nearest downscale: the one-tap kernel reading the table kernel's entries.
    xo = torch.randn(2, 3, 64, 96, device=g.device, generator=g).requires_grad_()
    onnx_nearest = twinops.resize(xo, scales=[1, 1, 0.5, 0.3], mode="nearest")
    onnx_nearest.backward(torch.randn_like(onnx_nearest))
    # A large image with few planes: the larger upscaling tiles (large_upscaling_tiles), partial
    # at the right and bottom edges; the backward's downscaling tiles.
    xl = torch.randn(1, 2, 541, 963, device=g.device, generator=g).requires_grad_()
    large = twinops.interpolate(xl, mode="bicubic", scale_factor=2.0)
    large.backward(torch.randn_like(large))
    del y, flipped
    return n + 4
