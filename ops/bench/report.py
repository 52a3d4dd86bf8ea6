"""The tables of ``python -m twinops.bench``: plain text or rich, markdown, JSON (names no op).

Every function takes the :class:`~twinops.bench.harness.OpBench` whose rows it formats: its
own columns lead, then ``pass``, ``floor ms``, ``copy % floor``, ``<baseline> ms``,
``<short> % floor``, ``twinops ms``, ``twinops % floor``, ``speed-up``, ``check``
(``OpBench.table_columns``). After the table come the rows' problems (``<case title>:
<detail>``) and the op's ``target:`` lines.
"""
from __future__ import annotations

import json
import sys
from typing import List, Optional, Sequence, Tuple

from .._cli import console
from .harness import FAILED, STATUS_OK, OpBench, Row

Results = Sequence[Tuple[OpBench, Sequence[Row]]]  # (op, its rows) for each op of a run


def fmt_ms(v: Optional[float]) -> str:
    """A time in ms: 4 decimals under 10, else 2; ``n/a`` for None."""
    if v is None:
        return "n/a"
    return f"{v:.4f}" if v < 10 else f"{v:.2f}"


def fmt_pct(v: Optional[float]) -> str:
    """A percentage without decimals (``62%``); ``n/a`` for None."""
    return "n/a" if v is None else f"{v:.0f}%"


def fmt_shape(shape: Sequence[int]) -> str:
    """``(1, 3, 1080, 1920)`` -> ``"1x3x1080x1920"``."""
    return "x".join(str(d) for d in shape)


def _numeric(op: OpBench, i: int) -> bool:
    """Whether column i is right-aligned: the times, percentages and speed-up."""
    return len(op.columns) + 1 <= i < len(op.table_columns) - 1


def detail_lines(rows: Sequence[Row]) -> List[str]:
    """``<case title>: <detail>`` for each row with a detail (errors, mismatches, no reference)."""
    return [f"{r.case.title()}: {r.detail}" for r in rows if r.detail]


def format_rows(op: OpBench, rows: Sequence[Row]) -> List[List[str]]:
    """The table cells, one list of strings per row, in ``op.table_columns`` order."""
    return [[
        *r.case.labels(),
        "fwd" if r.case.direction == "forward" else "bwd",
        fmt_ms(r.floor_ms),
        fmt_pct(r.copy_pct),
        fmt_ms(r.torch_ms),
        fmt_pct(r.torch_pct),
        fmt_ms(r.twinops_ms),
        fmt_pct(r.twinops_pct),
        "n/a" if r.speedup is None else f"{r.speedup:.2f}x",
        r.status,
    ] for r in rows]


def header_lines(op: OpBench, meta: dict) -> List[str]:
    """Human-readable header: GPU, versions, date, copy bandwidth, timing method.

    ``meta``: :func:`~twinops.bench.harness.environment`'s dict.
    """
    flush = "L2 flushed (256 MiB read) before each" if meta.get("l2_flush") else "no L2 flush"
    return [
        f"GPU: {meta['gpu']}",
        f"torch {meta['torch']}, CUDA {meta['cuda']}, twinops {meta['twinops']}",
        f"date: {meta['date']}",
        f"copy bandwidth (read + write): {meta['copy_bandwidth_tbps']:.2f} TB/s",
        f"timing: median of up to {meta['reps']} reps after {meta['warmup']} warm-up, {flush}; "
        f"floor = (bytes in + bytes out) / copy bandwidth; speed-up = {op.baseline_name} / twinops",
        "copy % floor: a device-to-device copy of the case's bytes, timed the same way "
        "(what a kernel that only moves those bytes reaches)",
    ]


def to_markdown(op: OpBench, meta: dict, rows: Sequence[Row]) -> str:
    """The header as a bullet list, the table as a GitHub markdown table, then the target
    lines under ``Targets:`` and the problems, as bullets."""
    cols = op.table_columns
    out = [f"- {line}" for line in header_lines(op, meta)]
    out.append("")
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "|".join("---:" if _numeric(op, i) else "---" for i in range(len(cols))) + "|")
    for cells in format_rows(op, rows):
        out.append("| " + " | ".join(cells) + " |")
    targets = op.targets(rows)
    if targets:
        out.append("")
        out.append("Targets:")
        out.extend(f"- {line}" for line in targets)
    details = detail_lines(rows)
    if details:
        out.append("")
        out.extend(f"- {line}" for line in details)
    return "\n".join(out) + "\n"


def _widths(op: OpBench, cells: Sequence[Sequence[str]]) -> List[int]:
    return [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(op.table_columns)]


def render_text(op: OpBench, meta: dict, rows: Sequence[Row]) -> str:
    """The header, the table in plain text (used when ``rich`` is not installed), the
    problems, then the ``target:`` lines."""
    cells = format_rows(op, rows)
    widths = _widths(op, cells)

    def line(values):
        return "  ".join(v.rjust(w) if _numeric(op, i) else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    out = header_lines(op, meta) + ["", line(op.table_columns), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    out += detail_lines(rows)
    out += [f"target: {line}" for line in op.targets(rows)]
    return "\n".join(out) + "\n"


def print_table(op: OpBench, meta: dict, rows: Sequence[Row], file=None) -> None:
    """Prints :func:`render_text`'s content to ``file`` (default stdout), the table drawn by
    ``rich`` when importable (failed rows in red, NO-REF in yellow)."""
    file = file or sys.stdout
    try:
        from rich.table import Table
    except ImportError:
        file.write(render_text(op, meta, rows))
        return
    # Never squeeze columns (a pipe or CI log gets rich's default 80 columns).
    cells = format_rows(op, rows)
    out = console(file=file, width=max(sum(w + 3 for w in _widths(op, cells)) + 1, 100))
    for line in header_lines(op, meta):
        out.print(line, highlight=False)
    table = Table(show_lines=False)
    for i, col in enumerate(op.table_columns):
        table.add_column(col, justify="right" if _numeric(op, i) else "left", no_wrap=True)
    for r, row_cells in zip(rows, cells):
        style = "bold red" if r.status in FAILED else (None if r.status == STATUS_OK else "yellow")
        table.add_row(*row_cells, style=style)
    out.print(table)
    for line in detail_lines(rows) + [f"target: {line}" for line in op.targets(rows)]:
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def print_results(meta: dict, results: Results, file=None) -> None:
    """:func:`print_table` for each op of a run, each table under ``== <op> ==`` where there
    are several."""
    file = file or sys.stdout
    for i, (op, rows) in enumerate(results):
        if len(results) > 1:
            file.write(("\n" if i else "") + f"== {op.name} ==\n")
        print_table(op, meta, rows, file)


def write_json(path: str, meta: dict, results: Results) -> None:
    """Writes ``{"environment": meta, "rows": [...]}``, each row :meth:`Row.to_dict` with its
    op's name first (``"op"``)."""
    with open(path, "w") as f:
        json.dump({"environment": meta,
                   "rows": [{"op": op.name, **r.to_dict()} for op, rows in results for r in rows]}, f, indent=1)


def write_markdown(path: str, meta: dict, results: Results) -> None:
    """Writes :func:`to_markdown` of each op, each under ``## <op>`` where there are several."""
    parts = [(f"## {op.name}\n\n" if len(results) > 1 else "") + to_markdown(op, meta, rows)
             for op, rows in results]
    with open(path, "w") as f:
        f.write("\n".join(parts))
