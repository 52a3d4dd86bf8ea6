// The grid_sample plugins' OpCore and creators (see grid_sample_core.h).
#include "grid_sample_core.h"

#include <algorithm>
#include <memory>
#include <string>

#include "../core_util.h"

namespace twinops {
namespace grid_sample {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

using grid_sample::GridSampleAttrs;

namespace {

enum class Kind : int32_t { kTwinopsGridSample = 0, kGridSampler = 1, kGridSample = 2 };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kGridSampler: return "grid_sampler";
    case Kind::kGridSample: return "GridSample";
    case Kind::kTwinopsGridSample:
    default: return "TwinopsGridSample";
  }
}

// What the computation needs from any of the three field sets.
struct GridSampleSpec {
  Kind kind = Kind::kTwinopsGridSample;
  GridSampleAttrs attrs;                                // grid_sampler: the equivalent attributes
  grid_sample::Mode mode = grid_sample::kLinear;  // attrs.mode parsed (synonyms resolved)
};

std::string who(const GridSampleSpec& s) { return kind_name(s.kind); }

// Validates the attributes (everything that does not depend on shapes) on a small 4-D call.
std::string validate(GridSampleSpec* s) {
  const int64_t input[4] = {1, 1, 2, 2}, grid[4] = {1, 1, 1, 2};
  grid_sample::Params p;
  const std::string err = grid_sample::make_params(4, input, grid, s->attrs, &p);
  if (!err.empty()) return who(*s) + ": " + err;
  s->mode = p.mode;
  return "";
}

std::string spec_of(Kind kind, const GridSampleAttrs& f, GridSampleSpec* s) {
  s->kind = kind;
  s->attrs = f;
  return validate(s);
}

// MMDeploy's integer codes are PyTorch's enums, which the kernel's are: the choice of that value.
std::string spec_of(Kind kind, const GridSamplerFields& f, GridSampleSpec* s) {
  s->kind = kind;
  const std::string w = who(*s);
  if (f.interpolation_mode < 0 || f.interpolation_mode > 2)
    return w + ": field 'interpolation_mode' must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got " +
           std::to_string(f.interpolation_mode);
  if (f.padding_mode < 0 || f.padding_mode > 2)
    return w + ": field 'padding_mode' must be 0 (zeros), 1 (border) or 2 (reflection), got " +
           std::to_string(f.padding_mode);
  if (f.align_corners != 0 && f.align_corners != 1)
    return w + ": field 'align_corners' must be 0 or 1, got " + std::to_string(f.align_corners);
  s->attrs.mode = attr::choice_name(grid_sample::choices::mode, static_cast<int32_t>(f.interpolation_mode));
  s->attrs.padding_mode = attr::choice_name(grid_sample::choices::padding_mode, static_cast<int32_t>(f.padding_mode));
  s->attrs.align_corners = f.align_corners;
  return validate(s);
}

const char* layout(int rank) {
  return rank == 5 ? "X (N, C, D, H, W) and grid (N, D_out, H_out, W_out, 3)"
                   : "X (N, C, H, W) and grid (N, H_out, W_out, 2)";
}

// The checks shared by every phase on ranks and the attributes: "" or a message. rank: X's.
std::string check_ranks(const GridSampleSpec& s, int32_t nb_in, int32_t rank, int32_t grid_rank) {
  if (nb_in != 2) return "expects 2 inputs (X, grid), got " + std::to_string(nb_in);
  if (rank != 4 && rank != 5)
    return "X must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got " + std::to_string(rank) + "-D";
  if (grid_rank != rank)
    return "grid must have X's rank (" + std::string(layout(rank)) + "), got a " + std::to_string(grid_rank) +
           "-D grid";
  if (rank == 5 && s.mode == grid_sample::kCubic)
    return "mode cubic (bicubic) supports 4-D X only, got a 5-D X (use linear or nearest)";
  return "";
}

std::string output_dims(const GridSampleSpec& s, const DimsExprs* in, int32_t nb_in, DimsExprs* out) {
  if (nb_in != 2) return "expects 2 inputs (X, grid), got " + std::to_string(nb_in);
  const int32_t rank = in[0].nbDims;
  if (std::string e = check_ranks(s, nb_in, rank, in[1].nbDims); !e.empty()) return e;
  const nvinfer1::IDimensionExpr* last = in[1].d[rank - 1];
  if (last->isConstant() && last->getConstantValue() != rank - 2)
    return "grid's last dim must be " + std::to_string(rank - 2) + " for a " + std::to_string(rank) + "-D X (" +
           layout(rank) + "), got " + std::to_string(last->getConstantValue());
  const nvinfer1::IDimensionExpr *n = in[0].d[0], *gn = in[1].d[0];
  if (n->isConstant() && gn->isConstant() && n->getConstantValue() != gn->getConstantValue())
    return "X and grid must have the same batch size N, got " + std::to_string(n->getConstantValue()) + " and " +
           std::to_string(gn->getConstantValue());
  out->nbDims = rank;
  out->d[0] = in[0].d[0];
  out->d[1] = in[0].d[1];
  for (int32_t k = 2; k < rank; ++k) out->d[k] = in[1].d[k - 1];
  return "";
}

// Shapes as int64 (TensorRT 8.6's Dims hold int32).
void shape_of(const nvinfer1::Dims& d, int64_t* out) {
  for (int32_t k = 0; k < d.nbDims && k < 5; ++k) out[k] = d.d[k];
}

std::string range(int64_t lo, int64_t hi) { return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }

// configurePlugin: refuses a profile in which no shape can run.
std::string check_profile(const GridSampleSpec& s, const DynamicPluginTensorDesc* in, int32_t nb_in,
                          const DynamicPluginTensorDesc* out) {
  if (nb_in != 2) return "expects 2 inputs (X, grid), got " + std::to_string(nb_in);
  const DataType t = in[0].desc.type;
  if (!is_float_type(t) || in[1].desc.type != t || out[0].desc.type != t)
    return std::string("X, grid and Y must have one type, ") + kFloatTypes + "; got DataTypes " +
           std::to_string(static_cast<int32_t>(t)) + ", " + std::to_string(static_cast<int32_t>(in[1].desc.type)) +
           " and " + std::to_string(static_cast<int32_t>(out[0].desc.type));
  const nvinfer1::Dims &x_lo = in[0].min, &x_hi = in[0].max, &g_lo = in[1].min, &g_hi = in[1].max;
  const int32_t rank = x_lo.nbDims;
  if (std::string e = check_ranks(s, nb_in, rank, g_lo.nbDims); !e.empty()) return e;
  if (x_hi.nbDims != rank || g_hi.nbDims != rank || out[0].min.nbDims != rank || out[0].max.nbDims != rank)
    return "the profile's min and max shapes and Y must all be " + std::to_string(rank) + "-D";
  // Dynamic dims whose range holds the one length that runs are checked again per shape (onShapeChange, enqueue).
  const int64_t k = rank - 2;
  if (g_lo.d[rank - 1] > k || g_hi.d[rank - 1] < k)
    return "grid's last dim must be " + std::to_string(k) + " for a " + std::to_string(rank) + "-D X (" +
           layout(rank) + "); the profile gives it " + range(g_lo.d[rank - 1], g_hi.d[rank - 1]);
  if (std::max<int64_t>(x_lo.d[0], g_lo.d[0]) > std::min<int64_t>(x_hi.d[0], g_hi.d[0]))
    return "X and grid must have the same batch size N; the profile gives X's N " + range(x_lo.d[0], x_hi.d[0]) +
           " and grid's " + range(g_lo.d[0], g_hi.d[0]);
  // Whatever else make_params refuses (lengths the kernels cannot index), at the largest shape.
  int64_t x[5] = {}, g[5] = {};
  shape_of(x_hi, x);
  shape_of(g_hi, g);
  x[0] = g[0] = std::min<int64_t>(x_hi.d[0], g_hi.d[0]);
  g[rank - 1] = k;
  grid_sample::Params p;
  const std::string err = grid_sample::make_params(rank, x, g, s.attrs, &p);
  return err.empty() ? err : "the profile's largest shape cannot run: " + err;
}

// make_params for concrete X and grid shapes, and Y's shape checked against it.
std::string concrete_params(const GridSampleSpec& s, const PluginTensorDesc* in, const PluginTensorDesc* out,
                            grid_sample::Params* p) {
  const int32_t rank = in[0].dims.nbDims;
  if (std::string e = check_ranks(s, 2, rank, in[1].dims.nbDims); !e.empty()) return e;
  if (out[0].dims.nbDims != rank) return "Y must be " + std::to_string(rank) + "-D like X";
  int64_t x[5] = {}, g[5] = {};
  shape_of(in[0].dims, x);
  shape_of(in[1].dims, g);
  if (std::string e = grid_sample::make_params(rank, x, g, s.attrs, p); !e.empty()) return e;
  const int32_t off = rank == 5 ? 0 : 1;  // p->out holds D_out, H_out, W_out (D_out = 1 for 4-D)
  bool same = out[0].dims.d[0] == p->n && out[0].dims.d[1] == p->c;
  for (int32_t k = 2; k < rank; ++k) same = same && out[0].dims.d[k] == p->out[k - 2 + off];
  return same ? "" : "Y's shape differs from (N, C, [D_out,] H_out, W_out) of X and grid";
}

int32_t run(const GridSampleSpec& s, const PluginTensorDesc* in, const PluginTensorDesc* out,
            const void* const* inputs, void* const* outputs, cudaStream_t stream) {
  const std::string w = who(s) + " enqueue: ";
  const DataType t = in[0].type;
  if (!is_float_type(t) || in[1].type != t || out[0].type != t || in[0].format != TensorFormat::kLINEAR ||
      in[1].format != TensorFormat::kLINEAR || out[0].format != TensorFormat::kLINEAR) {
    log_error(w + "X, grid and Y must be linear tensors of one type, " + kFloatTypes);
    return cudaErrorInvalidValue;
  }
  grid_sample::Params p;
  if (std::string e = concrete_params(s, in, out, &p); !e.empty()) {
    log_error(w + e);
    return cudaErrorInvalidValue;
  }
  // make_params gives dense strides, which is what TensorRT's linear tensors are.
  const int32_t rank = out[0].dims.nbDims;
  for (int32_t k = 0; k < rank; ++k)
    if (out[0].dims.d[k] == 0) return 0;  // an empty Y: nothing to write
  bool x_empty = false;  // TensorRT may pass null for an empty tensor
  for (int32_t k = 0; k < rank; ++k) x_empty = x_empty || in[0].dims.d[k] == 0;
  if ((inputs[0] == nullptr && !x_empty) || inputs[1] == nullptr || outputs[0] == nullptr) {
    log_error(w + "null X, grid or Y pointer for a non-empty Y");
    return cudaErrorInvalidValue;
  }
  return enqueue_status(w, with_float_type(t, [&](auto tag) {
                          using T = typename decltype(tag)::type;
                          return grid_sample::forward_cuda<T>(p, static_cast<const T*>(inputs[0]),
                                                              static_cast<const T*>(inputs[1]),
                                                              static_cast<T*>(outputs[0]), stream);
                        }));
}

// The OpCore of a grid_sample plugin whose fields are `Fields` (kept to serialize them as read).
template <class Fields>
class GridSampleCore final : public OpCore {
 public:
  GridSampleCore(const Fields& fields, const GridSampleSpec& spec) : fields_(fields), s_(spec) {}

