"""The generic parity tools on an op with every input kind (tests/kinds_op.py): an int64/int32
index input made valid by its factory, an optional input, two outputs of different dtypes, and a
non-differentiable input. The op exists only in the test tree, so these hold before a real op
needs them."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kinds_op  # noqa: E402

from twinops import check, regress  # noqa: E402
from twinops.testing import specs  # noqa: E402
from twinops.testing.inputs import make_inputs  # noqa: E402

OP = kinds_op.KINDS_GATHER


@pytest.fixture
def registered(monkeypatch):
    """The op's spec in the parity tools' registry for one test."""
    specs.registered()  # the declared ops first, so the registry is complete without it
    monkeypatch.setitem(specs._REGISTRY, OP.name, specs.from_opdef(OP))
    return specs.get(OP.name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
def test_each_input_takes_its_own_dtype_and_valid_values(dtype):
    for seed in range(10):
        data, index, weight = make_inputs(OP.inputs, [(3, 4), (25,), (4,)], dtype, seed)
        assert (data.dtype, index.dtype, weight.dtype) == (dtype, torch.int64, dtype)
        assert 0 <= int(index.min()) and int(index.max()) < 3  # rows of data, from the factory
    data, index, weight = make_inputs(OP.inputs, [(3, 4), (5,), None], torch.int32, 0)
    assert index.dtype == torch.int32 and weight is None


def test_check_compares_every_output_with_and_without_the_optional_input(registered, tmp_path, capsys):
    report = tmp_path / "r.json"
    rc = check.main(["--ops", OP.name, "--backends", "torch-cpu", "--examples", "12", "--no-progress",
                     "--out", str(tmp_path), "--report", str(report)])
    out = capsys.readouterr().out
    assert rc == 0, out
    import json

    rows = json.loads(report.read_text())["comparisons"]
    assert {r["output"] for r in rows} == {"rows", "counts"}
    shapes = [r["input_shape"] for r in rows]
    assert any(s[2] is None for s in shapes) and any(s[2] is not None for s in shapes), shapes


def test_check_fails_when_one_output_is_wrong(registered, tmp_path, capsys, monkeypatch):
    good = registered.fn

    def wrong_counts(*xs, **kw):
        rows, counts = good(*xs, **kw)
        return rows, counts + (counts == counts.max()).long()

    monkeypatch.setattr(registered, "fn", wrong_counts)
    rc = check.main(["--ops", OP.name, "--backends", "torch-cpu", "--examples", "6", "--no-progress",
                     "--out", str(tmp_path)])
    assert rc == 1 and "counts" in capsys.readouterr().out
    # the reproducers give back each input in its own dtype, and None for one left out
    replayed = [check.read_reproducer(str(p))[0] for p in tmp_path.glob("*.npz")]
    assert replayed
    for case in replayed:
        data, index, weight = case.xs()
        assert data.dtype == case.dtype and index.dtype == torch.int64
        assert (weight is None) == (case.shapes[2] is None)
        assert int(index.max()) < data.shape[0] if index.numel() else True


def test_regress_stores_each_output_and_an_omitted_input(registered, tmp_path):
    cases = regress.compute(OP.name)
    dtypes = [str(d).replace("torch.", "") for d in regress.REGRESS_DTYPES]
    assert set(cases) == {f"{label}:{name}|{d}" for label in ("weighted", "plain") for name in ("rows", "counts")
                          for d in dtypes}
    assert cases["plain:rows|float64"]["meta"]["shape"] == [[5, 2], [7], None]
    counts = cases["weighted:counts|float32"]["output"]
    assert counts.sum() == 6 and counts.dtype.kind == "f"
    path = str(tmp_path / "k.npz")
    regress.save(path, cases)
    loaded = regress.load(path)
    assert all(regress.drift(k, cases[k], loaded.get(k))["status"] == "ok" for k in cases)


def test_gradients_reach_the_differentiable_inputs_only():
    data, index, weight = make_inputs(OP.inputs, [(4, 3), (9,), (3,)], torch.float64, 3)
    wanted = [t.differentiable for t in OP.inputs]
    assert wanted == [True, False, True]
    args = [x.requires_grad_(w) for x, w in zip((data, index, weight), wanted)]
    assert torch.autograd.gradcheck(lambda d, i, w: kinds_op.kinds_gather(d, i, w, 0.5)[0], args)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        index.float().long().requires_grad_()  # an index cannot even ask for a gradient
