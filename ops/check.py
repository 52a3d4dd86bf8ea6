"""``python -m twinops check``: every registered op on every available backend, against the
op's float64 reference and against the other backends, with Polygraphy's error statistics.

    python -m twinops check [--ops OP ...] [--backends torch-cpu torch-cuda ...]
        [--dtypes float32 ...] [--examples 20] [--seed 0] [--atol A] [--rtol R]
        [--check-error-stat elemwise|max|mean|median|quantile] [--error-quantile 0.99]
        [--report out.json] [--plots DIR] [--out DIR] [--fail-fast] [--group-by op|mode]
    python -m twinops check --replay twinops-check-out/<case>.npz

Cases: each op's fixed edge cases, then ``--examples`` Hypothesis draws from the op's strategy,
reproducible with ``--seed`` (Hypothesis' own seeded generation, no example database). On a
failing comparison it writes a reproducer ``.npz`` (input, attributes, tolerances) under
``--out``, prints the command that replays it, and an error heatmap PNG per failing output
under ``--plots`` (default: ``--out``). Exit status: 0 all passed, 1 a comparison failed,
2 bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

from ._cli import console
from .npz import json_object, open_npz
from .testing import backends as B
from .testing import specs
from .testing.compare import STATS, Comparison, compare, report

DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass
class Case:
    """One call: ``op``, ``dtype``, ``shapes`` (one per input of the op), ``kwargs``, ``index``
    (0.. per op and dtype), ``origin`` (``edge`` or ``drawn``) and ``input_seed`` (input ``i``'s
    data is its factory's with seed ``input_seed + i``: ``OpSpec.make_inputs``); ``inputs`` holds
    replayed data."""

    op: str
    dtype: torch.dtype
    shapes: Tuple[tuple, ...]
    kwargs: dict
    index: int
    origin: str
    input_seed: int
    inputs: Optional[List[torch.Tensor]] = field(default=None, repr=False)

    def __post_init__(self):
        # a single shape (the one-input form, as before several inputs) is the only input's
        self.shapes = (tuple(self.shapes),) if specs.is_shape(self.shapes) else tuple(
            tuple(s) if s is not None else None for s in self.shapes)

    @property
    def id(self) -> str:
        return f"{self.op}-{str(self.dtype).replace('torch.', '')}-{self.index:03d}"

    @property
    def shape(self):
        """The input's shape for a one-input op, else the tuple of shapes (as the op's spec draws them)."""
        return self.shapes[0] if len(self.shapes) == 1 else self.shapes

    def xs(self) -> List[torch.Tensor]:
        """The inputs, in the op's order, in the case's dtype."""
        if self.inputs is not None:
            return list(self.inputs)
        return specs.get(self.op).make_inputs(self.shapes, self.dtype, self.input_seed, self.kwargs)

    def x(self) -> torch.Tensor:
        """The first input."""
        return self.xs()[0]


def draw_configs(spec, n: int, seed: int) -> list:
    """``n`` (at most; duplicates dropped) ``(shapes, kwargs)`` draws from ``spec.strategy``,
    the same for the same ``seed`` and Hypothesis version."""
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import seed as hseed
    from hypothesis import settings

    if n <= 0:
        return []
    drawn, seen = [], set()

    # Generation only (no shrinking, no example database, derandomize off so the seed counts).
    @hseed(seed)
    @settings(max_examples=n, database=None, derandomize=False, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(spec.strategy)
    def collect(cfg):
        key = repr(cfg)
        if key not in seen and len(drawn) < n:
            seen.add(key)
            drawn.append(cfg)

    collect()
    return drawn


def make_cases(op: str, dtypes, n: int, seed: int) -> List[Case]:
    spec = specs.get(op)
    configs = [("edge", c) for c in spec.edge_cases] + [("drawn", c) for c in draw_configs(spec, n, seed)]
    cases = []
    for dtype in dtypes:
        for i, (origin, (shapes, kw)) in enumerate(configs):
            cases.append(Case(op, dtype, spec.shapes(shapes), dict(kw), i, origin, seed * 100_003 + i))
    return cases


@dataclass
class Result:
    case: Case
    backend: str
    against: str
    output: str
    comparison: Optional[Comparison]
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and self.comparison is not None and self.comparison.passed


def _mode_label(kw: dict) -> str:
    """The case's choices: its string arguments' values, then the names of the flags set (True or 1)."""
    words = [v for v in kw.values() if isinstance(v, str)]
    flags = [k for k, v in kw.items() if v is True or (type(v) is int and v == 1)]
    return " ".join(words + flags) or "-"


def run_case(case: Case, backends: List[B.Backend], args) -> List[Result]:
    """Runs ``case`` on ``backends``; compares each with the reference and with every earlier backend."""
    spec = specs.get(case.op)
    xs = case.xs()
    outputs: Dict[str, Dict[str, torch.Tensor]] = {}
    results = []
    try:
        ref = B._outputs(spec, spec.reference(*xs, **case.kwargs))
        outputs["reference"] = ref
    except Exception as e:
        return [Result(case, "reference", "-", "-", None, f"reference raised {type(e).__name__}: {e}")]
    out_shape = tuple(next(iter(ref.values())).shape)
    for b in backends:
        try:
            outputs[b.name] = b.run(spec, xs, case.kwargs, out_shape)
        except B.Unsupported as e:
            case.unsupported = getattr(case, "unsupported", []) + [f"{b.name}: {e}"]
            continue
        except Exception as e:
            results.append(Result(case, b.name, "reference", "-", None, f"{type(e).__name__}: {e}"))
            continue
        for against in ["reference"] + [n for n in outputs if n not in ("reference", b.name)]:
            for name in spec.outputs:
                atol, rtol = spec.tolerance(case.dtype, name)
                atol = args.atol if args.atol is not None else atol
                rtol = args.rtol if args.rtol is not None else rtol
                c = compare(outputs[b.name][name], outputs[against][name], atol=atol, rtol=rtol,
                            stat=args.check_error_stat, quantile=args.error_quantile)
                results.append(Result(case, b.name, against, name, c))
    case._outputs = outputs  # kept for the reproducer and heatmap of a failure
    return results


# ---------------------------------------------------------------------------------------
# failure artifacts
# ---------------------------------------------------------------------------------------

def write_reproducer(r: Result, args) -> str:
    """Writes ``<out>/<case id>-<backend>-vs-<against>.npz``; returns its path."""
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{r.case.id}-{r.backend}-vs-{r.against}.npz")
    c = r.case
    meta = dict(op=c.op, dtype=str(c.dtype).replace("torch.", ""), shape=list(c.shapes[0]), kwargs=c.kwargs,
                index=c.index, origin=c.origin, input_seed=c.input_seed, backend=r.backend, against=r.against,
                atol=args.atol, rtol=args.rtol, check_error_stat=args.check_error_stat,
                error_quantile=args.error_quantile, error=r.error)
    if len(c.shapes) > 1:  # None: an optional input left out (no entry)
        meta["shapes"] = [list(s) if s is not None else None for s in c.shapes]
    xs = c.xs()
    # float64 holds every input exactly (integer ones too); replay casts each back to its dtype
    arrays = {_input_entry(i): x.double().numpy() for i, x in enumerate(xs) if x is not None}
    arrays["meta"] = np.array(json.dumps(meta))
    outs = getattr(c, "_outputs", {})
    for who in (r.backend, r.against):
        if who in outs and r.output in outs[who]:
            arrays[f"{who}:{r.output}"] = outs[who][r.output].double().numpy()
    np.savez_compressed(path, **arrays)
    return path


def write_heatmap(r: Result, plots: str) -> Optional[str]:
    """PNG of |actual - expected| (max over N and C) for one failing output; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    outs = getattr(r.case, "_outputs", {})
    if r.output not in outs.get(r.backend, {}) or r.output not in outs.get(r.against, {}):
        return None
    a, e = outs[r.backend][r.output].double().numpy(), outs[r.against][r.output].double().numpy()
    if a.shape != e.shape or a.size == 0:
        return None
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)
    err = np.where(np.isnan(err), np.inf, err)
    err = err.reshape((-1,) + err.shape[-2:]).max(axis=0) if err.ndim >= 2 else err.reshape(1, -1)
    finite = err[np.isfinite(err)]
    err = np.where(np.isfinite(err), err, finite.max() * 2 if finite.size else 1.0)
    os.makedirs(plots, exist_ok=True)
    path = os.path.join(plots, f"{r.case.id}-{r.backend}-vs-{r.against}-{r.output}.png")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    im = ax.imshow(err, cmap="magma", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="|actual - expected| (max over N, C)")
    c = r.comparison
    ax.set_title(f"{r.case.id} {r.backend} vs {r.against}\n{_mode_label(r.case.kwargs)}; "
                 f"{c.mismatches}/{c.numel} mismatches, max {c.max_abs:.2e}", fontsize=9)
    ax.set_xlabel("W")
    ax.set_ylabel("H")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------

