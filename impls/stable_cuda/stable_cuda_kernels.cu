// stable_cuda's kernels. Every piece of math is a row_math.h function that the CPU build
// unit-tests through host_model.h; this file only decides which thread computes what.
//
// Batches of at least one row per SM take RowKernel: one block of 512 threads per row does
// every step below, passes after the first reading the row from L2. Smaller batches take the
// multi-block path: a row is split into spans of kSpan = 4096 logits, one block of 256 threads
// per span, grid.y over rows, one kernel per step:
//   1. MaxKernel: per-span maximum over the support and a NaN flag;
//   2. SetupKernel: per row, the maximum, the status and the regime (row_math MakeRowSetup);
//   3. top-k (rows that ask): four passes of CountHistKernel (shared-memory then global
//      integer-atomic histograms of 8-bit key digits) + SelectTopKKernel;
//   4. top-p: four passes of MassHistKernel (fixed-point masses, 64-bit integer atomics) +
//      SelectTopPKernel;
//   5. ChunkSumKernel: one warp per chunk of 256 kept weights, fp64, in warp order;
//   6. PrefixKernel: one warp per row, the segment scan of row_math PrefixInPlace;
//   7. DrawKernel / ProbabilitiesKernel, recomputing each weight from the logits (a weight is
//      a few flops; storing them would double the memory traffic of plain sampling).
// Integer atomics are exact and commutative, so the histograms do not depend on scheduling;
// every floating-point sum has a fixed order. No floating-point atomics anywhere.
#include <cuda_runtime.h>

#include "impls/stable_cuda/stable_cuda_kernels.h"
#include "sampcert/canonical_draw.h"

namespace sampcert::impls::cuda {
namespace {

using cuda_math::kChunk;
using cuda_math::kWarp;
using cuda_math::RowStatus;

constexpr int kThreads = 256;
constexpr int64_t kChunksPerBlock = 16;
constexpr int64_t kSpan = kChunk * kChunksPerBlock;
constexpr int64_t kMaxGridY = 65535;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ const void* RowLogits(const void* logits, uint32_t dtype, int64_t r, int64_t vocab) {
  const int64_t bytes = dtype == cuda_math::kDTypeF32 ? 4 : 2;
  return static_cast<const char*>(logits) + r * vocab * bytes;
}
__device__ const uint8_t* RowMask(const uint8_t* masks, const DeviceRowParams& p, int64_t r,
                                  int64_t vocab) {
  return p.has_mask != 0 ? masks + r * vocab : nullptr;
}
__device__ cuda_math::RowWeights WeightsOf(const void* logits, uint32_t dtype, const uint8_t* masks,
                                           const DeviceRowParams* params, const DeviceRowState& st,
                                           int64_t r, int64_t vocab) {
  return cuda_math::RowWeights{RowLogits(logits, dtype, r, vocab), dtype,
                               RowMask(masks, params[r], r, vocab), st.setup, st.thresholds};
}

__device__ float WarpMax(float m) {
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    m = fmaxf(m, __shfl_xor_sync(kFullMask, m, offset));
  }
  return m;
}
__device__ long long WarpMax(long long v) {
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    const long long other = __shfl_xor_sync(kFullMask, v, offset);
    v = other > v ? other : v;
  }
  return v;
}

// A row's status, regime and truncation plan once its maximum is known.
__device__ DeviceRowState MakeRowState(float m, int nan, const DeviceRowParams& p, int64_t vocab) {
  DeviceRowState st;
  st.status = static_cast<int32_t>(nan != 0                      ? RowStatus::kNanLogit
                                   : m == -cuda_math::Infinity() ? RowStatus::kEmptySupport
                                                                 : RowStatus::kOk);
  st.setup = cuda_math::MakeRowSetup(m, p.temperature);
  st.thresholds.min_p = p.min_p;
  const bool truncates = st.status == 0 && st.setup.mode != cuda_math::Mode::kLimit;
  st.top_k_active = truncates && p.top_k > 0 && p.top_k < vocab;
  st.top_p_active = truncates && p.top_p < 1.0f;
  st.k_left = static_cast<uint64_t>(p.top_k);
  return st;
}

