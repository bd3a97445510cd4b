// stable_cuda's launchers, the lower of its two layers (as in CUB and FlashInfer): raw device
// pointers, sizes and a stream in, a cudaError_t out; no allocation, no validation, no
// exceptions. The adapter (stable_cuda_sampler.cc) validates, owns the buffers and maps errors.
//
// Layout: `rows` rows of `vocab` logits each, contiguous (row r at r * vocab elements), as
// SAMPCERT_DTYPE_* bit patterns; masks likewise (row r's bytes used only when its params say
// has_mask). Every reduction has a fixed shape that depends on `vocab` alone (never on the
// batch, the SM count or timing) and no floating-point atomics, so a row gives the same bits
// alone and in any batch (BATCH-1).
#ifndef SAMPCERT_IMPLS_STABLE_CUDA_STABLE_CUDA_KERNELS_H_
#define SAMPCERT_IMPLS_STABLE_CUDA_STABLE_CUDA_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "impls/stable_cuda/row_math.h"

namespace sampcert::impls::cuda {

struct DeviceRowParams {
  float temperature = 1;
  float top_p = 1;
  float min_p = 0;
  int32_t has_mask = 0;
  int64_t top_k = 0;
  uint64_t row_id = 0;
};

// Per-row results of LaunchPrepare, read back by the host for the status.
struct DeviceRowState {
  cuda_math::RowSetup setup;
  cuda_math::Thresholds thresholds;
  int32_t status = 0;  // cuda_math::RowStatus
  int32_t top_k_active = 0;
  int32_t top_p_active = 0;
  int32_t reserved = 0;
  uint64_t k_left = 0;
  uint64_t above = 0;
  double target = 0;
  unsigned long long last_positive_plus1 = 0;  // 0: none
};

// Device scratch for a (rows, vocab) problem, carved from one allocation.
struct Workspace {
  DeviceRowState* state = nullptr;          // rows
  float* part_max = nullptr;                // rows * BlocksPerRow(vocab)
  int32_t* part_nan = nullptr;              // rows * BlocksPerRow(vocab)
  uint32_t* count_hist = nullptr;           // rows * 256
  unsigned long long* mass_hist = nullptr;  // rows * 256
  double* prefix = nullptr;                 // rows * (Chunks(vocab) + 1)
};

int64_t BlocksPerRow(int64_t vocab);
int64_t Chunks(int64_t vocab);
std::size_t WorkspaceBytes(int64_t rows, int64_t vocab);
Workspace CarveWorkspace(void* base, int64_t rows, int64_t vocab);

// Maximum, regime, top-k and top-p thresholds, chunk sums and their prefix for every row.
// any_top_k / any_top_p: whether some row asks for it (skips the passes otherwise).
cudaError_t LaunchPrepare(const void* logits, uint32_t dtype, const uint8_t* masks,
                          const DeviceRowParams* params, int64_t rows, int64_t vocab,
                          bool any_top_k, bool any_top_p, const Workspace& ws, cudaStream_t stream);

// out[r * vocab + i] = P_i of row r (after LaunchPrepare; rows whose status is not kOk skip).
cudaError_t LaunchProbabilities(const void* logits, uint32_t dtype, const uint8_t* masks,
                                const DeviceRowParams* params, int64_t rows, int64_t vocab,
                                const Workspace& ws, double* out, cudaStream_t stream);

// out[r * draws + j] = the canonical draw first_draw + j of row r (after LaunchPrepare).
cudaError_t LaunchSample(const void* logits, uint32_t dtype, const uint8_t* masks,
                         const DeviceRowParams* params, int64_t rows, int64_t vocab,
                         const Workspace& ws, uint64_t seed, uint64_t first_draw, uint64_t draws,
                         int64_t* out, cudaStream_t stream);

}  // namespace sampcert::impls::cuda

#endif  // SAMPCERT_IMPLS_STABLE_CUDA_STABLE_CUDA_KERNELS_H_
