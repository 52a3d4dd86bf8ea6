// The roi_align plugins' OpCore and creators (see roi_align_core.h).
#include "roi_align_core.h"

#include <memory>
#include <string>

#include "../../kernels/roi_align/roi_align_attrs.h"
#include "../../kernels/roi_align/roi_align_cuda.h"
#include "../core_util.h"

namespace twinops {
namespace roi_align {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

namespace {

// MMDeploy's MMCVRoiAlign fields (its trt_roi_align.cpp): pool_mode is called mode there.
#define TWIN_MMCV_ROI_ALIGN_FIELDS(A)                                                             \
  A(::twinops::attr::Int, output_height, "", ::twinops::attr::kAny, 1)                            \
  A(::twinops::attr::Int, output_width, "", ::twinops::attr::kAny, 1)                             \
  A(::twinops::attr::Float, spatial_scale, "", ::twinops::attr::kAny, 1.0)                        \
  A(::twinops::attr::Int, sampling_ratio, "", ::twinops::attr::kAny, 0)                           \
  A(::twinops::attr::Str, mode, "", ::twinops::roi_align::choices::pool_mode, "avg")              \
  A(::twinops::attr::Int, aligned, "", ::twinops::roi_align::choices::aligned, 0)

struct MmcvRoiAlignFields {
  TWIN_ATTR_STRUCT(TWIN_MMCV_ROI_ALIGN_FIELDS)
};

// ONNX RoiAlign-16's coordinate_transformation_mode: half_pixel shifts by -0.5 (aligned),
// output_half_pixel does not. The ONNX standard's names, so written here rather than generated
// from a twinops node.
constexpr attr::Choice kCoordinateModes[] = {{"half_pixel", 1}, {"output_half_pixel", 0}};

// ONNX RoiAlign-16's attributes with its defaults (a node may leave any out). mode "max" is
// ONNX's (the largest weighted tap of each sample), not mmcv's: refused (docs/ops/roi_align.md).
#define TWIN_ONNX_ROI_ALIGN_FIELDS(A)                                                                         \
  A(::twinops::attr::Str, coordinate_transformation_mode, "", ::twinops::roi_align::plugin::kCoordinateModes, \
    "half_pixel")                                                                                             \
  A(::twinops::attr::Str, mode, "", ::twinops::roi_align::choices::pool_mode, "avg")                          \
  A(::twinops::attr::Int, output_height, "", ::twinops::attr::kAny, 1)                                        \
  A(::twinops::attr::Int, output_width, "", ::twinops::attr::kAny, 1)                                         \
  A(::twinops::attr::Int, sampling_ratio, "", ::twinops::attr::kAny, 0)                                       \
  A(::twinops::attr::Float, spatial_scale, "", ::twinops::attr::kAny, 1.0)

struct OnnxRoiAlignFields {
  TWIN_ATTR_STRUCT(TWIN_ONNX_ROI_ALIGN_FIELDS)
};

RoiAlignAttrs attrs_of(const RoiAlignAttrs& a) { return a; }
RoiAlignAttrs attrs_of(const MmcvRoiAlignFields& f) {
  RoiAlignAttrs a;
  a.output_height = f.output_height, a.output_width = f.output_width, a.spatial_scale = f.spatial_scale;
  a.sampling_ratio = f.sampling_ratio, a.aligned = f.aligned, a.pool_mode = f.mode;
  return a;
}
RoiAlignAttrs attrs_of(const OnnxRoiAlignFields& f) {
  RoiAlignAttrs a;
  a.output_height = f.output_height, a.output_width = f.output_width, a.spatial_scale = f.spatial_scale;
  a.sampling_ratio = f.sampling_ratio, a.pool_mode = f.mode;
  const int32_t aligned = attr::choice_value(kCoordinateModes, f.coordinate_transformation_mode);
  a.aligned = aligned < 0 ? 0 : aligned;  // an unknown name is refused by check_choices first
  return a;
}

// The node's inputs: twinops' and MMDeploy's (input, rois (K, 5)), or ONNX's (X, rois (K, 4),
// batch_indices (K,)).
struct Layout {
  int32_t inputs;
  int64_t roi_cols;
};
constexpr Layout kFiveColumns{2, 5}, kOnnx{3, 4};

// The OpCore of a roi_align plugin whose fields are `Fields` (kept to serialize them as read).
template <class Fields>
class RoiAlignCore final : public OpCore {
 public:
  RoiAlignCore(const char* name, Layout layout, const Fields& fields)
      : name_(name), layout_(layout), fields_(fields), attrs_(attrs_of(fields)) {}