def _tolerance(name):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}")
        if not (v >= 0 and np.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number >= 0, got {text!r}")
        return v
    return parse


def _nonnegative_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m twinops check", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", nargs="+", metavar="OP", help="ops to check (default: every registered op)")
    p.add_argument("--backends", nargs="+", choices=B.ORDER, metavar="BACKEND",
                   help=f"backends to run, from {', '.join(B.ORDER)} (default: every available one)")
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), help="dtypes (default: each op's own list)")
    p.add_argument("--examples", type=_nonnegative_int, default=20, help="Hypothesis draws per op (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws and the input data (default 0)")
    p.add_argument("--atol", type=_tolerance("--atol"), help="override every absolute tolerance")
    p.add_argument("--rtol", type=_tolerance("--rtol"), help="override every relative tolerance")
    p.add_argument("--check-error-stat", choices=STATS, default="elemwise",
                   help="Polygraphy's --check-error-stat (default elemwise)")
    p.add_argument("--error-quantile", type=float, default=0.99, help="quantile for 'quantile' (default 0.99)")
    p.add_argument("--report", metavar="FILE", help="write every comparison and the summary as JSON")
    p.add_argument("--out", default="twinops-check-out", help="directory for reproducers (default twinops-check-out)")
    p.add_argument("--plots", metavar="DIR", help="directory for error heatmaps of failures (default: --out)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failing comparison")
    p.add_argument("--group-by", choices=["op", "mode"], default="op",
                   help="table rows per op (default) or per op and mode")
    p.add_argument("--replay", metavar="FILE", help="re-run the case stored in a reproducer .npz")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _input_entry(i: int) -> str:
    """The reproducer's entry of input ``i``: ``input`` for the first (the one-input format), ``input<i>`` after."""
    return "input" if i == 0 else f"input{i}"


