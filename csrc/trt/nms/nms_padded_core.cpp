// The TwinopsBatchedNMSPadded plugin's OpCore and creator (see nms_core.h).
#include <cmath>
#include <memory>
#include <string>

#include "../../kernels/nms/nms.h"
#include "../core_util.h"
#include "nms_core.h"

namespace twinops {
namespace nms {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

using nvinfer1::DataType;
using nvinfer1::Dims;
using nvinfer1::DimsExprs;
using nvinfer1::DynamicPluginTensorDesc;
using nvinfer1::IExprBuilder;
using nvinfer1::PluginTensorDesc;
using nvinfer1::TensorFormat;

namespace {

const char kName[] = "TwinopsBatchedNMSPadded";

// detection_indices' type: int64 where TensorRT has it (>= 9), else int32 (8.6 narrows the ONNX
// node's int64 output).
constexpr DataType kIndexType =
#if TWIN_TRT_HAS_BF16
    DataType::kINT64;
#else
    DataType::kINT32;
#endif

class PaddedCore final : public OpCore {
 public:
  explicit PaddedCore(const PaddedFields& f) : fields_(f) {}

  static std::unique_ptr<OpCore> make(const PaddedFields& f, std::string* error) {
    const std::string who = std::string(kName) + ": field ";
    if (!std::isfinite(f.score_threshold))
      *error = who + "'score_threshold' must be finite, got " + std::to_string(f.score_threshold);
    else if (!(f.iou_threshold >= 0.0 && f.iou_threshold <= 1.0))  // NaN fails too
      *error = who + "'iou_threshold' must be in [0, 1], got " + std::to_string(f.iou_threshold);
    else if (f.max_output_boxes < 1)
      *error = who + "'max_output_boxes' must be at least 1, got " + std::to_string(f.max_output_boxes);
    else if (f.pre_nms_top_k != -1 && f.pre_nms_top_k < 1)
      *error = who + "'pre_nms_top_k' must be -1 (every candidate) or at least 1, got " +
               std::to_string(f.pre_nms_top_k);
    else if (f.class_agnostic != 0 && f.class_agnostic != 1)
      *error = who + "'class_agnostic' must be 0 or 1, got " + std::to_string(f.class_agnostic);
    return error->empty() ? std::make_unique<PaddedCore>(f) : nullptr;
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<PaddedCore>(*this); }
  int32_t nb_outputs() const override { return 5; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (std::string e = box_score_types(in[0], in[1]); !e.empty()) return e;
    out[0] = DataType::kINT32;
    out[1] = out[2] = in[0];
    out[3] = DataType::kINT32;
    out[4] = kIndexType;
    return "";
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    const DimsExprs &b = in[0], &s = in[1];
    if (b.nbDims != 3 && b.nbDims != 4)
      return "boxes must be 3-D (B, N, 4) or 4-D (B, N, C, 4), got " + std::to_string(b.nbDims) + "-D";
    if (b.d[b.nbDims - 1]->isConstant() && b.d[b.nbDims - 1]->getConstantValue() != 4)
      return "boxes' last dim must be 4 (x1, y1, x2, y2), got " + std::to_string(b.d[b.nbDims - 1]->getConstantValue());
    if (s.nbDims != 3) return "scores must be 3-D (B, N, C), got " + std::to_string(s.nbDims) + "-D";
    const char* names[] = {"B", "N", "C"};
    for (int32_t i = 0; i < b.nbDims - 1; ++i) {
      const nvinfer1::IDimensionExpr *x = b.d[i], *y = s.d[i];
      if (x->isConstant() && y->isConstant() && x->getConstantValue() != y->getConstantValue())
        return std::string("boxes and scores must have one ") + names[i] + ", got " +
               std::to_string(x->getConstantValue()) + " and " + std::to_string(y->getConstantValue());
    }
    const nvinfer1::IDimensionExpr* k = builder.constant(fields_.max_output_boxes);
    const nvinfer1::IDimensionExpr* one = builder.constant(1);
    if (k == nullptr || one == nullptr) return "the expression builder refused a constant";
    out[0].nbDims = 2;
    out[0].d[0] = s.d[0];
    out[0].d[1] = one;
    out[1].nbDims = 3;
    out[1].d[0] = s.d[0];
    out[1].d[1] = k;
    out[1].d[2] = builder.constant(4);
    for (int32_t i = 2; i < 5; ++i) {
      out[i].nbDims = 2;
      out[i].d[0] = s.d[0];
      out[i].d[1] = k;
    }
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t nb_out) const override {
    if (!check_count(nb_in).empty() || nb_out != 5 || pos < 0 || pos >= 7 || io[pos].format != TensorFormat::kLINEAR)
      return false;
    switch (pos) {
      case 0: return is_float_type(io[0].type);
      case 1: case 3: case 4: return io[pos].type == io[0].type;  // scores, detection boxes and scores
      case 6: return io[6].type == kIndexType;
      default: return io[pos].type == DataType::kINT32;  // num_detections, detection_classes
    }
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (nb_out != 5) return "has 5 outputs, got " + std::to_string(nb_out);
    if (std::string e = box_score_types(in[0].desc.type, in[1].desc.type); !e.empty()) return e;
    if (out[4].desc.type != kIndexType) return "detection_indices must be " + type_name(kIndexType);
    const Dims& b = in[0].max;
    if ((b.nbDims != 3 && b.nbDims != 4) || in[0].min.d[b.nbDims - 1] > 4 || b.d[b.nbDims - 1] < 4)
      return "boxes must be (B, N, 4) or (B, N, C, 4); the profile's range excludes a last dim of 4";
    if (in[1].max.nbDims != 3) return "scores must be 3-D (B, N, C)";
    if (const char* why = padded_unsupported(params(in[1].max)))
      return std::string("the profile's largest shapes give ") + why + "; bound the candidates with pre_nms_top_k";
    return "";
  }

