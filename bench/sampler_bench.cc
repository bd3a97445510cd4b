// Google Benchmark: the shipped samplers and the reference against baselines measured in the
// same binary: Eigen's vectorized sum of the same row, and (where Debian's libtorch-dev is
// installed) libtorch softmax + multinomial. One thread, rows hot in cache. stable_cpu runs on
// every instruction set its kernels were compiled for and this CPU has (BM_StableCpu/target:X),
// each against Eigen's sum built for the same set (BM_EigenSum/target:X). After the runs, a
// table of the ratios the brief sets targets for (README.md, "Performance").
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "adapters/abi_conversions.h"
#include "bench/bench_rows.h"
#include "bench/eigen_sum.h"
#include "impls/stable_cpu/vector_kernels.h"
#include "registry/builtin_samplers.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::bench {
namespace {

constexpr int64_t kVocabs[] = {32768, 131072, 262144};

DType DTypeArg(int64_t v) { return static_cast<DType>(v); }
const char* DTypeLabel(DType d) {
  return d == DType::kF32 ? "f32" : d == DType::kF16 ? "f16" : "bf16";
}

using EigenSumFn = float (*)(const float*, std::ptrdiff_t);
}  // namespace

float EigenSumBaseline(const float* x, std::ptrdiff_t n) {
  return Eigen::Map<const Eigen::ArrayXf>(x, n).sum();
}

namespace {

// Eigen's sum built for the instruction set of stable_cpu's kernel target `target`.
EigenSumFn EigenSumFor(const std::string& target) {
#if defined(SAMPCERT_BENCH_X86_SUMS)
  if (target == "AVX3" || target == "AVX3_DL") return EigenSumAvx512;
  if (target == "AVX2") return EigenSumAvx2;
#endif
  (void)target;
  return EigenSumBaseline;
}

void BM_EigenSum(benchmark::State& state, EigenSumFn sum) {
  const BenchRows rows = MakeRows(DType::kF32, static_cast<std::size_t>(state.range(0)), 1);
  for (auto _ : state) benchmark::DoNotOptimize(sum(rows.f32.data(), state.range(0)));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// One draw per row through the C ABI table, as the suite calls every sampler.
void SamplerBench(benchmark::State& state, const char* name) {
  const DType dtype = DTypeArg(state.range(0));
  const auto v = static_cast<std::size_t>(state.range(1));
  const auto batch_rows = static_cast<std::size_t>(state.range(2));
  const BenchRows rows = MakeRows(dtype, v, batch_rows);
  const sampcert_sampler_api* api = registry::FindBuiltinSampler(name);
  sampcert_sampler* handle = nullptr;
  sampcert_error err{};
  err.struct_size = sizeof err;
  if (api->create(nullptr, &handle, &err) != SAMPCERT_STATUS_OK) {
    state.SkipWithError(err.message);
    return;
  }
  std::vector<sampcert_row> abi_rows(batch_rows);
  for (std::size_t r = 0; r < batch_rows; ++r) {
    abi_rows[r] = sampcert_row{};
    abi_rows[r].struct_size = sizeof(sampcert_row);
    abi_rows[r].logits = rows.Row(r);
    abi_rows[r].temperature = 0.8f;
    abi_rows[r].top_p = 1.0f;
    abi_rows[r].row_id = r;
  }
  const sampcert_batch batch =
      adapters::AbiBatch(static_cast<int32_t>(dtype), v, batch_rows, abi_rows.data());
  std::vector<int64_t> out(batch_rows);
  uint64_t draw = 0;
  for (auto _ : state) {
    if (api->sample(handle, &batch, 1, draw++, 1, out.data(), &err) != SAMPCERT_STATUS_OK) {
      state.SkipWithError(err.message);
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  api->destroy(handle);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch_rows));
  state.SetLabel(DTypeLabel(dtype));
}

// stable_cpu with its kernels held to one target.
void BM_StableCpu(benchmark::State& state, const std::string& target) {
  impls::kernels::UseTarget(target);
  SamplerBench(state, "stable_cpu");
  impls::kernels::UseTarget("");
}
void BM_Naive(benchmark::State& state) { SamplerBench(state, "naive"); }

void SamplerArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"dtype", "V", "batch"});
  for (int64_t dtype : {0, 1, 2}) {
    for (int64_t v : kVocabs) b->Args({dtype, v, 1});
    b->Args({dtype, 131072, 64});
  }
}
BENCHMARK(BM_Naive)->Apply(SamplerArgs)->Unit(benchmark::kMicrosecond);