// One top-k radix-select step on a finished histogram (then zeroed for the next pass).
__device__ void SelectTopKStep(uint32_t* hist, int shift, DeviceRowState& st) {
  bool keep_all = false;
  if (shift == 24) {
    uint64_t support = 0;
    for (int b = 0; b < 256; ++b) support += hist[b];
    keep_all = support < st.k_left;  // fewer than k tokens in the support: keep all
  }
  if (keep_all) {
    st.top_k_active = 0;
    st.thresholds.top_k_key = 0;
  } else {
    st.thresholds.top_k_key |= cuda_math::SelectTopKDigit(hist, &st.k_left) << shift;
  }
  for (int b = 0; b < 256; ++b) hist[b] = 0;
}

// One top-p search step on a finished mass histogram (then zeroed for the next pass).
__device__ void SelectTopPStep(unsigned long long* hist, int shift, float top_p,
                               DeviceRowState& st) {
  if (shift == 24) {
    uint64_t z = 0;
    for (int b = 0; b < 256; ++b) z += hist[b];
    st.target = cuda_math::TopPTarget(top_p, z);
  }
  st.thresholds.top_p_key |= cuda_math::SelectTopPDigit(hist, st.target, &st.above) << shift;
  for (int b = 0; b < 256; ++b) hist[b] = 0;
}

// Adds element i of a row to this pass's top-k count / top-p mass histogram (shared memory).
__device__ void CountInto(uint32_t* hist, float x, uint32_t prefix, int shift) {
  const uint32_t key = cuda_math::OrderedKey(x);
  if (x != -cuda_math::Infinity() && cuda_math::MatchesPrefix(key, prefix, shift)) {
    atomicAdd(&hist[cuda_math::Digit(key, shift)], 1u);
  }
}
__device__ void MassInto(unsigned long long* hist, float x, const DeviceRowState& st, int shift) {
  const uint32_t key = cuda_math::OrderedKey(x);
  if (cuda_math::MatchesPrefix(key, st.thresholds.top_p_key, shift)) {
    const cuda_math::Thresholds after_top_k{st.thresholds.top_k_key, 0, 0.0f};
    const uint64_t mass = cuda_math::FixedMass(cuda_math::KeptWeight(x, st.setup, after_top_k));
    if (mass != 0) {
      atomicAdd(&hist[cuda_math::Digit(key, shift)], static_cast<unsigned long long>(mass));
    }
  }
}

// The chunk sum of weights [begin, begin + n) in row_math ChunkSumWarpOrder's order, in every
// lane; *last is raised to the largest index of positive weight this lane saw.
__device__ double WarpChunkSum(const cuda_math::RowWeights& weight, int64_t begin, int64_t n,
                               int lane, long long* last) {
  double acc = 0.0;
#pragma unroll 8  // independent loads in flight: the loop is latency-bound otherwise
  for (int64_t j = lane; j < n; j += kWarp) {
    const float w = weight(begin + j);
    acc = cuda_math::AddD(acc, static_cast<double>(w));
    if (w > 0.0f) *last = begin + j;
  }
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    acc = cuda_math::AddD(acc, __shfl_xor_sync(kFullMask, acc, offset));
  }
  return acc;
}

// row_math PrefixInPlace over p[0..chunks] by one warp, lane l owning segment l.
__device__ void WarpPrefix(double* p, int64_t chunks, int lane) {
  const int64_t seg = cuda_math::PrefixSegment(chunks);
  const int64_t begin = lane * seg;
  const int64_t end = begin + seg < chunks ? begin + seg : chunks;
  double acc = 0.0;
  for (int64_t c = begin; c < end; ++c) {
    acc = cuda_math::AddD(acc, p[c + 1]);
    p[c + 1] = acc;
  }
  double offset = 0.0;  // ((0 + t_0) + t_1) + ... + t_{lane-1}, as the host model adds them
  for (int l = 0; l < kWarp - 1; ++l) {
    const double t = __shfl_sync(kFullMask, acc, l);
    if (l < lane) offset = cuda_math::AddD(offset, t);
  }
  for (int64_t c = begin; c < end; ++c) p[c + 1] = cuda_math::AddD(offset, p[c + 1]);
  if (lane == 0) p[0] = 0.0;
}

