"""Shared pytest setup: twinops' own pytest plugin (Hypothesis profiles, the device parameter,
markers cuda / trt_headers / tensorrt / slow with skip reasons). User suites enable it the same way."""
import os
import sys

pytest_plugins = ["twinops.testing.pytest_plugin"]

# tests/ holds helper modules (resize_spec) imported by name
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
