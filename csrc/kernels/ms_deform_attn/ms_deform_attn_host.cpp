// Host-side checks of the ms_deform_attn kernels (ms_deform_attn_host.h).
#include "ms_deform_attn_host.h"

#include <limits>

namespace twinops {
namespace ms_deform_attn {

namespace {

const char* const kNames[5] = {"value", "spatial_shapes", "level_start_index", "sampling_locations",
                               "attention_weights"};
const char* const kLayouts[5] = {"(N, S, M, D)", "(L, 2)", "(L,)", "(N, Lq, M, L, P, 2)", "(N, Lq, M, L, P)"};
const int kRanks[5] = {4, 2, 1, 6, 5};

}  // namespace

std::string make_params(const int* ranks, const int64_t* const* shapes, Params* out) {
  for (int i = 0; i < 5; ++i)
    if (ranks[i] != kRanks[i])
      return std::string(kNames[i]) + " must be a " + std::to_string(kRanks[i]) + "-D " + kLayouts[i] +
             " tensor, got " + std::to_string(ranks[i]) + "-D";
  const int64_t* v = shapes[0];
  const int64_t* ss = shapes[1];
  const int64_t* st = shapes[2];
  const int64_t* loc = shapes[3];
  if (ss[1] >= 0 && ss[1] != 2) return "spatial_shapes must be (L, 2) as (h, w), got shape " + shape_str(2, ss);
  if (loc[5] >= 0 && loc[5] != 2)
    return "sampling_locations' last dim must be 2 (x, y), got shape " + shape_str(6, loc);
  const int64_t L = ss[0];
  if (L == 0) return "spatial_shapes must hold at least one level, got shape " + shape_str(2, ss);
  if (st[0] >= 0 && L >= 0 && st[0] != L)
    return "level_start_index must have one entry per level (L = " + std::to_string(L) + "), got shape " +
           shape_str(1, st);
  // N, M and L as value and spatial_shapes give them, Lq and P as sampling_locations does.
  const auto agree = [&](int input, int dim, const char* name, int64_t want, int from) -> std::string {
    const int64_t got = shapes[input][dim];
    if (got == want || got < 0 || want < 0) return "";
    return std::string(kNames[input]) + "'s " + name + " (" + std::to_string(got) + ") must equal " + kNames[from] +
           "'s (" + std::to_string(want) + "); shapes " + shape_str(kRanks[input], shapes[input]) + " and " +
           shape_str(kRanks[from], shapes[from]);
  };
  for (const std::string& e : {agree(3, 0, "N", v[0], 0), agree(3, 2, "M", v[2], 0), agree(3, 3, "L", L, 1),
                               agree(4, 0, "N", v[0], 0), agree(4, 1, "Lq", loc[1], 3), agree(4, 2, "M", v[2], 0),
                               agree(4, 3, "L", L, 1), agree(4, 4, "P", loc[4], 3)})
    if (!e.empty()) return e;
  if (loc[4] == 0) return "sampling_locations must hold at least one point per level (P >= 1), got shape " +
                         shape_str(6, loc);
  if (v[1] >= 0 && L >= 0 && v[1] < L)
    return "value's S (" + std::to_string(v[1]) + ") must be at least the level count (" + std::to_string(L) +
           "): every level has at least one row";
  Params p;
  p.n = v[0], p.s = v[1], p.m = v[2], p.d = v[3];
  p.lq = loc[1], p.levels = L, p.points = loc[4];
  *out = p;
  return "";
}

std::string check_levels(const int64_t* shapes, const int64_t* starts, int64_t levels, int64_t s) {
  int64_t total = 0;
  for (int64_t l = 0; l < levels; ++l) {
    const int64_t h = shapes[2 * l], w = shapes[2 * l + 1];
    const std::string at = "[" + std::to_string(l) + "]";
    if (h < 1 || w < 1)
      return "spatial_shapes" + at + " must be at least 1x1 (h, w >= 1), got (" + std::to_string(h) + ", " +
             std::to_string(w) + ")";
    if (h > s || w > s || h * w > s)
      return "spatial_shapes" + at + " (" + std::to_string(h) + ", " + std::to_string(w) +
             ") holds more rows than value's S (" + std::to_string(s) + ")";
    if (starts[l] != total)
      return "level_start_index" + at + " must be " + std::to_string(total) +
             " (the sum of h * w of the levels before it), got " + std::to_string(starts[l]);
    total += h * w;
    if (total > s) break;
  }
  if (total != s)
    return "value's S (" + std::to_string(s) + ") must equal the sum of the levels' h * w (" + std::to_string(total) +
           ")";
  return "";
}

}  // namespace ms_deform_attn
}  // namespace twinops
