// The ms_deform_attn plugins' OpCore and creators (see ms_deform_attn_core.h).
#include "ms_deform_attn_core.h"

#include <algorithm>
#include <memory>
#include <string>

#include "../../kernels/ms_deform_attn/ms_deform_attn_cuda.h"
#include "../../kernels/ms_deform_attn/ms_deform_attn_host.h"
#include "../core_util.h"

namespace twinops {
namespace ms_deform_attn {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

namespace {

// The field set of a plugin without fields (the attribute-struct interface of op_fields.h).
struct NoFields {
  enum : int { attr_count = 0 };
  template <class F>
  void for_each(F&&) {}
  template <class F>
  void for_each(F&&) const {}
  std::string check_choices() const { return ""; }
};

enum class Kind : int32_t { kTwinops = 0, kMMCV = 1, kTrt = 2 };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kMMCV: return "MMCVMultiScaleDeformableAttention";
    case Kind::kTrt: return "MultiscaleDeformableAttnPlugin_TRT";
    case Kind::kTwinops:
    default: return "TwinopsMSDeformAttn";
  }
}

constexpr int32_t kInputs = 5;
const char* const kInputList = "value, spatial_shapes, level_start_index, sampling_locations, attention_weights";

std::string count_message(int32_t nb_in) {
  return "expects 5 inputs (" + std::string(kInputList) + "), got " + std::to_string(nb_in);
}

// The five inputs' ranks and shapes as make_params reads them ("" or its message).
std::string params_of(const nvinfer1::Dims* dims, Params* p) {
  int ranks[kInputs];
  int64_t shapes[kInputs][8] = {};
  const int64_t* ptrs[kInputs];
  for (int i = 0; i < kInputs; ++i) {
    ranks[i] = dims[i].nbDims;
    for (int k = 0; k < dims[i].nbDims && k < 8; ++k) shapes[i][k] = dims[i].d[k];
    ptrs[i] = shapes[i];
  }
  return make_params(ranks, ptrs, p);
}

// "" when the five inputs have the ranks the op takes, else make_params' message naming the first.
std::string rank_error(const int32_t* ranks) {
  const int32_t want[kInputs] = {4, 2, 1, 6, 5};
  nvinfer1::Dims dims[kInputs];
  bool ok = true;
  for (int i = 0; i < kInputs; ++i) {
    dims[i].nbDims = ranks[i];
    for (int k = 0; k < nvinfer1::Dims::MAX_DIMS; ++k) dims[i].d[k] = 1;
    ok = ok && ranks[i] == want[i];
  }
  Params unused;
  return ok ? "" : params_of(dims, &unused);
}

// The types of every position (inputs, then the output): "" or a message.
std::string check_types(const DataType* in, DataType out) {
  const DataType t = in[0];
  if (!is_float_type(t)) return std::string("value must be ") + kFloatTypes + ", got " + type_name(t);
  if (in[3] != t || in[4] != t || out != t)
    return "sampling_locations, attention_weights and the output must have value's type (" + type_name(t) +
           "), got " + type_name(in[3]) + ", " + type_name(in[4]) + " and " + type_name(out);
  if (!is_index_type(in[2]))
    return std::string("level_start_index must be ") + kIndexTypes + ", got " + type_name(in[2]);
  if (in[1] != in[2])
    return "spatial_shapes must have level_start_index's type (" + type_name(in[2]) + "), got " + type_name(in[1]);
  return "";
}

class MSDeformAttnCore final : public OpCore {
 public:
  explicit MSDeformAttnCore(Kind kind) : kind_(kind) {}

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<MSDeformAttnCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    out[0] = in[0];
    return check_types(in, in[0]);
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    int32_t ranks[kInputs];
    for (int i = 0; i < kInputs; ++i) ranks[i] = in[i].nbDims;
    if (std::string e = rank_error(ranks); !e.empty()) return e;
    // The sizes known when the network is built (constant dims) must agree already; the others
    // are checked per shape (onShapeChange, enqueue).
    nvinfer1::Dims known[kInputs];
    for (int i = 0; i < kInputs; ++i) {
      known[i].nbDims = in[i].nbDims;
      for (int k = 0; k < in[i].nbDims; ++k)
        known[i].d[k] = in[i].d[k]->isConstant() ? in[i].d[k]->getConstantValue() : -1;
    }
    Params unused;
    if (std::string e = params_of(known, &unused); !e.empty()) return e;
    const DimsExprs& v = in[0];
    if (kind_ == Kind::kTrt) {
      out->nbDims = 4;
      out->d[0] = v.d[0], out->d[1] = in[3].d[1], out->d[2] = v.d[2], out->d[3] = v.d[3];
    } else {
      out->nbDims = 3;
      out->d[0] = v.d[0], out->d[1] = in[3].d[1];
      out->d[2] = builder.operation(nvinfer1::DimensionOperation::kPROD, *v.d[2], *v.d[3]);
    }
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (nb_in != kInputs || pos < 0 || pos > kInputs || io[pos].format != TensorFormat::kLINEAR) return false;
    switch (pos) {
      case 0: return is_float_type(io[0].type);
      case 1: return is_index_type(io[1].type);
      case 2: return io[2].type == io[1].type;
      default: return io[pos].type == io[0].type;  // the locations, the weights, the output
    }
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    if (nb_in != kInputs) return count_message(nb_in);
    DataType types[kInputs];
    for (int i = 0; i < kInputs; ++i) types[i] = in[i].desc.type;
    if (std::string e = check_types(types, out[0].desc.type); !e.empty()) return e;
    // Ranks here; the sizes that must agree are checked per shape (onShapeChange, enqueue), since
    // a profile's ranges may hold the shapes that run.
    int32_t ranks[kInputs];
    for (int i = 0; i < kInputs; ++i) ranks[i] = in[i].min.nbDims;
    return rank_error(ranks);
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
    const std::string w = std::string(kind_name(kind_)) + " enqueue: ";
    for (int i = 0; i <= kInputs; ++i) {
      const PluginTensorDesc& d = i < kInputs ? in[i] : out[0];
      if (d.format != TensorFormat::kLINEAR) return enqueue_refused(w + "every tensor must be linear");
    }
    DataType types[kInputs];
    for (int i = 0; i < kInputs; ++i) types[i] = in[i].type;
    if (std::string e = check_types(types, out[0].type); !e.empty()) return enqueue_refused(w + e);
    Params p;
    if (std::string e = concrete(in, out, &p); !e.empty()) return enqueue_refused(w + e);
    if (p.n * p.lq * p.m * p.d == 0) return 0;  // an empty output: nothing to write
    for (int i = 0; i < kInputs; ++i)
      if (inputs[i] == nullptr) return enqueue_refused(w + "null input pointer for a non-empty output");
    if (outputs[0] == nullptr) return enqueue_refused(w + "null output pointer");
    const bool wide = in[2].type != DataType::kINT32;
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            const auto* v = static_cast<const T*>(inputs[0]);
                            const auto* loc = static_cast<const T*>(inputs[3]);
                            const auto* a = static_cast<const T*>(inputs[4]);
                            auto* y = static_cast<T*>(outputs[0]);
                            if (wide)
                              return forward_cuda<T, int64_t>(p, v, static_cast<const int64_t*>(inputs[1]),
                                                              static_cast<const int64_t*>(inputs[2]), loc, a, y,
                                                              stream);
                            return forward_cuda<T, int32_t>(p, v, static_cast<const int32_t*>(inputs[1]),
                                                            static_cast<const int32_t*>(inputs[2]), loc, a, y, stream);
                          }));
  }

  void fields(FieldStore* store) const override { store->clear(); }

 private:
  // Params for concrete shapes (dense strides: TensorRT's linear tensors), the output checked.
  std::string concrete(const PluginTensorDesc* in, const PluginTensorDesc* out, Params* p) const {
    nvinfer1::Dims dims[kInputs];
    for (int i = 0; i < kInputs; ++i) dims[i] = in[i].dims;
    if (std::string e = params_of(dims, p); !e.empty()) return e;
    const nvinfer1::Dims& y = out[0].dims;
    const bool same = kind_ == Kind::kTrt
                          ? y.nbDims == 4 && y.d[0] == p->n && y.d[1] == p->lq && y.d[2] == p->m && y.d[3] == p->d
                          : y.nbDims == 3 && y.d[0] == p->n && y.d[1] == p->lq && y.d[2] == p->m * p->d;
    if (!same)
      return std::string("the output's shape differs from ") +
             (kind_ == Kind::kTrt ? "(N, Lq, M, D)" : "(N, Lq, M * D)") +
             " of value and sampling_locations";
    int64_t shape[6] = {};
    const auto dense = [&](int i, int64_t* strides) {
      for (int k = 0; k < dims[i].nbDims; ++k) shape[k] = dims[i].d[k];
      dense_strides(dims[i].nbDims, shape, strides);
    };
    dense(0, p->value_stride);
    dense(3, p->loc_stride);
    dense(4, p->weight_stride);
    const int64_t out_shape[3] = {p->n, p->lq, p->m * p->d};
    dense_strides(3, out_shape, p->out_stride);  // (N, Lq, M, D) has the same dense layout
    return "";
  }

  Kind kind_;
};

template <Kind kKind>
std::unique_ptr<OpCore> make_core(const NoFields&, std::string*) {
  return std::make_unique<MSDeformAttnCore>(kKind);
}

}  // namespace

OpCreator twinops_ms_deform_attn_creator() {
  return attr_creator<NoFields>("TwinopsMSDeformAttn", &make_core<Kind::kTwinops>);
}

OpCreator mmcv_ms_deform_attn_creator() {
  return drop_in(attr_creator<NoFields>("MMCVMultiScaleDeformableAttention", &make_core<Kind::kMMCV>), "mmdeploy");
}

OpCreator trt_ms_deform_attn_creator() {
  return own_namespace_drop_in(attr_creator<NoFields>("MultiscaleDeformableAttnPlugin_TRT", &make_core<Kind::kTrt>),
                               "twinops");
}

}  // namespace plugin
}  // namespace ms_deform_attn
}  // namespace twinops
