"""``python -m twinops regress [--update]``: numeric regression against golden baselines.

Each registered op's ``regress_cases`` (op x mode x dtype, small shapes) run on seeded
inputs (regenerated from a seed, not stored); their outputs are stored per op in
``baselines/<op>.npz`` at the repository root (compressed, written byte-for-byte
deterministically). A run reports the drift of every case: the largest absolute difference
and that difference in ulps of the case's scale (the ulp, in the case's dtype, of the largest
|baseline| value, so that outputs near zero do not inflate it), and fails when a case drifts
past :data:`ULP_TOLERANCE` for its dtype, when a case is missing from the baselines or when
the input generator no longer reproduces the stored input checksum.

    python -m twinops regress [--ops OP ...] [--device cpu|cuda] [--dir baselines] [--update]

``--update`` rewrites the baseline files and prints what changed (new, changed with drift,
removed). Exit status: 0 no drift past tolerance (or updated), 1 drift, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import zipfile
import zlib
from typing import Dict, List, Optional

import numpy as np
import torch

from .npz import json_object, open_npz
from .testing import specs

# realpath: the package may be reached through a symlink to the source tree.
DEFAULT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "baselines")
REGRESS_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
# Allowed drift in ulps of the case's scale. The CPU reproduces its baselines exactly; CUDA
# runs the same per-element math but the compiler may contract a*b+c into an FMA, which moves
# float32/float64 results by a few ulps of the scale; half types round once from float, so an
# FMA difference can flip that rounding by one ulp.
ULP_TOLERANCE = {torch.float64: 8.0, torch.float32: 8.0, torch.float16: 1.0, torch.bfloat16: 1.0}
_MANTISSA = {torch.float64: (52, -1022), torch.float32: (23, -126), torch.float16: (10, -14),
             torch.bfloat16: (7, -126)}


def ulp(value: float, dtype: torch.dtype) -> float:
    """The spacing of ``dtype`` at ``|value|`` (subnormal spacing below the smallest normal)."""
    bits, emin = _MANTISSA[dtype]
    value = abs(float(value))
    exp = emin if value == 0 else max(int(np.frexp(value)[1]) - 1, emin)
    return float(2.0 ** (exp - bits))


def _key(label: str, dtype: torch.dtype) -> str:
    return f"{label}|{str(dtype).replace('torch.', '')}"


def _seed(op: str, label: str) -> int:
    return zlib.crc32(f"{op}/{label}".encode())


def compute(op: str, device: str = "cpu") -> Dict[str, dict]:
    """``{key: {"output": float64 array, "meta": dict}}`` for every regress case of ``op``
    (``meta``: shape, or one shape per input; kwargs; input_sha256 of the inputs' float64 bytes).
    The key is ``label|dtype``; an op with several outputs has one entry per output,
    ``label:output|dtype`` (integer outputs stored as float64, exactly)."""
    spec = specs.get(op)
    out = {}
    for label, shapes, kw in spec.regress_cases:
        shapes = spec.shapes(shapes)
        for dtype in REGRESS_DTYPES:
            # input i from its factory with seed + i: a one-input op's data and checksum are what
            # they always were; an optional input left out is None
            xs = spec.make_inputs(shapes, dtype, _seed(op, label), kw)
            ys = spec.fn(*(x.to(device) if x is not None else None for x in xs), **kw)
            ys = tuple(ys) if isinstance(ys, (tuple, list)) else (ys,)
            if len(ys) != len(spec.outputs):
                raise RuntimeError(f"{op}: expected {len(spec.outputs)} outputs ({', '.join(spec.outputs)}), "
                                   f"got {len(ys)}")
            data = b"".join(x.double().numpy().tobytes() for x in xs if x is not None)
            digest = hashlib.sha256(data).hexdigest()[:16]
            # the one-input format stores the shape itself, a several-input case the list of shapes
            shape = list(shapes[0]) if len(shapes) == 1 else [list(s) if s is not None else None for s in shapes]
            meta = dict(shape=shape, kwargs=kw, input_sha256=digest)
            for name, y in zip(spec.outputs, ys):
                key = _key(label if len(ys) == 1 else f"{label}:{name}", dtype)
                out[key] = dict(output=y.detach().cpu().double().numpy(), meta=meta)
    return out


def save(path: str, cases: Dict[str, dict]) -> None:
    """Writes the cases as a compressed .npz with fixed zip timestamps (same bytes for same data)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        entries = {"meta.npy": np.array(json.dumps({k: c["meta"] for k, c in sorted(cases.items())}, sort_keys=True))}
        entries.update({f"{k}.npy": np.ascontiguousarray(c["output"]) for k, c in sorted(cases.items())})
        for name, arr in entries.items():
            data = io.BytesIO()
            np.lib.format.write_array(data, arr, allow_pickle=False)
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data.getvalue())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


class BadBaseline(ValueError):
    """A baseline file that :func:`load` cannot use; the message names the file and the problem."""


