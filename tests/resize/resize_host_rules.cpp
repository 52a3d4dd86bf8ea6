// Host rules of the CUDA launchers (resize.cuh), built by tests/resize/test_resize_host_rules.py with the
// host compiler (no CUDA needed): which nearest resizes the power-of-two kernels take
// (nearest_ratio), the ring kernels' grid (ring_grid) and the upscaling staged tiles' size
// (large_upscaling_tiles).
#include <cstdint>

#include "resize/resize.cuh"

using namespace twinops::resize;

namespace {
Params nearest_params(int64_t in, int64_t out, double scale, int coord) {
  Params p;
  p.mode = kNearest;
  p.coord = coord;
  p.pytorch = 1;
  p.h.in = p.w.in = in;
  p.h.out = p.w.out = out;
  p.h.scale = p.w.scale = scale;
  return p;
}

template <typename Acc>
int64_t mismatches(const Params& p, int ratio) {
  const Axis& a = p.h;
  const float rf = static_cast<float>(pytorch_step<Acc>(a, false));
  const int64_t s = ratio > 0 ? ratio : -ratio, o = ratio < 0 && p.coord == kHalfPixel ? s / 2 : 0;
  int64_t bad = 0;
  for (int64_t d = 0; d < a.out; ++d) {
    const int64_t want = ratio > 0 ? d / s : d * s + o;
    bad += pytorch_nearest_index(p, a, rf, d) != want;
  }
  return bad;
}
}  // namespace

extern "C" {
// nearest_ratio of one axis (in -> out, ATen's optional scale, coordinate mode) in float
// (dbl 0) or double opmath.
int twin_nearest_ratio(int64_t in, int64_t out, double scale, int coord, int dbl) {
  const Params p = nearest_params(in, out, scale, coord);
  return dbl ? nearest_ratio<double>(p, p.h) : nearest_ratio<float>(p, p.h);
}

// The outputs whose input (pytorch_nearest_index, axis_entry's arithmetic) is not the one the
// kernels assume for that ratio: d / s upscaling, d s + o downscaling; -1 where the ratio is 0.
int64_t twin_ratio_mismatches(int64_t in, int64_t out, double scale, int coord, int dbl) {
  const Params p = nearest_params(in, out, scale, coord);
  const int ratio = dbl ? nearest_ratio<double>(p, p.h) : nearest_ratio<float>(p, p.h);
  if (ratio == 0) return -1;
  return dbl ? mismatches<double>(p, ratio) : mismatches<float>(p, ratio);
}

// ring_grid into out[3] = {R, gy, gz}.
void twin_ring_grid(int64_t rows, int64_t gx, int64_t planes, int64_t resident, int r_max, double prologue,
                    int warps, int64_t* out) {
  const RingGrid g = ring_grid(rows, gx, planes, resident, r_max, prologue, warps);
  out[0] = g.r;
  out[1] = g.gy;
  out[2] = g.gz;
}

// large_upscaling_tiles: 1 where the upscaling staged tiles take the two-block budget's.
int twin_large_upscaling_tiles(int64_t small, int64_t resident_small, int64_t large, int64_t resident_large,
                               int64_t planes) {
  return large_upscaling_tiles(small, resident_small, large, resident_large, planes) ? 1 : 0;
}
}
