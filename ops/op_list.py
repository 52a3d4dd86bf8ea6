"""The op list: every op family of twinops, in registration order. It is the one place a new op
is named outside its own folders (with the C++ creator list, csrc/trt/plugin_creators.cpp).

Each name is a folder in every layer: ``csrc/kernels/<op>/``, ``csrc/torch/<op>/``,
``csrc/trt/<op>/``, the Python package ``twinops.library.<op>`` (``ops/library/<op>/``),
``tests/<op>/``, ``tools/<op>/``, and ``docs/ops/<op>.md``. setup.py and csrc/trt/build.py read
this file without importing twinops, so it holds nothing but the tuple.
"""

OPS = ("resize", "grid_sample", "nms", "ms_deform_attn", "deform_conv2d", "roi_align")
