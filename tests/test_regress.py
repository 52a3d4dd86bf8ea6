"""`python -m twinops regress`: golden baselines pass on CPU, drift is caught, --update rewrites."""
import hashlib
import pathlib
import shutil

import pytest
import torch

from twinops import regress
from twinops.testing import specs


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_committed_baselines_pass_on_cpu(capsys):
    assert regress.main([]) == 0
    out = capsys.readouterr().out
    assert "0 failed (cpu)" in out
    # one line per case, dtype and output
    n = sum(len(s.regress_cases) * len(s.outputs) for s in specs.registered().values()) * len(regress.REGRESS_DTYPES)
    assert f"{n} ok" in out


def test_baselines_are_small():
    files = list(pathlib.Path(regress.DEFAULT_DIR).glob("*.npz"))
    assert {f.stem for f in files} == {n for n, s in specs.registered().items() if s.regress_cases}
    assert sum(f.stat().st_size for f in files) < 300_000


@pytest.fixture
def baselines(tmp_path):
    d = tmp_path / "baselines"
    shutil.copytree(regress.DEFAULT_DIR, d)
    return d


def test_drift_fails_then_update_accepts_it(baselines, monkeypatch, capsys):
    spec = specs.get("interpolate")
    real = spec.fn
    monkeypatch.setattr(spec, "fn", lambda x, **kw: real(x, **kw) * 1.001)
    assert regress.main(["--ops", "interpolate", "--dir", str(baselines)]) == 1
    out = capsys.readouterr().out
    assert "drift" in out and "bicubic|float32" in out and "regress --update" in out
    assert regress.main(["--ops", "interpolate", "--dir", str(baselines), "--update"]) == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "changed" in out
    first = _md5(baselines / "interpolate.npz")
    assert regress.main(["--ops", "interpolate", "--dir", str(baselines)]) == 0
    # rewriting the same numbers gives the same bytes (deterministic files, no timestamps)
    (baselines / "interpolate.npz").unlink()
    assert regress.main(["--ops", "interpolate", "--dir", str(baselines), "--update"]) == 0
    assert _md5(baselines / "interpolate.npz") == first


def test_drift_within_the_ulp_tolerance_passes_and_is_reported(baselines, monkeypatch, capsys):
    spec = specs.get("interpolate")
    real = spec.fn
    # float64: a relative change of 2^-51 is ~1-2 ulps of the case's scale, within 8
    monkeypatch.setattr(spec, "fn", lambda x, **kw: real(x, **kw) * (1 + 2.0 ** -51)
                        if x.dtype == torch.float64 else real(x, **kw))
    assert regress.main(["--ops", "interpolate", "--dir", str(baselines)]) == 0
    out = capsys.readouterr().out
    assert "|float64" in out and " ok " in out


def test_missing_baselines_and_changed_inputs_fail(tmp_path, baselines, monkeypatch, capsys):
    assert regress.main(["--ops", "resize", "--dir", str(tmp_path / "empty")]) == 1
    assert "new" in capsys.readouterr().out
    from twinops.testing import inputs

    monkeypatch.setattr(inputs, "random_input", lambda shape, dtype, seed: torch.zeros(shape, dtype=dtype))
    assert regress.main(["--ops", "resize", "--dir", str(baselines)]) == 1
    assert "input-changed" in capsys.readouterr().out


def test_bad_arguments(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        regress.main(["--ops", "nope"])
    assert e.value.code == 2 and "argument --ops: unknown op 'nope'" in capsys.readouterr().err
    bad = tmp_path / "b"
    bad.mkdir()
    (bad / "resize.npz").write_bytes(b"garbage")
    with pytest.raises(SystemExit) as e:
        regress.main(["--ops", "resize", "--dir", str(bad)])
    assert e.value.code == 2 and "argument --dir: cannot read baseline" in capsys.readouterr().err


@pytest.mark.parametrize("value,dtype,expected", [
    (1.0, torch.float32, 2.0 ** -23), (1.0, torch.float64, 2.0 ** -52), (1.0, torch.float16, 2.0 ** -10),
    (1.0, torch.bfloat16, 2.0 ** -7), (3.0, torch.float32, 2.0 ** -22), (0.0, torch.float16, 2.0 ** -24),
    (-0.75, torch.float32, 2.0 ** -24)])
def test_ulp(value, dtype, expected):
    assert regress.ulp(value, dtype) == expected
    if dtype != torch.bfloat16 and value != 0:  # cross-check with torch.nextafter
        v = torch.tensor(abs(value), dtype=dtype)
        assert (torch.nextafter(v, torch.tensor(float("inf"), dtype=dtype)) - v).item() == expected
