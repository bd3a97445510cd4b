// stable_cuda's benchmarks (Google Benchmark, CUDA-event timing, UseManualTime):
//   BM_DeviceCopy          device-to-device cudaMemcpy of 512 MiB; bytes counted read plus
//                          written (2x the size), the yardstick for the others;
//   BM_StableCuda          prepare + one draw per row on device-resident logits, batch {1, 64,
//                          256} x V {32k, 128k, 256k} x dtype, plain temperature sampling and with
//                          top-k + top-p; bytes = logits read once (rows x V x dtype size), and
//                          of_copy_bw = that rate / BM_DeviceCopy's rate;
//   BM_OneRowViaAbi        one 128k f32 row from host memory through the C ABI, stable_cuda
//                          against stable_cpu (what a caller of either sees, copies included).
// Targets (SPEC / the brief): plain sampling at batch 256 x 128k f16 >= 0.5 of copy bandwidth;
// top-k/top-p within 3x of plain. Exits 0 with a message where there is no CUDA device.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "adapters/sampler.h"
#include "impls/stable_cuda/stable_cuda_kernels.h"
#include "registry/open_sampler.h"

namespace {

using sampcert::impls::cuda::DeviceRowParams;
namespace kc = sampcert::impls::cuda;

double g_copy_bytes_per_s = 0;  // measured by BM_DeviceCopy, which runs first

#define CHECK_CUDA(call)                              \
  do {                                                \
    if (cudaError_t e_ = (call); e_ != cudaSuccess) { \
      state.SkipWithError(cudaGetErrorString(e_));    \
      return;                                         \
    }                                                 \
  } while (0)

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  double Seconds() {
    float ms = 0;
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&ms, start, stop);
    return ms * 1e-3;
  }
};

void BM_DeviceCopy(benchmark::State& state) {
  const std::size_t bytes = std::size_t{512} << 20;
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMemset(a, 1, bytes));
  Events ev;
  double total = 0;
  for (auto _ : state) {
    cudaEventRecord(ev.start);
    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(ev.stop);
    const double s = ev.Seconds();
    total += s;
    state.SetIterationTime(s);
  }
  const double moved = 2.0 * static_cast<double>(bytes) * static_cast<double>(state.iterations());
  g_copy_bytes_per_s = moved / total;
  state.SetBytesProcessed(static_cast<int64_t>(moved));
  state.counters["GB/s_read+written"] = g_copy_bytes_per_s * 1e-9;
  cudaFree(a);
  cudaFree(b);
}

