"""Shared by the ONNX export tests (test_export.py, test_export_replace.py); import it after their
pytest.importorskip("onnx") lines."""
import warnings

import torch

from twinops.onnx_export import export_onnx


def export_quietly(model, args, dynamo, dynamic=None, narrowing_ok=True, **kwargs):
    """export_onnx(model.eval(), args, dynamo=dynamo, **kwargs) -> ModelProto, without the exporters'
    deprecation and tracer warnings. ``dynamic``: {input index: [dims]}, translated for either
    exporter (the TorchScript one names the inputs in0, in1, ...); default None: static shapes.
    ``narrowing_ok=False`` turns the float32-narrowing UserWarning into an error."""
    names = [f"in{i}" for i in range(len(args))]
    if dynamic:
        if dynamo:
            d = torch.export.Dim.DYNAMIC
            kwargs["dynamic_shapes"] = tuple({k: d for k in dynamic.get(i, [])} or None for i in range(len(args)))
        else:
            kwargs["dynamic_axes"] = {names[i]: {k: f"d{i}_{k}" for k in dims} for i, dims in dynamic.items()}
    if not dynamo:
        kwargs["input_names"] = names
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        warnings.filterwarnings("ignore" if narrowing_ok else "error", message=".*not representable in float32.*")
        return export_onnx(model.eval(), args, dynamo=dynamo, **kwargs)
