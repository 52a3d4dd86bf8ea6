// Helper of tests/resize/test_resize_tables.py (a C ABI for ctypes; no torch headers): builds one axis's
// resize table with resize_axis_entry on the host and on the device, and reports the
// workspace widths, so the test can check that both tables are bitwise equal and that the
// host's exact widths hold the device's windows. Compile with the flags of the real build:
//   nvcc -O3 -std=c++17 -shared -Xcompiler -fPIC,-ffp-contract=off -I csrc/kernels \
//        tests/resize/resize_tables_parity.cu csrc/kernels/resize/resize_host.cpp -o libtables_parity.so
// -DTWIN_TEST_CONTRACT is the negative control: the device may fuse the table products
// into FMAs again (mul_rn becomes a plain product), and the tables should then differ.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#ifdef TWIN_TEST_CONTRACT
#define __fmul_rn(a, b) ((a) * (b))
#define __dmul_rn(a, b) ((a) * (b))
#endif
#include "resize/resize.cuh"

namespace R = twinops::resize;

namespace {

// cfg: in, out, scale, roi_start, roi_end, mode, coord, nearest, cubic_a, exclude_outside,
// antialias, pytorch. Both axes get the same one (the table is built for H).
R::Params params_of(const double* cfg) {
  R::Params p;
  R::Axis a;
  a.in = static_cast<int64_t>(cfg[0]);
  a.out = static_cast<int64_t>(cfg[1]);
  a.scale = cfg[2];
  a.roi_start = static_cast<float>(cfg[3]);
  a.roi_end = static_cast<float>(cfg[4]);
  p.h = p.w = a;
  p.mode = static_cast<int32_t>(cfg[5]);
  p.coord = static_cast<int32_t>(cfg[6]);
  p.nearest = static_cast<int32_t>(cfg[7]);
  p.cubic_a = static_cast<float>(cfg[8]);
  p.exclude_outside = static_cast<int32_t>(cfg[9]);
  p.antialias = static_cast<int32_t>(cfg[10]);
  p.pytorch = static_cast<int32_t>(cfg[11]);
  return p;
}

template <typename Acc>
__global__ void entries_kernel(R::Params p, int32_t taps, int32_t* first, Acc* weight) {
  const int64_t d = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (d < p.h.out) R::resize_axis_entry<Acc>(p, p.h, d, taps, first, weight);
}

int fail(char* err, int len, const char* what, cudaError_t e) {
  std::snprintf(err, static_cast<size_t>(len), "%s: %s", what, cudaGetErrorString(e));
  return 2;
}

template <typename Acc>
int build(const R::Params& p, int32_t taps, int on_device, int32_t* first, Acc* weight, char* err, int len) {
  const int64_t out = p.h.out;
  if (!on_device) {
    for (int64_t d = 0; d < out; ++d) R::resize_axis_entry<Acc>(p, p.h, d, taps, first, weight);
    return 0;
  }
  int32_t* d_first = nullptr;
  Acc* d_weight = nullptr;
  cudaError_t e = cudaMalloc(&d_first, sizeof(int32_t) * out);
  if (e != cudaSuccess) return fail(err, len, "cudaMalloc", e);
  e = cudaMalloc(&d_weight, sizeof(Acc) * out * taps);
  if (e == cudaSuccess) {
    entries_kernel<Acc><<<static_cast<unsigned>((out + 127) / 128), 128>>>(p, taps, d_first, d_weight);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(first, d_first, sizeof(int32_t) * out, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(weight, d_weight, sizeof(Acc) * out * taps, cudaMemcpyDeviceToHost);
  cudaFree(d_first);
  cudaFree(d_weight);
  return e == cudaSuccess ? 0 : fail(err, len, "device table", e);
}

}  // namespace

// Returns 0 and fills first[out], weight[out * taps] (float, or double when `dbl`); 1 when the
// parameters are invalid (err says why); 2 on a CUDA error.
extern "C" int twin_tables(const double* cfg, int32_t taps, int dbl, int on_device, int32_t* first, void* weight,
                           char* err, int len) {
  const R::Params p = params_of(cfg);
  if (const char* why = R::check_params(p)) {
    std::snprintf(err, static_cast<size_t>(len), "%s", why);
    return 1;
  }
  return dbl ? build<double>(p, taps, on_device, first, static_cast<double*>(weight), err, len)
             : build<float>(p, taps, on_device, first, static_cast<float*>(weight), err, len);
}

// widths[0..2] = taps (H) and inv_taps (H) of workspace_layout(p, opmath, backward = true),
// and axis_taps (the formula bound) padded as the layout pads. Returns 1 on invalid parameters.
extern "C" int twin_widths(const double* cfg, int dbl, int32_t* widths) {
  const R::Params p = params_of(cfg);
  if (R::check_params(p)) return 1;
  const R::Workspace L = R::workspace_layout(p, dbl ? sizeof(double) : sizeof(float), true);
  int32_t bound[2] = {R::axis_taps(p, p.h), R::axis_taps(p, p.w)};
  R::pad_table_widths(bound);
  widths[0] = L.taps[0];
  widths[1] = L.inv_taps[0];
  widths[2] = bound[0];
  return 0;
}
