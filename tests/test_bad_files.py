"""Bad files given to the CLI (check's --replay and --report, regress's baselines) exit 2 with
one line naming the file and the problem, never a traceback."""
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import torch

from twinops import __main__ as cli
from twinops import check, regress

# ---------------------------------------------------------------------------------------
# CLI: bad files exit 2 with one line naming the file and the problem
# ---------------------------------------------------------------------------------------

def _one_line_exit_2(argv, capsys, *expected):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for piece in expected:
        assert piece in lines[0], (piece, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def reproducer(tmp_path_factory):
    """A valid reproducer, written as check writes one."""
    d = tmp_path_factory.mktemp("repro")
    case = check.Case("interpolate", torch.float32, (1, 1, 3, 4), dict(size=[5, 6], mode="bilinear"), 0, "edge", 7)
    r = check.Result(case, "torch-cpu", "reference", "output", None)
    args = type("A", (), dict(out=str(d), atol=None, rtol=None, check_error_stat="elemwise", error_quantile=0.99))
    path = check.write_reproducer(r, args)
    check.read_reproducer(path)  # readable as written
    return path


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return str(path)


def _bad_reproducers(tmp_path, good):
    with np.load(good) as f:
        meta, x = json.loads(str(f["meta"])), f["input"]
    data = open(good, "rb").read()
    (tmp_path / "trunc.npz").write_bytes(data[: len(data) // 2])
    (tmp_path / "text.npz").write_bytes(b"not a zip file")
    np.save(tmp_path / "single.npy", x)
    bad_member = tmp_path / "member.npz"
    with zipfile.ZipFile(bad_member, "w") as zf:
        zf.writestr("meta.npy", b"\x93NUMPY garbage")
        zf.writestr("input.npy", b"")
    return [
        (str(tmp_path / "missing.npz"), "no such file"),
        (str(tmp_path), "it is a directory"),
        (str(tmp_path / "trunc.npz"), "truncated or not a zip archive"),
        (str(tmp_path / "text.npz"), "not a reproducer .npz archive"),
        (str(tmp_path / "single.npy"), "it is a single .npy array"),
        (str(bad_member), "cannot read reproducer"),
        (_npz(tmp_path / "nometa.npz", input=x), "it has no meta entry"),
        (_npz(tmp_path / "badjson.npz", input=x, meta=np.array("{not json")), "entry 'meta' is not valid JSON"),
        (_npz(tmp_path / "list.npz", input=x, meta=np.array("[1, 2]")), "entry 'meta' must be a JSON object"),
        (_npz(tmp_path / "nokw.npz", input=x, meta=np.array(json.dumps({**meta, "kwargs": [1]}))),
         "meta field 'kwargs' must be a dict"),
        (_npz(tmp_path / "backend.npz", input=x, meta=np.array(json.dumps({**meta, "backend": "gpu9000"}))),
         "unknown backend 'gpu9000'"),
        (_npz(tmp_path / "op.npz", input=x, meta=np.array(json.dumps({**meta, "op": "nope"}))), "unknown op 'nope'"),
        (_npz(tmp_path / "dtype.npz", input=x, meta=np.array(json.dumps({**meta, "dtype": "int3"}))),
         "unknown dtype 'int3'"),
        (_npz(tmp_path / "shape.npz", input=x[0], meta=np.array(json.dumps(meta))),
         "entry 'input' must be a float array of the meta shape [1, 1, 3, 4]"),
    ]


def test_replay_bad_files_exit_2_with_one_line(tmp_path, reproducer, capsys):
    for path, problem in _bad_reproducers(tmp_path, reproducer):
        line = _one_line_exit_2(["check", "--replay", path, "--no-progress"], capsys,
                                "argument --replay: cannot read reproducer", repr(path), problem)
        assert line.startswith("python -m twinops check: error: ")


def test_replay_bad_file_from_the_shell_has_no_traceback(tmp_path):
    bad = tmp_path / "trunc.npz"
    bad.write_bytes(b"PK\x03\x04" + b"\0" * 10)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, "-m", "twinops", "check", "--replay", str(bad)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        f"python -m twinops check: error: argument --replay: cannot read reproducer {str(bad)!r}: "
        "truncated or not a zip archive (BadZipFile: File is not a zip file)"], p.stderr


def test_report_naming_a_directory_is_refused_before_the_run(tmp_path, capsys):
    _one_line_exit_2(["check", "--ops", "interpolate", "--examples", "1", "--report", str(tmp_path)], capsys,
                     f"argument --report: report {str(tmp_path)!r} is a directory; give a file name")
    assert "backends:" not in capsys.readouterr().out  # nothing ran
    missing = tmp_path / "no" / "r.json"
    _one_line_exit_2(["check", "--report", str(missing)], capsys,
                     f"argument --report: report {str(missing)!r}: directory {str(missing.parent)!r} does not exist")


@pytest.fixture
def baseline_dir(tmp_path):
    d = tmp_path / "baselines"
    d.mkdir()
    regress.save(str(d / "resize.npz"), regress.compute("resize"))
    return d


def test_regress_bad_baselines_exit_2_with_one_line(baseline_dir, capsys):
    path = baseline_dir / "resize.npz"
    good = path.read_bytes()
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["meta"]))
    key = sorted(meta)[0]
    bad = [
        (good[: len(good) // 3], "truncated or not a zip archive"),
        (good[:-40], "truncated or not a zip archive"),
        (b"garbage", "not a baseline .npz archive"),
        ({k: v for k, v in arrays.items() if k != "meta"}, "it has no 'meta' entry"),
        ({**arrays, "meta": np.array("[]")}, "entry 'meta' must be a JSON object, got list"),
        ({**arrays, "meta": np.array(json.dumps({**meta, key: {"shape": [1]}}))},
         f"meta of case {key!r} must hold shape, kwargs and input_sha256"),
        ({**arrays, "meta": np.array(json.dumps({**meta, "x|notadtype": meta[key]}))},
         "case key 'x|notadtype' is not 'label|dtype'"),
        ({k: v for k, v in arrays.items() if k != key}, f"it has no output array for case {key!r}"),
    ]
    for content, problem in bad:
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            np.savez(path, **content)
        _one_line_exit_2(["regress", "--ops", "resize", "--dir", str(baseline_dir)], capsys,
                         f"argument --dir: cannot read baseline {str(path)!r}", problem)
    path.write_bytes(good)
    assert cli.main(["regress", "--ops", "resize", "--dir", str(baseline_dir)]) == 0


def test_regress_dir_that_is_not_a_directory(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    _one_line_exit_2(["regress", "--dir", str(f)], capsys, f"argument --dir: {str(f)!r} is a file, not a directory")