// The one-block-per-row path, for batches that fill the device: the whole of LaunchPrepare
// for row blockIdx.x in one block of kRowThreads, every pass after the first reading the row
// from L2 rather than memory. The same helpers in the same order as the multi-block path, so
// a row gets the same bits on either path (BATCH-1: alone, a row takes the other one).
constexpr int kRowThreads = 512;
__global__ void __launch_bounds__(kRowThreads)
    RowKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
              const DeviceRowParams* params, int64_t row0, int64_t vocab, DeviceRowState* state,
              double* prefix) {
  const int64_t r = row0 + blockIdx.x;
  const void* row = RowLogits(logits, dtype, r, vocab);
  const uint8_t* mask = RowMask(masks, params[r], r, vocab);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  constexpr int kWarps = kRowThreads / kWarp;
  __shared__ float warp_max[kWarps];
  __shared__ long long warp_last[kWarps];
  // Raw storage: a __shared__ variable cannot have DeviceRowState's default initializers.
  __shared__ alignas(DeviceRowState) unsigned char st_storage[sizeof(DeviceRowState)];
  DeviceRowState& st = *reinterpret_cast<DeviceRowState*>(st_storage);
  __shared__ uint32_t count[256];
  __shared__ unsigned long long mass[256];

  float m = -cuda_math::Infinity();
  int nan = 0;
#pragma unroll 8  // independent loads in flight: the loop is latency-bound otherwise
  for (int64_t i = threadIdx.x; i < vocab; i += kRowThreads) {
    const float x = cuda_math::SupportLogit(row, dtype, mask, i);
    if (x != x) {
      nan = 1;
    } else {
      m = fmaxf(m, x);
    }
  }
  m = WarpMax(m);
  if (lane == 0) warp_max[warp] = m;
  nan = __syncthreads_or(nan);
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) m = fmaxf(m, warp_max[w]);
    st = MakeRowState(m, nan, params[r], vocab);
  }
  __syncthreads();
  if (st.status != 0) {
    if (threadIdx.x == 0) state[r] = st;
    return;
  }
  for (int shift = 24; shift >= 0 && st.top_k_active != 0; shift -= 8) {
    for (int b = threadIdx.x; b < 256; b += kRowThreads) count[b] = 0;
    __syncthreads();
    for (int64_t i = threadIdx.x; i < vocab; i += kRowThreads) {
      CountInto(count, cuda_math::SupportLogit(row, dtype, mask, i), st.thresholds.top_k_key,
                shift);
    }
    __syncthreads();
    if (threadIdx.x == 0) SelectTopKStep(count, shift, st);
    __syncthreads();
  }
  for (int shift = 24; shift >= 0 && st.top_p_active != 0; shift -= 8) {
    for (int b = threadIdx.x; b < 256; b += kRowThreads) mass[b] = 0;
    __syncthreads();
    for (int64_t i = threadIdx.x; i < vocab; i += kRowThreads) {
      MassInto(mass, cuda_math::SupportLogit(row, dtype, mask, i), st, shift);
    }
    __syncthreads();
    if (threadIdx.x == 0) SelectTopPStep(mass, shift, params[r].top_p, st);
    __syncthreads();
  }
  const cuda_math::RowWeights weight{row, dtype, mask, st.setup, st.thresholds};
  const int64_t chunks = cuda_math::ChunksFor(vocab);
  double* p = prefix + r * (chunks + 1);
  long long last = -1;
  for (int64_t c = warp; c < chunks; c += kWarps) {
    const int64_t begin = c * kChunk;
    const int64_t n = begin + kChunk < vocab ? kChunk : vocab - begin;
    const double sum = WarpChunkSum(weight, begin, n, lane, &last);
    if (lane == 0) p[c + 1] = sum;
  }
  last = WarpMax(last);
  if (lane == 0) warp_last[warp] = last;
  __syncthreads();  // the chunk sums in p are visible to the whole block from here
  if (warp == 0) WarpPrefix(p, chunks, lane);
  if (threadIdx.x == 0) {
    for (int w = 0; w < kWarps; ++w) last = warp_last[w] > last ? warp_last[w] : last;
    st.last_positive_plus1 = static_cast<unsigned long long>(last + 1);
    state[r] = st;
  }
}

