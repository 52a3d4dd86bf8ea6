// The nms plugins' OpCore and creators (see nms_core.h).
#include "nms_core.h"

#if TWIN_TRT_HAS_V3  // the size tensor of keep's length (IExprBuilder::declareSizeTensor)

#include <memory>
#include <string>

#include "../../kernels/nms/nms.h"
#include "../core_util.h"

namespace twinops {
namespace nms {
namespace plugin {

namespace {

// One core for both nodes: `batched` adds the idxs input.
class NmsCore final : public OpCore {
 public:
  NmsCore(const NmsFields& fields, bool batched) : fields_(fields), batched_(batched) {}

  static std::unique_ptr<OpCore> make(const NmsFields& f, bool batched, std::string* error) {
    const std::string who = batched ? "TwinopsBatchedNMS" : "TwinopsNMS";
    if (!(f.iou_threshold >= 0.0 && f.iou_threshold <= 1.0)) {  // NaN fails too
      *error = who + ": field 'iou_threshold' must be in [0, 1], got " + std::to_string(f.iou_threshold);
      return nullptr;
    }
    return std::make_unique<NmsCore>(f, batched);
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<NmsCore>(*this); }
  int32_t nb_outputs() const override { return 2; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (std::string e = box_score_types(in[0], in[1]); !e.empty()) return e;
    if (batched_ && !is_class_type(in[2])) return "idxs must be int64 or int32, got " + type_name(in[2]);
    out[0] = DataType::kINT64;
    out[1] = DataType::kINT64;
    return "";
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (in[0].nbDims != 2) return "boxes must be 2-D (K, 4), got " + std::to_string(in[0].nbDims) + "-D";
    if (in[0].d[1]->isConstant() && in[0].d[1]->getConstantValue() != 4)
      return "boxes must be (K, 4), got a last dim of " + std::to_string(in[0].d[1]->getConstantValue());
    for (int32_t i = 1; i < nb_in; ++i) {
      if (in[i].nbDims != 1) return std::string(input_name(i)) + " must be 1-D (K), got " +
                                    std::to_string(in[i].nbDims) + "-D";
      const nvinfer1::IDimensionExpr *k = in[0].d[0], *ki = in[i].d[0];
      if (k->isConstant() && ki->isConstant() && k->getConstantValue() != ki->getConstantValue())
        return std::string(input_name(i)) + " must have one entry per box (" +
               std::to_string(k->getConstantValue()) + "), got " + std::to_string(ki->getConstantValue());
    }
    // keep's length is the size tensor (output 1): at most K; the builder tunes for K / 2.
    const nvinfer1::IDimensionExpr* opt =
        builder.operation(nvinfer1::DimensionOperation::kCEIL_DIV, *in[0].d[0], *builder.constant(2));
    if (opt == nullptr) return "the expression builder refused ceil(K / 2)";
    const nvinfer1::IDimensionExpr* m = builder.declareSizeTensor(1, *opt, *in[0].d[0]);
    if (m == nullptr) return "the expression builder refused the size tensor of output 1";
    out[0].nbDims = 1;
    out[0].d[0] = m;
    out[1].nbDims = 0;
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t nb_out) const override {
    if (!check_count(nb_in).empty() || nb_out != 2 || pos < 0 || pos >= nb_in + 2 ||
        io[pos].format != TensorFormat::kLINEAR)
      return false;
    if (pos == 0) return is_float_type(io[0].type);
    if (pos == 1) return io[1].type == io[0].type;
    if (pos == 2 && batched_) return is_class_type(io[2].type);
    return io[pos].type == DataType::kINT64;  // keep, the count
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (nb_out != 2) return "has 2 outputs (keep and its length), got " + std::to_string(nb_out);
    if (std::string e = box_score_types(in[0].desc.type, in[1].desc.type); !e.empty()) return e;
    if (batched_ && !is_class_type(in[2].desc.type))
      return "idxs must be int64 or int32, got " + type_name(in[2].desc.type);
    if (out[0].desc.type != DataType::kINT64 || out[1].desc.type != DataType::kINT64)
      return "keep and its length must be int64";
    if (in[0].max.nbDims != 2 || in[0].min.d[1] > 4 || in[0].max.d[1] < 4)
      return "boxes must be (K, 4); the profile's range excludes a last dim of 4";
    if (in[0].max.d[0] > kMaxCudaBoxes)
      return "at most " + std::to_string(kMaxCudaBoxes) + " boxes; the profile allows K up to " +
             std::to_string(in[0].max.d[0]);
    return "";
  }