class BadFile(Exception):
    """A file named on the command line cannot be used; the message names it and says why."""


def _bad_file(parser, message: str) -> None:
    """Exit status 2 with one line on stderr (argparse's error, without the usage lines)."""
    parser.exit(2, f"{parser.prog}: error: {message}\n")


_META_FIELDS = {"op": str, "dtype": str, "shape": list, "kwargs": dict, "index": int, "origin": str,
                "input_seed": int, "backend": str, "against": str}


def read_reproducer(path: str) -> tuple:
    """(Case, meta) from a reproducer written by :func:`write_reproducer`.

    Raises :class:`BadFile` naming ``path`` and the problem: unreadable, not a zip archive,
    truncated, missing or mistyped entries, an unknown op, dtype or backend."""
    where = f"cannot read reproducer {path!r}"
    with open_npz(path, where, "reproducer", BadFile) as f:
        missing = [k for k in ("meta", "input") if k not in f.files]
        if missing:
            raise BadFile(f"{where}: it has no {' and no '.join(missing)} entry (entries: {', '.join(f.files)})")
        meta = json_object(f, "meta", where, BadFile)
        entries = {k: f[k] for k in f.files if k.startswith("input")}
    for k, kind in _META_FIELDS.items():
        if not isinstance(meta.get(k), kind) or isinstance(meta.get(k), bool):
            raise BadFile(f"{where}: meta field {k!r} must be a {kind.__name__}, got {meta.get(k)!r}")
    if meta["op"] not in specs.registered():
        raise BadFile(f"{where}: unknown op {meta['op']!r} (registered: {', '.join(sorted(specs.registered()))})")
    if meta["dtype"] not in DTYPES:
        raise BadFile(f"{where}: unknown dtype {meta['dtype']!r} (expected one of {', '.join(DTYPES)})")
    if meta["backend"] not in B.ORDER:
        raise BadFile(f"{where}: unknown backend {meta['backend']!r} (expected one of {', '.join(B.ORDER)})")
    if meta["against"] != "reference" and meta["against"] not in B.ORDER:
        raise BadFile(f"{where}: unknown 'against' {meta['against']!r} (expected reference or one of "
                      f"{', '.join(B.ORDER)})")
    shapes = meta.get("shapes", [meta["shape"]])  # one-input reproducers hold only "shape"
    if not isinstance(shapes, list) or not shapes or not all(v is None or isinstance(v, list) for v in shapes):
        raise BadFile(f"{where}: meta field 'shapes' must be a list of shapes, got {shapes!r}")
    absent = [_input_entry(i) for i, s in enumerate(shapes) if s is not None and _input_entry(i) not in entries]
    if absent:
        raise BadFile(f"{where}: it has no {' and no '.join(absent)} entry (entries: {', '.join(entries)})")
    arrays = [entries[_input_entry(i)] if s is not None else None for i, s in enumerate(shapes)]
    spec = specs.get(meta["op"])
    if len(shapes) != len(spec.inputs):
        raise BadFile(f"{where}: op {meta['op']!r} takes {len(spec.inputs)} inputs ({', '.join(spec.inputs)}), "
                      f"the reproducer holds {len(shapes)}")
    for i, (x, shape) in enumerate(zip(arrays, shapes)):
        if x is not None and (x.dtype.kind != "f" or list(x.shape) != shape):
            raise BadFile(f"{where}: entry {_input_entry(i)!r} must be a float array of the meta shape {shape}, "
                          f"got {x.dtype} of shape {list(x.shape)}")
    dtype = DTYPES[meta["dtype"]]
    # JSON turned the case's tuples into lists; the op's arguments were drawn as tuples
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in meta["kwargs"].items()}
    inputs = [torch.from_numpy(x.copy()).to(t.dtype_for(dtype)) if x is not None else None
              for x, t in zip(arrays, spec.declared_inputs())]
    case = Case(meta["op"], dtype, tuple(tuple(s) if s is not None else None for s in shapes), kw, meta["index"],
                meta["origin"], meta["input_seed"], inputs=inputs)
    return case, meta