def load(path: str) -> Dict[str, dict]:
    """The cases stored by :func:`save` (``{}`` when the file does not exist).

    Raises :class:`BadBaseline` naming ``path`` when the file is unreadable, truncated, not a
    zip archive, or not laid out as :func:`save` writes it (a JSON ``meta`` object of
    ``{key: {shape, kwargs, input_sha256}}`` and one float array per key)."""
    if not os.path.exists(path):
        return {}
    where = f"cannot read baseline {path!r}"
    with open_npz(path, where, "baseline", BadBaseline) as f:
        meta = json_object(f, "meta", where, BadBaseline)
        cases = {}
        for k, m in meta.items():
            if not isinstance(m, dict) or not isinstance(m.get("kwargs"), dict) or not isinstance(
                    m.get("input_sha256"), str) or not isinstance(m.get("shape"), list):
                raise BadBaseline(f"{where}: meta of case {k!r} must hold shape, kwargs and input_sha256")
            if len(k.split("|")) != 2 or not isinstance(getattr(torch, k.split("|")[1], None), torch.dtype):
                raise BadBaseline(f"{where}: case key {k!r} is not 'label|dtype'")
            if k not in f.files:
                raise BadBaseline(f"{where}: it has no output array for case {k!r}")
            out = f[k]
            if out.dtype.kind != "f":
                raise BadBaseline(f"{where}: output of case {k!r} must be a float array, got {out.dtype}")
            cases[k] = dict(output=out, meta=m)
        return cases


def drift(key: str, new: dict, old: Optional[dict]) -> dict:
    """One case's drift record: key, status (ok/drift/new/input-changed/shape), max_abs, ulps, tolerance."""
    dtype = getattr(torch, key.split("|")[1])
    tol = ULP_TOLERANCE[dtype]
    rec = dict(case=key, status="ok", max_abs=0.0, ulps=0.0, tolerance_ulps=tol)
    if old is None:
        rec["status"] = "new"
        return rec
    if old["meta"].get("input_sha256") != new["meta"]["input_sha256"]:
        rec["status"] = "input-changed"  # the generator changed: the baseline no longer applies
        return rec
    if old["meta"].get("kwargs") != json.loads(json.dumps(new["meta"]["kwargs"])) or old["output"].shape != new["output"].shape:
        rec["status"] = "case-changed"
        return rec
    a, e = new["output"], old["output"]
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    diff = np.where(same, 0.0, np.abs(a - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    rec["max_abs"] = float(diff.max()) if diff.size else 0.0
    scale = float(np.nanmax(np.abs(e))) if e.size else 0.0
    rec["ulps"] = rec["max_abs"] / ulp(scale, dtype)
    if rec["ulps"] > tol:
        rec["status"] = "drift"
    return rec


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m twinops regress", description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", nargs="+", metavar="OP", help="ops (default: every registered op with regress cases)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where to run the op (default cpu)")
    p.add_argument("--dir", default=DEFAULT_DIR, help=f"baseline directory (default {DEFAULT_DIR})")
    p.add_argument("--update", action="store_true", help="rewrite the baselines and print what changed")
    p.add_argument("--verbose", action="store_true", help="print every case, not only the ones that moved")
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    known = {n: s for n, s in specs.registered().items() if s.regress_cases}
    for op in args.ops or []:
        if op not in known:
            parser.error(f"argument --ops: unknown op {op!r} (with regress cases: {', '.join(sorted(known))})")
    if os.path.exists(args.dir) and not os.path.isdir(args.dir):
        parser.exit(2, f"{parser.prog}: error: argument --dir: {args.dir!r} is a file, not a directory\n")
    if args.device == "cuda":
        import twinops

        if not (torch.cuda.is_available() and twinops.has_cuda_kernels()):
            parser.error("argument --device: cuda is not available here (no CUDA GPU or no twinops CUDA kernels)")
    failed, changed = 0, 0
    records: List[dict] = []
    for op in args.ops or sorted(known):
        path = os.path.join(args.dir, f"{op}.npz")
        try:
            old = load(path)
        except BadBaseline as e:
            if not args.update:
                parser.exit(2, f"{parser.prog}: error: argument --dir: {e}\n")
            old = {}
        new = compute(op, args.device)
        recs = [drift(k, new[k], old.get(k)) for k in sorted(new)]
        recs += [dict(case=k, status="removed", max_abs=0.0, ulps=0.0, tolerance_ulps=0.0) for k in sorted(old)
                 if k not in new]
        for r in recs:
            r["op"] = op
            moved = r["status"] != "ok" or r["max_abs"] > 0
            if moved or args.verbose:
                print(f"  {op:12s} {r['case']:40s} {r['status']:13s} max abs {r['max_abs']:.3e}  "
                      f"{r['ulps']:.2f} ulp (tol {r['tolerance_ulps']:g})")
            changed += moved
            failed += r["status"] != "ok"
        records += recs
        worst = max(recs, key=lambda r: r["ulps"])
        print(f"{op}: {len(new)} cases vs {path}: worst {worst['ulps']:.2f} ulp ({worst['case']}), "
              f"{sum(r['status'] != 'ok' for r in recs)} not ok")
        if args.update:
            if any(r["status"] != "ok" or r["max_abs"] > 0 for r in recs) or not os.path.exists(path):
                save(path, new)
                print(f"{op}: wrote {path} ({os.path.getsize(path)} bytes)")
            else:
                print(f"{op}: {path} unchanged")
    if args.update:
        print(f"baselines updated on {args.device}: {changed} case(s) changed")
        return 0
    print(f"{len(records) - failed} ok, {failed} failed ({args.device})")
    if failed:
        print("a kernel change on purpose? review the drift above, then: python -m twinops regress --update")
    return 1 if failed else 0


if __name__ == "__main__":
    from ._cli import run_cli

    sys.exit(run_cli(main))
