"""The docs stay true: the README's Python runs as written, and what the docs and sources cite
(files, dotted names) exists in the repository."""
import importlib
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tracked(*suffixes):
    """The repository's tracked files with one of ``suffixes`` (paths relative to ROOT)."""
    try:
        # tracked, and new files not yet added (not ignored): the tree as it will be committed
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [p for p in out.splitlines() if p.endswith(suffixes) and os.path.isfile(os.path.join(ROOT, p))]


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def _python_blocks(path):
    return re.findall(r"```python\n(.*?)```", _read(path), flags=re.S)


@pytest.mark.parametrize("index", range(len(_python_blocks("README.md"))))
def test_readme_python_runs_as_written(index, tmp_path):
    """Each ```python block of README.md, as a user runs it (any machine: the TensorRT part is
    guarded): no error, and nothing on stderr (no warning, no log line)."""
    code = _python_blocks("README.md")[index]
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr


def test_readme_has_python_blocks():
    assert _python_blocks("README.md")


# Paths the docs and sources cite: under a top-level folder, ending in a file extension.
_PATH = re.compile(r"(?<![\w/.-])((?:ops|csrc|tests|tools|docs|baselines|\.ci)/[\w/.-]*\.(?:md|py|h|cuh|cu|cpp|npz|sh))\b")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_NAME = re.compile(r"`(twinops(?:\.[A-Za-z_]\w*)+)")


def test_cited_files_exist():
    """Every repository path named in a tracked doc or source, and every relative link of a doc."""
    missing = []
    for path in _tracked(".md", ".py", ".h", ".cuh", ".cu", ".cpp", ".sh", "run"):
        text = _read(path)
        for cited in _PATH.findall(text):  # from the root, or (a doc's link) from its folder
            if not any(os.path.exists(os.path.join(ROOT, base, cited)) for base in ("", os.path.dirname(path))):
                missing.append(f"{path}: {cited}")
        if path.endswith(".md"):
            for link in _LINK.findall(text):
                if "://" not in link and not os.path.exists(os.path.normpath(os.path.join(ROOT, os.path.dirname(path), link))):
                    missing.append(f"{path}: link {link}")
    assert not missing, "\n".join(missing)


def _resolves(name):
    """``name`` reached from ``import twinops`` by attributes, importing a submodule only where an
    attribute is missing (as ``import twinops.x.y`` would)."""
    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i, attr in enumerate(parts[1:], 2):
        if not hasattr(obj, attr):
            try:
                importlib.import_module(".".join(parts[:i]))
            except ImportError:
                return False
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def test_cited_names_resolve():
    """Every `twinops.x.y` a doc names in code spans is reachable from ``import twinops`` as written."""
    bad = sorted({f"{path}: {name}" for path in _tracked(".md") for name in _NAME.findall(_read(path))
                  if not _resolves(name)})
    assert not bad, "\n".join(bad)


def test_nothing_outside_the_repository_is_cited():
    """No citation of the project's design notes that live outside the repository, nor of issue
    numbers: a reader has only the repository."""
    design = "DESIGN" + ".md"
    issue = re.compile(r"\b[Ii]ssues? #?\d+")
    bad = [f"{path}:{n}: {line.strip()}" for path in _tracked(".md", ".py", ".h", ".cuh", ".cu", ".cpp", ".sh", "run")
           for n, line in enumerate(_read(path).splitlines(), 1) if design in line or issue.search(line)]
    assert not bad, "\n".join(bad)
