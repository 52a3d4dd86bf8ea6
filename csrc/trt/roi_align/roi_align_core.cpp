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

RoiAlignAttrs attrs_of(const RoiAlignAttrs& a) { return a; }
RoiAlignAttrs attrs_of(const MmcvRoiAlignFields& f) {
  RoiAlignAttrs a;
  a.output_height = f.output_height, a.output_width = f.output_width, a.spatial_scale = f.spatial_scale;
  a.sampling_ratio = f.sampling_ratio, a.aligned = f.aligned, a.pool_mode = f.mode;
  return a;
}

constexpr int32_t kInputs = 2;

std::string count_message(int32_t nb_in) {
  return "expects 2 inputs (input, rois), got " + std::to_string(nb_in);
}

std::string check_types(DataType in, DataType rois, DataType out) {
  if (!is_float_type(in)) return std::string("input must be ") + kFloatTypes + ", got " + type_name(in);
  if (rois != in || out != in)
    return "rois and the output must have input's type (" + type_name(in) + "), got " + type_name(rois) + " and " +
           type_name(out);
  return "";
}

std::string rank_error(int32_t input_rank, int32_t rois_rank) {
  if (input_rank != 4) return "input must be a 4-D (N, C, H, W) tensor, got " + std::to_string(input_rank) + "-D";
  if (rois_rank != 2) return "rois must be a 2-D (K, 5) tensor, got " + std::to_string(rois_rank) + "-D";
  return "";
}

// The OpCore of a roi_align plugin whose fields are `Fields` (kept to serialize them as read).
template <class Fields>
class RoiAlignCore final : public OpCore {
 public:
  RoiAlignCore(const char* name, const Fields& fields) : name_(name), fields_(fields), attrs_(attrs_of(fields)) {}

  // Validates the attributes (everything that does not depend on shapes) on a small call.
  static std::unique_ptr<OpCore> make(const char* name, const Fields& fields, std::string* error) {
    auto core = std::make_unique<RoiAlignCore>(name, fields);
    const int64_t input[4] = {1, 1, 1, 1}, rois[2] = {1, 5};
    Params p;
    *error = make_params(input, rois, 5, core->attrs_, &p);
    if (!error->empty()) {
      *error = std::string(name) + ": " + *error;
      return nullptr;
    }
    return core;
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<RoiAlignCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    out[0] = in[0];
    return check_types(in[0], in[1], in[0]);
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    if (std::string e = rank_error(in[0].nbDims, in[1].nbDims); !e.empty()) return e;
    int64_t input[4], rois[2];
    for (int k = 0; k < 4; ++k) input[k] = in[0].d[k]->isConstant() ? in[0].d[k]->getConstantValue() : -1;
    for (int k = 0; k < 2; ++k) rois[k] = in[1].d[k]->isConstant() ? in[1].d[k]->getConstantValue() : -1;
    Params unused;
    if (std::string e = make_params(input, rois, 5, attrs_, &unused); !e.empty()) return e;
    out->nbDims = 4;
    out->d[0] = in[1].d[0];
    out->d[1] = in[0].d[1];
    out->d[2] = builder.constant(static_cast<int32_t>(attrs_.output_height));
    out->d[3] = builder.constant(static_cast<int32_t>(attrs_.output_width));
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (nb_in != kInputs || pos < 0 || pos > kInputs || io[pos].format != TensorFormat::kLINEAR) return false;
    return pos == 0 ? is_float_type(io[0].type) : io[pos].type == io[0].type;
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    if (std::string e = check_types(in[0].desc.type, in[1].desc.type, out[0].desc.type); !e.empty()) return e;
    return rank_error(in[0].min.nbDims, in[1].min.nbDims);
  }

  size_t workspace(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*, int32_t) const override {
    return 0;  // the forward needs none
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    Params p;
    return concrete(in, out, &p);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void*, cudaStream_t stream) const override {
    const std::string w = name_ + " enqueue: ";
    for (int i = 0; i <= kInputs; ++i) {
      const PluginTensorDesc& d = i < kInputs ? in[i] : out[0];
      if (d.format != TensorFormat::kLINEAR) return enqueue_refused(w + "every tensor must be linear");
    }
    if (std::string e = check_types(in[0].type, in[1].type, out[0].type); !e.empty()) return enqueue_refused(w + e);
    Params p;
    if (std::string e = concrete(in, out, &p); !e.empty()) return enqueue_refused(w + e);
    if (p.k * p.c * p.ph * p.pw == 0) return 0;  // an empty output: nothing to write
    if (inputs[0] == nullptr || inputs[1] == nullptr) return enqueue_refused(w + "null input pointer");
    if (outputs[0] == nullptr) return enqueue_refused(w + "null output pointer");
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            LevelPtrs<const T> feats;
                            feats.p[0] = static_cast<const T*>(inputs[0]);
                            return forward_cuda<T, int64_t>(p, feats, static_cast<const T*>(inputs[1]), nullptr,
                                                            static_cast<T*>(outputs[0]), stream);
                          }));
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  // Params for concrete shapes (dense strides: TensorRT's linear tensors), the output checked.
  std::string concrete(const PluginTensorDesc* in, const PluginTensorDesc* out, Params* p) const {
    if (std::string e = rank_error(in[0].dims.nbDims, in[1].dims.nbDims); !e.empty()) return e;
    int64_t input[4], rois[2];
    for (int k = 0; k < 4; ++k) input[k] = in[0].dims.d[k];
    for (int k = 0; k < 2; ++k) rois[k] = in[1].dims.d[k];
    if (std::string e = make_params(input, rois, 5, attrs_, p); !e.empty()) return e;
    const nvinfer1::Dims& y = out[0].dims;
    if (!(y.nbDims == 4 && y.d[0] == p->k && y.d[1] == p->c && y.d[2] == p->ph && y.d[3] == p->pw))
      return "the output's shape differs from (K, C, output_height, output_width) of rois and input";
    return "";
  }

  std::string name_;
  Fields fields_;
  RoiAlignAttrs attrs_;
};

template <class Fields>
std::unique_ptr<OpCore> make_twinops(const Fields& f, std::string* error) {
  return RoiAlignCore<Fields>::make("TwinopsRoiAlign", f, error);
}

template <class Fields>
std::unique_ptr<OpCore> make_mmcv(const Fields& f, std::string* error) {
  return RoiAlignCore<Fields>::make("MMCVRoiAlign", f, error);
}

}  // namespace

OpCreator twinops_roi_align_creator() {
  return attr_creator<RoiAlignAttrs>("TwinopsRoiAlign", &make_twinops<RoiAlignAttrs>);
}

OpCreator mmcv_roi_align_creator() {
  return drop_in(attr_creator<MmcvRoiAlignFields>("MMCVRoiAlign", &make_mmcv<MmcvRoiAlignFields>), "mmcv");
}

}  // namespace plugin
}  // namespace roi_align
}  // namespace twinops
