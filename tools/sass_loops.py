"""Compare the hot loops of CUDA kernels between builds, from their SASS, without a GPU.

    python tools/sass_loops.py REF.o OTHER.o [OTHER2.o ...] [--family REGEX ...] [--show REGEX]

Each argument is an object file, cubin or executable (disassembled with ``cuobjdump -sass``,
which needs ``nvdisasm``: both ship with the CUDA toolkit, or as the PyPI wheels
``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm``; set ``CUOBJDUMP`` / put nvdisasm on
PATH), or a saved ``cuobjdump -sass`` dump (``*.sass``).

For every kernel present in all builds, the two loops (backward branches) with the most FFMA
in its own code (not in the out-of-line callees cuobjdump lists inside it) are taken as its hot
loops, as opcode sequences (registers and predicates dropped), and
matched against REF's with difflib: 1.0 means the same instructions in the same order. Per
``--family`` regex over the demangled names (default: one family per kernel template name),
the tool prints how many kernels match REF exactly and the median match, one column per
OTHER build. Names are shown without namespaces, e.g. ``halving_kernel<8, __half, float>``.
``--show REGEX`` also lists the matching kernels one by one.

Why: a cold branch that is never taken (a device-side launch, say) can change how ptxas
compiles a whole kernel; comparing the loops tells which builds compile the hot code alike
before spending GPU time on timing them. Alike loops do not promise alike times: kernels have
got their loops back and not their time (the cost was a device runtime call, not the code).
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import statistics
import subprocess
import sys
from typing import Dict, List


def sass_text(path: str) -> str:
    """The ``cuobjdump -sass`` text of ``path`` (read as is for ``*.sass``)."""
    if path.endswith(".sass"):
        with open(path) as f:
            return f.read()
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        raise SystemExit("sass_loops: cuobjdump not found (set CUOBJDUMP or put it on PATH)")
    r = subprocess.run([tool, "-sass", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"sass_loops: cuobjdump -sass {path} failed: {r.stderr.strip().splitlines()[-1:]}")
    return r.stdout


def functions(text: str) -> Dict[str, List[tuple]]:
    """Mangled function name -> [(address, instruction)] in program order."""
    out: Dict[str, List[tuple]] = {}
    cur = None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m and cur:
            out[cur].append((int(m.group(1), 16), m.group(2).strip()))
    return out


def opcode(ins: str) -> str:
    """The opcode of one instruction, without its predicate: ``@!P0 BRA 0x10`` -> ``BRA``."""
    return re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0]


def hot_loops(ins: List[tuple], count: int = 2) -> List[List[str]]:
    """The ``count`` loop bodies (target .. backward branch) with the most FFMA, as opcodes,
    in the kernel's own code: before its first subroutine. cuobjdump lists a kernel's
    out-of-line callees (``CALL.REL`` targets) inside it, after its body; a cold callee's loops
    (or a branch back across callees) would otherwise count as the kernel's."""
    index = {a: i for i, (a, _) in enumerate(ins)}
    calls = [int(t, 16) for _, s in ins for t in re.findall(r"\bCALL\.REL\S*\s+(0x[0-9a-f]+)", s)]
    end = min(calls, default=float("inf"))
    loops = []
    for i, (a, s) in enumerate(ins):
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", s)
        target = int(m.group(1), 16) if m else a
        if target < a < end and target in index:
            body = [opcode(x) for _, x in ins[index[target]:i + 1]]
            loops.append((sum(op == "FFMA" for op in body), body))
    loops.sort(key=lambda l: -l[0])
    return [body for _, body in loops[:count]]


def demangle(names: List[str]) -> List[str]:
    tool = shutil.which("c++filt")
    if not tool:
        return list(names)
    r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    # Without the argument list, the return type and namespaces: "halving_kernel<8, __half, float>".
    return [re.sub(r"\b\w+::", "", re.sub(r"\(.*$", "", n).replace("void ", "")) for n in r.stdout.splitlines()]


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ref", help="the reference build")
    p.add_argument("others", nargs="+", help="builds to compare with it")
    p.add_argument("--family", action="append", default=[], metavar="REGEX",
                   help="a group of kernels by demangled name (repeatable; default: each template name)")
    p.add_argument("--show", metavar="REGEX", help="also list these kernels one by one")
    a = p.parse_args(argv)
    builds = [functions(sass_text(path)) for path in [a.ref] + a.others]
    names = [k for k in builds[0] if all(k in b for b in builds[1:])]
    pretty = dict(zip(names, demangle(names)))
    rows = []  # (pretty name, [match per other build])
    for k in names:
        ref = hot_loops(builds[0][k])
        if not ref:
            continue
        matches = []
        for b in builds[1:]:
            other = hot_loops(b[k])
            pairs = list(zip(ref, other))
            matches.append(min(difflib.SequenceMatcher(None, x, y, autojunk=False).ratio() for x, y in pairs)
                           if pairs else 0.0)
        rows.append((pretty[k], matches))
    if not rows:
        print("sass_loops: no kernel with a loop is in every build")
        return 1
    families = a.family or sorted({"^" + re.escape(n.split("<")[0]) + r"\b" for n, _ in rows})
    print(f"hot-loop match against {a.ref}: kernels exactly alike / median, per build")
    print(f"{'family':40s} " + " ".join(f"{os.path.basename(o)[:24]:>24s}" for o in a.others))
    for fam in families:
        sel = [m for n, m in rows if re.search(fam, n)]
        if not sel:
            continue
        cells = [f"{sum(m[j] == 1.0 for m in sel):3d}/{len(sel):<3d} {statistics.median(m[j] for m in sel):.3f}"
                 for j in range(len(a.others))]
        print(f"{fam[:40]:40s} " + " ".join(f"{c:>24s}" for c in cells))
    if a.show:
        for n, m in rows:
            if re.search(a.show, n):
                print(f"  {n[:80]:80s} " + " ".join(f"{x:.3f}" for x in m))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
