// Checks of the fixed-point scatter (csrc/kernels/fixed_scatter.cuh), run by
// tests/test_fixed_scatter.py: `fixed_scatter_check` prints one line per check ("ok <name>",
// "FAIL <name>: why" or "skip <name>: why") and exits 1 when one failed.
//
// Host checks (any machine): the fractional bits of a bound, the rounding, the flags, and the
// error bound of the emulated sum against an exact sum on adversarial contributions (values
// from 1e-30 to 1e30 in one plane, one huge value, many contributions to one element).
// GPU checks (a CUDA device): the atomics in three launch orders and configurations give the
// host emulation's accumulators and flags bit for bit, non-finite contributions included.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/fixed_scatter.cuh"

namespace fs = twinops::fixed_scatter;

namespace {

int failures = 0;

void report(bool ok, const std::string& name, const std::string& why = "") {
  std::printf("%s %s%s\n", ok ? "ok" : "FAIL", name.c_str(), ok ? "" : (": " + why).c_str());
  failures += !ok;
}

struct Case {
  std::string name;
  int64_t elements = 0;
  std::vector<int64_t> index;  // one element per contribution
  std::vector<float> value;
};

// Exact enough: a double-double (Neumaier) sum of the float contributions of each element.
std::vector<double> exact_sums(const Case& c, std::vector<int64_t>* counts) {
  std::vector<double> hi(c.elements, 0.0), lo(c.elements, 0.0);
  counts->assign(c.elements, 0);
  for (size_t k = 0; k < c.index.size(); ++k) {
    const double v = c.value[k];
    if (!std::isfinite(v)) continue;
    const int64_t i = c.index[k];
    const double t = hi[i] + v;
    lo[i] += std::fabs(hi[i]) >= std::fabs(v) ? (hi[i] - t) + v : (v - t) + hi[i];
    hi[i] = t;
    ++(*counts)[i];
  }
  for (int64_t i = 0; i < c.elements; ++i) hi[i] += lo[i];
  return hi;
}

// The plane's bound as a caller writes it: max |v| over the finite contributions times the most
// contributions one element receives.
double bound_of(const Case& c) {
  std::vector<int64_t> counts(c.elements, 0);
  double max_abs = 0.0;
  for (size_t k = 0; k < c.index.size(); ++k) {
    ++counts[c.index[k]];
    if (std::isfinite(c.value[k])) max_abs = std::max(max_abs, std::fabs(static_cast<double>(c.value[k])));
  }
  const int64_t most = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  return max_abs * static_cast<double>(most);
}

void emulate(const Case& c, int frac, std::vector<int64_t>* acc, std::vector<uint32_t>* flags) {
  acc->assign(c.elements, 0);
  flags->assign(fs::flag_words(c.elements), 0);
  for (size_t k = 0; k < c.index.size(); ++k) {
    const int64_t i = c.index[k];
    if (const uint32_t f = fs::flag_of(c.value[k])) {
      (*flags)[i / fs::kFlagsPerWord] |= f << (fs::kFlagBits * (i % fs::kFlagsPerWord));
      continue;
    }
    (*acc)[i] += fs::fixed_round(c.value[k], frac);
  }
}

// ---- host checks

void check_frac_bits() {
  bool ok = fs::frac_bits(1.0) == 62 && fs::frac_bits(1.5) == 61 && fs::frac_bits(2.0) == 61 &&
            fs::frac_bits(0.75) == 62 && fs::frac_bits(0.5) == 63 && fs::frac_bits(0.0) == 1000 &&
            fs::frac_bits(std::ldexp(1.0, 100)) == -38;
  report(ok, "frac_bits: 62 - ceil(log2(bound))");
  // rounding: half to even, exact scaling
  ok = fs::fixed_round(0.5, 0) == 0 && fs::fixed_round(1.5, 0) == 2 && fs::fixed_round(-2.5, 0) == -2 &&
       fs::fixed_round(0.75, 2) == 3 && fs::fixed_round(-1e-30, 62) == 0;
  report(ok, "fixed_round: round half to even after exact scaling");
  ok = std::isnan(fs::fixed_value(5, fs::kNaN, 0)) && std::isnan(fs::fixed_value(5, fs::kPosInf | fs::kNegInf, 0)) &&
       fs::fixed_value(5, fs::kPosInf, 0) == INFINITY && fs::fixed_value(5, fs::kNegInf, 0) == -INFINITY &&
       fs::fixed_value(-6, 0, 1) == -3.0;
  report(ok, "fixed_value: flags give NaN / infinities as a float sum would");
}

// |value - exact| <= m * 2^-(frac + 1) (+ the exact sum's own double rounding), and no
// accumulator passes 2^63.
void check_error_bound(const Case& c) {
  const int frac = fs::frac_bits(bound_of(c));
  std::vector<int64_t> acc, counts;
  std::vector<uint32_t> flags;
  emulate(c, frac, &acc, &flags);
  const std::vector<double> exact = exact_sums(c, &counts);
  for (int64_t i = 0; i < c.elements; ++i) {
    if (fs::element_flags(flags.data(), i)) continue;
    const double got = fs::fixed_value(acc[i], 0, frac);
    const double allowed = counts[i] * std::ldexp(1.0, -frac - 1) + 4.0 * std::ldexp(std::fabs(exact[i]), -52);
    const double err = std::fabs(got - exact[i]);
    if (!(err <= allowed)) {
      report(false, "error bound: " + c.name,
             "element " + std::to_string(i) + ": got " + std::to_string(got) + ", exact " + std::to_string(exact[i]) +
                 " (error " + std::to_string(err) + " > " + std::to_string(allowed) + ")");
      return;
    }
  }
  report(true, "error bound: " + c.name);
}

// ---- cases

Case random_case(const std::string& name, int64_t elements, int64_t n, float lo_exp, float hi_exp, uint32_t seed,
                 bool non_finite) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, elements - 1);
  std::uniform_real_distribution<float> expo(lo_exp, hi_exp), unit(1.0f, 2.0f);
  Case c;
  c.name = name;
  c.elements = elements;
  for (int64_t k = 0; k < n; ++k) {
    c.index.push_back(pick(rng));
    const float sign = rng() & 1 ? 1.0f : -1.0f;
    c.value.push_back(sign * unit(rng) * std::pow(10.0f, expo(rng)));
  }
  if (non_finite) {  // NaN, +Inf, -Inf, and both infinities into one element
    c.value[3] = NAN;
    c.value[5] = INFINITY;
    c.value[7] = -INFINITY;
    c.index.push_back(c.index[5]);
    c.value.push_back(-INFINITY);
  }
  return c;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back(random_case("smooth (1e-2 .. 1e1)", 4096, 100000, -2, 1, 1, false));
  out.push_back(random_case("dynamic range 1e-30 .. 1e30 in one plane", 1024, 50000, -30, 30, 2, false));
  Case huge = random_case("one huge value among small ones", 512, 20000, -3, 0, 3, false);
  huge.value[17] = 3.0e38f;
  out.push_back(huge);
  Case many = random_case("many contributions to one element", 16, 200000, -1, 1, 4, false);
  for (int64_t k = 0; k < 100000; ++k) many.index[k] = 7;
  out.push_back(many);
  out.push_back(random_case("non-finite contributions", 2048, 30000, -1, 1, 5, true));
  return out;
}

