// The resize computation behind every resize plugin, independent of the plugin interface
// (IPluginV3 in resize_plugin.h, IPluginV2DynamicExt in resize_plugin_legacy.h).
//
// Plugins (name, fields; namespace ""; versions in plugin_library.cpp):
//   TwinopsResize         inputs X [, sizes]  fields = the torch op's attributes
//   DynamicTRTResize      inputs input, size_tensor   field align_corners (MMDeploy)
//   TRTBicubicInterpolate input                       fields scale_factor, align_corners (MMDeploy)
// Output (N, C, H_out, W_out), where (H_out, W_out) is, in this order of preference:
//   (c) the values of the 1-D int shape input `sizes` (IPluginV3 only: the exported node's
//       tensorrt_plugin_shape_input_indices=[1] makes the parser pass it as a shape input),
//   (b) the last two dims of size_tensor's shape (DynamicTRTResize),
//   (a) floor(in * scale) per axis from `scales` / `scale_factor` (PyTorch's rule, evaluated
//       exactly on the scale's binary fraction with integer dimension expressions).
// I/O: float32, float16 (and bfloat16 on TensorRT >= 9) linear NCHW, output type = input type.
#pragma once

#include <NvInferRuntime.h>

#include <string>

#include "../kernels/resize_attrs.h"
#include "plugin_base.h"

namespace twinops {
namespace trt {

enum class Kind : int32_t { kTwinopsResize = 0, kDynamicTRTResize = 1, kTRTBicubicInterpolate = 2 };

const char* kind_name(Kind k);
// The declared fields of a kind (getFieldNames), as TensorRT's ONNX parser types them.
void declare_fields(Kind k, FieldStore* store);

struct ResizeSpec {
  Kind kind = Kind::kTwinopsResize;
  resize::ResizeAttrs attrs;  // MMDeploy kinds: the equivalent F.interpolate(mode="bicubic") attributes
  int64_t align_corners = 0;  // MMDeploy kinds
};

// Reads and validates the fields of `kind`; returns "" or a message naming the field.
std::string parse_spec(Kind kind, const nvinfer1::PluginFieldCollection* fc, ResizeSpec* out);
// The same named fields (round trip: parse_spec(kind, fields) == spec).
void spec_fields(const ResizeSpec& s, FieldStore* store);

// Number of regular (non-shape) inputs the plugin accepts; "" or a message.
std::string check_io(const ResizeSpec& s, int32_t nb_inputs, int32_t nb_shape_inputs, int32_t nb_outputs);

// Output dims (c)/(b)/(a) above; "" or a message.
std::string output_dims(const ResizeSpec& s, const nvinfer1::DimsExprs* inputs, int32_t nb_inputs,
                        const nvinfer1::DimsExprs* shape_inputs, int32_t nb_shape_inputs,
                        nvinfer1::IExprBuilder& builder, nvinfer1::DimsExprs* out);

// Output type for input 0's type; "" or a message.
std::string output_type(nvinfer1::DataType in0, nvinfer1::DataType* out);

// supportsFormatCombination for I/O position `pos` (inputs first); `types` / `formats`
// hold positions 0..pos.
bool supports(const ResizeSpec& s, int32_t pos, int32_t nb_inputs, const nvinfer1::DataType* types,
              const nvinfer1::TensorFormat* formats);

// The profile of input 0 / output 0 (build time): lengths of H and W in [0, 2^31 - 1] (the
// kernels' int32 range); "" or a message naming the axis, the value and the supported range.
std::string check_profile(const ResizeSpec& s, const nvinfer1::Dims& in_min, const nvinfer1::Dims& in_max,
                          const nvinfer1::Dims& out_min, const nvinfer1::Dims& out_max);

// Workspace bound over every input / output shape in [min, max] (input 0 and output 0); 0 for
// a profile that check_profile refuses.
size_t workspace_bound(const ResizeSpec& s, const nvinfer1::Dims& in_min, const nvinfer1::Dims& in_max,
                       const nvinfer1::Dims& out_min, const nvinfer1::Dims& out_max);

// Runs the kernel; returns 0 or the CUDA status (logged with the reason).
int32_t run(const ResizeSpec& s, const nvinfer1::PluginTensorDesc& in, const nvinfer1::PluginTensorDesc& out,
            const void* x, void* y, void* workspace, cudaStream_t stream);

}  // namespace trt
}  // namespace twinops
