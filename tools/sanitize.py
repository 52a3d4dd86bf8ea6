"""Drive each op's CUDA kernels forward and backward, for compute-sanitizer.

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 1 \\
        python tools/sanitize.py [OP ...]
    compute-sanitizer --tool racecheck --error-exitcode 1 python tools/sanitize.py --quick
    compute-sanitizer --tool synccheck --error-exitcode 1 python tools/sanitize.py --quick

An op's cases live in tools/sanitize_<op>.py, whose ``cases(generator, quick)`` runs them
and returns how many; ``--quick`` asks each for the few cases that exercise shared memory and
barriers (racecheck and synccheck are slow). Without OP, every tools/sanitize_*.py runs.
Prints 'sanitize: N cases' at the end.
"""
import argparse
import glob
import importlib.util
import os
import sys

import torch

import twinops

HERE = os.path.dirname(os.path.abspath(__file__))


def op_names() -> list:
    """The ops with a tools/sanitize_<op>.py, sorted."""
    return sorted(os.path.basename(p)[len("sanitize_"):-3] for p in glob.glob(os.path.join(HERE, "sanitize_*.py")))


def load(op: str):
    spec = importlib.util.spec_from_file_location(f"sanitize_{op}", os.path.join(HERE, f"sanitize_{op}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    known = op_names()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", metavar="OP", help=f"ops to run (default: all of {', '.join(known)})")
    parser.add_argument("--quick", action="store_true", help="only the cases that exercise shared memory and barriers")
    args = parser.parse_args()
    unknown = [op for op in args.ops if op not in known]
    if unknown:
        parser.error(f"OP: no tools/sanitize_<op>.py for {', '.join(unknown)}; known: {', '.join(known)}")
    if not (torch.cuda.is_available() and twinops.has_cuda_kernels()):
        sys.exit("sanitize: needs a CUDA device and twinops built with its CUDA kernels")
    g = torch.Generator("cuda").manual_seed(0)
    counts = {}
    for op in args.ops or known:
        counts[op] = load(op).cases(g, args.quick)
        torch.cuda.synchronize()
    print(f"sanitize: {sum(counts.values())} cases ({', '.join(f'{op} {n}' for op, n in counts.items())})")


if __name__ == "__main__":
    main()