def load_reproducer(path: str, parser) -> tuple:
    """:func:`read_reproducer`; a bad file exits 2 with one line naming it (``--replay``)."""
    try:
        return read_reproducer(path)
    except BadFile as e:
        _bad_file(parser, f"argument --replay: {e}")


def check_report_path(path: str) -> Optional[str]:
    """None when ``--report`` can be written, else why not (checked before the run)."""
    if os.path.isdir(path):
        return f"report {path!r} is a directory; give a file name"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"report {path!r}: directory {parent!r} does not exist"
    if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"report {path!r} is not writable"
    return None


def _progress(total: int, disable: bool):
    """A context manager yielding advance(description); rich if present, else tqdm, else nothing."""
    import contextlib

    @contextlib.contextmanager
    def cm():
        if disable:
            yield lambda desc: None
            return
        try:
            from rich.progress import Progress

            with Progress(console=console(stderr=True), transient=True) as prog:
                task = prog.add_task("check", total=total)
                yield lambda desc: prog.update(task, advance=1, description=desc)
            return
        except ImportError:
            pass
        try:
            from tqdm import tqdm

            with tqdm(total=total, file=sys.stderr, leave=False) as bar:
                def advance(desc):
                    bar.set_description(desc)
                    bar.update(1)
                yield advance
        except ImportError:
            yield lambda desc: None
    return cm()


