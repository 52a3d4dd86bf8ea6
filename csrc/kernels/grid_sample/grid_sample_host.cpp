// Host-side part of the grid_sample kernels: attribute parsing and shape validation
// (make_params), shared by the torch frontend and the TensorRT plugins. The backward's
// workspace size lives with the CUDA launchers (grid_sample.cu): it asks CUB.
#include <cstring>
#include <limits>
#include <string>

#include "../../common/twinops_shapes.h"
#include "grid_sample_attrs.h"

namespace twinops {
namespace grid_sample {

std::string make_params(int rank, const int64_t* input_shape, const int64_t* grid_shape, const GridSampleAttrs& a,
                        Params* out) {
  if (rank != 4 && rank != 5)
    return "input must be a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) tensor, got " + std::to_string(rank) + "-D";
  if (std::string e = a.check_choices(); !e.empty()) return e;
  Params p;
  p.mode = static_cast<Mode>(attr::choice_value(choices::mode, a.mode));
  p.padding = static_cast<Padding>(attr::choice_value(choices::padding_mode, a.padding_mode));
  p.align_corners = static_cast<int32_t>(a.align_corners);
  p.dims = rank - 2;
  if (p.mode == kCubic && p.dims == 3)
    return "mode cubic (bicubic) supports only 4-D input (N, C, H, W), got a 5-D input";
  const std::string grid_form = p.dims == 2 ? "(N, H_out, W_out, 2)" : "(N, D_out, H_out, W_out, 3)";
  if (grid_shape[rank - 1] != p.dims)
    return "grid must have " + std::to_string(p.dims) + " coordinates in its last dimension " + grid_form + " for a " +
           std::to_string(rank) + "-D input, got grid of shape " + shape_str(rank, grid_shape);
  if (grid_shape[0] != input_shape[0])
    return "grid and input must have the same batch size N, got input " + shape_str(rank, input_shape) + " and grid " +
           shape_str(rank, grid_shape);
  for (int i = 0; i < rank; ++i) {
    if (input_shape[i] < 0 || grid_shape[i] < 0) return "sizes must not be negative";
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  for (int i = 2; i < rank; ++i) {
    // ATen's rule: an empty input plane has nothing to sample from.
    if (input_shape[i] < 1 || input_shape[i] > kMax)
      return "input's spatial sizes must be in [1, 2^31 - 1], got input of shape " + shape_str(rank, input_shape);
  }
  for (int i = 1; i < rank - 1; ++i) {
    if (grid_shape[i] > kMax)
      return "grid's spatial sizes must be at most 2^31 - 1, got grid of shape " + shape_str(rank, grid_shape);
  }
  p.n = input_shape[0];
  p.c = input_shape[1];
  for (int k = 0; k < 3; ++k) {
    p.in[k] = 1;
    p.out[k] = 1;
  }
  const int off = 3 - p.dims;  // D = D_out = 1 for a 4-D input
  for (int k = 0; k < p.dims; ++k) {
    p.in[off + k] = input_shape[2 + k];
    p.out[off + k] = grid_shape[1 + k];
  }
  // Dense strides in the 5-entry layout (D entries 0 for a 4-D call).
  int64_t s_in[5], s_grid[5], out_shape[5], s_out[5];
  dense_strides(rank, input_shape, s_in);
  dense_strides(rank, grid_shape, s_grid);
  out_shape[0] = p.n;
  out_shape[1] = p.c;
  for (int k = 0; k < p.dims; ++k) out_shape[2 + k] = grid_shape[1 + k];
  dense_strides(rank, out_shape, s_out);
  auto spread = [&](const int64_t* src, int64_t* dst, bool grid) {
    if (rank == 5) {
      for (int k = 0; k < 5; ++k) dst[k] = src[k];
    } else if (grid) {  // N, H_out, W_out, coord -> N, D_out(0), H_out, W_out, coord
      dst[0] = src[0];
      dst[1] = 0;
      dst[2] = src[1];
      dst[3] = src[2];
      dst[4] = src[3];
    } else {  // N, C, H, W -> N, C, D(0), H, W
      dst[0] = src[0];
      dst[1] = src[1];
      dst[2] = 0;
      dst[3] = src[2];
      dst[4] = src[3];
    }
  };
  spread(s_in, p.input_stride, false);
  spread(s_grid, p.grid_stride, true);
  spread(s_out, p.output_stride, false);
  spread(s_in, p.grad_input_stride, false);
  spread(s_grid, p.grad_grid_stride, true);
  *out = p;
  return "";
}

}  // namespace grid_sample
}  // namespace twinops