  static std::unique_ptr<OpCore> make(Kind kind, const Fields& fields, std::string* error) {
    GridSampleSpec spec;
    *error = spec_of(kind, fields, &spec);
    if (!error->empty()) return nullptr;
    return std::make_unique<GridSampleCore>(fields, spec);
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<GridSampleCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (nb_in != 2) return "expects 2 inputs (X, grid), got " + std::to_string(nb_in);
    if (!is_float_type(in[0]))
      return std::string("X must be ") + kFloatTypes + ", got DataType " + std::to_string(static_cast<int32_t>(in[0]));
    if (in[1] != in[0])
      return "grid must have X's type (DataType " + std::to_string(static_cast<int32_t>(in[0])) + "), got DataType " +
             std::to_string(static_cast<int32_t>(in[1])) + " (cast the grid to X's type before the plugin)";
    out[0] = in[0];
    return "";
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in, IExprBuilder&,
                            DimsExprs* out) const override {
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    return output_dims(s_, in, nb_in, &out[0]);
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (nb_in != 2 || pos < 0 || pos > 2 || io[pos].format != TensorFormat::kLINEAR) return false;
    return pos == 0 ? is_float_type(io[0].type) : io[pos].type == io[0].type;
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    return check_profile(s_, in, nb_in, out);
  }

