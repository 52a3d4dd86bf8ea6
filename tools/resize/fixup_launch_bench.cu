// What a non-finite fix-up pass costs resize's CUDA kernels when nothing is non-finite: the
// measurement that chose the design in csrc/kernels/resize/resize_fixup.cuh (a flag at the stores and
// a device-side launch only when it is set; results in docs/perf/resize-notes.md, "Non-finite
// values on CUDA").
//
//   nvcc -O3 -arch=sm_90 -ewp -std=c++17 tools/resize/fixup_launch_bench.cu -lcudadevrt \
//        -o /tmp/fixup_bench && /tmp/fixup_bench
//
// A stand-in for a memory-bound gather (out[i] = 0.75 * in[i] + 0.25 * in[i + 1], one float4
// per thread, 1080p-sized and larger) is timed alone and with each way of running a fix-up
// that finds nothing to do:
//   flag     each thread notes a non-finite value among its stores, one atomicOr per warp that saw one;
//   launch   flag + a one-block kernel queued after the gather that reads and clears the flag
//            (the design measured at +2.9 us on the H200 with torch.cuda events);
//   pdl      the same kernel as a programmatic dependent launch (sm_90), without and with the
//            gather's blocks triggering it early (griddepcontrol.launch_dependents);
//   ticket   flag + the gather's last block (an atomic ticket per block) reads and clears it;
//   tail     ticket, and the last block starts the fix-up kernel by a device-side tail launch
//            (CUDA dynamic parallelism: needs -ewp or -rdc=true, and cudadevrt) only when the flag is set;
//   cold tail        no ticket: the first thread to set the flag starts the fix-up (resize's
//                    design); the launch code is there but cold when nothing is non-finite;
//   ... (stack copy) the same, handing the fix-up a copy of the gather's whole parameter built
//                    on the stack (a few hundred bytes, as resize's FixupArgs);
//   ... (param buffer) that copy written straight into the launch's parameter buffer (no stack);
//   cold stack call  a cold out-of-line call with a stack frame and no launch: what a stack alone costs;
//   strided (cold tail)  the gather as a grid-stride loop over 8 blocks per SM, plain and with
//                    the cold tail launch (printed against the strided plain one): whether the
//                    launch code's cost, which grows with the grid, is paid per block.
// Every timing: CUDA events around the launches, the L2 flushed by reading 256 MiB before
// each repetition and the GPU kept busy by a spin kernel while the host enqueues, median of
// the repetitions. A last check runs each variant on an input with one NaN and verifies that
// the fix-up saw it (else the cheap path would be measuring a fix-up that never runs).
// Prints one line per size and variant: median us and the difference from the plain gather.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                      \
  do {                                                                                                \
    cudaError_t e_ = (x);                                                                             \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

namespace {

constexpr int kThreads = 256;

struct State {
  unsigned flag;     // set by a gather that stored a non-finite value
  unsigned ticket;   // blocks of the current gather that have finished
  unsigned fixups;   // fix-ups that found the flag set (the NaN check reads it)
};

__device__ __forceinline__ void note_nonfinite(bool bad, State* st) {
  // One atomic per warp that saw a non-finite value; none otherwise.
  const unsigned any = __ballot_sync(__activemask(), bad);
  if (any != 0 && (threadIdx.x & 31) == __ffs(any) - 1) atomicOr(&st->flag, 1u);
}

__device__ __forceinline__ void fixup_body(State* st) {
  if (threadIdx.x == 0 && atomicExch(&st->flag, 0u) != 0) atomicAdd(&st->fixups, 1u);
}

__global__ void fixup_kernel(State* st) { fixup_body(st); }

__global__ void fixup_kernel_pdl(State* st) {
  asm volatile("griddepcontrol.wait;" ::: "memory");  // the gather's writes are visible after this
  fixup_body(st);
}

// The last block of a grid (ticket) runs `last`, after every block's stores and flag.
template <typename Last>
__device__ __forceinline__ void after_last_block(State* st, Last&& last) {
  __shared__ bool is_last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    is_last = atomicAdd(&st->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (is_last) {
    __threadfence();
    if (threadIdx.x == 0) st->ticket = 0;
    last();
  }
}

// The gather's parameters, padded to the size of resize's (a few hundred bytes, passed as a
// __grid_constant__ and, by the variants that copy it, handed to the fix-up whole).
struct Args {
  const float* in;
  float* out;
  int64_t n4;
  State* st;
  uint32_t pad[64];
};

__global__ void fixup_kernel_args(const __grid_constant__ Args a) { fixup_body(a.st); }

// A cold out-of-line call with a stack frame and no device runtime (the cost of a stack alone).
__device__ __noinline__ void cold_stack_call(const Args* a) {
  volatile uint32_t local[64];
#pragma unroll 1
  for (int k = 0; k < 64; ++k) local[k] = a->pad[k];
  if (local[threadIdx.x & 63] == 12345u) atomicAdd(&a->st->fixups, 1u);
  if (atomicExch(&a->st->flag, 0u) != 0) atomicAdd(&a->st->fixups, 1u);  // this thread set it
}

// Variants of the gather (V): 0 plain, 1 flag, 2 flag + early PDL trigger, 3 ticket, 4 tail,
// 5 cold tail (the kept design, a pointer to the fix-up), 6 the same handing over a copy of the
// whole parameter built on the stack (as `<<<>>>` with a local struct compiles), 7 that copy
// written straight into the launch's parameter buffer (no stack), 8 a cold call with a stack
// frame and no launch.
template <int V>
__global__ void __launch_bounds__(kThreads) gather(const __grid_constant__ Args args) {
  const float* __restrict__ in = args.in;
  float* __restrict__ out = args.out;
  const int64_t n4 = args.n4;
  State* st = args.st;
  if constexpr (V == 2) asm volatile("griddepcontrol.launch_dependents;");
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  bool bad = false;
  if (i < n4) {
    const float4 a = reinterpret_cast<const float4*>(in)[i];
    const float b = in[4 * i + 4];  // the neighbour of the last lane (in holds n4 * 4 + 4 floats)
    float4 o;
    o.x = 0.75f * a.x + 0.25f * a.y;
    o.y = 0.75f * a.y + 0.25f * a.z;
    o.z = 0.75f * a.z + 0.25f * a.w;
    o.w = 0.75f * a.w + 0.25f * b;
    __stcs(reinterpret_cast<float4*>(out) + i, o);
    if constexpr (V != 0) bad = !(isfinite(o.x) && isfinite(o.y) && isfinite(o.z) && isfinite(o.w));
  }
  if constexpr (V >= 1 && V <= 4) note_nonfinite(bad, st);
  if constexpr (V == 3) after_last_block(st, [&] { fixup_body(st); });
  if constexpr (V == 4) {
    after_last_block(st, [&] {
      if (threadIdx.x == 0 && *reinterpret_cast<volatile unsigned*>(&st->flag) != 0)
        fixup_kernel<<<1, 32, 0, cudaStreamTailLaunch>>>(st);
    });
  }
  if constexpr (V >= 5) {
    // No ticket: a thread that saw a value sets the flag and the first to set it acts (cold
    // code when nothing is non-finite).
    if (bad && *reinterpret_cast<volatile unsigned*>(&st->flag) == 0 && atomicExch(&st->flag, 1u) == 0) {
      if constexpr (V == 5) fixup_kernel<<<1, 32, 0, cudaStreamTailLaunch>>>(st);
      if constexpr (V == 6) {
        Args copy;
        const uint32_t* from = reinterpret_cast<const uint32_t*>(&args);
        uint32_t* to = reinterpret_cast<uint32_t*>(&copy);
#pragma unroll 1
        for (size_t k = 0; k < sizeof(Args) / 4; ++k) to[k] = from[k];
        fixup_kernel_args<<<1, 32, 0, cudaStreamTailLaunch>>>(copy);
      }
      if constexpr (V == 7) {
        void* buf = cudaGetParameterBufferV2(reinterpret_cast<void*>(fixup_kernel_args), dim3(1), dim3(32), 0);
        if (buf != nullptr) {
          const uint32_t* from = reinterpret_cast<const uint32_t*>(&args);
          uint32_t* to = static_cast<uint32_t*>(buf);
#pragma unroll 1
          for (size_t k = 0; k < sizeof(Args) / 4; ++k) to[k] = from[k];
          cudaLaunchDeviceV2(buf, cudaStreamTailLaunch);
        }
      }
      if constexpr (V == 8) cold_stack_call(&args);
    }
  }
}

// The same gather as a grid-stride loop over at most `kStridedBlocksPerSm` blocks per SM,
// without (Cold = false) and with the cold tail launch: whether the launch code's cost is per
// block (then the strided cold variant costs about what the strided plain one does) or per
// unit of work.
constexpr int kStridedBlocksPerSm = 8;
template <bool Cold>
__global__ void __launch_bounds__(kThreads) gather_strided(const __grid_constant__ Args args) {
  State* st = args.st;
  bool bad = false;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 a = reinterpret_cast<const float4*>(args.in)[i];
    const float b = args.in[4 * i + 4];
    float4 o;
    o.x = 0.75f * a.x + 0.25f * a.y;
    o.y = 0.75f * a.y + 0.25f * a.z;
    o.z = 0.75f * a.z + 0.25f * a.w;
    o.w = 0.75f * a.w + 0.25f * b;
    __stcs(reinterpret_cast<float4*>(args.out) + i, o);
    if constexpr (Cold) bad |= !(isfinite(o.x) && isfinite(o.y) && isfinite(o.z) && isfinite(o.w));
  }
  if constexpr (Cold) {
    if (bad && *reinterpret_cast<volatile unsigned*>(&st->flag) == 0 && atomicExch(&st->flag, 1u) == 0)
      fixup_kernel<<<1, 32, 0, cudaStreamTailLaunch>>>(st);
  }
}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void read_all(const int4* p, int64_t n, int* sink) {
  int acc = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    acc ^= p[i].x ^ p[i].w;
  if (acc == 0x7fffffff) *sink = acc;  // keeps the loads
}

enum Variant { kPlain, kFlag, kLaunch, kPdl, kPdlEarly, kTicket, kTail, kCold, kColdStack, kColdBuffer, kStack,
               kStrided, kStridedCold, kVariants };
const char* kNames[kVariants] = {"plain", "flag", "flag+launch", "flag+pdl", "flag+pdl(early)", "ticket", "tail",
                                 "cold tail", "cold tail (stack copy)", "cold tail (param buffer)",
                                 "cold stack call", "strided", "strided cold tail"};

struct Bench {
  const float* in;
  float* out;
  int64_t n4;
  State* st;
  cudaStream_t s;
  unsigned strided_blocks;  // gather_strided's grid: kStridedBlocksPerSm per SM

  void pdl_fixup() const {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(32);
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, fixup_kernel_pdl, st));
  }

  void run(int v) const {
    Args args{in, out, n4, st, {}};
    const unsigned blocks = static_cast<unsigned>((n4 + kThreads - 1) / kThreads);
    switch (v) {
      case kPlain: gather<0><<<blocks, kThreads, 0, s>>>(args); break;
      case kFlag: gather<1><<<blocks, kThreads, 0, s>>>(args); break;
      case kLaunch:
        gather<1><<<blocks, kThreads, 0, s>>>(args);
        fixup_kernel<<<1, 32, 0, s>>>(st);
        break;
      case kPdl:
        gather<1><<<blocks, kThreads, 0, s>>>(args);
        pdl_fixup();
        break;
      case kPdlEarly:
        gather<2><<<blocks, kThreads, 0, s>>>(args);
        pdl_fixup();
        break;
      case kTicket: gather<3><<<blocks, kThreads, 0, s>>>(args); break;
      case kTail: gather<4><<<blocks, kThreads, 0, s>>>(args); break;
      case kCold: gather<5><<<blocks, kThreads, 0, s>>>(args); break;
      case kColdStack: gather<6><<<blocks, kThreads, 0, s>>>(args); break;
      case kColdBuffer: gather<7><<<blocks, kThreads, 0, s>>>(args); break;
      case kStack: gather<8><<<blocks, kThreads, 0, s>>>(args); break;
      case kStrided: gather_strided<false><<<std::min(blocks, strided_blocks), kThreads, 0, s>>>(args); break;
      case kStridedCold: gather_strided<true><<<std::min(blocks, strided_blocks), kThreads, 0, s>>>(args); break;
    }
    CHECK(cudaGetLastError());
  }
};

}  // namespace