__global__ void MaxKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
                          const DeviceRowParams* params, int64_t row0, int64_t vocab,
                          float* part_max, int32_t* part_nan) {
  const int64_t r = row0 + blockIdx.y;
  const void* row = RowLogits(logits, dtype, r, vocab);
  const uint8_t* mask = RowMask(masks, params[r], r, vocab);
  const int64_t begin = blockIdx.x * kSpan;
  const int64_t end = begin + kSpan < vocab ? begin + kSpan : vocab;
  float m = -cuda_math::Infinity();
  int nan = 0;
#pragma unroll 8  // independent loads in flight: the loop is latency-bound otherwise
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float x = cuda_math::SupportLogit(row, dtype, mask, i);
    if (x != x) {
      nan = 1;
    } else {
      m = fmaxf(m, x);  // max is exact and order-free (the sign of a zero maximum is harmless)
    }
  }
  m = WarpMax(m);
  __shared__ float warp_max[kThreads / kWarp];
  if (threadIdx.x % kWarp == 0) warp_max[threadIdx.x / kWarp] = m;
  nan = __syncthreads_or(nan);
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / kWarp; ++w) m = fmaxf(m, warp_max[w]);
    part_max[r * gridDim.x + blockIdx.x] = m;
    part_nan[r * gridDim.x + blockIdx.x] = nan;
  }
}

__global__ void SetupKernel(const DeviceRowParams* params, int64_t rows, int64_t vocab,
                            int64_t blocks_per_row, const float* part_max, const int32_t* part_nan,
                            DeviceRowState* state) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  float m = -cuda_math::Infinity();
  int nan = 0;
  for (int64_t b = 0; b < blocks_per_row; ++b) {
    m = fmaxf(m, part_max[r * blocks_per_row + b]);
    nan |= part_nan[r * blocks_per_row + b];
  }
  state[r] = MakeRowState(m, nan, params[r], vocab);
}

__global__ void CountHistKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
                                const DeviceRowParams* params, int64_t row0, int64_t vocab,
                                const DeviceRowState* state, int shift, uint32_t* count_hist) {
  const int64_t r = row0 + blockIdx.y;
  const DeviceRowState& st = state[r];
  if (st.top_k_active == 0) return;
  __shared__ uint32_t hist[256];
  for (int b = threadIdx.x; b < 256; b += kThreads) hist[b] = 0;
  __syncthreads();
  const void* row = RowLogits(logits, dtype, r, vocab);
  const uint8_t* mask = RowMask(masks, params[r], r, vocab);
  const int64_t begin = blockIdx.x * kSpan;
  const int64_t end = begin + kSpan < vocab ? begin + kSpan : vocab;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    CountInto(hist, cuda_math::SupportLogit(row, dtype, mask, i), st.thresholds.top_k_key, shift);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += kThreads) {
    if (hist[b] != 0) atomicAdd(&count_hist[r * 256 + b], hist[b]);
  }
}

__global__ void SelectTopKKernel(int64_t rows, int shift, uint32_t* count_hist,
                                 DeviceRowState* state) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  DeviceRowState& st = state[r];
  if (st.top_k_active == 0) return;
  SelectTopKStep(count_hist + r * 256, shift, st);
}

