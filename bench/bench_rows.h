// Shared inputs for the sampler benchmarks: one row of logits per dtype, hot in cache.
#ifndef SAMPCERT_BENCH_BENCH_ROWS_H_
#define SAMPCERT_BENCH_BENCH_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sampcert/row.h"

namespace sampcert::bench {

// `rows` rows of V logits drawn like an LLM's (a few large values on a normal body), as bit
// patterns of `dtype`. Deterministic.
struct BenchRows {
  DType dtype;
  std::size_t vocab;
  std::size_t rows;
  std::vector<float> f32;        // the values, as floats (exact in every dtype)
  std::vector<uint16_t> bits16;  // f16 / bf16 bit patterns
  const void* Row(std::size_t r) const;
};

BenchRows MakeRows(DType dtype, std::size_t vocab, std::size_t rows);

}  // namespace sampcert::bench

#endif  // SAMPCERT_BENCH_BENCH_ROWS_H_
