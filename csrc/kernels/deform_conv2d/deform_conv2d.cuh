// Deformable convolution (DCNv1 without a mask, DCNv2 with one), torchvision.ops.deform_conv2d's
// semantics: for output (n, o, oy, ox) with o in group g (of `groups`),
//   out[n, o, oy, ox] = bias[o] + sum over c < C_in / groups, tap t = (i, j) of kh x kw of
//       weight[o, c, i, j] * column(n, g * C_in / groups + c, t, oy, ox)
//   column(n, c, t, oy, ox) = mask[n, og * kh * kw + t, oy, ox] * bilinear(input[n, c], y, x)
//   y = oy * stride_h - pad_h + i * dil_h + offset[n, 2 * (og * kh * kw + t), oy, ox]
//   x = ox * stride_w - pad_w + j * dil_w + offset[n, 2 * (og * kh * kw + t) + 1, oy, ox]
// with og = c / (C_in / offset_groups) the channel's offset group, the mask 1 when absent, and
// bilinear() torchvision's: 0 when y <= -1, y >= H, x <= -1 or x >= W (nothing is read); else the
// four corners around (y, x), those inside the image read (also when their weight is 0, so an
// infinite input there makes the sample NaN as in torchvision) and those outside counted as 0. A
// NaN coordinate makes the sample NaN (its corners are read by nothing).
//
// The column index k = c * kh * kw + t runs along weight's (C_in / groups, kh, kw) dims, so a
// group's weight is a (C_out / groups, K) row-major matrix and the convolution a GEMM over K.
// Every tensor is contiguous. Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <math.h>

#include "../../common/twinops_common.h"
#include "../sampling.cuh"

namespace twinops {
namespace deform_conv2d {

struct Params {
  int64_t n = 0, c_in = 0, h = 0, w = 0;  // input (N, C_in, H, W)
  int64_t c_out = 0, kh = 1, kw = 1;      // weight (C_out, C_in / groups, kh, kw)
  int64_t groups = 1, offset_groups = 1;
  int64_t h_out = 0, w_out = 0;  // offset (N, 2 * offset_groups * kh * kw, h_out, w_out)
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  bool has_mask = false, has_bias = false;