// The reference: exact distribution in long double plus one draw.
void BM_Reference(benchmark::State& state) {
  const DType dtype = DTypeArg(state.range(0));
  const auto v = static_cast<std::size_t>(state.range(1));
  const BenchRows rows = MakeRows(dtype, v, 1);
  RowView row;
  row.dtype = dtype;
  row.logits = rows.Row(0);
  row.vocab = v;
  row.temperature = 0.8f;
  uint64_t draw = 0;
  for (auto _ : state) {
    auto d = ComputeReference(row, Policies{});
    benchmark::DoNotOptimize(ReferenceSampler(d->probs).Draw(1, 0, draw++));
  }
  state.SetLabel(DTypeLabel(dtype));
}
BENCHMARK(BM_Reference)
    ->ArgNames({"dtype", "V"})
    ->Args({0, 32768})
    ->Args({0, 131072})
    ->Args({1, 131072})
    ->Unit(benchmark::kMillisecond);

}  // namespace

double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// The per-target benchmarks, best target first (registered before the static ones run).
void RegisterTargets() {
  for (const std::string& t : impls::kernels::CompiledTargets()) {
    benchmark::RegisterBenchmark(("BM_EigenSum/target:" + t).c_str(), BM_EigenSum, EigenSumFor(t))
        ->ArgName("V")
        ->Arg(32768)
        ->Arg(131072)
        ->Arg(262144)
        ->ComputeStatistics("min", Min);
    benchmark::RegisterBenchmark(("BM_StableCpu/target:" + t).c_str(), BM_StableCpu, t)
        ->Apply(SamplerArgs)
        ->Unit(benchmark::kMicrosecond)
        ->ComputeStatistics("min", Min);
  }
}

// Collects every run's time so that main() can print the brief's ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // CPU time, the smallest over --benchmark_repetitions where there are several (the "min"
  // statistic): the ratios then hold on a machine that other work shares.
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string name = r.run_name.str();
      const double t = r.GetAdjustedCPUTime() * Scale(r);
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "min") times_[name] = t;
      } else if (!times_.contains(name) || t < times_[name]) {
        times_[name] = t;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Nanoseconds for any unit.
  static double Scale(const Run& r) {
    switch (r.time_unit) {
      case benchmark::kSecond: return 1e9;
      case benchmark::kMillisecond: return 1e6;
      case benchmark::kMicrosecond: return 1e3;
      default: return 1;
    }
  }
  double Time(const std::string& name) const {
    auto it = times_.find(name);
    return it == times_.end() ? -1 : it->second;
  }

 private:
  std::map<std::string, double> times_;
};

void PrintRatios(const RatioReporter& rep) {
  std::printf(
      "\nsampcert ratios (same run; targets from the brief), stable_cpu's kernels on each "
      "target this CPU runs (best: %s)\n",
      impls::kernels::CurrentTarget().c_str());
  for (const std::string& t : impls::kernels::CompiledTargets()) {
    for (int64_t v : kVocabs) {
      const std::string vs = std::to_string(v);
      const std::string cpu = "BM_StableCpu/target:" + t;
      const double sum = rep.Time("BM_EigenSum/target:" + t + "/V:" + vs);
      const double f32 = rep.Time(cpu + "/dtype:0/V:" + vs + "/batch:1");
      const double f16 = rep.Time(cpu + "/dtype:1/V:" + vs + "/batch:1");
      const double bf16 = rep.Time(cpu + "/dtype:2/V:" + vs + "/batch:1");
      const double torch = rep.Time("BM_TorchSoftmaxMultinomial/V:" + vs);
      if (sum <= 0 || f32 <= 0) continue;
      std::printf(
          "%-6s V=%-7lld stable_cpu f32 %8.1f us = %5.2fx Eigen sum (%.2f us; target <= 8x)",
          t.c_str(), (long long)v, f32 / 1e3, f32 / sum, sum / 1e3);
      if (torch > 0)
        std::printf("; libtorch %8.1f us = %5.1fx slower (target >= 20x)", torch / 1e3,
                    torch / f32);
      if (f16 > 0 && bf16 > 0)
        std::printf("; f16 %.2fx, bf16 %.2fx of f32 (target <= 1.2x)", f16 / f32, bf16 / f32);
      std::printf("\n");
    }
    const double sum = rep.Time("BM_EigenSum/target:" + t + "/V:131072");
    const double batch = rep.Time("BM_StableCpu/target:" + t + "/dtype:0/V:131072/batch:64");
    if (sum > 0 && batch > 0) {
      std::printf("%-6s batch 64 x 128k f32: %.1f us a row = %5.2fx Eigen sum of one row\n",
                  t.c_str(), batch / 64e3, batch / 64 / sum);
    }
  }
}

}  // namespace sampcert::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  sampcert::bench::RegisterTargets();
  sampcert::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  sampcert::bench::PrintRatios(reporter);
  benchmark::Shutdown();
  return 0;
}
