// Attributes -> Params and the exact scale_factor size rule (see resize_attrs.h).
#include "resize_attrs.h"

#include <cmath>

namespace twinops {
namespace resize {

std::string make_params(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, const ResizeAttrs& a,
                        Params* out) {
  if (out_h <= 0 || out_w <= 0)
    return "output size must be positive, got (" + std::to_string(out_h) + ", " + std::to_string(out_w) + ")";
  if (in_h <= 0 || in_w <= 0)
    return "input spatial size must be positive, got (" + std::to_string(in_h) + ", " + std::to_string(in_w) + ")";
  if (std::string e = a.check_choices(); !e.empty()) return e;
  Params p;
  p.h = {in_h, out_h, a.scales[0], static_cast<float>(a.roi[0]), static_cast<float>(a.roi[2])};
  p.w = {in_w, out_w, a.scales[1], static_cast<float>(a.roi[1]), static_cast<float>(a.roi[3])};
  p.mode = attr::choice_value(choices::mode, a.mode);
  p.coord = attr::choice_value(choices::coordinate_transformation_mode, a.coordinate_transformation_mode);
  p.nearest = attr::choice_value(choices::nearest_mode, a.nearest_mode);
  // check_choices compared the int64 values, so 2^32 + 1 was refused before this narrowing
  p.cubic_a = static_cast<float>(a.cubic_coeff_a);
  p.exclude_outside = static_cast<int32_t>(a.exclude_outside);
  p.antialias = static_cast<int32_t>(a.antialias);
  p.pytorch = static_cast<int32_t>(a.pytorch);
  p.extrapolation_value = static_cast<float>(a.extrapolation_value);
  if (const char* e = check_params(p)) return e;
  *out = p;
  return "";
}

ResizeAttrs interpolate_bicubic_attrs(bool align_corners) {
  ResizeAttrs a;
  a.mode = "cubic";
  a.coordinate_transformation_mode = align_corners ? "align_corners" : "half_pixel";
  a.cubic_coeff_a = -0.75;
  a.pytorch = 1;
  return a;
}

bool exact_ratio(double scale, Ratio* out) {
  if (!(scale > 0.0) || !std::isfinite(scale)) return false;
  int exp = 0;
  const double mant = std::frexp(scale, &exp);  // scale = mant * 2^exp, mant in [0.5, 1)
  // mant * 2^53 is an integer for every double.
  int64_t num = static_cast<int64_t>(std::ldexp(mant, 53));
  int shift = 53 - exp;  // scale = num / 2^shift
  while (shift > 0 && (num & 1) == 0) {
    num >>= 1;
    --shift;
  }
  if (shift < 0) {  // an integer scale: num * 2^-shift
    if (-shift > 62 || num > (INT64_MAX >> -shift)) return false;
    out->num = num << -shift;
    out->den = 1;
    return true;
  }
  if (shift > 62) return false;
  out->num = num;
  out->den = int64_t{1} << shift;
  return true;
}

bool scaled_length(int64_t in, double scale, int64_t* out) {
  Ratio r;
  if (in < 0 || !exact_ratio(scale, &r)) return false;
  // floor(in * num / den) in 128-bit integers: no overflow, no rounding.
  const __int128 prod = static_cast<__int128>(in) * r.num;
  const __int128 value = prod / r.den;  // non-negative operands: truncation == floor
  if (value > INT64_MAX) return false;
  *out = static_cast<int64_t>(value);
  return true;
}

}  // namespace resize
}  // namespace twinops