  TWIN_HD int64_t taps() const { return kh * kw; }
  TWIN_HD int64_t group_channels() const { return c_in / groups; }       // C_in / groups
  TWIN_HD int64_t group_outputs() const { return c_out / groups; }       // C_out / groups
  TWIN_HD int64_t depth() const { return group_channels() * taps(); }    // K of a group's GEMM
  TWIN_HD int64_t positions() const { return h_out * w_out; }            // P of one image
  TWIN_HD int64_t offset_channels() const { return c_in / offset_groups; }
};

// The output length of one axis by the convolution arithmetic (torchvision's and Conv2d's):
// (size + pad_begin + pad_end - dil * (k - 1) - 1) / stride + 1, 0 when the kernel does not fit.
TWIN_HD int64_t out_size(int64_t size, int64_t k, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dil) {
  const int64_t span = size + pad_begin + pad_end - dil * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// A sample's four corners (y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1): index in the
// (H, W) plane (-1 where outside the image), weight, and the weight's derivatives wrt y and x.
template <typename Acc>
struct Corners {
  int64_t idx[4];
  Acc w[4], dy[4], dx[4];
  bool nan;      // a NaN coordinate: the sample and its coordinate gradients are NaN, input gets none
  bool outside;  // y <= -1, y >= H, x <= -1 or x >= W: the value is 0 and input gets no gradient
};

// The corners of coordinate (y, x) on an (h, w) plane by torchvision's rules. Its value reads
// nothing outside (-1, h) x (-1, w); its coordinate gradient (get_coordinate_weight) has no
// such cut, so at y = -1 or x = -1 the row or column 0 still counts.
template <typename Acc>
TWIN_HD Corners<Acc> corners(Acc y, Acc x, int64_t h, int64_t w) {
  Corners<Acc> c;
  for (int k = 0; k < 4; ++k) c.idx[k] = -1, c.w[k] = c.dy[k] = c.dx[k] = Acc(0);
  c.nan = sampling::gs_isnan(y) || sampling::gs_isnan(x);
  c.outside = !(y > Acc(-1) && y < Acc(h) && x > Acc(-1) && x < Acc(w));
  // Beyond [-1, h) x [-1, w) no corner is inside (and the floors below stay small integers).
  if (c.nan || !(y >= Acc(-1) && y < Acc(h) && x >= Acc(-1) && x < Acc(w))) return c;
  const Acc fy = sampling::gs_floor(y), fx = sampling::gs_floor(x);
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const Acc ly = y - fy, lx = x - fx, hy = Acc(1) - ly, hx = Acc(1) - lx;
  const int64_t ys[2] = {y0, y0 + 1}, xs[2] = {x0, x0 + 1};
  const Acc wy[2] = {hy, ly}, wx[2] = {hx, lx}, sy[2] = {Acc(-1), Acc(1)};
  for (int k = 0; k < 4; ++k) {
    const int a = k >> 1, b = k & 1;
    const bool inside = ys[a] >= 0 && ys[a] < h && xs[b] >= 0 && xs[b] < w;
    c.idx[k] = inside ? ys[a] * w + xs[b] : -1;
    c.w[k] = mul_rn(wy[a], wx[b]);
    c.dy[k] = sy[a] * wx[b];
    c.dx[k] = wy[a] * sy[b];
  }
  return c;
}

// The bilinear value from the corners (read(idx) -> Acc of the plane): the sum of weight * value
// over the corners inside, 0 outside, NaN for a NaN coordinate.
template <typename Acc, typename Read>
TWIN_HD Acc corner_value(const Corners<Acc>& c, const Read& read) {
  if (c.nan) return Acc(NAN);
  Acc v = Acc(0);
  if (c.outside) return v;
  for (int k = 0; k < 4; ++k)
    if (c.idx[k] >= 0) v = fma_rn(c.w[k], read(c.idx[k]), v);
  return v;
}

// d value / d y and d value / d x from the corners (NaN for a NaN coordinate).
template <typename Acc, typename Read>
TWIN_HD void corner_grads(const Corners<Acc>& c, const Read& read, Acc* gy, Acc* gx) {
  if (c.nan) {
    *gy = *gx = Acc(NAN);
    return;
  }
  Acc sy = Acc(0), sx = Acc(0);
  for (int k = 0; k < 4; ++k)
    if (c.idx[k] >= 0) {
      const Acc v = read(c.idx[k]);
      sy = fma_rn(c.dy[k], v, sy);
      sx = fma_rn(c.dx[k], v, sx);
    }
  *gy = sy, *gx = sx;
}

// Whether corner k of a sample passes gradient to input: inside, of a sample inside, with a
// weight above 0 (torchvision's col2im adds only pixels closer than 1 on both axes, so an
// infinite gradient never meets a zero weight there).
template <typename Acc>
TWIN_HD bool scatters(const Corners<Acc>& c, int k) {
  return !c.nan && !c.outside && c.idx[k] >= 0 && c.w[k] != Acc(0);
}

// Where the sample of channel c, tap t, output position pos of image n gets its offset and mask:
// element offsets (contiguous tensors) of dy (dx follows at + positions) and of the mask.
struct SampleAt {
  int64_t offset, mask;
  int64_t base_y, base_x;  // the undeformed coordinate
};

TWIN_HD SampleAt sample_at(const Params& p, int64_t n, int64_t c, int64_t t, int64_t pos) {
  const int64_t kk = p.taps(), P = p.positions();
  const int64_t og = c / p.offset_channels();
  const int64_t oy = pos / p.w_out, ox = pos - oy * p.w_out;
  const int64_t i = t / p.kw, j = t - i * p.kw;
  SampleAt s;
  s.offset = ((n * p.offset_groups + og) * kk + t) * 2 * P + pos;
  s.mask = ((n * p.offset_groups + og) * kk + t) * P + pos;
  s.base_y = oy * p.stride_h - p.pad_h + i * p.dil_h;
  s.base_x = ox * p.stride_w - p.pad_w + j * p.dil_w;
  return s;
}

}  // namespace deform_conv2d
}  // namespace twinops
