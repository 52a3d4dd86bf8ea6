"""One sub-package per op family, named in ops/op_list.py (``twinops.library.<op>``).

Each holds the op's declaration (``declaration``), its API, modules, fake kernels and autograd
glue (``api``), its ONNX faces: symbolics, translations, onnx.reference kernel, replacements of
PyTorch's own ops (``export``), its float64 reference and tolerances (``reference``), its
Hypothesis strategies (``strategies``) and its bench cases (``bench``). The package's ``__all__``
is what ``import twinops`` exports of it.
"""
