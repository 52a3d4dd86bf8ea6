// Non-finite values in the resize op: the outputs the fast paths cannot get right, recomputed
// with the reference's own terms.
//
// Why: the tables merge taps clamped to one edge index, pad every row to the axis' width with
// zero-weight taps, and the kernels re-read windows; for finite values all of it computes the
// reference's sum. With NaN or Inf in the input it does not: a padding tap gives 0 * inf = NaN
// where the reference reads no such element, and a merged weight gives +-inf where the
// reference's separate taps give inf - inf or 0 * inf = NaN. Every such output is non-finite
// in the fast result (a window with a non-finite value gives a non-finite sum either way;
// one without differs only through padding taps, which give NaN), so a gather can test each
// stored value and recompute the rare non-finite one here (finish_element), keeping its
// arithmetic and speed for everything else. The CPU gather does so at each store; the CUDA
// gathers only note non-finite stores and leave the recomputation to a fix-up kernel they
// start from the device (resize_fixup.cuh).
//
// The reference's terms per axis: each distinct input index its taps read (clamped), with
// the sum of those taps' weights and whether an infinite value there gives the reference
// NaN (a zero weight among them, or weights of both signs). The 2-D sum over rows of row sums
// then puts NaN and +-Inf where the reference's sum of products does, whatever its order.
#pragma once

#include <cmath>
#include <cstdint>

#include "resize.cuh"

