"""Where F.interpolate (CPU and CUDA) and twinops put NaN / Inf for small non-finite inputs.

    python tools/resize/nonfinite_probe.py            # CPU, and CUDA when present

Prints, per case, the outputs of F.interpolate on each device and of twinops.interpolate, and
whether their NaN / +-Inf positions agree. A measuring tool for where NaN and +-Inf land (what
the references do at padded, merged and zero-weight taps; the rules found are in
docs/ops/resize-nonfinite.md), not a test.
"""
import itertools

import torch
import torch.nn.functional as F

import twinops

INF, NAN = float("inf"), float("nan")
ROWS = [[1.0, INF, 3.0, 4.0], [1.0, 2.0, 3.0, INF], [INF, 1.0, 2.0, 3.0], [1.0, 1.0, NAN, 2.0, INF], [INF, 1.0]]
MODES = [dict(mode="bilinear"), dict(mode="bilinear", align_corners=True), dict(mode="bicubic"),
         dict(mode="bicubic", align_corners=True), dict(mode="bilinear", antialias=True),
         dict(mode="bicubic", antialias=True), dict(mode="area"), dict(mode="nearest")]


def pattern(t):
    return ["nan" if v != v else ("inf" if v == INF else ("-inf" if v == -INF else "f")) for v in t.flatten().tolist()]


def main():
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    agree = total = 0
    for row, kw in itertools.product(ROWS, MODES):
        n = len(row)
        for out_w, out_h, two_d in [(n, 1, False), (n - 1 if n > 1 else 1, 1, False), (2 * n, 1, False), (n, 3, True)]:
            x = torch.tensor(row).reshape(1, 1, 1, n)
            if two_d:
                x = x.repeat(1, 1, 3, 1)
                x[0, 0, 0] = torch.arange(n, dtype=torch.float32)
            for dev in devices:
                xd = x.to(dev)
                ref = F.interpolate(xd, size=(out_h, out_w), **kw).cpu()
                ours = twinops.interpolate(xd, size=(out_h, out_w), **kw).cpu()
                same = pattern(ref) == pattern(ours)
                agree += same
                total += 1
                if not same:
                    print(f"{dev:4s} {kw} {tuple(x.shape)} -> ({out_h}, {out_w}) in={row}\n"
                          f"      F.interpolate {[round(v, 4) for v in ref.flatten().tolist()]}\n"
                          f"      twinops       {[round(v, 4) for v in ours.flatten().tolist()]}")
    print(f"non-finite patterns equal in {agree} of {total} cases")


if __name__ == "__main__":
    main()