  size_t workspace(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*, int32_t) const override {
    return 0;  // the forward needs none
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t) const override {
    if (nb_in != 2) return "expects 2 inputs (X, grid), got " + std::to_string(nb_in);
    grid_sample::Params p;
    return concrete_params(s_, in, out, &p);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void*, cudaStream_t stream) const override {
    return run(s_, in, out, inputs, outputs, stream);
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  Fields fields_;
  GridSampleSpec s_;
};

template <Kind kKind, class Fields>
std::unique_ptr<OpCore> make_core(const Fields& fields, std::string* error) {
  return GridSampleCore<Fields>::make(kKind, fields, error);
}

}  // namespace

OpCreator twinops_grid_sample_creator() {
  return attr_creator<GridSampleAttrs>("TwinopsGridSample", &make_core<Kind::kTwinopsGridSample, GridSampleAttrs>);
}

OpCreator grid_sampler_creator() {
  return drop_in(attr_creator<GridSamplerFields>("grid_sampler", &make_core<Kind::kGridSampler, GridSamplerFields>),
                 "mmdeploy");
}

OpCreator onnx_grid_sample_creator() {
  // Files from other exporters may leave out attributes at their defaults (ONNX's rule).
  return attr_creator<GridSampleAttrs>("GridSample", &make_core<Kind::kGridSample, GridSampleAttrs>,
                                       AbsentFields::kDefaultWhenBuilding);
}

}  // namespace plugin
}  // namespace grid_sample
}  // namespace twinops