__global__ void MassHistKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
                               const DeviceRowParams* params, int64_t row0, int64_t vocab,
                               const DeviceRowState* state, int shift,
                               unsigned long long* mass_hist) {
  const int64_t r = row0 + blockIdx.y;
  const DeviceRowState& st = state[r];
  if (st.top_p_active == 0) return;
  __shared__ unsigned long long hist[256];
  for (int b = threadIdx.x; b < 256; b += kThreads) hist[b] = 0;
  __syncthreads();
  const void* row = RowLogits(logits, dtype, r, vocab);
  const uint8_t* mask = RowMask(masks, params[r], r, vocab);
  const int64_t begin = blockIdx.x * kSpan;
  const int64_t end = begin + kSpan < vocab ? begin + kSpan : vocab;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    MassInto(hist, cuda_math::SupportLogit(row, dtype, mask, i), st, shift);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += kThreads) {
    if (hist[b] != 0) atomicAdd(&mass_hist[r * 256 + b], hist[b]);
  }
}

__global__ void SelectTopPKernel(const DeviceRowParams* params, int64_t rows, int shift,
                                 unsigned long long* mass_hist, DeviceRowState* state) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  DeviceRowState& st = state[r];
  if (st.top_p_active == 0) return;
  SelectTopPStep(mass_hist + r * 256, shift, params[r].top_p, st);
}

__global__ void ChunkSumKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
                               const DeviceRowParams* params, int64_t row0, int64_t vocab,
                               DeviceRowState* state, double* prefix) {
  const int64_t r = row0 + blockIdx.y;
  DeviceRowState& st = state[r];
  if (st.status != 0) return;
  const cuda_math::RowWeights weight = WeightsOf(logits, dtype, masks, params, st, r, vocab);
  const int64_t chunks = cuda_math::ChunksFor(vocab);
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  constexpr int64_t kChunksPerWarp = kChunksPerBlock / (kThreads / kWarp);
  long long last = -1;
  for (int64_t k = 0; k < kChunksPerWarp; ++k) {
    const int64_t c = blockIdx.x * kChunksPerBlock + warp * kChunksPerWarp + k;
    if (c >= chunks) break;
    const int64_t begin = c * kChunk;
    const int64_t n = begin + kChunk < vocab ? kChunk : vocab - begin;
    const double sum = WarpChunkSum(weight, begin, n, lane, &last);
    if (lane == 0) prefix[r * (chunks + 1) + c + 1] = sum;
  }
  last = WarpMax(last);
  if (lane == 0 && last >= 0) {
    atomicMax(&st.last_positive_plus1, static_cast<unsigned long long>(last + 1));
  }
}

// One warp per row: row_math PrefixInPlace, lane l owning segment l.
__global__ void PrefixKernel(int64_t rows, int64_t vocab, const DeviceRowState* state,
                             double* prefix) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / kWarp) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (r >= rows || state[r].status != 0) return;
  const int64_t chunks = cuda_math::ChunksFor(vocab);
  WarpPrefix(prefix + r * (chunks + 1), chunks, lane);
}

__global__ void DrawKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
                           const DeviceRowParams* params, int64_t row0, int64_t vocab,
                           const DeviceRowState* state, const double* prefix, uint64_t seed,
                           uint64_t first_draw, uint64_t draws, int64_t* out) {
  const int64_t r = row0 + blockIdx.y;
  const uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const DeviceRowState& st = state[r];
  if (j >= draws || st.status != 0) return;
  const int64_t chunks = cuda_math::ChunksFor(vocab);
  const double u = CanonicalUniform(seed, params[r].row_id, first_draw + j);
  out[r * draws + j] = cuda_math::DrawToken(prefix + r * (chunks + 1), chunks, vocab, u,
                                            static_cast<int64_t>(st.last_positive_plus1) - 1,
                                            WeightsOf(logits, dtype, masks, params, st, r, vocab));
}

