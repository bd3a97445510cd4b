// Measures one draw's cost of a sampcert plug-in through the C ABI (the figure llama.cpp's
// plug-in declares as draw_cost_ns_per_token): a row of V logits (LLM-like: normal with
// standard deviation 3, seeded), top_k 0, top_p 1, min_p 0, T = 0.8 unless given, and the
// median over repetitions of one sample() call of D draws, divided by D and by V. Time is the
// thread's CPU time (what the runner's item limit counts, RLIMIT_CPU), so a loaded machine
// does not inflate it.
//
// Usage: llama_cpp_draw_cost PLUGIN [V=50001] [DRAWS=200] [REPS=5] [TOP_K=0] [TOP_P=1]
#include <dlfcn.h>
#include <sampcert/sampler_abi.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

static double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN [V] [DRAWS] [REPS] [TOP_K] [TOP_P]\n", argv[0]);
    return 2;
  }
  const uint64_t vocab = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 50001;
  const uint64_t draws = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 200;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
  const int64_t top_k = argc > 5 ? std::strtoll(argv[5], nullptr, 10) : 0;
  const float top_p = argc > 6 ? std::strtof(argv[6], nullptr) : 1.0f;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  auto entry = reinterpret_cast<sampcert_get_sampler_api_fn>(dlsym(lib, SAMPCERT_ENTRY_POINT));
  const sampcert_sampler_api* api = nullptr;
  if (entry == nullptr ||
      entry(SAMPCERT_ABI_VERSION_MAJOR, SAMPCERT_ABI_VERSION_MINOR, &api) != 0) {
    std::fprintf(stderr, "%s is not a sampcert plug-in of this MAJOR\n", argv[1]);
    return 2;
  }
  sampcert_error error{};
  error.struct_size = sizeof error;
  sampcert_sampler* s = nullptr;
  if (api->create(nullptr, &s, &error) != 0) {
    std::fprintf(stderr, "create: %s\n", error.message);
    return 1;
  }
  std::mt19937_64 gen(20261201);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(vocab);
  for (float& x : logits) x = normal(gen);
  sampcert_row row{};
  row.struct_size = sizeof row;
  row.logits = logits.data();
  row.temperature = 0.8f;
  row.top_p = top_p;
  row.min_p = 0.0f;
  row.top_k = top_k;
  sampcert_batch batch{};
  batch.struct_size = sizeof batch;
  batch.dtype = SAMPCERT_DTYPE_F32;
  batch.vocab = vocab;
  batch.num_rows = 1;
  batch.rows = &row;
  std::vector<int64_t> out(draws);
  std::vector<double> seconds;
  uint64_t next = 0;  // one stream, continued: what a sequential sampler is asked for
  for (int r = 0; r < reps; ++r) {
    const double t0 = CpuSeconds();
    if (api->sample(s, &batch, 1, next, draws, out.data(), &error) != 0) {
      std::fprintf(stderr, "sample: %s\n", error.message);
      return 1;
    }
    next += draws;
    seconds.push_back(CpuSeconds() - t0);
  }
  std::sort(seconds.begin(), seconds.end());
  const double per_draw = seconds[seconds.size() / 2] / static_cast<double>(draws);
  std::printf("V = %llu, %llu draws per call, median of %d: %.1f us per draw, %.2f ns per token\n",
              static_cast<unsigned long long>(vocab), static_cast<unsigned long long>(draws), reps,
              per_draw * 1e6, per_draw * 1e9 / static_cast<double>(vocab));
  api->destroy(s);
  return 0;
}
