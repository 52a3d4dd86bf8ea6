"""Drive each op's CUDA kernels forward and backward, for compute-sanitizer.

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 1 \\
        python tools/sanitize.py [OP ...]
    compute-sanitizer --tool racecheck --error-exitcode 1 python tools/sanitize.py --quick
    compute-sanitizer --tool synccheck --error-exitcode 1 python tools/sanitize.py --quick

An op's cases live in tools/<op>/sanitize.py, whose ``cases(generator, quick)`` runs them
and returns how many; ``--quick`` asks each for the few cases that exercise shared memory and
barriers (racecheck and synccheck are slow). Without OP, every op's runs.
Prints 'sanitize: N cases' at the end.
"""
import argparse
import sys

import torch

import twinops
from op_cases import load, op_names


def main() -> None:
    known = op_names("sanitize")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", metavar="OP", help=f"ops to run (default: all of {', '.join(known)})")
    parser.add_argument("--quick", action="store_true", help="only the cases that exercise shared memory and barriers")
    args = parser.parse_args()
    unknown = [op for op in args.ops if op not in known]
    if unknown:
        parser.error(f"OP: no tools/<op>/sanitize.py for {', '.join(unknown)}; known: {', '.join(known)}")
    if not (torch.cuda.is_available() and twinops.has_cuda_kernels()):
        sys.exit("sanitize: needs a CUDA device and twinops built with its CUDA kernels")
    g = torch.Generator("cuda").manual_seed(0)
    counts = {}
    for op, module in load("sanitize", args.ops or known).items():
        counts[op] = module.cases(g, args.quick)
        torch.cuda.synchronize()
    print(f"sanitize: {sum(counts.values())} cases ({', '.join(f'{op} {n}' for op, n in counts.items())})")


if __name__ == "__main__":
    main()
