// The launches of nms.cu that batched_nms_padded's device pass (nms_padded.cu) shares: the
// suppression mask and the segmented greedy reduce (nms.cu's file comment has both). Internal to
// csrc/kernels/nms (CUDA only): the kernels stay in one file, so the device link sees each once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "nms.h"

namespace twinops {
namespace nms {
namespace passes {

// The mask of `images` regions of p.count positions each (boxes `sorted` (4 Acc a position),
// classes, mask rows of ceil(p.count / 64) words), of which counts[z] are used in region z
// (counts null: one region, all used). classes null: no class test. `segmented`: positions
// sorted by class, blocks where no two positions share a class left unwritten. `efficient`:
// efficient_suppresses instead of suppresses (nms.h).
template <typename Acc>
cudaError_t launch_mask(const Params& p, int64_t images, const Acc* sorted, const int64_t* classes,
                        const int32_t* counts, unsigned long long* mask, bool segmented, bool efficient,
                        cudaStream_t stream);

// The greedy pass over each run of one class (runs: *num_runs of them, start and length in
// positions, of `positions` in all), flags[seg_rank[position]] = 1 for the kept ones. Images:
// p.count = 64 * W positions each, `tops` their used positions (null: one image), `limit` > 0
// the kept positions after which a run may stop. p.count <= kMaxSegmentPositions.
cudaError_t launch_segment_reduce(const Params& p, int64_t positions, const unsigned long long* mask,
                                  const int32_t* run_start, const int32_t* run_len, const int32_t* num_runs,
                                  const int32_t* seg_rank, const int32_t* tops, int64_t limit, unsigned char* flags,
                                  cudaStream_t stream);

}  // namespace passes
}  // namespace nms
}  // namespace twinops
