// The resize plugins' OpCore and creators (see resize_core.h).
#include "resize_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

#include "../core_util.h"

namespace twinops {
namespace resize {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

namespace {

enum class Kind : int32_t { kTwinopsResize = 0, kDynamicTRTResize = 1, kTRTBicubicInterpolate = 2 };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kDynamicTRTResize: return "DynamicTRTResize";
    case Kind::kTRTBicubicInterpolate: return "TRTBicubicInterpolate";
    case Kind::kTwinopsResize:
    default: return "TwinopsResize";
  }
}

// What the computation needs from any of the three field sets.
struct ResizeSpec {
  Kind kind = Kind::kTwinopsResize;
  resize::ResizeAttrs attrs;  // MMDeploy kinds: the equivalent F.interpolate(mode="bicubic") attributes
  int64_t align_corners = 0;  // MMDeploy kinds
};

// Validates everything that does not depend on the runtime sizes.
std::string validate(const ResizeSpec& s) {
  resize::Params p;
  const std::string err = resize::make_params(1, 1, 1, 1, s.attrs, &p);
  return err.empty() ? err : std::string(kind_name(s.kind)) + ": " + err;
}

std::string spec_of(const resize::ResizeAttrs& f, ResizeSpec* s) {
  s->kind = Kind::kTwinopsResize;
  s->attrs = f;
  return validate(*s);
}

// F.interpolate(mode="bicubic", align_corners=...) as twinops.interpolate maps it.
std::string mmdeploy_spec(Kind kind, int64_t align_corners, ResizeSpec* s) {
  if (align_corners != 0 && align_corners != 1)
    return std::string(kind_name(kind)) + ": field 'align_corners' must be 0 or 1, got " + std::to_string(align_corners);
  s->kind = kind;
  s->align_corners = align_corners;
  s->attrs = resize::interpolate_bicubic_attrs(align_corners != 0);
  return "";
}

std::string spec_of(const DynamicTRTResizeFields& f, ResizeSpec* s) {
  const std::string err = mmdeploy_spec(Kind::kDynamicTRTResize, f.align_corners, s);
  return err.empty() ? validate(*s) : err;
}

std::string spec_of(const TRTBicubicInterpolateFields& f, ResizeSpec* s) {
  const std::string err = mmdeploy_spec(Kind::kTRTBicubicInterpolate, f.align_corners, s);
  if (!err.empty()) return err;
  if (!(f.scale_factor[0] > 0.0) || !(f.scale_factor[1] > 0.0))
    return "TRTBicubicInterpolate: field 'scale_factor' must be positive, got (" + std::to_string(f.scale_factor[0]) +
           ", " + std::to_string(f.scale_factor[1]) + ")";
  s->attrs.scales = f.scale_factor;
  return validate(*s);
}

// The regular inputs accepted with `nb_shape_inputs` V3 shape inputs (-1: any count, as
// configurePlugin sees only the regular ones); "" or a message.
std::string check_io(const ResizeSpec& s, int32_t nb_inputs, int32_t nb_shape_inputs) {
  const std::string who = kind_name(s.kind);
  const bool any = nb_shape_inputs < 0;
  bool ok = false;
  const char* expected = "";
  switch (s.kind) {
    case Kind::kTwinopsResize:
      ok = ((any || nb_shape_inputs == 1) && nb_inputs == 1) ||
           ((any || nb_shape_inputs == 0) && (nb_inputs == 1 || nb_inputs == 2));
      expected = "X plus the shape input sizes, or inputs (X) / (X, sizes) without shape inputs";
      break;
    case Kind::kDynamicTRTResize:
      ok = (any || nb_shape_inputs == 0) && nb_inputs == 2;
      expected = "inputs (input, size_tensor) and no shape inputs";
      break;
    case Kind::kTRTBicubicInterpolate:
      ok = (any || nb_shape_inputs == 0) && nb_inputs == 1;
      expected = "one input and no shape inputs";
      break;
  }
  if (ok) return "";
  return who + " expects " + expected + ", got " + std::to_string(nb_inputs) + " input(s)" +
         (any ? "" : " and " + std::to_string(nb_shape_inputs) + " shape input(s)");
}

// The kernels index H and W with int32 (check_params in resize_host.cpp).
constexpr int64_t kLengthMax = std::numeric_limits<int32_t>::max();
// Scales whose floor(in * scale) can be a length in [1, 2^31 - 1] for some in in [1, 2^31 - 1].
constexpr double kScaleMin = 1.0 / 2147483648.0, kScaleMax = 2147483648.0;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// floor(dim * num / 2^e) for a symbolic dim when dim * num may not fit a DimValue (TensorRT
// 8.6's dimension expressions are 32-bit): dim is multiplied by num digit by digit in base
// 2^bits (schoolbook, with carries), so every partial result stays below 2^31 whenever the
// result itself fits; the low digits are then shifted out. nullptr when num is too large
// for any digit (a scale with more than ~28 significant bits).
const IDimensionExpr* mul_shift_narrow(const IDimensionExpr* dim, int64_t num, int e, nvinfer1::IExprBuilder& b) {
  constexpr int64_t kMax = std::numeric_limits<DimValue>::max();
  int bits = 0;
  while (bits < 30 && ((int64_t{1} << (bits + 1)) + 2) * num <= kMax) ++bits;
  if (bits == 0) return nullptr;
  auto C = [&](int64_t v) { return b.constant(static_cast<DimValue>(v)); };
  auto op = [&](DimensionOperation o, const IDimensionExpr* x, const IDimensionExpr* y) {
    return b.operation(o, *x, *y);
  };
  const int64_t base = int64_t{1} << bits;
  const int m = (31 + bits - 1) / bits;  // digits of a non-negative 31-bit dim
  std::vector<const IDimensionExpr*> r(m);  // r[j] = floor(dim / base^j)
  r[0] = dim;
  for (int j = 1; j < m; ++j) r[j] = op(DimensionOperation::kFLOOR_DIV, dim, C(int64_t{1} << (j * bits)));
  const int k = e / bits, rem = e % bits;
  std::vector<const IDimensionExpr*> o(m, nullptr);  // digits of dim * num (those >= k)
  const IDimensionExpr* carry = C(0);
  for (int j = 0; j < m; ++j) {
    const IDimensionExpr* digit = j + 1 < m ? op(DimensionOperation::kSUB, r[j], op(DimensionOperation::kPROD, C(base), r[j + 1])) : r[j];
    const IDimensionExpr* t = op(DimensionOperation::kSUM, op(DimensionOperation::kPROD, digit, C(num)), carry);
    const IDimensionExpr* next = op(DimensionOperation::kFLOOR_DIV, t, C(base));
    if (j >= k) o[j] = op(DimensionOperation::kSUB, t, op(DimensionOperation::kPROD, C(base), next));
    carry = next;
  }
  // dim * num = sum_j o[j] base^j + carry base^m
  if (k >= m) {
    const int shift = e - m * bits;
    return shift > 30 ? C(0) : op(DimensionOperation::kFLOOR_DIV, carry, C(int64_t{1} << shift));
  }
  const IDimensionExpr* top = carry;  // floor(dim * num / base^(k + 1))
  for (int j = m - 1; j > k; --j) top = op(DimensionOperation::kSUM, op(DimensionOperation::kPROD, top, C(base)), o[j]);
  return op(DimensionOperation::kSUM, op(DimensionOperation::kFLOOR_DIV, o[k], C(int64_t{1} << rem)),
            op(DimensionOperation::kPROD, top, C(int64_t{1} << (bits - rem))));
}

// floor(dim * scale) as a dimension expression, exact for the scale's binary fraction.
std::string scaled_dim(double scale, const IDimensionExpr* dim, nvinfer1::IExprBuilder& b, const char* axis,
                       const IDimensionExpr** out) {
  resize::Ratio r;
  constexpr int64_t kMax = std::numeric_limits<DimValue>::max();
  const std::string bad = std::string("the ") + axis + " scale " + num(scale);
  if (!(scale > 0.0) || !std::isfinite(scale)) return bad + " is not a positive finite number";
  if (scale < kScaleMin || scale > kScaleMax)
    return bad + " is outside the supported range [2^-31, 2^31] (output lengths are at most 2^31 - 1)";
  if (!resize::exact_ratio(scale, &r)) return bad + " is not a positive finite number";
  if (dim->isConstant() && dim->getConstantValue() < 0)
    return std::string("the ") + axis + " input length " + std::to_string(dim->getConstantValue()) + " is negative";
  if (dim->isConstant()) {
    int64_t v = 0;
    if (!resize::scaled_length(dim->getConstantValue(), scale, &v) || v > kMax)
      return std::string("the ") + axis + " output length overflows";
    *out = b.constant(static_cast<DimValue>(v));
    return "";
  }
  if (r.den == 1) {  // an integer scale: the product overflows only when the result does
    if (r.num > kMax) return bad + " is too large";
    *out = b.operation(DimensionOperation::kPROD, *dim, *b.constant(static_cast<DimValue>(r.num)));
    return "";
  }
  if (kMax <= std::numeric_limits<int32_t>::max()) {  // 32-bit expressions: dim * num itself can overflow
    int e = 0;
    while ((int64_t{1} << e) < r.den) ++e;  // den is a power of two
    *out = mul_shift_narrow(dim, r.num, e, b);
    if (*out == nullptr)
      return bad + " has too many significant bits for TensorRT 8.6's 32-bit dimension expressions; use a float32 "
                   "scale, static shapes, or TensorRT 10";
    return "";
  }
  if (r.num > kMax || r.den > kMax)
    return bad + " is not a fraction that dimension expressions can hold; pass the output size as a shape input";
  const IDimensionExpr* prod = b.operation(DimensionOperation::kPROD, *dim, *b.constant(static_cast<DimValue>(r.num)));
  *out = b.operation(DimensionOperation::kFLOOR_DIV, *prod, *b.constant(static_cast<DimValue>(r.den)));
  return "";
}

std::string output_dims(const ResizeSpec& s, const nvinfer1::DimsExprs* inputs, int32_t nb_inputs,
                        const nvinfer1::DimsExprs* shape_inputs, int32_t nb_shape_inputs,
                        nvinfer1::IExprBuilder& builder, nvinfer1::DimsExprs* out) {
  const std::string who = kind_name(s.kind);
  if (std::string e = check_io(s, nb_inputs, nb_shape_inputs); !e.empty()) return e;
  if (inputs[0].nbDims != 4)
    return who + ": input 0 must be 4-D (N, C, H, W), got " + std::to_string(inputs[0].nbDims) + "-D";
  *out = inputs[0];
  if (nb_shape_inputs == 1) {  // (c)
    if (shape_inputs[0].nbDims != 2)
      return who + ": the shape input sizes must hold 2 values (H_out, W_out), got " +
             std::to_string(shape_inputs[0].nbDims);
    for (int k = 0; k < 2; ++k) {
      const IDimensionExpr* e = shape_inputs[0].d[k];
      // Symbolic values are bounded by the profile in check_profile (configurePlugin).
      if (e != nullptr && e->isConstant() && (e->getConstantValue() < 0 || e->getConstantValue() > kLengthMax))
        return who + ": the shape input sizes holds " + (k == 0 ? "H_out = " : "W_out = ") +
               std::to_string(e->getConstantValue()) + "; the supported output lengths are [0, 2^31 - 1]";
      out->d[2 + k] = e;
    }
    return "";
  }
  if (s.kind == Kind::kDynamicTRTResize) {  // (b)
    const nvinfer1::DimsExprs& st = inputs[1];
    if (st.nbDims < 2)
      return who + ": size_tensor must have at least 2 dims (its last two are H_out, W_out), got " +
             std::to_string(st.nbDims);
    out->d[2] = st.d[st.nbDims - 2];
    out->d[3] = st.d[st.nbDims - 1];
    return "";
  }
  // (a)
  const resize::ResizeAttrs& a = s.attrs;
  if (!(a.scales[0] > 0.0) || !(a.scales[1] > 0.0))
    return who + ": the output size needs the values of `sizes` (IPluginV3 with the node attribute "
                 "tensorrt_plugin_shape_input_indices=[1]) or scales > 0 on both axes; got scales (" +
           std::to_string(a.scales[0]) + ", " + std::to_string(a.scales[1]) + ")";
  if (a.coordinate_transformation_mode == "tf_crop_and_resize")
    return who + ": tf_crop_and_resize needs the output size as the shape input sizes (ONNX derives it from roi)";
  for (int k = 0; k < 2; ++k) {
    const IDimensionExpr* e = nullptr;
    if (std::string err = scaled_dim(a.scales[k], inputs[0].d[2 + k], builder, k == 0 ? "H" : "W", &e); !err.empty())
      return who + ": " + err;
    out->d[2 + k] = e;
  }
  return "";
}

std::string output_type(DataType in0, DataType* out) {
  if (!is_float_type(in0))
    return "input 0 must be float32, float16" + std::string(TWIN_TRT_HAS_BF16 ? " or bfloat16" : "") +
           ", got DataType " + std::to_string(static_cast<int32_t>(in0));
  *out = in0;
  return "";
}

// supportsFormatCombination at `pos`; io[0..pos] are set.
bool supports(const ResizeSpec& s, int32_t pos, int32_t nb_inputs, const PluginTensorDesc* io) {
  if (pos < 0 || pos > nb_inputs) return false;
  if (pos == 0) return io[0].format == TensorFormat::kLINEAR && is_float_type(io[0].type);
  if (pos == nb_inputs) return io[pos].format == io[0].format && io[pos].type == io[0].type;
  // pos 1: `sizes` (values unused on this path) or size_tensor (only its shape is read).
  if (io[pos].format != TensorFormat::kLINEAR) return false;
  if (s.kind == Kind::kTwinopsResize) {
#if TWIN_TRT_HAS_BF16
    if (io[pos].type == DataType::kINT64) return true;
#endif
    return io[pos].type == DataType::kINT32;
  }
  return true;
}

std::string check_profile(const ResizeSpec& s, const nvinfer1::Dims& in_min, const nvinfer1::Dims& in_max,
                          const nvinfer1::Dims& out_min, const nvinfer1::Dims& out_max) {
  const std::string who = kind_name(s.kind);
  const nvinfer1::Dims* dims[4] = {&in_min, &in_max, &out_min, &out_max};
  for (const nvinfer1::Dims* d : dims)
    if (d->nbDims != 4)
      return who + ": input and output must be 4-D (N, C, H, W), got " + std::to_string(d->nbDims) + "-D";
  for (int k = 0; k < 2; ++k) {
    const char* axis = k == 0 ? "H" : "W";
    if (in_min.d[2 + k] < 0)
      return who + ": the input " + axis + " length is negative (" + std::to_string(in_min.d[2 + k]) +
             ") in the profile";
    if (out_min.d[2 + k] < 0)
      return who + ": the output " + axis + " length is negative (" + std::to_string(out_min.d[2 + k]) +
             ") in the profile (check the values of the shape input sizes)";
    if (in_max.d[2 + k] > kLengthMax)
      return who + ": the input " + axis + " length reaches " + std::to_string(in_max.d[2 + k]) +
             " in the profile; the supported lengths are [1, 2^31 - 1]";
    if (out_max.d[2 + k] > kLengthMax)
      return who + ": the output " + axis + " length reaches " + std::to_string(out_max.d[2 + k]) +
             " in the profile; the supported lengths are [1, 2^31 - 1] (check the values of the shape input sizes "
             "and the scales)";
  }
  return "";
}

size_t workspace_bound(const ResizeSpec& s, const nvinfer1::Dims& in_min, const nvinfer1::Dims& in_max,
                       const nvinfer1::Dims& out_min, const nvinfer1::Dims& out_max) {
  // No shape of an out-of-range profile can run (configurePlugin says why): no workspace for it.
  if (!check_profile(s, in_min, in_max, out_min, out_max).empty()) return 0;
  // workspace_layout (forward): per axis an int32 `first` and `taps` opmath weights per
  // output index, each table 16-byte aligned, widths padded by pad_table_widths. Taps grow
  // with in / out (antialias, area) and never with out, so (in_max, out_min) bounds them;
  // out_min + 1 covers align_corners, whose step (in - 1) / (out - 1) is 0 at out == 1. A
  // profile whose smallest output is empty still needs the tables of its larger shapes.
  int32_t taps[2] = {1, 1};
  int64_t rows[2];
  for (int k = 0; k < 2; ++k) {
    const int64_t in = in_max.d[2 + k], hi = out_max.d[2 + k];
    const int64_t lo = std::max<int64_t>(out_min.d[2 + k], 1);
    if (in < 1 || hi < 1) return 0;  // no shape in the profile has anything to compute
    rows[k] = hi;
    for (int64_t out : {lo, std::min<int64_t>(lo + 1, hi), hi}) {
      resize::Params p;
      if (!resize::make_params(in, in, out, out, s.attrs, &p).empty()) continue;
      taps[k] = std::max(taps[k], resize::axis_taps(p, k == 0 ? p.h : p.w));
    }
  }
  // A shape of the profile whose widths are all <= 16 gets both axes padded, up to 16.
  const bool wide = std::max(taps[0], taps[1]) > 16;
  resize::pad_table_widths(taps);
  if (wide)
    for (int32_t& t : taps) t = std::max<int32_t>(t, 16);
  auto align = [](size_t v) { return (v + 15) & ~static_cast<size_t>(15); };
  size_t bytes = 0;
  for (int k = 0; k < 2; ++k)
    bytes += align(sizeof(int32_t) * static_cast<size_t>(rows[k])) +
             align(sizeof(float) * static_cast<size_t>(rows[k]) * static_cast<size_t>(taps[k]));
  return bytes;
}

int32_t run(const ResizeSpec& s, const nvinfer1::PluginTensorDesc& in, const nvinfer1::PluginTensorDesc& out,
            const void* x, void* y, void* workspace, cudaStream_t stream) {
  const std::string who = std::string(kind_name(s.kind)) + " enqueue: ";
  const nvinfer1::Dims& di = in.dims;
  const nvinfer1::Dims& d_o = out.dims;
  if (di.nbDims != 4 || d_o.nbDims != 4) {
    log_error(who + "input and output must be 4-D (N, C, H, W)");
    return cudaErrorInvalidValue;
  }
  if (di.d[0] != d_o.d[0] || di.d[1] != d_o.d[1]) {
    log_error(who + "output N, C (" + std::to_string(d_o.d[0]) + ", " + std::to_string(d_o.d[1]) +
              ") differ from the input's (" + std::to_string(di.d[0]) + ", " + std::to_string(di.d[1]) + ")");
    return cudaErrorInvalidValue;
  }
  if (in.type != out.type || in.format != TensorFormat::kLINEAR || out.format != TensorFormat::kLINEAR ||
      !is_float_type(in.type)) {
    log_error(who + "input and output must be linear tensors of the same float type");
    return cudaErrorInvalidValue;
  }
  if (di.d[0] * di.d[1] * d_o.d[2] * d_o.d[3] == 0) return 0;  // empty output: nothing to write
  resize::Params p;
  const std::string err = resize::make_params(di.d[2], di.d[3], d_o.d[2], d_o.d[3], s.attrs, &p);
  if (!err.empty()) {
    log_error(who + err);
    return cudaErrorInvalidValue;
  }
  p.cuda = 1;  // the torch op's CUDA function (resize::Params::cuda)
  const resize::Workspace L = resize::workspace_layout(p, sizeof(float), false);
  if (L.bytes > 0 && workspace == nullptr) {
    log_error(who + "TensorRT passed no workspace; " + std::to_string(L.bytes) + " bytes are needed");
    return cudaErrorInvalidValue;
  }
  resize::Geometry g;
  g.n = di.d[0];
  g.c = di.d[1];
  const int64_t ih = di.d[2], iw = di.d[3], oh = d_o.d[2], ow = d_o.d[3];
  const int64_t is[4] = {g.c * ih * iw, ih * iw, iw, 1}, os[4] = {g.c * oh * ow, oh * ow, ow, 1};
  std::copy(is, is + 4, g.in_stride);
  std::copy(os, os + 4, g.out_stride);
  return enqueue_status(who, with_float_type(in.type, [&](auto tag) {
                          using T = typename decltype(tag)::type;
                          return resize::forward_cuda<T>(p, L, g, static_cast<const T*>(x), static_cast<T*>(y), false,
                                                         workspace, stream);
                        }));
}

// The OpCore of a resize plugin whose fields are `Fields` (kept to serialize them as read).
template <class Fields>
class ResizeCore final : public OpCore {
 public:
  ResizeCore(const Fields& fields, const ResizeSpec& spec) : fields_(fields), s_(spec) {}