int main() {
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  if (prop.major < 9) {
    std::printf("needs sm_90 or newer (programmatic dependent launch)\n");
    return 2;
  }
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int64_t flush_bytes = int64_t(256) << 20;
  int4* flush;
  int* sink;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemset(flush, 1, flush_bytes));
  CHECK(cudaMalloc(&sink, sizeof(int)));
  State* st;
  CHECK(cudaMalloc(&st, sizeof(State)));
  CHECK(cudaMemset(st, 0, sizeof(State)));
  const long long spin_cycles = 200000;  // ~100 us at the H200's ~2 GHz: covers the host's enqueueing

  // Output floats: 1080p 0.5x (3 x 540 x 960), 1080p 1x, 8 x 64 x 128 x 128.
  const int64_t sizes[] = {int64_t(3) * 540 * 960, int64_t(3) * 1080 * 1920, int64_t(8) * 64 * 128 * 128};
  constexpr int kReps = 200, kWarmup = 20;
  for (const int64_t n : sizes) {
    const int64_t n4 = n / 4;
    float *in, *out;
    CHECK(cudaMalloc(&in, sizeof(float) * (n4 * 4 + 4)));
    CHECK(cudaMalloc(&out, sizeof(float) * n4 * 4));
    std::vector<float> host(n4 * 4 + 4);
    for (size_t k = 0; k < host.size(); ++k) host[k] = static_cast<float>((k * 2654435761u) % 1000) * 1e-3f - 0.5f;
    CHECK(cudaMemcpy(in, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
    const Bench b{in, out, n4, st, s, static_cast<unsigned>(kStridedBlocksPerSm * prop.multiProcessorCount)};
    double plain = 0, strided = 0;
    for (int v = 0; v < kVariants; ++v) {
      for (int k = 0; k < kWarmup; ++k) b.run(v);
      std::vector<float> t(kReps);
      cudaEvent_t e0, e1;
      CHECK(cudaEventCreate(&e0));
      CHECK(cudaEventCreate(&e1));
      for (int r = 0; r < kReps; ++r) {
        read_all<<<4 * prop.multiProcessorCount, 512, 0, s>>>(flush, flush_bytes / 16, sink);
        spin<<<1, 1, 0, s>>>(spin_cycles);
        CHECK(cudaEventRecord(e0, s));
        b.run(v);
        CHECK(cudaEventRecord(e1, s));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&t[r], e0, e1));
      }
      CHECK(cudaEventDestroy(e0));
      CHECK(cudaEventDestroy(e1));
      std::nth_element(t.begin(), t.begin() + kReps / 2, t.end());
      const double us = 1e3 * t[kReps / 2];
      if (v == kPlain) plain = us;
      if (v == kStrided) strided = us;
      const bool vs_strided = v == kStridedCold;
      std::printf("outputs %10lld  %-16s %8.2f us  %+7.2f us vs %s\n", static_cast<long long>(n), kNames[v], us,
                  us - (vs_strided ? strided : plain), vs_strided ? "strided" : "plain");
    }
    // A NaN in the input: every variant but the plain one must notice it; the fix-up variants
    // must find it and clear the flag.
    const float nan = std::nanf("");
    CHECK(cudaMemcpy(in + 8, &nan, sizeof(float), cudaMemcpyHostToDevice));
    for (int v = kFlag; v < kVariants; ++v) {
      if (v == kStrided) continue;  // the strided plain gather notes nothing
      CHECK(cudaMemset(st, 0, sizeof(State)));
      b.run(v);
      CHECK(cudaStreamSynchronize(s));
      State h;
      CHECK(cudaMemcpy(&h, st, sizeof(State), cudaMemcpyDeviceToHost));
      const bool fixes = v != kFlag;
      const bool ok = fixes ? (h.fixups == 1 && h.flag == 0) : h.flag == 1;
      if (!ok) {
        std::printf("FAILED: %s with a NaN input: flag %u, fix-ups %u, ticket %u\n", kNames[v], h.flag, h.fixups,
                    h.ticket);
        return 1;
      }
    }
    CHECK(cudaMemset(st, 0, sizeof(State)));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
  }
  std::printf("every variant saw the NaN case\n");
  return 0;
}
