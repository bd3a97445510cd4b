// libtorch softmax + multinomial on the same rows, one thread: the brief's baseline for
// stable_cpu (Debian's libtorch-dev, PyTorch 1.13, CPU). Built only where Torch is found.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "bench/bench_rows.h"

namespace sampcert::bench {
namespace {

void BM_TorchSoftmaxMultinomial(benchmark::State& state) {
  at::set_num_threads(1);
  const auto v = static_cast<std::size_t>(state.range(0));
  BenchRows rows = MakeRows(DType::kF32, v, 1);
  const torch::Tensor logits =
      torch::from_blob(rows.f32.data(), {1, static_cast<int64_t>(v)}, torch::kFloat32);
  for (auto _ : state) {
    const torch::Tensor probs = torch::softmax(logits / 0.8, -1);
    benchmark::DoNotOptimize(torch::multinomial(probs, 1).data_ptr());
  }
}
BENCHMARK(BM_TorchSoftmaxMultinomial)
    ->ArgName("V")
    ->Arg(32768)
    ->Arg(131072)
    ->Arg(262144)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sampcert::bench
