#!/usr/bin/env bash
# The GPU run: the whole suite, the plugin host, the sanitizer and the benches. From the repository
# root:
#
#     bash tools/gpu_check.sh [STEP ...]          # default: plugins memcheck
#     OPS="roi_align deform_conv2d" bash tools/gpu_check.sh suite sanitize bench
#
# TensorRT headers: $TWINOPS_TRT_HEADERS or .trt/10/include (git-ignored: carry it to the GPU machine).
# The plugin library's kernel objects are cached in build/trt/kernels.<digest> by content (sources,
# headers, flags; not paths): built on another machine with the same nvcc and carried along, they
# spare this machine their compile.
# Steps 1-2 always run (the plugin build is cached by content, ~10 s when warm), so the other steps
# can be run in separate calls to stay under a per-command time limit.
#
# Steps (each runs even when an earlier one failed; the summary at the end lists them all):
#   1. environment: nvidia-smi, torch + CUDA, twinops built with CUDA kernels (built here if not)
#   2. libtwinops_trt.so against the TensorRT headers (csrc/trt/build.py, sm_90)
#   suite:    the whole test suite, `pytest -n 16 --run-slow` (every header set under .trt/*/include)
#   plugins:  tests/test_plugin_host.py, every op's tests/<op>/test_<op>_plugins.py and the plugin
#             tests of tests/test_conformance.py (no enqueue test may be skipped)
#   memcheck: compute-sanitizer memcheck over tools/plugin_host_sanitize.py
#   sanitize: compute-sanitizer memcheck over tools/sanitize.py for $OPS (default: every op)
#   bench:    python -m twinops.bench for $OPS (default: every op), tables in $LOGDIR/bench_<op>.md,
#             then tools/<op>/layouts.py where the op has one (its kernel variants side by side)
# Exit status 0 only when every step passed. Logs go to $LOGDIR (default /tmp/twinops_gpu_check).
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HDR=${TWINOPS_TRT_HEADERS:-$ROOT/.trt/10/include}
LOGDIR=${LOGDIR:-/tmp/twinops_gpu_check}
LIB=$ROOT/build/trt/gpu/libtwinops_trt.so
STEPS=${*:-plugins memcheck}
OPS=${OPS:-}
PY=${PYTHON:-$(command -v python || command -v python3)}
SANITIZER=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
mkdir -p "$LOGDIR"
declare -a SUMMARY=()
status=0
step() {  # step NAME CMD...: run, tee the log, record the result
    local name=$1; shift
    echo "=== $name: $*"
    "$@" 2>&1 | tee "$LOGDIR/$name.log"
    local rc=${PIPESTATUS[0]}
    SUMMARY+=("$name rc=$rc: $(grep -E 'passed|failed|sanitize:|ERROR SUMMARY|built |target' "$LOGDIR/$name.log" | tail -2 | tr '\n' ' ')")
    [ "$rc" -eq 0 ] || status=1
    return "$rc"
}

echo "=== environment"
nvidia-smi -L || status=1
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpu', torch.cuda.is_available())"
if [ ! -f "$HDR/NvInfer.h" ]; then
    echo "FATAL: no TensorRT headers at $HDR (carry .trt/10 to this machine or set TWINOPS_TRT_HEADERS)"
    exit 2
fi
if ! "$PY" -c "import twinops, sys; sys.exit(0 if twinops.has_cuda_kernels() else 1)" 2>/dev/null; then
    step build_twinops env TWINOPS_CUDA=1 TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=${MAX_JOBS:-16} \
        "$PY" -m pip install --no-build-isolation --no-deps -e . \
        || { echo "FATAL: twinops CUDA build failed"; printf '%s\n' "${SUMMARY[@]}"; exit 1; }
fi

step build_plugins "$PY" csrc/trt/build.py --include "$HDR" --out "$LIB" --arch 90 \
    || { echo "FATAL: plugin library build failed"; printf '%s\n' "${SUMMARY[@]}"; exit 1; }

export TWINOPS_TRT_PLUGIN_LIB=$LIB TWINOPS_TRT_HEADERS=$HDR TWINOPS_CACHE=$LOGDIR/cache
"$PY" -c "from twinops import plugin_host as ph; r = ph.unavailable_reason(); print('plugin host:', r or 'ready'); raise SystemExit(1 if r else 0)" \
    || status=1

if [[ " $STEPS " == *" suite "* ]]; then
    # without TWINOPS_TRT_HEADERS, tests/test_trt_build.py builds against every .trt/*/include
    step suite env -u TWINOPS_TRT_HEADERS "$PY" -m pytest -q -n 16 --run-slow -p no:cacheprovider
fi
if [[ " $STEPS " == *" plugins "* ]]; then
    step plugins "$PY" -m pytest -q -rs tests/test_plugin_host.py tests/*/test_*_plugins.py tests/test_conformance.py \
        -k plugin
    if grep -qE "SKIPPED.*(plugin host enqueue:|enqueue parity needs)" "$LOGDIR/plugins.log"; then
        echo "ERROR: enqueue tests were skipped on the GPU machine"; status=1
    fi
fi
if [[ " $STEPS " == *" memcheck "* ]]; then
    step memcheck env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$SANITIZER" --tool memcheck --error-exitcode 1 \
        "$PY" tools/plugin_host_sanitize.py
fi
if [[ " $STEPS " == *" sanitize "* ]]; then
    # shellcheck disable=SC2086  # $OPS: a list of op names
    step sanitize env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$SANITIZER" --tool memcheck --error-exitcode 1 \
        "$PY" tools/sanitize.py $OPS
fi
if [[ " $STEPS " == *" bench "* ]]; then
    for op in ${OPS:-$("$PY" -c "from twinops.bench.cli import registered; print(*registered())")}; do
        step "bench_$op" "$PY" -m twinops.bench "$op" --markdown "$LOGDIR/bench_$op.md" --json "$LOGDIR/bench_$op.json"
        # an op's own comparison of its kernel variants, where it has one
        if [ -f "tools/$op/layouts.py" ]; then
            step "layouts_$op" "$PY" "tools/$op/layouts.py"
        fi
    done
fi

echo "=== summary (logs in $LOGDIR)"
printf '%s\n' "${SUMMARY[@]}"
echo "gpu_check: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