  size_t workspace(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc*,
                   int32_t) const override {
    if (nb_in < 1) return 0;
    const DataType idxs = batched_ && nb_in > 2 ? in[2].desc.type : DataType::kINT64;
    return bytes_for(in[0].max.d[0], in[0].desc.type, idxs);
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    return check_concrete(in, nb_in, out, nb_out);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) const override {
    const std::string w = std::string(batched_ ? "TwinopsBatchedNMS" : "TwinopsNMS") + " enqueue: ";
    // TensorRT's enqueue passes no input count: the node's is fixed.
    const int32_t n_in = nb_in >= 0 ? nb_in : (batched_ ? 3 : 2);
    if (std::string e = check_count(n_in); !e.empty()) return enqueue_refused(w + e);
    if (std::string e = check_concrete(in, n_in, out, 2); !e.empty()) return enqueue_refused(w + e);
    const Params p = params(in[0].dims.d[0]);
    if (p.count > 0 && (inputs[0] == nullptr || inputs[1] == nullptr || (batched_ && inputs[2] == nullptr) ||
                        outputs[0] == nullptr || workspace == nullptr))
      return enqueue_refused(w + "null boxes, scores, idxs, keep or workspace pointer for K = " +
                             std::to_string(p.count));
    if (outputs[1] == nullptr) return enqueue_refused(w + "null pointer for keep's length");
    const int64_t* classes = batched_ ? static_cast<const int64_t*>(inputs[2]) : nullptr;
    size_t bytes = workspace_bytes(p, element_bytes(in[0].type));
    if (batched_ && in[2].type == DataType::kINT32 && p.count > 0) {
      // int32 classes widened into the workspace's tail: each value in the low 4 bytes of a zeroed
      // int64 (a strided copy, no kernel). Distinct int32 ids stay distinct, which is all NMS
      // compares (negative ids become large positive ones).
      auto* wide = reinterpret_cast<int64_t*>(static_cast<char*>(workspace) + after_kernels(bytes));
      const size_t k = static_cast<size_t>(p.count);
      cudaError_t e = cudaMemsetAsync(wide, 0, sizeof(int64_t) * k, stream);
      if (e == cudaSuccess)
        e = cudaMemcpy2DAsync(wide, sizeof(int64_t), inputs[2], sizeof(int32_t), sizeof(int32_t), k,
                              cudaMemcpyDeviceToDevice, stream);
      if (e != cudaSuccess) return enqueue_status(w, e);
      classes = wide;
    }
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            return nms_cuda<T>(p, static_cast<const T*>(inputs[0]), static_cast<const T*>(inputs[1]),
                                               classes, static_cast<int64_t*>(outputs[0]),
                                               static_cast<int64_t*>(outputs[1]), workspace, bytes, stream);
                          }));
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  int32_t inputs() const { return batched_ ? 3 : 2; }
  static const char* input_name(int32_t i) { return i == 0 ? "boxes" : i == 1 ? "scores" : "idxs"; }

  std::string check_count(int32_t nb_in) const {
    if (nb_in == inputs()) return "";
    return std::string("expects ") + (batched_ ? "3 inputs (boxes, scores, idxs)" : "2 inputs (boxes, scores)") +
           ", got " + std::to_string(nb_in);
  }

  // The concrete shapes of one call: boxes (K, 4), scores and idxs (K), keep (M <= K), a 0-D count.
  std::string check_concrete(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t nb_out) const {
    if (nb_out != 2) return "has 2 outputs (keep and its length), got " + std::to_string(nb_out);
    if (in[0].dims.nbDims != 2 || in[0].dims.d[1] != 4) return "boxes must be (K, 4)";
    const int64_t k = in[0].dims.d[0];
    for (int32_t i = 1; i < nb_in; ++i)
      if (in[i].dims.nbDims != 1 || in[i].dims.d[0] != k)
        return std::string(input_name(i)) + " must be (K) with K = " + std::to_string(k) + " boxes";
    if (k > kMaxCudaBoxes) return "at most " + std::to_string(kMaxCudaBoxes) + " boxes, got " + std::to_string(k);
    if (out[1].dims.nbDims != 0) return "keep's length must be 0-D";
    return "";
  }

  Params params(int64_t count) const {
    Params p;  // dense strides: TensorRT's linear tensors
    p.count = count;
    p.iou_threshold = fields_.iou_threshold;
    return p;
  }

  static int element_bytes(DataType t) { return t == DataType::kFLOAT ? 4 : 2; }
  static bool is_class_type(DataType t) { return t == DataType::kINT64 || t == DataType::kINT32; }

  // The kernels' workspace for K boxes, then (int32 idxs) K widened classes.
  size_t bytes_for(int64_t k, DataType boxes, DataType idxs) const {
    if (k <= 0) return 0;
    const size_t kernels = workspace_bytes(params(k), element_bytes(boxes));
    return idxs == DataType::kINT32 ? after_kernels(kernels) + sizeof(int64_t) * static_cast<size_t>(k) : kernels;
  }


  NmsFields fields_;
  bool batched_;
};

template <bool kBatched>
std::unique_ptr<OpCore> make_core(const NmsFields& fields, std::string* error) {
  return NmsCore::make(fields, kBatched, error);
}

}  // namespace

OpCreator twinops_nms_creator() {
  return v3_only(attr_creator<NmsFields>("TwinopsNMS", &make_core<false>));
}

OpCreator twinops_batched_nms_creator() {
  return v3_only(attr_creator<NmsFields>("TwinopsBatchedNMS", &make_core<true>));
}

}  // namespace plugin
}  // namespace nms
}  // namespace twinops

#endif  // TWIN_TRT_HAS_V3