def _print_table(title, header, rows):
    try:
        from rich.table import Table

        table = Table(title=title)
        for h in header:
            table.add_column(h)
        for r in rows:
            table.add_row(*r)
        console(width=max(160, len(" ".join(header)) + 40)).print(table)
    except ImportError:
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
        print(title)
        for r in (header, *rows):
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def summarize(results: List[Result], group_by: str) -> List[tuple]:
    """Table rows aggregated over cases: worst statistics, mismatch totals, pass/fail counts."""
    groups: Dict[tuple, List[Result]] = {}
    for r in results:
        key = (r.case.op,) + ((_mode_label(r.case.kwargs),) if group_by == "mode" else ()) + (
            str(r.case.dtype).replace("torch.", ""), r.backend, r.against)
        groups.setdefault(key, []).append(r)
    rows = []
    for key, rs in groups.items():
        cs = [r.comparison for r in rs if r.comparison is not None]
        failed = sum(not r.passed for r in rs)
        worst = lambda attr: f"{max((getattr(c, attr) for c in cs), default=0.0):.2e}"  # noqa: E731
        tol = f"{cs[0].atol:g}/{cs[0].rtol:g}" if cs else "-"
        rows.append(key + (str(len(rs)), worst("max_abs"), worst("max_rel"), worst("p99_abs"),
                           f"{sum(c.mismatches for c in cs)}/{sum(c.numel for c in cs)}",
                           str(sum(c.nonfinite for c in cs)), tol, "FAIL" if failed else "OK"))
    return rows


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0.0 <= args.error_quantile <= 1.0:
        parser.error(f"argument --error-quantile: must be in [0, 1], got {args.error_quantile}")
    args.plots = args.plots or args.out
    if args.report and (why := check_report_path(args.report)):
        _bad_file(parser, f"argument --report: {why}")
    found = B.discover()
    replay_meta = None
    if args.replay:
        case, replay_meta = load_reproducer(args.replay, parser)
        for k in ("atol", "rtol", "check_error_stat", "error_quantile"):
            if getattr(args, k) in (None, parser.get_default(k)) and replay_meta.get(k) is not None:
                setattr(args, k, replay_meta[k])
        wanted = args.backends or [replay_meta["backend"]] + (
            [replay_meta["against"]] if replay_meta["against"] in B.ORDER else [])
        cases = [case]
    else:
        known = specs.registered()
        for op in args.ops or []:
            if op not in known:
                parser.error(f"argument --ops: unknown op {op!r} (registered: {', '.join(sorted(known))})")
        wanted = args.backends or [b.name for b in found if b.available]
    by_name = {b.name: b for b in found}
    for name in wanted:
        if by_name[name].reason is not None:
            parser.error(f"argument --backends: backend {name!r} is not available here: {by_name[name].reason}")
    # earlier backends are the 'expected' side of cross-backend comparisons
    chosen = [by_name[n] for n in B.ORDER if n in wanted]
    print("backends:")
    for b in found:
        state = "used" if b in chosen else ("available, not selected" if b.available else f"missing: {b.reason}")
        print(f"  {b.name:15s} {state}")

    if not args.replay:
        dtypes_of = lambda spec: [DTYPES[d] for d in args.dtypes] if args.dtypes else list(spec.dtypes)  # noqa: E731
        cases = []
        for op in args.ops or sorted(specs.registered()):
            cases += make_cases(op, dtypes_of(specs.get(op)), args.examples, args.seed)

    results: List[Result] = []
    skipped, failures = [], []
    t0 = time.time()
    with _progress(len(cases), args.no_progress) as advance:
        for case in cases:
            advance(case.id)
            why = specs.get(case.op).unsuitable(case.shape, case.kwargs)  # one shape for a one-input op
            if why:
                skipped.append((case, why))
                continue
            for r in run_case(case, chosen, args):
                results.append(r)
                if not r.passed:
                    failures.append(r)
            skipped += [(case, why) for why in getattr(case, "unsupported", [])]
            if failures and args.fail_fast:
                break

    header = ("op",) + (("mode",) if args.group_by == "mode" else ()) + (
        "dtype", "backend", "vs", "cases", "max abs", "max rel", f"p{args.error_quantile * 100:g} abs",
        "mismatches", "NaN/Inf", "atol/rtol", "result")
    rows = summarize(results, args.group_by)
    _print_table(f"twinops check ({args.check_error_stat}; seed {args.seed})", header, rows)

    records = []
    for r in failures:
        path = write_reproducer(r, args)
        png = write_heatmap(r, args.plots) if r.comparison is not None else None
        detail = r.error or report(r.comparison, f"{r.output}")
        print(f"\nFAILED {r.case.id} [{r.case.origin}] {r.backend} vs {r.against}: shape {r.case.shape} "
              f"{json.dumps(r.case.kwargs)}\n{detail}\n  reproducer: {path}\n"
              f"  replay: python -m twinops check --replay {path}" + (f"\n  heatmap: {png}" if png else ""))
        records.append(dict(case=r.case.id, backend=r.backend, against=r.against, output=r.output,
                            reproducer=path, replay=f"python -m twinops check --replay {path}", heatmap=png,
                            error=r.error))
    for case, why in skipped:
        print(f"skipped {case.id} {json.dumps(case.kwargs)}: {why}")
    n_cases = len({(r.case.op, r.case.dtype, r.case.index) for r in results})
    summary = dict(cases=n_cases, skipped=len(skipped), comparisons=len(results),
                   failed=len(failures), seconds=round(time.time() - t0, 2))
    print(f"\n{summary['comparisons'] - summary['failed']} passed, {summary['failed']} failed "
          f"({n_cases} cases, {len(skipped)} skipped, {summary['seconds']} s)")
    if args.report:
        doc = dict(argv=list(argv) if argv is not None else sys.argv[1:], seed=args.seed, examples=args.examples,
                   backends={b.name: (b.reason or ("used" if b in chosen else "available")) for b in found},
                   summary=summary, failures=records,
                   skipped=[dict(case=c.id, kwargs=c.kwargs, reason=w) for c, w in skipped],
                   comparisons=[dict(case=r.case.id, op=r.case.op, dtype=str(r.case.dtype).replace("torch.", ""),
                                     input_shape=[list(s) if s is not None else None for s in r.case.shapes]
                                     if len(r.case.shapes) > 1
                                     else list(r.case.shapes[0]), kwargs=r.case.kwargs, origin=r.case.origin,
                                     backend=r.backend, against=r.against, output=r.output, error=r.error,
                                     **(r.comparison.as_dict() if r.comparison else {})) for r in results])
        with open(args.report, "w") as f:
            json.dump(doc, f, indent=1, default=str)
    return 1 if failures else 0


if __name__ == "__main__":
    from ._cli import run_cli

    sys.exit(run_cli(main))
