// Schema fragment of twinops::roi_align / roi_align_backward, argument checks and CPU kernels.
// Fake kernels live in Python next to the op (ops/library/roi_align/api.py); they run the same
// checks through twinops::_roi_align_check.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "../../kernels/roi_align/roi_align_cpu.h"
#include "roi_align_common.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

namespace {

const std::string kForward = "torch.ops.twinops.roi_align";
const std::string kBackward = "torch.ops.twinops.roi_align_backward";

// Every check of the forward that needs no tensor data; `who` starts the messages.
Params check_forward(const std::string& who, const Desc& input, const Desc& rois, const RoiAlignArgs& a) {
  if (!a.error.empty()) fail(who + ": " + a.error);
  if (input.shape.size() != 4)
    fail(who + ": input must be a 4-D (N, C, H, W) tensor, got " + std::to_string(input.shape.size()) + "-D");
  if (!floating(input.dtype))
    fail(who + ": input must be float32, float64, float16 or bfloat16, got " + c10::toString(input.dtype));
  if (rois.shape.size() != 2)
    fail(who + ": rois must be a 2-D (K, 5) tensor (batch index, x1, y1, x2, y2), got " +
         std::to_string(rois.shape.size()) + "-D");
  if (rois.dtype != input.dtype)
    fail(who + ": rois must have input's dtype (" + c10::toString(input.dtype) + "), got " +
         c10::toString(rois.dtype));
  if (rois.device != input.device)
    fail(who + ": rois must be on input's device (" + input.device.str() + "), got " + rois.device.str());
  if (input.device.is_cuda() && input.dtype == at::kDouble)
    fail(who + ": float64 runs on the CPU only; on CUDA input must be float32, float16 or bfloat16");
  Params p;
  const std::string err = make_params(input.shape.data(), rois.shape.data(), 5, a.attrs, &p);
  if (!err.empty()) fail(who + ": " + err);
  return p;
}

Params check_backward(const Desc& grad_output, const Desc& input, const Desc& rois, const RoiAlignArgs& a) {
  Params p = check_forward(kBackward, input, rois, a);
  check_grad_output(kBackward, grad_output, input, "input's", p);
  return p;
}

}  // namespace

void check_grad_output(const std::string& who, const Desc& grad_output, const Desc& like, const std::string& like_name,
                       const Params& p) {
  if (grad_output.dtype != like.dtype)
    fail(who + ": grad_output must have " + like_name + " dtype (" + c10::toString(like.dtype) + "), got " +
         c10::toString(grad_output.dtype));
  if (grad_output.device != like.device)
    fail(who + ": grad_output must be on " + like_name + " device (" + like.device.str() + "), got " +
         grad_output.device.str());
  const std::vector<int64_t> want{p.k, p.c, p.ph, p.pw};
  if (grad_output.shape != at::IntArrayRef(want))
    fail(who + ": grad_output must have shape " + shape_str(want) + " (K, C, PH, PW), got " +
         shape_str(grad_output.shape));
}

Forward prepare_forward(const at::Tensor& input, const at::Tensor& rois, const RoiAlignArgs& a) {
  Forward r;
  r.params = check_forward(kForward, desc_of(input), desc_of(rois), a);
  r.output = at::empty({r.params.k, r.params.c, r.params.ph, r.params.pw}, input.options());
  strides_of<4>(input, r.params.level[0].stride);
  strides_of<2>(rois, r.params.roi_stride);
  strides_of<4>(r.output, r.params.out_stride);
  return r;
}

Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& rois,
                          const RoiAlignArgs& a) {
  Backward r;
  r.params = check_backward(desc_of(grad_output), desc_of(input), desc_of(rois), a);
  r.grad_input = at::empty(input.sizes(), input.options());
  strides_of<4>(input, r.params.level[0].stride);
  strides_of<2>(rois, r.params.roi_stride);
  strides_of<4>(grad_output, r.params.out_stride);
  strides_of<4>(r.grad_input, r.params.grad_input_stride);
  return r;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};

