"""The house's layout: each op family of the op list (ops/op_list.py) is a folder in every layer,
and a layer's root holds generic code only.

* every family has its folder in each layer (and docs/ops/<op>.md), and every folder of those
  layers is a family of the list;
* no file at a layer's root carries an op's name, and the roots of the source layers (csrc/*,
  the ``twinops`` package, its bench/, testing/ and library/, tools/) name no op in their text,
  except the two op lists themselves (ops/op_list.py, csrc/trt/plugin_creators.cpp). The root of
  tests/ is held to file names only: its generic tests drive a real op as their example;
* a file named after a family lies in that family's folders (or in docs/, baselines/).

An op's names are its family's, every declared op's (``twinops.opdef``), its ONNX node's and its
plugin creators'.
"""
import os
import re
import subprocess

import pytest

from twinops import opdef
from twinops.op_list import OPS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OP_LAYERS = ("csrc/kernels", "csrc/torch", "csrc/trt", "ops/library", "tests", "tools")
SOURCE_ROOTS = ("csrc/common", "csrc/kernels", "csrc/torch", "csrc/trt", "csrc/trt_host", "ops", "ops/bench",
                "ops/testing", "ops/library", "tools")
OP_LISTS = ("ops/op_list.py", "csrc/trt/plugin_creators.cpp")


def _tracked():
    try:
        # tracked, and new files not yet added (not ignored): the tree as it will be committed
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [p for p in out.splitlines() if os.path.isfile(os.path.join(ROOT, p))]


def _names():
    """Every name of an op: (snake_case names, other names such as node and creator names)."""
    snake = set(OPS)
    other = set()
    for op in opdef.registered().values():
        snake.add(op.name)
        other.add(op.node.op_type)
        other.update(c.name for c in op.plugins)
    return snake, other - snake


def _pattern():
    snake, other = _names()
    words = sorted(snake | other, key=len, reverse=True)
    # `.resize(` is std::vector's, not an op
    return re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, words)) + r")\b")


def test_every_family_is_a_folder_in_every_layer():
    missing = [f"{layer}/{op}/" for op in OPS for layer in OP_LAYERS if not os.path.isdir(os.path.join(ROOT, layer, op))]
    missing += [f"docs/ops/{op}.md" for op in OPS if not os.path.isfile(os.path.join(ROOT, "docs", "ops", f"{op}.md"))]
    assert not missing, f"op folders missing: {missing}"
    tracked = _tracked()
    for layer in OP_LAYERS:
        folders = {p[len(layer) + 1:].split("/")[0] for p in tracked if p.startswith(layer + "/") and
                   "/" in p[len(layer) + 1:]}
        assert folders <= set(OPS), f"{layer}/ has folders that are not op families of ops/op_list.py: " \
                                    f"{sorted(folders - set(OPS))}"


def test_no_file_at_a_layer_root_carries_an_op_name():
    snake, other = _names()
    names = {n.lower() for n in snake | other}
    bad = [p for p in _tracked() if os.path.dirname(p) in SOURCE_ROOTS + ("tests",)
           and any(n in os.path.basename(p).lower() for n in names)]
    assert not bad, f"files at a layer's root named after an op (move them to the op's folder): {bad}"


def test_the_source_roots_name_no_op():
    pattern = _pattern()
    bad = []
    for p in _tracked():
        if os.path.dirname(p) in SOURCE_ROOTS and p not in OP_LISTS and p.endswith((".py", ".h", ".cuh", ".cu", ".cpp")):
            with open(os.path.join(ROOT, p), encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = pattern.search(line)
                    if m:
                        bad.append(f"{p}:{n}: {m.group(1)}: {line.strip()}")
    assert not bad, "generic files that name an op:\n" + "\n".join(bad)


def test_files_named_after_a_family_lie_in_its_folders():
    bad = []
    for p in _tracked():
        if p.startswith(("docs/", "baselines/")):
            continue
        for op in OPS:
            if op in os.path.basename(p) and f"/{op}/" not in f"/{p}":
                bad.append(p)
    assert not bad, f"files named after an op outside its folders: {bad}"


def test_every_python_package_is_one_setup_installs():
    """setup.py lists twinops' packages (a wheel has only those): the generic ones and one per
    family of the op list, which must be every package folder under ops/."""
    generic = {"twinops", "twinops.bench", "twinops.testing", "twinops.library"}
    found = {"twinops" + ("." + os.path.dirname(p)[len("ops/"):].replace("/", ".") if os.path.dirname(p) != "ops" else "")
             for p in _tracked() if p.startswith("ops/") and p.endswith("/__init__.py")}
    assert found == generic | {f"twinops.library.{op}" for op in OPS}
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        setup = f.read()
    assert all(f'"{p}"' in setup for p in generic) and "twinops.library.{op}" in setup  # the op list's


def test_the_generated_choice_tables_are_current():
    """csrc/kernels/<op>/<op>_choices.h (the C++ tables of the enum attributes) are what
    tools/gen_choices.py writes from the declarations: a choice is written once, in Python."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_choices", os.path.join(ROOT, "tools", "gen_choices.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.stale() == [], "run python tools/gen_choices.py"
    for op in gen._op_list():  # one header per family with enum attributes, holding at least their tables
        text = open(gen.path(op)).read()
        for name in gen._tables(op):
            assert f" {name}[] = " in text