  size_t workspace(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc*,
                   int32_t) const override {
    if (nb_in < 2 || in[1].max.nbDims != 3) return 0;
    return bytes_for(params(in[1].max), in[0].desc.type);
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    return check_concrete(in, out, nb_out);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) const override {
    const std::string w = std::string(kName) + " enqueue: ";
    if (std::string e = check_concrete(in, out, 5); !e.empty()) return enqueue_refused(w + e);
    (void)nb_in;  // TensorRT passes none; the node's inputs are fixed
    const PaddedParams p = params_of(in);
    if (p.batch == 0) return 0;
    for (int32_t i = 0; i < 5; ++i)
      if (outputs[i] == nullptr) return enqueue_refused(w + "null output pointer " + std::to_string(i));
    if (p.boxes * p.classes > 0 && (inputs[0] == nullptr || inputs[1] == nullptr))
      return enqueue_refused(w + "null boxes or scores pointer");
    const size_t bytes = padded_workspace_bytes(p, 2 + 2 * (in[0].type == DataType::kFLOAT));
    if (bytes_for(p, in[0].type) > 0 && workspace == nullptr) return enqueue_refused(w + "null workspace pointer");
    const bool narrow = kIndexType == DataType::kINT32;
    int64_t* indices = narrow ? reinterpret_cast<int64_t*>(static_cast<char*>(workspace) + after_kernels(bytes))
                              : static_cast<int64_t*>(outputs[4]);
    cudaError_t e = with_float_type(in[0].type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return nms_padded_cuda<T>(p, static_cast<const T*>(inputs[0]), static_cast<const T*>(inputs[1]),
                                static_cast<int32_t*>(outputs[0]), static_cast<T*>(outputs[1]),
                                static_cast<T*>(outputs[2]), static_cast<int32_t*>(outputs[3]), indices, workspace,
                                bytes, stream);
    });
    if (e == cudaSuccess && narrow)  // each index's low 4 bytes (little-endian; -1 stays -1)
      e = cudaMemcpy2DAsync(outputs[4], sizeof(int32_t), indices, sizeof(int64_t), sizeof(int32_t),
                            static_cast<size_t>(p.batch * p.max_output), cudaMemcpyDeviceToDevice, stream);
    return enqueue_status(w, e);
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  static std::string check_count(int32_t nb_in) {
    return nb_in == 2 ? "" : "expects 2 inputs (boxes, scores), got " + std::to_string(nb_in);
  }

  // The kernels' parameters for scores of shape s (B, N, C); boxes' rank is read at enqueue.
  PaddedParams params(const Dims& s) const {
    PaddedParams p;
    p.batch = s.d[0];
    p.boxes = s.d[1];
    p.classes = s.d[2];
    p.class_agnostic = fields_.class_agnostic != 0;
    p.score_threshold = fields_.score_threshold;
    p.iou_threshold = fields_.iou_threshold;
    p.max_output = fields_.max_output_boxes;
    p.pre_nms_top_k = fields_.pre_nms_top_k;
    return p;
  }

  PaddedParams params_of(const PluginTensorDesc* in) const {
    PaddedParams p = params(in[1].dims);
    p.per_class_boxes = in[0].dims.nbDims == 4;
    return p;
  }

  // The concrete shapes of one call.
  std::string check_concrete(const PluginTensorDesc* in, const PluginTensorDesc* out, int32_t nb_out) const {
    if (nb_out != 5) return "has 5 outputs, got " + std::to_string(nb_out);
    const Dims &b = in[0].dims, &s = in[1].dims;
    if (s.nbDims != 3) return "scores must be (B, N, C)";
    const bool per_class = b.nbDims == 4;
    if (!((b.nbDims == 3 || per_class) && b.d[b.nbDims - 1] == 4 && b.d[0] == s.d[0] && b.d[1] == s.d[1] &&
          (!per_class || b.d[2] == s.d[2])))
      return "boxes must be (B, N, 4) or (B, N, C, 4) with the scores' B, N (and C)";
    if (const char* why = padded_unsupported(params(s))) return std::string(why) + "; bound them with pre_nms_top_k";
    const int64_t k = fields_.max_output_boxes;
    if (out[1].dims.nbDims != 3 || out[1].dims.d[0] != s.d[0] || out[1].dims.d[1] != k)
      return "detection_boxes must be (B, max_output_boxes, 4)";
    return "";
  }

  // The kernels' workspace, then (int32 indices) the int64 indices before narrowing.
  static size_t bytes_for(const PaddedParams& p, DataType boxes) {
    if (p.batch <= 0) return 0;
    const size_t kernels = padded_workspace_bytes(p, boxes == DataType::kFLOAT ? 4 : 2);
    return kIndexType == DataType::kINT32
               ? after_kernels(kernels) + sizeof(int64_t) * static_cast<size_t>(p.batch * p.max_output)
               : kernels;
  }


  PaddedFields fields_;
};

std::unique_ptr<OpCore> make_core(const PaddedFields& fields, std::string* error) {
  return PaddedCore::make(fields, error);
}

}  // namespace

OpCreator twinops_batched_nms_padded_creator() { return attr_creator<PaddedFields>(kName, &make_core); }

}  // namespace plugin
}  // namespace nms
}  // namespace twinops
