// Host-side part of the deform_conv2d kernels, shared by the torch frontend and the plugins:
// shape validation into Params (make_params). It returns "" or the message, which names the
// argument and what was expected.
#pragma once

#include <cstdint>
#include <string>

#include "deform_conv2d.cuh"

namespace twinops {
namespace deform_conv2d {

// The geometry (H, W) pairs: stride and dilation at least 1, padding at least 0. padding is added
// before each axis (the shift of the sampling grid) and padding_end after it (only the output
// size sees it; below 0: as padding, the symmetric case of every frontend but ONNX's pads).
struct Geometry {
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t padding_end[2] = {-1, -1};
  int64_t end(int a) const { return padding_end[a] < 0 ? padding[a] : padding_end[a]; }
};

// "" or the message for a geometry value out of range.
std::string check_geometry(const Geometry& g);

// The inputs' shapes (input, offset, weight, then bias and mask where given: rank 0 and null
// where absent) into p: groups and offset_groups as torchvision infers them (C_in / weight's dim
// 1, offset's channels / (2 * kh * kw)), the output size by the convolution arithmetic, which
// offset's and mask's last two dims must equal. A size below 0 stands for one not known yet (a
// dynamic dim when a plugin is built): it is compared with nothing, and p then holds it as given.
std::string make_params(const int64_t* input, const int64_t* offset, const int64_t* weight, const int64_t* bias,
                        const int64_t* mask, const Geometry& g, Params* p);

}  // namespace deform_conv2d
}  // namespace twinops