namespace twinops {
namespace resize {

template <typename Acc>
TWIN_HD bool finite_value(Acc v) {
  return v - v == Acc(0);  // NaN and +-inf give NaN
}

// One input index read by a reference window: `w` the sum of the (normalised) weights of
// the taps that read it, `nan_on_inf` whether an infinite value there makes the reference's
// sum NaN.
template <typename Acc>
struct RefTerm {
  int64_t k;
  Acc w;
  bool nan_on_inf;
};

template <typename Acc>
TWIN_HD Acc ref_product(const RefTerm<Acc>& t, Acc v) {
  return t.nan_on_inf && !finite_value(v) ? static_cast<Acc>(NAN) : t.w * v;
}

// onnx.reference skips an axis whose scale is 1 (math.isclose) and whose length is unchanged:
// it copies it, reading no neighbour (tf_crop_and_resize only when its roi spans the axis).
TWIN_HD bool onnx_identity_axis(const Params& p, const Axis& a) {
  if (p.mode == kArea || a.in != a.out) return false;
  const double scale = a.scale > 0.0 ? a.scale : 1.0;
  const double diff = scale > 1.0 ? scale - 1.0 : 1.0 - scale;
  if (diff > 1e-9 * (scale > 1.0 ? scale : 1.0)) return false;
  if (p.coord != kTfCropAndResize) return true;
  const double end = a.roi_end;
  return a.roi_start == 0.f && (end > 1.0 ? end - 1.0 : 1.0 - end) <= 1e-9;
}

// How the reference reads one axis. kFormula: the window's taps (axis_window), each at its
// clamped index, zero weights included. kCopy: output d reads input d alone (the axis is
// skipped, or the whole tensor copied). kSelfTwice: input d with weights 1 and 0 (ATen's CPU
// linear taps for an axis whose length is unchanged), so an infinite value there gives NaN.
enum RefRule : int32_t { kFormula = 0, kCopy = 1, kSelfTwice = 2 };

// The rule for axis `axis` (0 = H, 1 = W). F.interpolate's references differ between ATen's
// CPU and CUDA kernels where lengths are unchanged (docs/ops/resize-nonfinite.md has the
// table); twinops follows the kernels of the device it runs on (`cuda`: the CUDA kernels and
// the TensorRT plugins). onnx.reference: kCopy for the axes it skips, else kFormula.
TWIN_HD int32_t reference_rule(const Params& p, int axis, bool backward, bool cuda) {
  const Axis& a = axis == 0 ? p.h : p.w;
  if (!p.pytorch) return onnx_identity_axis(p, a) ? kCopy : kFormula;
  if (p.mode == kNearest || p.mode == kArea) return kFormula;
  const bool same = a.in == a.out;
  const bool all_same = p.h.in == p.h.out && p.w.in == p.w.out;
  if (cuda) {
    // Whole-tensor copies when no length changes: bilinear and bicubic both ways, antialias
    // backward (its forward reads the window taps even then).
    return all_same && (!p.antialias || backward) ? kCopy : kFormula;
  }
  if (p.antialias) return !backward && same ? kCopy : kFormula;  // the forward skips such axes
  if (p.mode == kLinear) return same ? kSelfTwice : kFormula;
  return backward && all_same ? kCopy : kFormula;  // bicubic
}

// onnx.reference's weight of tap j (before normalisation), computed as numpy computes it:
// linear in float64; cubic with cubic_coeff_a a float32 scalar and the ratio a Python float,
// so that (NEP 50) every operation with A rounds to float32. Its zero weights at integral
// coordinates are then exact zeros only where A's arithmetic is exact (-0.75, -0.5); with
// A = -0.6 they are +-1e-7, and an infinite value there stays infinite.
TWIN_HD double onnx_reference_weight(const Params& p, const AxisWindow<double>& win, int64_t j) {
  if (win.box) return 1.0;
  const int64_t i = j - win.base;
  const double ratio = win.ratio, s = win.filter_scale;
  if (p.mode == kLinear) {
    if (!p.antialias) return i == 0 ? 1.0 - ratio : ratio;
    const double t = mul_rn(static_cast<double>(i) - ratio, s);
    const double w = 1.0 - (t < 0.0 ? -t : t);
    return w < 0.0 ? 0.0 : (w > 1.0 ? 1.0 : w);
  }
  const float a = p.cubic_a, a2 = a + 2.f, a3 = a + 3.f;
  const float a4 = mul_rn(4.f, a), a5 = mul_rn(5.f, a), a8 = mul_rn(8.f, a);
  if (!p.antialias) {
    // _cubic_coeffs: taps base - 1 .. base + 2 at ratio + 1, ratio, 1 - ratio, (1 - ratio) + 1.
    const double args[4] = {ratio + 1.0, ratio, 1.0 - ratio, (1.0 - ratio) + 1.0};
    const float x = static_cast<float>(args[clamp_index<int64_t>(i + 1, 0, 3)]);
    if (i == -1 || i == 2) return mul_rn(mul_rn(mul_rn(a, x) - a5, x) + a8, x) - a4;
    return mul_rn(mul_rn(mul_rn(a2, x) - a3, x), x) + 1.f;
  }
  // _cubic_coeffs_antialias: compute_coeff(|scale * (i - ratio)|) with x, x^2, x^3 in float64.
  double x = mul_rn(s, static_cast<double>(i) - ratio);
  x = x < 0.0 ? -x : x;
  const double x2 = mul_rn(x, x), x3 = mul_rn(x, x2);
  const float fx = static_cast<float>(x), fx2 = static_cast<float>(x2), fx3 = static_cast<float>(x3);
  if (x <= 1.0) return mul_rn(a2, fx3) - mul_rn(a3, fx2) + 1.f;
  if (x < 2.0) return mul_rn(a, fx3) - mul_rn(a5, fx2) + mul_rn(a8, fx) - a4;
  return 0.0;
}

// The weight of raw tap j as the reference computes it.
template <typename Acc>
TWIN_HD Acc reference_weight(const Params& p, const AxisWindow<Acc>& win, int64_t j) {
  if constexpr (sizeof(Acc) == sizeof(double)) {
    if (!p.pytorch) return onnx_reference_weight(p, win, j);
  }
  return window_weight<Acc>(p, win, j);
}

// The reference's terms of output d along axis `a` under `rule`, ascending: init() finds the
// window and its normalising total, each next() gives the next input index the reference
// reads (kFormula: axis_entry's window before merging and padding, each tap at its clamped
// index, zero weights included; onnx.reference also reads the taps exclude_outside drops,
// with weight 0). W: the precision the reference weighs in: F.interpolate's opmath, and
// onnx.reference's float64 (its zero weights at integral coordinates are exact zeros there,
// and a float32 polynomial's are not always: cubic_coeff_a = -0.6). One cursor per walk
// keeps the window arithmetic in one place (nested callbacks copied it into every use).
template <typename W>
struct TermCursor {
  const Params* p = nullptr;
  AxisWindow<W> win;
  int64_t d = 0, last = 0, j = 0, je = -1;
  W total = W(0);
  bool divide = false;
  int32_t rule = kFormula;

