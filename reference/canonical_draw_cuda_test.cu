// The canonical draw on the GPU: the device runs the same __host__ __device__ header as the
// CPU, and must produce the same bits. Skips with a message where no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "sampcert/canonical_draw.h"

namespace sampcert {
namespace {

__global__ void DrawBits(uint64_t seed, uint64_t row_id, uint64_t n, uint64_t* out) {
  const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = CanonicalBits(seed, row_id, i);
}

TEST(CanonicalDrawCuda, DeviceMatchesHost) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    GTEST_SKIP() << "no CUDA device present: the device half of the canonical draw is not run "
                    "(it compiled; the host half is tested in reference_sampler_test)";
  }
  const uint64_t n = 1 << 16;
  uint64_t* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(uint64_t)), cudaSuccess);
  DrawBits<<<(n + 255) / 256, 256>>>(0x1234567890abcdefULL, 77, n, dev);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<uint64_t> got(n);
  ASSERT_EQ(cudaMemcpy(got.data(), dev, n * sizeof(uint64_t), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dev);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], CanonicalBits(0x1234567890abcdefULL, 77, i)) << i;
  }
}

}  // namespace
}  // namespace sampcert