  // Validates the attributes (everything that does not depend on shapes) on a small call.
  static std::unique_ptr<OpCore> make(const char* name, Layout layout, const Fields& fields, std::string* error) {
    auto core = std::make_unique<RoiAlignCore>(name, layout, fields);
    *error = fields.check_choices();
    if (error->empty() && layout.roi_cols == 4 && core->attrs_.pool_mode == "max")
      *error = "mode max is ONNX's (the largest weighted tap of a sample), which twinops does not compute; "
               "TwinopsRoiAlign with pool_mode max is mmcv's (the largest bilinear sample)";
    const int64_t input[4] = {1, 1, 1, 1}, rois[2] = {1, layout.roi_cols};
    Params p;
    if (error->empty()) *error = make_params(input, rois, layout.roi_cols, core->attrs_, &p);
    if (!error->empty()) {
      *error = std::string(name) + ": " + *error;
      return nullptr;
    }
    return core;
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<RoiAlignCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (nb_in != layout_.inputs) return count_message(nb_in);
    out[0] = in[0];
    return check_types(in, in[0]);
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_in != layout_.inputs) return count_message(nb_in);
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    int32_t ranks[3];
    for (int32_t i = 0; i < nb_in; ++i) ranks[i] = in[i].nbDims;
    if (std::string e = rank_error(ranks); !e.empty()) return e;
    int64_t input[4], rois[2];
    for (int k = 0; k < 4; ++k) input[k] = in[0].d[k]->isConstant() ? in[0].d[k]->getConstantValue() : -1;
    for (int k = 0; k < 2; ++k) rois[k] = in[1].d[k]->isConstant() ? in[1].d[k]->getConstantValue() : -1;
    Params unused;
    if (std::string e = make_params(input, rois, layout_.roi_cols, attrs_, &unused); !e.empty()) return e;
    out->nbDims = 4;
    out->d[0] = in[1].d[0];
    out->d[1] = in[0].d[1];
    out->d[2] = builder.constant(static_cast<int32_t>(attrs_.output_height));
    out->d[3] = builder.constant(static_cast<int32_t>(attrs_.output_width));
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (nb_in != layout_.inputs || pos < 0 || pos > nb_in || io[pos].format != TensorFormat::kLINEAR) return false;
    if (pos == 0) return is_float_type(io[0].type);
    if (pos == 2 && nb_in == 3) return is_index_type(io[2].type);  // batch_indices
    return io[pos].type == io[0].type;
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    if (nb_in != layout_.inputs) return count_message(nb_in);
    DataType types[3];
    int32_t ranks[3];
    for (int32_t i = 0; i < nb_in; ++i) types[i] = in[i].desc.type, ranks[i] = in[i].min.nbDims;
    if (std::string e = check_types(types, out[0].desc.type); !e.empty()) return e;
    return rank_error(ranks);
  }

  size_t workspace(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*, int32_t) const override {
    return 0;  // the forward needs none
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t) const override {
    if (nb_in != layout_.inputs) return count_message(nb_in);
    Params p;
    return concrete(in, out, &p);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void*, cudaStream_t stream) const override {
    const std::string w = name_ + " enqueue: ";
    if (nb_in >= 0 && nb_in != layout_.inputs) return enqueue_refused(w + count_message(nb_in));
    DataType types[3];
    for (int32_t i = 0; i <= layout_.inputs; ++i) {
      const PluginTensorDesc& d = i < layout_.inputs ? in[i] : out[0];
      if (d.format != TensorFormat::kLINEAR) return enqueue_refused(w + "every tensor must be linear");
      if (i < layout_.inputs) types[i] = d.type;
    }
    if (std::string e = check_types(types, out[0].type); !e.empty()) return enqueue_refused(w + e);
    Params p;
    if (std::string e = concrete(in, out, &p); !e.empty()) return enqueue_refused(w + e);
    if (p.k * p.c * p.ph * p.pw == 0) return 0;  // an empty output: nothing to write
    for (int32_t i = 0; i < layout_.inputs; ++i)
      if (inputs[i] == nullptr) return enqueue_refused(w + "null input pointer");
    if (outputs[0] == nullptr) return enqueue_refused(w + "null output pointer");
    const bool wide = layout_.inputs == 3 && in[2].type != DataType::kINT32;
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            LevelPtrs<const T> feats;
                            feats.p[0] = static_cast<const T*>(inputs[0]);
                            const auto* rois = static_cast<const T*>(inputs[1]);
                            auto* y = static_cast<T*>(outputs[0]);
                            if (wide || layout_.inputs == 2)
                              return forward_cuda<T, int64_t>(
                                  p, feats, rois, layout_.inputs == 3 ? static_cast<const int64_t*>(inputs[2]) : nullptr,
                                  y, stream);
                            return forward_cuda<T, int32_t>(p, feats, rois, static_cast<const int32_t*>(inputs[2]), y,
                                                            stream);
                          }));
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  std::string count_message(int32_t nb_in) const {
    return std::string("expects ") +
           (layout_.inputs == 2 ? "2 inputs (input, rois)" : "3 inputs (X, rois, batch_indices)") + ", got " +
           std::to_string(nb_in);
  }

