// Host-side part of the ms_deform_attn kernels, shared by the torch frontend and the plugins:
// shape validation into Params (make_params) and the check of the level table's values
// (check_levels, where they are on the host). Each returns "" or the message, which names the
// argument and what was expected.
#pragma once

#include <cstdint>
#include <string>

#include "../../common/twinops_shapes.h"  // dense_strides, shape_str
#include "ms_deform_attn.cuh"

namespace twinops {
namespace ms_deform_attn {

// The five inputs' ranks and shapes (value, spatial_shapes, level_start_index,
// sampling_locations, attention_weights) into p's sizes (strides left to the caller). A size
// below 0 stands for one not known yet (a dynamic dim when a plugin is built): it is compared
// with nothing, and p then holds it as given.
std::string make_params(const int* ranks, const int64_t* const* shapes, Params* p);

// The level table of L levels for a value of S rows: every level at least 1x1, each start the
// sum of the sizes before it, and S their total.
std::string check_levels(const int64_t* shapes, const int64_t* starts, int64_t levels, int64_t s);


}  // namespace ms_deform_attn
}  // namespace twinops