  TWIN_HD void init(const Params& params, const Axis& a, int64_t out, int32_t r) {
    p = &params;
    d = out;
    rule = r;
    last = a.in - 1;
    win = axis_window<W>(params, a, out);
    if (r != kFormula) {  // one term: input d
      j = je = 0;
      return;
    }
    total = W(0);
    if (win.normalise)
      for (int64_t k = win.jb; k <= win.je; ++k) total += reference_weight<W>(params, win, k);
    divide = win.normalise && total != W(0);
    const bool read_excluded =
        !params.pytorch && params.exclude_outside && params.mode != kArea && params.mode != kNearest;
    j = read_excluded ? win.j0 : win.jb;
    je = read_excluded ? win.j1 : win.je;
  }

  TWIN_HD bool next(RefTerm<W>* out) {
    if (j > je) return false;
    if (rule != kFormula) {
      *out = RefTerm<W>{d, W(1), rule == kSelfTwice};
      j = je + 1;
      return true;
    }
    RefTerm<W> cur{clamp_index<int64_t>(j, 0, last), W(0), false};
    bool pos = false, neg = false;
    for (; j <= je && clamp_index<int64_t>(j, 0, last) == cur.k; ++j) {
      const W wt = j < win.jb || j > win.je ? W(0) : reference_weight<W>(*p, win, j);
      cur.w += divide ? wt / total : wt;
      pos = pos || wt > W(0);
      neg = neg || wt < W(0);
      cur.nan_on_inf = cur.nan_on_inf || wt == W(0);
    }
    cur.nan_on_inf = cur.nan_on_inf || (pos && neg);
    *out = cur;
    return true;
  }
};

template <typename Acc, typename W>
TWIN_HD RefTerm<Acc> acc_term(const RefTerm<W>& t) {
  return RefTerm<Acc>{t.k, static_cast<Acc>(t.w), t.nan_on_inf};
}

// The reference's forward output (n, c, y, x) over g.src (the input), weighed in W.
template <typename W, typename T, typename Acc>
TWIN_HD Acc reference_forward(const Gather<T, Acc>& g, int64_t n, int64_t c, int64_t y, int64_t x) {
  const Params& p = g.params;
  TermCursor<W> cy, cx;
  cy.init(p, p.h, y, reference_rule(p, 0, false, p.cuda != 0));
  cx.init(p, p.w, x, reference_rule(p, 1, false, p.cuda != 0));
  if (cy.win.extrapolate || cx.win.extrapolate) return g.extrapolation;
  const T* plane = g.src + n * g.stride[0] + c * g.stride[1];
  Acc acc = Acc(0);
  RefTerm<W> ty, tx;
  while (cy.next(&ty)) {
    const T* row = plane + ty.k * g.stride[2];
    TermCursor<W> rx = cx;  // the row's walk along W from its start
    Acc racc = Acc(0);
    while (rx.next(&tx)) racc += ref_product(acc_term<Acc>(tx), Convert<T>::template load<Acc>(row[tx.k * g.stride[3]]));
    acc += ref_product(acc_term<Acc>(ty), racc);
  }
  return acc;
}

// The term of output d's reference window along `a` that reads input i (k = -1 when none
// does, or d is extrapolated).
template <typename W>
TWIN_HD RefTerm<W> reference_term_at(const Params& p, const Axis& a, int64_t d, int32_t rule, int64_t i) {
  TermCursor<W> cur;
  cur.init(p, a, d, rule);
  RefTerm<W> t{-1, W(0), false};
  if (cur.win.extrapolate) return t;
  while (cur.next(&t))
    if (t.k >= i) return t.k == i ? t : RefTerm<W>{-1, W(0), false};
  return RefTerm<W>{-1, W(0), false};
}

// The outputs whose reference windows read input i along axis k (0 = H): [*lo, *hi], empty
// when *lo > *hi. The CUDA backward's ranges (g.zlo / g.zhi); elsewhere the inverse tables'
// rows, which keep the windows' zero-weight taps there (Workspace.zero_taps: the CPU's do).
template <typename T, typename Acc>
TWIN_HD void reference_readers(const Gather<T, Acc>& g, int k, int64_t i, int64_t* lo, int64_t* hi) {
  if (g.zlo[k] != nullptr) {  // the zero-weight readers' range joined with the others'
    const int32_t zlo = g.zlo[k][i], zhi = g.zhi[k][i], nlo = g.lo[k][i], nhi = g.hi[k][i];
    *lo = zlo < nlo ? zlo : nlo;
    *hi = zhi > nhi ? zhi : nhi;
    return;
  }
  const int32_t first = (k == 0 ? g.fy : g.fx)[i];
  *lo = first < 0 ? 1 : first;
  *hi = first < 0 ? 0 : first + (k == 0 ? g.ty : g.tx) - 1;
  const int64_t last = (k == 0 ? g.src_h : g.src_w) - 1;
  if (*hi > last) *hi = last;
}

// The reference's backward output (n, c, iy, ix) over g.src (grad_output), weighed in W: the
// sum over the outputs whose windows read (iy, ix) (reference_readers).
template <typename W, typename T, typename Acc>
TWIN_HD Acc reference_backward(const Gather<T, Acc>& g, int64_t n, int64_t c, int64_t iy, int64_t ix) {
  const Params& p = g.params;
  int64_t y_lo, y_hi, x_lo, x_hi;
  reference_readers(g, 0, iy, &y_lo, &y_hi);
  reference_readers(g, 1, ix, &x_lo, &x_hi);
  const T* plane = g.src + n * g.stride[0] + c * g.stride[1];
  const int32_t rule_y = reference_rule(p, 0, true, p.cuda != 0);
  const int32_t rule_x = reference_rule(p, 1, true, p.cuda != 0);
  Acc acc = Acc(0);
  for (int64_t dy = y_lo; dy <= y_hi; ++dy) {
    const RefTerm<W> ty = reference_term_at<W>(p, p.h, dy, rule_y, iy);
    if (ty.k < 0) continue;
    Acc racc = Acc(0);
    for (int64_t dx = x_lo; dx <= x_hi; ++dx) {
      const RefTerm<W> tx = reference_term_at<W>(p, p.w, dx, rule_x, ix);
      if (tx.k < 0) continue;
      racc += ref_product(acc_term<Acc>(tx), Convert<T>::template load<Acc>(plane[dy * g.stride[2] + dx * g.stride[3]]));
    }
    acc += ref_product(acc_term<Acc>(ty), racc);
  }
  return acc;
}

// The reference's value of output (n, c, y, x) of a forward gather g: weighed in opmath for
// F.interpolate, in float64 for onnx.reference.
template <typename T, typename Acc>
TWIN_HD Acc reference_forward_element(const Gather<T, Acc>& g, int64_t n, int64_t c, int64_t y, int64_t x) {
  return g.params.pytorch ? reference_forward<Acc>(g, n, c, y, x) : reference_forward<double>(g, n, c, y, x);
}

// The reference's value of output (n, c, y, x) of gather g (forward or backward).
template <typename T, typename Acc>
TWIN_HD Acc reference_element(const Gather<T, Acc>& g, int64_t n, int64_t c, int64_t y, int64_t x) {
  if (g.direction != 2) return reference_forward_element<T, Acc>(g, n, c, y, x);
  return g.params.pytorch ? reference_backward<Acc>(g, n, c, y, x) : reference_backward<double>(g, n, c, y, x);
}

// A gathered value as stored: v where it is finite (or the gather is a bare one), else the
// reference's value (see the top of this file). The CPU gather calls it on every output it
// stores; the CUDA fix-up (resize_fixup.cuh) calls reference_element itself.
template <typename T, typename Acc>
TWIN_HD Acc finish_element(const Gather<T, Acc>& g, Acc v, int64_t n, int64_t c, int64_t y, int64_t x) {
  if (finite_value(v) || g.direction == 0) return v;
  return reference_element<T, Acc>(g, n, c, y, x);
}

}  // namespace resize
}  // namespace twinops