  static std::unique_ptr<OpCore> make(const Fields& fields, std::string* error) {
    ResizeSpec spec;
    *error = spec_of(fields, &spec);
    if (!error->empty()) return nullptr;
    return std::make_unique<ResizeCore>(fields, spec);
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<ResizeCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (nb_in < 1) return "expects at least 1 input, got " + std::to_string(nb_in);
    return output_type(in[0], &out[0]);
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs* shape_in, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    return output_dims(s_, in, nb_in, shape_in, nb_shape_in, builder, &out[0]);
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    return plugin::supports(s_, pos, nb_in, io);
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    if (std::string err = check_io(s_, nb_in, -1); !err.empty()) return err;
    if (in[0].desc.type != out[0].desc.type) return "output type differs from the input type";
    return check_profile(s_, in[0].min, in[0].max, out[0].min, out[0].max);
  }

  size_t workspace(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                   int32_t) const override {
    return nb_in < 1 ? 0 : workspace_bound(s_, in[0].min, in[0].max, out[0].min, out[0].max);
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t) const override {
    if (nb_in < 1 || in[0].dims.nbDims != 4 || out[0].dims.nbDims != 4)
      return "input and output must be 4-D (N, C, H, W)";
    resize::Params p;
    return resize::make_params(in[0].dims.d[2], in[0].dims.d[3], out[0].dims.d[2], out[0].dims.d[3], s_.attrs, &p);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) const override {
    return run(s_, in[0], out[0], inputs[0], outputs[0], workspace, stream);
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  Fields fields_;
  ResizeSpec s_;
};

}  // namespace

OpCreator twinops_resize_creator() {
  return attr_creator<resize::ResizeAttrs>("TwinopsResize", &ResizeCore<resize::ResizeAttrs>::make);
}

OpCreator dynamic_trt_resize_creator() {
  return drop_in(attr_creator<DynamicTRTResizeFields>("DynamicTRTResize", &ResizeCore<DynamicTRTResizeFields>::make),
                 "mmdeploy");
}

OpCreator trt_bicubic_interpolate_creator() {
  return drop_in(attr_creator<TRTBicubicInterpolateFields>("TRTBicubicInterpolate",
                                                           &ResizeCore<TRTBicubicInterpolateFields>::make),
                 "mmdeploy");
}

}  // namespace plugin
}  // namespace resize
}  // namespace twinops