// ---- GPU checks

// Contribution k of `order` adds value[order[k]] to index[order[k]]; a grid-stride loop, so the
// launch configuration changes which thread adds what and when.
__global__ void scatter(const int64_t* index, const float* value, const int64_t* order, int64_t n,
                        unsigned long long* acc, uint32_t* flags, int frac) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = order[k];
    fs::add(acc, flags, index[j], value[j], frac);
  }
}

bool cuda_ok(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return true;
  report(false, what, cudaGetErrorString(e));
  return false;
}

void check_gpu(const Case& c) {
  const int frac = fs::frac_bits(bound_of(c));
  std::vector<int64_t> want_acc;
  std::vector<uint32_t> want_flags;
  emulate(c, frac, &want_acc, &want_flags);
  const int64_t n = static_cast<int64_t>(c.index.size());
  std::vector<int64_t> forward(n), backward(n), shuffled(n);
  for (int64_t k = 0; k < n; ++k) forward[k] = k, backward[k] = n - 1 - k;
  shuffled = forward;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(99));
  int64_t *d_index = nullptr, *d_order = nullptr;
  float* d_value = nullptr;
  unsigned long long* d_acc = nullptr;
  uint32_t* d_flags = nullptr;
  const size_t words = fs::flag_words(c.elements);
  const std::string where = "gpu: " + c.name;
  if (!cuda_ok(cudaMalloc(&d_index, n * sizeof(int64_t)), where) ||
      !cuda_ok(cudaMalloc(&d_order, n * sizeof(int64_t)), where) ||
      !cuda_ok(cudaMalloc(&d_value, n * sizeof(float)), where) ||
      !cuda_ok(cudaMalloc(&d_acc, c.elements * sizeof(int64_t)), where) ||
      !cuda_ok(cudaMalloc(&d_flags, words * sizeof(uint32_t)), where))
    return;
  cudaMemcpy(d_index, c.index.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice);
  cudaMemcpy(d_value, c.value.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  struct Launch {
    const std::vector<int64_t>* order;
    unsigned blocks, threads;
    const char* what;
  };
  const Launch launches[] = {{&forward, 1024, 256, "in order, 1024 x 256"},
                             {&backward, 7, 96, "reversed, 7 x 96"},
                             {&shuffled, 333, 128, "shuffled, 333 x 128"}};
  bool all = true;
  std::string why;
  for (const Launch& l : launches) {
    cudaMemcpy(d_order, l.order->data(), n * sizeof(int64_t), cudaMemcpyHostToDevice);
    cudaMemset(d_acc, 0xA5, c.elements * sizeof(int64_t));  // poisoned, then zeroed as a caller does
    cudaMemset(d_acc, 0, c.elements * sizeof(int64_t));
    cudaMemset(d_flags, 0, words * sizeof(uint32_t));
    scatter<<<l.blocks, l.threads>>>(d_index, d_value, d_order, n, d_acc, d_flags, frac);
    if (!cuda_ok(cudaGetLastError(), where) || !cuda_ok(cudaDeviceSynchronize(), where)) return;
    std::vector<int64_t> acc(c.elements);
    std::vector<uint32_t> flags(words);
    cudaMemcpy(acc.data(), d_acc, c.elements * sizeof(int64_t), cudaMemcpyDeviceToHost);
    cudaMemcpy(flags.data(), d_flags, words * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    if (acc != want_acc || flags != want_flags) {
      all = false;
      why = std::string(l.what) + ": accumulators or flags differ from the host emulation";
    }
  }
  report(all, where + " (3 launch orders, bitwise the host emulation)", why);
  cudaFree(d_index), cudaFree(d_order), cudaFree(d_value), cudaFree(d_acc), cudaFree(d_flags);
}

}  // namespace

int main() {
  check_frac_bits();
  const std::vector<Case> all = cases();
  for (const Case& c : all) check_error_bound(c);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skip gpu: no CUDA device\n");
  } else {
    for (const Case& c : all) check_gpu(c);
  }
  return failures ? 1 : 0;
}
