"""Enqueue every op's plugins through the TensorRT-free plugin host, for compute-sanitizer.

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 1 \\
        python tools/plugin_host_sanitize.py [OP ...]

Needs TWINOPS_TRT_PLUGIN_LIB / TWINOPS_TRT_HEADERS (see twinops.plugin_host) and a CUDA GPU.
An op's cases live in tools/<op>/plugin_host_sanitize.py, whose ``cases(generator, dtype,
check)`` runs them in float32, float16 and bfloat16 in turn; without OP every such file
runs. Each case must also equal the torch op bitwise, NaN where it has NaN. Prints one line
per failure and 'plugin host sanitize: N cases, M failures' at the end (exit status 1 on any
failure).
"""
import argparse
import sys

import torch

from op_cases import load, op_names
from twinops import plugin_host as ph

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def main() -> int:
    known = op_names("plugin_host_sanitize")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", metavar="OP", help=f"ops to run (default: all of {', '.join(known)})")
    args = parser.parse_args()
    unknown = [op for op in args.ops if op not in known]
    if unknown:
        parser.error(f"OP: no tools/<op>/plugin_host_sanitize.py for {', '.join(unknown)}; known: {', '.join(known)}")
    reason = ph.unavailable_reason()
    if reason:
        print(f"plugin host sanitize: cannot run: {reason}")
        return 1
    g = torch.Generator("cuda").manual_seed(0)
    n = bad = 0

    def check(what, got, want):
        nonlocal n, bad
        n += 1
        # torch.equal alone would call every case with a NaN (a NaN roi, say) a mismatch.
        if got.shape != want.shape or not bool(((got == want) | (got.isnan() & want.isnan())).all()):
            bad += 1
            print(f"MISMATCH {what}: {tuple(got.shape)} vs {tuple(want.shape)}")

    for module in load("plugin_host_sanitize", args.ops or known).values():
        for dtype in DTYPES:
            module.cases(g, dtype, check)
    torch.cuda.synchronize()
    print(f"plugin host sanitize: {n} cases, {bad} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