  // The types of the inputs (layout_.inputs entries) and the output: "" or a message.
  std::string check_types(const DataType* in, DataType out) const {
    if (!is_float_type(in[0])) return std::string("input must be ") + kFloatTypes + ", got " + type_name(in[0]);
    if (in[1] != in[0] || out != in[0])
      return "rois and the output must have input's type (" + type_name(in[0]) + "), got " + type_name(in[1]) +
             " and " + type_name(out);
    if (layout_.inputs == 3 && !is_index_type(in[2]))
      return std::string("batch_indices must be ") + kIndexTypes + ", got " + type_name(in[2]);
    return "";
  }

  std::string rank_error(const int32_t* ranks) const {
    if (ranks[0] != 4) return "input must be a 4-D (N, C, H, W) tensor, got " + std::to_string(ranks[0]) + "-D";
    if (ranks[1] != 2)
      return "rois must be a 2-D (K, " + std::to_string(layout_.roi_cols) + ") tensor, got " +
             std::to_string(ranks[1]) + "-D";
    if (layout_.inputs == 3 && ranks[2] != 1)
      return "batch_indices must be a 1-D (K,) tensor, got " + std::to_string(ranks[2]) + "-D";
    return "";
  }

  // Params for concrete shapes (dense strides: TensorRT's linear tensors), the output checked.
  std::string concrete(const PluginTensorDesc* in, const PluginTensorDesc* out, Params* p) const {
    int32_t ranks[3];
    for (int32_t i = 0; i < layout_.inputs; ++i) ranks[i] = in[i].dims.nbDims;
    if (std::string e = rank_error(ranks); !e.empty()) return e;
    int64_t input[4], rois[2];
    for (int k = 0; k < 4; ++k) input[k] = in[0].dims.d[k];
    for (int k = 0; k < 2; ++k) rois[k] = in[1].dims.d[k];
    if (std::string e = make_params(input, rois, layout_.roi_cols, attrs_, p); !e.empty()) return e;
    if (layout_.inputs == 3 && in[2].dims.d[0] != p->k)
      return "batch_indices must have one entry per roi (K = " + std::to_string(p->k) + "), got " +
             std::to_string(in[2].dims.d[0]);
    const nvinfer1::Dims& y = out[0].dims;
    if (!(y.nbDims == 4 && y.d[0] == p->k && y.d[1] == p->c && y.d[2] == p->ph && y.d[3] == p->pw))
      return "the output's shape differs from (K, C, output_height, output_width) of rois and input";
    return "";
  }

  std::string name_;
  Layout layout_;
  Fields fields_;
  RoiAlignAttrs attrs_;
};

template <class Fields>
std::unique_ptr<OpCore> make_twinops(const Fields& f, std::string* error) {
  return RoiAlignCore<Fields>::make("TwinopsRoiAlign", kFiveColumns, f, error);
}

template <class Fields>
std::unique_ptr<OpCore> make_mmcv(const Fields& f, std::string* error) {
  return RoiAlignCore<Fields>::make("MMCVRoiAlign", kFiveColumns, f, error);
}

template <class Fields>
std::unique_ptr<OpCore> make_onnx(const Fields& f, std::string* error) {
  return RoiAlignCore<Fields>::make("RoiAlign", kOnnx, f, error);
}

}  // namespace

OpCreator twinops_roi_align_creator() {
  return attr_creator<RoiAlignAttrs>("TwinopsRoiAlign", &make_twinops<RoiAlignAttrs>);
}

OpCreator mmcv_roi_align_creator() {
  return drop_in(attr_creator<MmcvRoiAlignFields>("MMCVRoiAlign", &make_mmcv<MmcvRoiAlignFields>), "mmcv");
}

OpCreator onnx_roi_align_creator() {
  return attr_creator<OnnxRoiAlignFields>("RoiAlign", &make_onnx<OnnxRoiAlignFields>,
                                          AbsentFields::kDefaultWhenBuilding);
}

}  // namespace plugin
}  // namespace roi_align
}  // namespace twinops
