"""Finds the per-op case modules of a tool: tools/<op>/<tool>.py, for the ops in the op list
(ops/op_list.py) that have one.

Used by tools/sanitize.py (``tools/<op>/sanitize.py``) and tools/plugin_host_sanitize.py
(``tools/<op>/plugin_host_sanitize.py``), so that an op's cases live in its folder and the
drivers name no op.
"""
import importlib.util
import os
from types import ModuleType
from typing import Dict, Iterable, List

from twinops.op_list import OPS

HERE = os.path.dirname(os.path.abspath(__file__))


def _path(tool: str, op: str) -> str:
    return os.path.join(HERE, op, f"{tool}.py")


def op_names(tool: str) -> List[str]:
    """The ops of the op list with a tools/<op>/<tool>.py, in the list's order."""
    return [op for op in OPS if os.path.exists(_path(tool, op))]


def load(tool: str, ops: Iterable[str]) -> Dict[str, ModuleType]:
    """The modules tools/<op>/<tool>.py of ``ops``, in the given order."""
    modules = {}
    for op in ops:
        spec = importlib.util.spec_from_file_location(f"{op}_{tool}", _path(tool, op))
        modules[op] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[op])
    return modules
