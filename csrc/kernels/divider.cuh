// Division by a divisor fixed per launch, by a multiply and a shift: cheaper than the hardware
// division in index arithmetic that runs per element.
#pragma once

#include <cstdint>

namespace twinops {

// n / d and n % d for 0 <= n < 2^31 by a multiply and a shift (the divisor fixed per launch):
// m = floor(2^32 (2^s - d) / d) + 1 with 2^s >= d, q = (umulhi(n, m) + n) >> s.
struct Divider {
  uint32_t d = 1, m = 1, s = 0;
  Divider() = default;
  explicit Divider(int64_t divisor) : d(static_cast<uint32_t>(divisor > 1 ? divisor : 1)) {  // 0: nothing to divide
    while ((uint64_t(1) << s) < d) ++s;
    m = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << s) - d)) / d + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, m) + n) >> s; }
};

}  // namespace twinops
