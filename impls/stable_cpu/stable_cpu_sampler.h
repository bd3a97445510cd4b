// stable_cpu: a correct and fast CPU sampler for every input SPEC.md allows, in f32 / f16 /
// bf16, batched. Upcast (exact), subtract the maximum before scaling, exact temperature-0 and
// +inf limits, masks, top-k / top-p / min-p with renormalization between steps (keep-all ties,
// temperature first), clear errors for invalid input, and the canonical draw, so that for the
// same seed and row id it draws the reference sampler's tokens outside rounding bands. A row's
// result never depends on the rest of the batch. Per-request seeds (SPEC section 17): a row with
// its own seed draws by (its seed, row id, draw), one of the call's seed by (the call's seed,
// row id, draw), an unseeded row from the handle's own stream, which every call advances.
//
// Speed: one vectorized pass for the maximum (after an F16C / shift upcast for f16 / bf16), one
// vectorized pass that writes the weights and per-block sums (vector_kernels.h); a draw scans
// the block sums, then one block of 256. Built for x86-64-v3 where the build machine has it
// (SAMPCERT_X86_64_V3).
#ifndef SAMPCERT_IMPLS_STABLE_CPU_STABLE_CPU_SAMPLER_H_
#define SAMPCERT_IMPLS_STABLE_CPU_STABLE_CPU_SAMPLER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::impls {

class StableCpuSampler {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_MIN_P | SAMPCERT_CAP_TEMPERATURE_ZERO |
      SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH | SAMPCERT_CAP_VERIFY |
      SAMPCERT_CAP_VERIFY_DRAFT_LOGITS | SAMPCERT_CAP_VERIFY_ACCEPTANCE | SAMPCERT_CAP_PENALTIES |
      SAMPCERT_CAP_SEEDS | SAMPCERT_CAP_LOGIT_BIAS | SAMPCERT_CAP_MIN_TOKENS |
      SAMPCERT_CAP_PACKED_MASK | SAMPCERT_CAP_LOGPROBS_PROCESSED;
  static constexpr std::size_t kBlock = 256;  // elements per block sum
  static void Describe(sampcert_sampler_info* info);
  static Policies DeclaredPolicies();

  Error Probabilities(const sampcert_batch& batch, double* out);
  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out);
  // Speculative-decoding verification (SPEC section 15) with the exact residual: each target
  // row's distribution is this sampler's own (Probabilities), computed once per distinct row
  // in the call; acceptance, residual and bonus draws are canonical uniforms at (seed, row id,
  // 64 x draw + slot), slot 2j - 2 for position j's acceptance and 2j - 1 for its residual or
  // bonus draw, so at most kMaxDrafts drafted tokens per chain. Draft rows given as logits
  // (MINOR 3) are this sampler's own distributions too, and the acceptance probabilities
  // min(1, p / q) are written when the batch asks for them.
  static constexpr uint64_t kMaxDrafts = 31;
  Error Verify(const sampcert_chain_batch& batch, uint64_t seed, int64_t* accepted,
               int64_t* tokens);

  // The canonical inverse CDF (DRAW-3's rule, in double) over weights by their running sums C:
  // Token(u) is the smallest x with u * C_last < C_x (a weight of 0 never qualifies: its C_x
  // equals the one before), the last positive weight when rounding leaves the target past the
  // end, and -1 when every weight is 0.
  struct Cdf {
    std::vector<double> c;
    int64_t last_positive = -1;
    template <typename Weight>
    Cdf(std::size_t v, Weight&& w) : c(v) {
      double s = 0;
      for (std::size_t x = 0; x < v; ++x) {
        const double e = w(x);
        c[x] = s += e;
        if (e > 0) last_positive = static_cast<int64_t>(x);
      }
    }
    int64_t Token(double u) const;
  };
  // A target row's distribution (Probabilities) and its CDF.
  struct Target {
    std::vector<double> p;
    Cdf cdf;
  };
  // Every chain's target rows: rows[c][j] for position j + 1 of chain c, and its draft rows
  // drafts[c][j] where the batch gives them as logits; each distinct row (dtype, logits and
  // mask buffers, parameters) computed once. Errors name the chain.
  struct VerifyTargets {
    std::deque<Target> store;
    std::vector<std::vector<const Target*>> rows;
    std::vector<std::vector<const Target*>> drafts;
  };
  Error ChainTargets(const sampcert_chain_batch& batch, VerifyTargets* out);

 private:
  // Computes the kept weights of row r into w_ (0 for every token not drawn), their block sums
  // and prefix, and total_.
  Error Prepare(const sampcert_batch& batch, std::size_t r);
  // Prepare for a row with a penalty on (SPEC section 16): the penalized logits in double
  // (PEN-5; an f32 logit divided by r < 1 may exceed FLT_MAX), then weights and truncation on
  // them. `x` is the row's f32 logits, masked tokens at -inf.
  void PreparePenalized(const RowView& row, const float* x);
  // Truncation on the logits x (float, or the penalized doubles), keep-all ties.
  template <typename V>
  void TopK(const V* x, int64_t k);
  template <typename V>
  void TopP(const V* x, float p);
  void MinP(float min_p);
  void SumBlocks();     // block sums of w_, then FinishBlocks()
  void FinishBlocks();  // block sums in block_prefix_[1..] -> prefix, total_, last_positive_
  // The canonical inverse CDF (DRAW-3) over w_: smallest i with u * total < C_i.
  int64_t TokenFor(double u) const;
  // SPEC section 20, processed mode: log(w_i / total_) of row r's draws and its top-n tokens,
  // into the batch's MINOR 8 outputs (-inf for a weight of 0).
  void WriteLogprobs(const sampcert_batch& batch, std::size_t r, const int64_t* tokens,
                     uint64_t draws);
  std::vector<uint32_t> top_index_;

  std::vector<float> x_;  // upcast / masked logits, when the input cannot be used in place
  std::vector<float> w_;
  std::vector<double> block_prefix_;  // block_prefix_[b] = sum of blocks before b
  std::vector<float> scratch_values_;
  std::vector<double> xd_;  // the penalized logits
  std::vector<double> scratch_values_d_;
  std::vector<uint32_t> scratch_index_;
  double total_ = 0;
  int64_t last_positive_ = -1;
  // The engine's own generator for unseeded rows (SEED-3): a seed that each call with an
  // unseeded row advances (splitmix64), so unseeded draws differ from call to call.
  uint64_t unseeded_state_ = 0x2545f4914f6cdd1dULL;
};

const sampcert_sampler_api* StableCpuSamplerApi();

}  // namespace sampcert::impls

#endif  // SAMPCERT_IMPLS_STABLE_CPU_STABLE_CPU_SAMPLER_H_