__global__ void ProbabilitiesKernel(const void* logits, uint32_t dtype, const uint8_t* masks,
                                    const DeviceRowParams* params, int64_t row0, int64_t vocab,
                                    const DeviceRowState* state, const double* prefix,
                                    double* out) {
  const int64_t r = row0 + blockIdx.y;
  const DeviceRowState& st = state[r];
  if (st.status != 0) return;
  const cuda_math::RowWeights weight = WeightsOf(logits, dtype, masks, params, st, r, vocab);
  const double total = prefix[r * (cuda_math::ChunksFor(vocab) + 1) + cuda_math::ChunksFor(vocab)];
  const int64_t begin = blockIdx.x * kSpan;
  const int64_t end = begin + kSpan < vocab ? begin + kSpan : vocab;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    out[r * vocab + i] = static_cast<double>(weight(i)) / total;
  }
}

unsigned Blocks(int64_t n, int64_t per) { return static_cast<unsigned>((n + per - 1) / per); }

// Runs launch(row0, rows_in_group) over groups of at most 65535 rows (the grid's y limit).
template <typename Launch>
cudaError_t ForRowGroups(int64_t rows, Launch&& launch) {
  for (int64_t row0 = 0; row0 < rows; row0 += kMaxGridY) {
    const int64_t n = rows - row0 < kMaxGridY ? rows - row0 : kMaxGridY;
    launch(row0, static_cast<unsigned>(n));
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace

int64_t Chunks(int64_t vocab) { return cuda_math::ChunksFor(vocab); }
int64_t BlocksPerRow(int64_t vocab) { return (vocab + kSpan - 1) / kSpan; }

std::size_t WorkspaceBytes(int64_t rows, int64_t vocab) {
  const auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
  const std::size_t r = static_cast<std::size_t>(rows);
  const std::size_t b = static_cast<std::size_t>(BlocksPerRow(vocab));
  return align(r * sizeof(DeviceRowState)) + align(r * b * sizeof(float)) +
         align(r * b * sizeof(int32_t)) + align(r * 256 * sizeof(uint32_t)) +
         align(r * 256 * sizeof(unsigned long long)) +
         align(r * static_cast<std::size_t>(Chunks(vocab) + 1) * sizeof(double));
}

Workspace CarveWorkspace(void* base, int64_t rows, int64_t vocab) {
  const auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
  const std::size_t r = static_cast<std::size_t>(rows);
  const std::size_t b = static_cast<std::size_t>(BlocksPerRow(vocab));
  char* p = static_cast<char*>(base);
  Workspace ws;
  ws.state = reinterpret_cast<DeviceRowState*>(p);
  p += align(r * sizeof(DeviceRowState));
  ws.part_max = reinterpret_cast<float*>(p);
  p += align(r * b * sizeof(float));
  ws.part_nan = reinterpret_cast<int32_t*>(p);
  p += align(r * b * sizeof(int32_t));
  ws.count_hist = reinterpret_cast<uint32_t*>(p);
  p += align(r * 256 * sizeof(uint32_t));
  ws.mass_hist = reinterpret_cast<unsigned long long*>(p);
  p += align(r * 256 * sizeof(unsigned long long));
  ws.prefix = reinterpret_cast<double*>(p);
  return ws;
}

cudaError_t LaunchPrepare(const void* logits, uint32_t dtype, const uint8_t* masks,
                          const DeviceRowParams* params, int64_t rows, int64_t vocab,
                          bool any_top_k, bool any_top_p, const Workspace& ws,
                          cudaStream_t stream) {
  // Batches that fill the device: one block per row, every pass in one kernel.
  int device = 0, sms = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      e != cudaSuccess) {
    return e;
  }
  if (rows >= sms) {
    for (int64_t row0 = 0; row0 < rows; row0 += kMaxGridY) {
      const int64_t n = rows - row0 < kMaxGridY ? rows - row0 : kMaxGridY;
      RowKernel<<<static_cast<unsigned>(n), kRowThreads, 0, stream>>>(
          logits, dtype, masks, params, row0, vocab, ws.state, ws.prefix);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  // Otherwise several blocks per row (one per kSpan logits), one kernel per pass.
  const unsigned bpr = static_cast<unsigned>(BlocksPerRow(vocab));
  cudaError_t e = ForRowGroups(rows, [&](int64_t row0, unsigned n) {
    MaxKernel<<<dim3(bpr, n), kThreads, 0, stream>>>(logits, dtype, masks, params, row0, vocab,
                                                     ws.part_max, ws.part_nan);
  });
  if (e != cudaSuccess) return e;
  SetupKernel<<<Blocks(rows, 128), 128, 0, stream>>>(params, rows, vocab, bpr, ws.part_max,
                                                     ws.part_nan, ws.state);
  if (any_top_k) {
    e = cudaMemsetAsync(ws.count_hist, 0, static_cast<std::size_t>(rows) * 256 * 4, stream);
    if (e != cudaSuccess) return e;
    for (int shift = 24; shift >= 0; shift -= 8) {
      e = ForRowGroups(rows, [&](int64_t row0, unsigned n) {
        CountHistKernel<<<dim3(bpr, n), kThreads, 0, stream>>>(
            logits, dtype, masks, params, row0, vocab, ws.state, shift, ws.count_hist);
      });
      if (e != cudaSuccess) return e;
      SelectTopKKernel<<<Blocks(rows, 128), 128, 0, stream>>>(rows, shift, ws.count_hist, ws.state);
    }
  }
  if (any_top_p) {
    e = cudaMemsetAsync(ws.mass_hist, 0, static_cast<std::size_t>(rows) * 256 * 8, stream);
    if (e != cudaSuccess) return e;
    for (int shift = 24; shift >= 0; shift -= 8) {
      e = ForRowGroups(rows, [&](int64_t row0, unsigned n) {
        MassHistKernel<<<dim3(bpr, n), kThreads, 0, stream>>>(logits, dtype, masks, params, row0,
                                                              vocab, ws.state, shift, ws.mass_hist);
      });
      if (e != cudaSuccess) return e;
      SelectTopPKernel<<<Blocks(rows, 128), 128, 0, stream>>>(params, rows, shift, ws.mass_hist,
                                                              ws.state);
    }
  }
  e = ForRowGroups(rows, [&](int64_t row0, unsigned n) {
    ChunkSumKernel<<<dim3(bpr, n), kThreads, 0, stream>>>(logits, dtype, masks, params, row0, vocab,
                                                          ws.state, ws.prefix);
  });
  if (e != cudaSuccess) return e;
  constexpr int kRowsPerPrefixBlock = 4;
  PrefixKernel<<<Blocks(rows, kRowsPerPrefixBlock), kRowsPerPrefixBlock * kWarp, 0, stream>>>(
      rows, vocab, ws.state, ws.prefix);
  return cudaGetLastError();
}

cudaError_t LaunchProbabilities(const void* logits, uint32_t dtype, const uint8_t* masks,
                                const DeviceRowParams* params, int64_t rows, int64_t vocab,
                                const Workspace& ws, double* out, cudaStream_t stream) {
  const unsigned bpr = static_cast<unsigned>(BlocksPerRow(vocab));
  return ForRowGroups(rows, [&](int64_t row0, unsigned n) {
    ProbabilitiesKernel<<<dim3(bpr, n), kThreads, 0, stream>>>(logits, dtype, masks, params, row0,
                                                               vocab, ws.state, ws.prefix, out);
  });
}

cudaError_t LaunchSample(const void* logits, uint32_t dtype, const uint8_t* masks,
                         const DeviceRowParams* params, int64_t rows, int64_t vocab,
                         const Workspace& ws, uint64_t seed, uint64_t first_draw, uint64_t draws,
                         int64_t* out, cudaStream_t stream) {
  if (draws == 0) return cudaSuccess;
  constexpr int kDrawThreads = 128;
  const unsigned blocks = static_cast<unsigned>((draws + kDrawThreads - 1) / kDrawThreads);
  return ForRowGroups(rows, [&](int64_t row0, unsigned n) {
    DrawKernel<<<dim3(blocks, n), kDrawThreads, 0, stream>>>(logits, dtype, masks, params, row0,
                                                             vocab, ws.state, ws.prefix, seed,
                                                             first_draw, draws, out);
  });
}

}  // namespace sampcert::impls::cuda