// args: dtype (0 f32, 1 f16, 2 bf16), batch, V, truncation (0 plain, 1 top-k 50 + top-p 0.9)
void BM_StableCuda(benchmark::State& state) {
  const auto dtype = static_cast<uint32_t>(state.range(0));
  const int64_t rows = state.range(1), v = state.range(2);
  const bool truncate = state.range(3) != 0;
  const std::size_t elem = dtype == 0 ? 4 : 2;
  const std::size_t n = static_cast<std::size_t>(rows * v);
  // Logits: a prefix of one cached set of normal(0, 3) values (generating 67M normals per
  // configuration would dominate the run), as bit patterns of the dtype (f16 / bf16 patterns
  // derived from the f32 ones: fine for timing).
  static std::vector<uint32_t> bits32;
  if (bits32.size() < n) {
    bits32.resize(std::size_t{256} * 262144);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (auto& b : bits32) {
      const float f = normal(rng);
      std::memcpy(&b, &f, 4);
    }
  }
  std::vector<uint16_t> bits16;
  if (elem == 2) {
    bits16.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      bits16[i] = dtype == 2 ? static_cast<uint16_t>(bits32[i] >> 16)
                             : static_cast<uint16_t>(0x3c00 + ((bits32[i] >> 13) & 0x3ff));
    }
  }
  std::vector<DeviceRowParams> params(static_cast<std::size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    params[r].temperature = 0.8f;
    params[r].row_id = static_cast<uint64_t>(r);
    if (truncate) {
      params[r].top_k = 50;
      params[r].top_p = 0.9f;
    }
  }
  void *logits = nullptr, *dparams = nullptr, *ws = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&logits, n * elem));
  CHECK_CUDA(cudaMemcpy(logits, elem == 4 ? static_cast<const void*>(bits32.data()) : bits16.data(),
                        n * elem, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&dparams, params.size() * sizeof(DeviceRowParams)));
  CHECK_CUDA(cudaMemcpy(dparams, params.data(), params.size() * sizeof(DeviceRowParams),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&ws, kc::WorkspaceBytes(rows, v)));
  CHECK_CUDA(cudaMalloc(&out, static_cast<std::size_t>(rows) * sizeof(int64_t)));
  const kc::Workspace w = kc::CarveWorkspace(ws, rows, v);
  const auto* p = static_cast<const DeviceRowParams*>(dparams);
  Events ev;
  double total = 0;
  uint64_t seed = 0;
  for (auto _ : state) {
    cudaEventRecord(ev.start);
    cudaError_t e =
        kc::LaunchPrepare(logits, dtype, nullptr, p, rows, v, truncate, truncate, w, nullptr);
    if (e == cudaSuccess) {
      e = kc::LaunchSample(logits, dtype, nullptr, p, rows, v, w, ++seed, 0, 1,
                           static_cast<int64_t*>(out), nullptr);
    }
    cudaEventRecord(ev.stop);
    const double s = ev.Seconds();
    if (e != cudaSuccess) {
      state.SkipWithError(cudaGetErrorString(e));
      break;
    }
    total += s;
    state.SetIterationTime(s);
  }
  const double logit_bytes =
      static_cast<double>(n * elem) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(logit_bytes));
  if (g_copy_bytes_per_s > 0 && total > 0) {
    state.counters["of_copy_bw"] = logit_bytes / total / g_copy_bytes_per_s;
  }
  cudaFree(logits);
  cudaFree(dparams);
  cudaFree(ws);
  cudaFree(out);
}

void BM_OneRowViaAbi(benchmark::State& state, const char* sampler_name) {
  auto opened = sampcert::registry::OpenSampler(sampler_name);
  if (!opened.ok()) {
    state.SkipWithError(opened.error().message.c_str());
    return;
  }
  const std::size_t v = 131072;
  std::vector<uint32_t> bits(v);
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (auto& b : bits) {
    const float f = normal(rng);
    std::memcpy(&b, &f, 4);
  }
  sampcert::RowView row;
  row.dtype = sampcert::DType::kF32;
  row.logits = bits.data();
  row.vocab = v;
  row.temperature = 0.8f;
  const sampcert::adapters::Batch batch{sampcert::DType::kF32, v, {row}};
  uint64_t seed = 0;
  for (auto _ : state) {
    auto tokens = (*opened)->Sample(batch, ++seed, 0, 1);
    if (!tokens.ok()) {
      state.SkipWithError(tokens.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(tokens.value().data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * v * 4));
}

void Register() {
  benchmark::RegisterBenchmark("BM_DeviceCopy", BM_DeviceCopy)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  auto* b = benchmark::RegisterBenchmark("BM_StableCuda", BM_StableCuda);
  b->ArgNames({"dtype", "batch", "V", "topk_topp"})->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (int64_t truncate : {0, 1}) {
    for (int64_t dtype : {0, 1, 2}) {
      for (int64_t batch : {1, 64, 256}) {
        for (int64_t v : {32768, 131072, 262144}) b->Args({dtype, batch, v, truncate});
      }
    }
  }
  benchmark::RegisterBenchmark("BM_OneRowViaAbi/stable_cuda", BM_OneRowViaAbi, "stable_cuda")
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_OneRowViaAbi/stable_cpu", BM_OneRowViaAbi, "stable_cpu")
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("stable_cuda_bench: no CUDA device (%s): nothing to measure\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("stable_cuda_bench: device 0: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