at::Tensor roi_align_cpu(const at::Tensor& input, const at::Tensor& rois TWIN_ROI_ALIGN_TORCH_PARAMS) {
  Forward r = prepare_forward(input, rois, TWIN_ROI_ALIGN_TORCH_ARGS);
  if (r.output.numel() == 0) return r.output;
  dispatch_floating(input.scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    const scalar_t* feats[1] = {input.const_data_ptr<scalar_t>()};
    forward_cpu<scalar_t, int64_t>(r.params, feats, rois.const_data_ptr<scalar_t>(), nullptr,
                                   r.output.mutable_data_ptr<scalar_t>(), parallel_for);
  });
  return r.output;
}

at::Tensor roi_align_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input,
                                  const at::Tensor& rois TWIN_ROI_ALIGN_TORCH_PARAMS) {
  Backward r = prepare_backward(grad_output, input, rois, TWIN_ROI_ALIGN_TORCH_ARGS);
  if (r.grad_input.numel() == 0) return r.grad_input;
  dispatch_floating(input.scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    backward_cpu<scalar_t, int64_t>(r.params, 0, grad_output.const_data_ptr<scalar_t>(),
                                    input.const_data_ptr<scalar_t>(), rois.const_data_ptr<scalar_t>(), nullptr,
                                    r.grad_input.mutable_data_ptr<scalar_t>(), parallel_for);
  });
  return r.grad_input;
}

// Raises exactly what `op` would raise for tensors of these shapes, dtypes and devices; the
// grad_output arguments are read by the backward only.
void roi_align_check(c10::string_view op, at::IntArrayRef input_shape, at::ScalarType input_dtype,
                     c10::Device input_device, at::IntArrayRef rois_shape, at::ScalarType rois_dtype,
                     c10::Device rois_device, at::IntArrayRef grad_output_shape, at::ScalarType grad_output_dtype,
                     c10::Device grad_output_device TWIN_ROI_ALIGN_TORCH_PARAMS) {
  const Desc input{input_shape, input_dtype, input_device}, rois{rois_shape, rois_dtype, rois_device};
  if (op == "roi_align")
    check_forward(kForward, input, rois, TWIN_ROI_ALIGN_TORCH_ARGS);
  else if (op == "roi_align_backward")
    check_backward(Desc{grad_output_shape, grad_output_dtype, grad_output_device}, input, rois,
                   TWIN_ROI_ALIGN_TORCH_ARGS);
  else
    fail("torch.ops.twinops._roi_align_check: op must be 'roi_align' or 'roi_align_backward', got '" +
         std::string(op) + "'");
}

}  // namespace

// Schemas: the attribute arguments come from TWIN_ROI_ALIGN_ATTRS ("int output_height, int
// output_width, float spatial_scale, int sampling_ratio, int aligned, str pool_mode").
TORCH_LIBRARY_FRAGMENT(twinops, m) {
  const std::string attrs = schema_args<RoiAlignAttrs>();
  m.def(("roi_align(Tensor input, Tensor rois, " + attrs + ") -> Tensor").c_str());
  m.def(("roi_align_backward(Tensor grad_output, Tensor input, Tensor rois, " + attrs + ") -> Tensor").c_str());
  // The fake kernels' checks: tensor-free, so it runs under FakeTensorMode too.
  m.def(("_roi_align_check(str op, int[] input_shape, ScalarType input_dtype, Device input_device, "
         "int[] rois_shape, ScalarType rois_dtype, Device rois_device, int[] grad_output_shape, "
         "ScalarType grad_output_dtype, Device grad_output_device, " +
         attrs + ") -> ()")
            .c_str(),
        &roi_align_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("roi_align", &roi_align_cpu);
  m.impl("roi_align_backward", &roi_align_backward_cpu);
}

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
