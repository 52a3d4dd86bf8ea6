"""Error statistics and tolerance checks with Polygraphy's semantics.

Polygraphy (``polygraphy run --atol --rtol --check-error-stat``) defines, for an output
``actual`` and a reference ``expected``:

* ``absdiff = |actual - expected|`` and ``reldiff = absdiff / |expected|`` (inf/NaN where
  ``expected`` is 0);
* ``elemwise`` (default): an element mismatches when ``absdiff > atol`` **and**
  ``reldiff > rtol``; the output fails when any element mismatches;
* ``max`` / ``mean`` / ``median`` / ``quantile``: the output fails when that statistic of
  ``absdiff`` exceeds ``atol`` and the same statistic of ``reldiff`` exceeds ``rtol`` (or is NaN).
  ``quantile`` uses ``error_quantile`` (default 0.99, Polygraphy's default).

On top of that every comparison validates NaN/Inf (Polygraphy's ``--validate``): a non-finite
value where the reference is finite fails, whatever the tolerances.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Tuple

import numpy as np

STATS = ("elemwise", "max", "mean", "median", "quantile")


@dataclass
class Comparison:
    """The result of comparing one output against a reference.

    Attributes: ``passed``; ``stat``, ``atol``, ``rtol``, ``quantile`` (the check applied);
    ``max_abs``, ``mean_abs``, ``median_abs``, ``p99_abs`` (statistics of ``absdiff``; the
    quantile one is at ``quantile``) and the same for ``*_rel``; ``mismatches`` (elements
    failing the elemwise rule, counted whatever ``stat`` is) of ``numel``; ``nonfinite``
    (elements NaN/Inf in ``actual`` but finite in ``expected``); ``worst_index`` (index of the
    largest ``absdiff`` beyond tolerance, or of the largest ``absdiff``), ``worst_actual``,
    ``worst_expected``; ``message`` (empty when passed).
    """

    passed: bool
    stat: str
    atol: float
    rtol: float
    quantile: float
    numel: int
    mismatches: int
    nonfinite: int
    max_abs: float = 0.0
    mean_abs: float = 0.0
    median_abs: float = 0.0
    p99_abs: float = 0.0
    max_rel: float = 0.0
    mean_rel: float = 0.0
    median_rel: float = 0.0
    p99_rel: float = 0.0
    worst_index: Tuple[int, ...] = ()
    worst_actual: float = 0.0
    worst_expected: float = 0.0
    message: str = ""
    shape: Tuple[int, ...] = field(default=())

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


def _check_tolerances(atol: float, rtol: float, stat: str, quantile: float) -> None:
    for name, v in (("atol", atol), ("rtol", rtol)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    if stat not in STATS:
        raise ValueError(f"stat must be one of {', '.join(STATS)}, got {stat!r}")
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile!r}")


def _numpy64(t) -> np.ndarray:
    if hasattr(t, "detach"):  # torch tensor: via float64 (numpy has no bfloat16)
        import torch

        return t.detach().to("cpu", torch.float64).numpy()
    return np.asarray(t, dtype=np.float64)


def compare(actual, expected, *, atol: float, rtol: float, stat: str = "elemwise",
            quantile: float = 0.99) -> Comparison:
    """Compares ``actual`` with the reference ``expected`` (tensors or arrays of one shape).

    Args:
        actual, expected: torch tensors or numpy arrays of the same shape, any float dtype;
            both are converted to float64 on the CPU.
        atol, rtol: tolerances (>= 0); see the module docstring for the rule.
        stat: ``elemwise`` (default), ``max``, ``mean``, ``median`` or ``quantile``.
        quantile: the quantile used by ``stat="quantile"`` and reported as ``p99_*`` (default 0.99).

    Returns:
        :class:`Comparison`. A shape mismatch or a non-finite value where the reference is
        finite fails (``passed=False``) with a message; NaN/Inf in the same places as the
        reference count as equal.
    """
    _check_tolerances(atol, rtol, stat, quantile)
    a, e = _numpy64(actual), _numpy64(expected)
    if a.shape != e.shape:
        return Comparison(False, stat, atol, rtol, quantile, int(e.size), int(e.size), 0,
                          message=f"shape {a.shape} != expected shape {e.shape}", shape=tuple(e.shape))
    same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
    nonfinite_bad = ~np.isfinite(a) & ~same_special
    with np.errstate(invalid="ignore", divide="ignore"):
        absdiff = np.where(same_special, 0.0, np.abs(a - e))
        reldiff = np.where(absdiff == 0, 0.0, absdiff / np.abs(e))
    absdiff = np.where(nonfinite_bad, np.inf, absdiff)
    reldiff = np.where(nonfinite_bad, np.inf, reldiff)
    mism = (absdiff > atol) & (reldiff > rtol)
    n = int(a.size)

    def stats(d):
        if n == 0:
            return 0.0, 0.0, 0.0, 0.0
        with np.errstate(invalid="ignore"):
            return (float(np.max(d)), float(np.mean(d)), float(np.median(d)), float(np.quantile(d, quantile)))

    ma, mea, mda, qa = stats(absdiff)
    mr, mer, mdr, qr = stats(reldiff)
    if stat == "elemwise":
        failed = bool(mism.any())
    else:
        pa, pr = {"max": (ma, mr), "mean": (mea, mer), "median": (mda, mdr), "quantile": (qa, qr)}[stat]
        failed = pa > atol and (np.isnan(pr) or pr > rtol)
    failed = failed or bool(nonfinite_bad.any())
    worst = ()
    if n:
        score = np.where(mism, absdiff, -1.0) if mism.any() else absdiff
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(score)), a.shape))
    c = Comparison(not failed, stat, float(atol), float(rtol), float(quantile), n, int(mism.sum()),
                   int(nonfinite_bad.sum()), ma, mea, mda, qa, mr, mer, mdr, qr, worst,
                   float(a[worst]) if n else 0.0, float(e[worst]) if n else 0.0, shape=tuple(e.shape))
    if failed:
        c.message = report(c)
    return c


def report(c: Comparison, what: str = "") -> str:
    """A readable multi-line report of a comparison (what failed, the statistics, the worst element)."""
    head = f"{what}: " if what else ""
    if c.message and c.message.startswith("shape"):
        return head + c.message
    rule = ("elements with abs err > atol and rel err > rtol" if c.stat == "elemwise"
            else f"{c.stat} abs err > atol and {c.stat} rel err > rtol")
    lines = [f"{head}{'PASSED' if c.passed else 'FAILED'} ({rule}; atol={c.atol:g}, rtol={c.rtol:g})",
             f"  mismatches: {c.mismatches}/{c.numel}; NaN/Inf where the reference is finite: {c.nonfinite}",
             f"  abs err: max {c.max_abs:.3e}  mean {c.mean_abs:.3e}  median {c.median_abs:.3e}  "
             f"p{c.quantile * 100:g} {c.p99_abs:.3e}",
             f"  rel err: max {c.max_rel:.3e}  mean {c.mean_rel:.3e}  median {c.median_rel:.3e}  "
             f"p{c.quantile * 100:g} {c.p99_rel:.3e}"]
    if c.numel:
        lines.append(f"  worst element {c.worst_index}: actual {c.worst_actual:.9g}, expected {c.worst_expected:.9g}")
    return "\n".join(lines)


def assert_parity(actual, expected, *, atol: float, rtol: float, stat: str = "elemwise",
                  quantile: float = 0.99, what: str = "") -> Comparison:
    """Asserts that ``actual`` matches the reference ``expected`` (Polygraphy's rule, see :func:`compare`).

    Args: as :func:`compare`; ``what`` labels the failure report.
    Returns: the :class:`Comparison` when it passed.
    Raises: ``AssertionError`` with :func:`report`'s text when it failed; ``ValueError`` for a
    negative or non-finite tolerance, an unknown ``stat`` or a quantile outside [0, 1].
    """
    c = compare(actual, expected, atol=atol, rtol=rtol, stat=stat, quantile=quantile)
    if not c.passed:
        raise AssertionError(report(c, what))
    return c


def assert_close(actual, expected, atol: float, rtol: float, what: str = "") -> None:
    """The stricter allclose rule the twinops suite uses: ``|a - e| <= atol + rtol * |e|`` for
    every element, and no NaN/Inf in ``actual`` (shapes must match). Raises ``AssertionError``
    with the mismatch count, the largest error and where."""
    a, e = _numpy64(actual), _numpy64(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    assert np.isfinite(a).all(), f"{what}: non-finite values in the result"
    err = np.abs(a - e)
    bound = atol + rtol * np.abs(e)
    bad = err > bound
    if bad.any():
        idx = np.unravel_index(int(np.argmax(err - bound)), err.shape)
        raise AssertionError(
            f"{what}: {int(bad.sum())}/{err.size} elements out of tolerance (atol={atol}, rtol={rtol}); "
            f"max abs err {err.max():.3e} at {tuple(int(i) for i in idx)}: "
            f"actual {a[idx]:.8g}, expected {e[idx]:.8g}")
