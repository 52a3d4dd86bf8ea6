"""The GPU-only tools keep working where CI can run them: each op family's compute-sanitizer
cases (tools/<op>/sanitize.py) run on the CPU, its plugin-host cases
(tools/<op>/plugin_host_sanitize.py) reach every creator the family declares, and the
standalone CUDA tools (tools/**/*.cu) compile. The family of an op is the package of the op list
that defines its API (interpolate, resize and dynamic_resize: ``twinops.library.resize``)."""
import glob
import os
import subprocess
import sys
import types

import pytest
import torch

import build_tools
from twinops import opdef
from twinops import plugin_host as ph
from twinops.op_list import OPS as OP_LIST

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
sys.path.insert(0, TOOLS)
from op_cases import load, op_names  # noqa: E402
from plugin_host_sanitize import DTYPES  # noqa: E402

OPS = list(opdef.registered().values())


def _family(op) -> str:
    return opdef.resolve(op.api).__module__.split(".")[2]  # twinops.library.<family>.api


FAMILIES = [f for f in OP_LIST if any(_family(op) == f for op in OPS)]
WITH_PLUGINS = [f for f in OP_LIST if any(_family(op) == f and op.plugins for op in OPS)]


def test_every_op_family_has_sanitizer_cases():
    assert FAMILIES, "no registered ops"
    assert FAMILIES == list(OP_LIST), "every family of the op list declares ops"
    assert op_names("sanitize") == FAMILIES, "tools/<op>/sanitize.py per op family"
    assert op_names("plugin_host_sanitize") == WITH_PLUGINS, "tools/<op>/plugin_host_sanitize.py per family with plugins"


@pytest.mark.parametrize("quick", [True, False], ids=["quick", "full"])
@pytest.mark.parametrize("family", FAMILIES)
def test_sanitize_cases_run_on_the_cpu(family, quick):
    (module,) = load("sanitize", [family]).values()
    assert module.cases(torch.Generator().manual_seed(0), quick) > 0


@pytest.mark.parametrize("family", WITH_PLUGINS)
def test_plugin_host_cases_reach_every_declared_creator(family, monkeypatch):
    """The enqueue calls are recorded instead of run (no GPU here): over the driver's dtypes,
    every creator the family's ops declare must be driven and some case checked."""
    reached = set()

    def run_plugin(node, inputs, shape_inputs=None, **kw):
        reached.add(node[0] if isinstance(node, tuple) else node.op_type)
        return [torch.empty(0, dtype=inputs[0].dtype)]

    monkeypatch.setattr(ph, "run_plugin", run_plugin)  # an op's own wrappers call it through the module
    # No TensorRT headers here either: a driver that asks which TensorRT the library was built
    # against (for the interfaces and types it has) hears the newest, which has every creator.
    monkeypatch.setattr(ph, "get_host", lambda: types.SimpleNamespace(trt_major=11))
    (module,) = load("plugin_host_sanitize", [family]).values()
    checked = []
    for dtype in DTYPES:
        module.cases(torch.Generator().manual_seed(0), dtype, lambda what, got, want: checked.append(what))
    declared = {c.name for op in OPS if _family(op) == family for c in op.plugins}
    assert declared <= reached, f"creators without plugin-host sanitizer cases: {sorted(declared - reached)}"
    assert checked


@pytest.mark.parametrize("source", sorted(glob.glob(os.path.join(TOOLS, "**", "*.cu"), recursive=True)), ids=os.path.basename)
def test_standalone_cuda_tools_compile(source, tmp_path):
    """The standalone CUDA tools (microbenchmarks run by hand on a GPU) compile for sm_90 as their
    header says (-ewp and cudadevrt: the tail-launch variants use dynamic parallelism)."""
    nvcc = build_tools.nvcc()
    if nvcc is None:
        pytest.skip("needs nvcc (set CUDA_HOME)")
    cmd = [nvcc, "-O3", "-arch=sm_90", "-ewp", "-std=c++17", source, "-lcudadevrt", "-o", str(tmp_path / "tool")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"


def _sass(body: str) -> str:
    """A cuobjdump -sass dump of one kernel `_Z1kv` whose instructions are `body` (';'-separated)."""
    lines = ["\tcode for sm_90", "\t\tFunction : _Z1kv"]
    for i, ins in enumerate(s.strip() for s in body.split(";") if s.strip()):
        lines.append(f"        /*{16 * i:04x}*/                   {ins} ;")
    return "\n".join(lines) + "\n"


def test_sass_loops_compares_the_hot_loop(tmp_path, capsys):
    import sass_loops

    loop = "MOV R1, R2; FFMA R2, R3, R4, R5; IMAD R6, R7, R8, R9; FFMA R2, R3, R4, R5; @P0 BRA 0x10; EXIT"
    moved = "MOV R1, R2; IMAD R6, R7, R8, R9; FFMA R2, R3, R4, R5; FFMA R2, R3, R4, R5; @P0 BRA 0x10; EXIT"
    assert sass_loops.hot_loops(sass_loops.functions(_sass(loop))["_Z1kv"]) == [["FFMA", "IMAD", "FFMA", "BRA"]]
    # A callee listed after the kernel's body (a CALL.REL target), with a loop of more FFMA
    # than the kernel's: not a hot loop of the kernel.
    called = ("MOV R1, R2; FFMA R2, R3, R4, R5; @P0 BRA 0x10; CALL.REL.NOINC 0x50; EXIT;"
              "FFMA R2, R3, R4, R5; FFMA R2, R3, R4, R5; FFMA R2, R3, R4, R5; @P1 BRA 0x50; RET.REL.NODEC R20 0x0")
    assert sass_loops.hot_loops(sass_loops.functions(_sass(called))["_Z1kv"]) == [["FFMA", "BRA"]]
    paths = []
    for name, body in [("ref", loop), ("same", loop.replace("R2", "R12")), ("moved", moved)]:
        paths.append(str(tmp_path / f"{name}.sass"))
        (tmp_path / f"{name}.sass").write_text(_sass(body))
    assert sass_loops.main(paths + ["--family", "k"]) == 0
    row = capsys.readouterr().out.splitlines()[-1].split()
    # registers do not count; the order does
    assert row[:5] == ["k", "1/1", "1.000", "0/1", "0.750"], row
