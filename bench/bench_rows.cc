#include "bench/bench_rows.h"

#include <Eigen/Core>
#include <random>

namespace sampcert::bench {

const void* BenchRows::Row(std::size_t r) const {
  if (dtype == DType::kF32) return f32.data() + r * vocab;
  return bits16.data() + r * vocab;
}

BenchRows MakeRows(DType dtype, std::size_t vocab, std::size_t rows) {
  BenchRows b{dtype, vocab, rows, {}, {}};
  std::mt19937 rng(42);
  std::normal_distribution<float> body(0.0f, 3.0f);
  b.f32.resize(vocab * rows);
  for (float& f : b.f32) f = body(rng);
  for (std::size_t r = 0; r < rows; ++r) {
    for (int k = 0; k < 8; ++k) b.f32[r * vocab + rng() % vocab] = 20.0f + static_cast<float>(k);
  }
  if (dtype != DType::kF32) {
    b.bits16.resize(b.f32.size());
    for (std::size_t i = 0; i < b.f32.size(); ++i) {
      if (dtype == DType::kF16) {
        const Eigen::half h(b.f32[i]);
        b.f32[i] = static_cast<float>(h);
        b.bits16[i] = Eigen::numext::bit_cast<uint16_t>(h);
      } else {
        const Eigen::bfloat16 h(b.f32[i]);
        b.f32[i] = static_cast<float>(h);
        b.bits16[i] = Eigen::numext::bit_cast<uint16_t>(h);
      }
    }
  }
  return b;
}

}  // namespace sampcert::bench
