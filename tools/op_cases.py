"""Finds the per-op case modules of a tool: tools/<prefix>_<op>.py, one per op.

Used by tools/sanitize.py (``sanitize_<op>.py``) and tools/plugin_host_sanitize.py
(``plugin_host_sanitize_<op>.py``), so that an op's cases live in a file named after it and
the drivers name no op.
"""
import glob
import importlib.util
import os
from types import ModuleType
from typing import Dict, Iterable, List

HERE = os.path.dirname(os.path.abspath(__file__))


def op_names(prefix: str) -> List[str]:
    """The ops with a tools/<prefix>_<op>.py, sorted."""
    start = f"{prefix}_"
    return sorted(os.path.basename(p)[len(start):-3] for p in glob.glob(os.path.join(HERE, f"{start}*.py")))


def load(prefix: str, ops: Iterable[str]) -> Dict[str, ModuleType]:
    """The modules tools/<prefix>_<op>.py of ``ops``, in the given order."""
    modules = {}
    for op in ops:
        spec = importlib.util.spec_from_file_location(f"{prefix}_{op}", os.path.join(HERE, f"{prefix}_{op}.py"))
        modules[op] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[op])
    return modules
