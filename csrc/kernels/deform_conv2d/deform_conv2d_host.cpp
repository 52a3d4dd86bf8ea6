// Host-side checks of the deform_conv2d kernels (deform_conv2d_host.h).
#include "deform_conv2d_host.h"

namespace twinops {
namespace deform_conv2d {

namespace {

std::string shape_str(int rank, const int64_t* s) {
  std::string r = "(";
  for (int i = 0; i < rank; ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

std::string str(int64_t v) { return std::to_string(v); }

bool known(int64_t v) { return v >= 0; }

}  // namespace

std::string check_geometry(const Geometry& g) {
  const char* axis[2] = {"H", "W"};
  for (int a = 0; a < 2; ++a) {
    if (g.stride[a] < 1) return std::string("stride's ") + axis[a] + " value must be at least 1, got " + str(g.stride[a]);
    if (g.dilation[a] < 1)
      return std::string("dilation's ") + axis[a] + " value must be at least 1, got " + str(g.dilation[a]);
    if (g.padding[a] < 0 || g.end(a) < 0)
      return std::string("padding's ") + axis[a] + " value must be at least 0, got " +
             str(g.padding[a] < 0 ? g.padding[a] : g.end(a));
    // the index arithmetic stays far inside int64 for any tensor that fits in memory
    constexpr int64_t kMax = int64_t(1) << 31;
    if (g.stride[a] > kMax || g.dilation[a] > kMax || g.padding[a] > kMax || g.end(a) > kMax)
      return std::string("stride, padding and dilation must be below 2^31, got ") + axis[a] + " values " +
             str(g.stride[a]) + ", " + str(g.padding[a]) + " and " + str(g.dilation[a]);
  }
  return "";
}

std::string make_params(const int64_t* in, const int64_t* off, const int64_t* wt, const int64_t* bias,
                        const int64_t* mask, const Geometry& g, Params* out) {
  if (std::string e = check_geometry(g); !e.empty()) return e;
  Params p;
  p.n = in[0], p.c_in = in[1], p.h = in[2], p.w = in[3];
  p.c_out = wt[0], p.kh = wt[2], p.kw = wt[3];
  p.stride_h = g.stride[0], p.stride_w = g.stride[1];
  p.pad_h = g.padding[0], p.pad_w = g.padding[1];
  p.dil_h = g.dilation[0], p.dil_w = g.dilation[1];
  p.has_bias = bias != nullptr;
  p.has_mask = mask != nullptr;
  if (known(p.kh) && known(p.kw) && (p.kh < 1 || p.kw < 1))
    return "weight's kernel size (kh, kw) must be at least 1x1, got shape " + shape_str(4, wt);
  if (known(p.c_in) && p.c_in < 1) return "input's channels (dim 1) must be at least 1, got shape " + shape_str(4, in);
  const int64_t cg = wt[1];
  if (known(cg) && cg < 1) return "weight's dim 1 (C_in / groups) must be at least 1, got shape " + shape_str(4, wt);
  if (known(p.c_in) && known(cg)) {
    if (p.c_in % cg != 0)
      return "input's channels (" + str(p.c_in) + ") must be a multiple of weight's dim 1 (C_in / groups = " +
             str(cg) + "); shapes " + shape_str(4, in) + " and " + shape_str(4, wt);
    p.groups = p.c_in / cg;
    if (known(p.c_out) && p.c_out % p.groups != 0)
      return "weight's C_out (" + str(p.c_out) + ") must be a multiple of groups (" + str(p.groups) +
             " = C_in / weight's dim 1)";
  } else {
    p.groups = -1;
  }
  if (known(p.kh) && known(p.kw) && known(off[1])) {
    const int64_t per = 2 * p.kh * p.kw;
    if (off[1] == 0 || off[1] % per != 0)
      return "offset's channels (" + str(off[1]) + ") must be a positive multiple of 2 * kh * kw (" + str(per) +
             "): (dy, dx) per kernel tap and offset group; shape " + shape_str(4, off);
    p.offset_groups = off[1] / per;
    if (known(p.c_in) && p.c_in % p.offset_groups != 0)
      return "input's channels (" + str(p.c_in) + ") must be a multiple of offset_groups (" + str(p.offset_groups) +
             " = offset's channels / (2 * kh * kw))";
  } else {
    p.offset_groups = -1;
  }
  if (known(off[0]) && known(p.n) && off[0] != p.n)
    return "offset's N (" + str(off[0]) + ") must equal input's (" + str(p.n) + ")";
  // The output size: the convolution arithmetic, which offset's last two dims must equal.
  const int64_t sizes[2] = {p.h, p.w}, ks[2] = {p.kh, p.kw};
  int64_t outs[2] = {off[2], off[3]};
  const char* axis[2] = {"H", "W"};
  for (int a = 0; a < 2; ++a) {
    if (!known(sizes[a]) || !known(ks[a])) continue;
    const int64_t o = out_size(sizes[a], ks[a], g.stride[a], g.padding[a], g.end(a), g.dilation[a]);
    if (o < 1)
      return std::string("the kernel does not fit: input's ") + axis[a] + " (" + str(sizes[a]) + ") plus padding (" +
             str(g.padding[a] + g.end(a)) + ") is below dilation * (kernel - 1) + 1 (" +
             str(g.dilation[a] * (ks[a] - 1) + 1) + ")";
    if (known(outs[a]) && outs[a] != o)
      return "offset's " + std::string(axis[a]) + " (" + str(outs[a]) + ") must equal the output's (" + str(o) +
             ", from input " + shape_str(4, in) + ", weight " + shape_str(4, wt) + ", stride, padding and dilation)";
    outs[a] = o;
  }
  p.h_out = outs[0], p.w_out = outs[1];
  // The CUDA kernels divide tap and position indices in 32 bits.
  constexpr int64_t k31 = int64_t(1) << 31;
  if (known(p.c_in) && known(p.kh) && known(p.kw) && (p.c_in >= k31 || p.kh * p.kw >= k31 / p.c_in + 1))
    return "input's channels times kh * kw (" + str(p.c_in) + " * " + str(p.kh) + " * " + str(p.kw) +
           ") must be below 2^31";
  if (known(outs[0]) && known(outs[1]) && outs[0] > 0 && (outs[0] >= k31 || outs[1] >= k31 / outs[0] + 1))
    return "the output's H_out * W_out (" + str(outs[0]) + " * " + str(outs[1]) + ") must be below 2^31";
  if (bias != nullptr && known(bias[0]) && known(p.c_out) && bias[0] != p.c_out)
    return "bias must have shape (C_out,) = (" + str(p.c_out) + ",), got (" + str(bias[0]) + ",)";
  if (mask != nullptr) {
    if (known(mask[0]) && known(p.n) && mask[0] != p.n)
      return "mask's N (" + str(mask[0]) + ") must equal input's (" + str(p.n) + ")";
    if (known(mask[1]) && p.offset_groups > 0 && known(p.kh) && known(p.kw) &&
        mask[1] != p.offset_groups * p.kh * p.kw)
      return "mask's channels (" + str(mask[1]) + ") must be offset_groups * kh * kw (" +
             str(p.offset_groups * p.kh * p.kw) + ")";
    for (int a = 0; a < 2; ++a)
      if (known(mask[2 + a]) && known(outs[a]) && mask[2 + a] != outs[a])
        return "mask's " + std::string(axis[a]) + " (" + str(mask[2 + a]) + ") must equal offset's (" + str(outs[a]) +
               ")";
  }
  *out = p;
  return "";
}

}  // namespace deform_conv2d
}  // namespace twinops
