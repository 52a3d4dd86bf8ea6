"""Why ``python -m twinops.bench`` flushes the L2 by reading a buffer, not by writing it.

    python tools/l2_flush.py                 # the default sizes, in MB moved (read + written)
    python tools/l2_flush.py --mb 15.6 84

Times a device-to-device copy of each size with the benchmark's timer (``Timer``: CUDA
events, warm-up, median) three ways: after a write flush (``zero_`` of 256 MiB, the
benchmark's flush before 2026-11-30), after a read flush (``amax`` of it, the benchmark's
flush now) and with no flush. A write flush leaves the L2 full of dirty lines, which the
timed copy then writes back, so it takes longer than after a read flush; with no flush the
previous repetition's output is in the L2, dirty too. Prints one line per size, each time
with its percentage of the HBM floor (bytes / copy bandwidth, as in the benchmark). Needs
CUDA.
"""
import argparse
import sys

import torch

from twinops.bench.timing import Timer, copy_ms, floor_ms, measure_copy_bandwidth, pct_of_floor


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, nargs="+", default=[15.6, 31.1, 62.2, 83.9, 167.8, 671.0],
                   help="bytes moved per copy (read + written), in MB")
    p.add_argument("--reps", type=int, default=60, help="timed repetitions per measurement")
    args = p.parse_args(argv)
    if any(mb <= 0 for mb in args.mb):
        p.error(f"--mb: sizes must be positive, got {args.mb}")
    if args.reps < 1:
        p.error(f"--reps: must be at least 1, got {args.reps}")
    if not torch.cuda.is_available():
        print("l2_flush: needs a CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    bandwidth = measure_copy_bandwidth(dev)
    timers = {"write flush": Timer(dev, 10, args.reps, flush_write=True),
              "read flush": Timer(dev, 10, args.reps),
              "no flush": Timer(dev, 10, args.reps, flush=False)}
    print(f"copy bandwidth {bandwidth / 1e12:.2f} TB/s")
    for mb in args.mb:
        nbytes = int(mb * 1e6)
        floor = floor_ms(nbytes, bandwidth)
        cols = [f"{mb:7.1f} MB (floor {floor * 1e3:6.1f} us)"]
        for name, timer in timers.items():
            ms = copy_ms(dev, timer, nbytes)
            cols.append(f"{name} {ms * 1e3:6.1f} us ({pct_of_floor(floor, ms):3.0f}%)")
        print("  ".join(cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
