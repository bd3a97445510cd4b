// The suite's mutation catalogue (issue 19): a correct, plain sampler (f32 / f16 / bf16, masks,
// top-k / top-p / min-p, temperature 0, batches) and mutants of it, each one mechanism from a
// public bug report, pull request or engine source, chosen by the environment variable
// SAMPCERT_MUTANT when the sampler is created (forked workers inherit it). kCatalogue below is
// the catalogue: per mutant its failure class, its mechanism and its citation (repository and
// issue / PR number, or the engine file it mirrors), and, for a rare mutant, why the standard
// profile cannot be expected to hit it. Each mutant differs from the correct sampler by its
// defect alone: every defect is one `if (Is(...))` at the step it breaks, so a reader sees it.
//
// The correct sampler computes in double after subtracting the maximum, keeps ties at every
// cut (keep-all), renormalizes between truncation steps, applies the temperature first, breaks
// greedy ties at the lowest index and draws by the canonical uniform (SPEC DRAW-1/2) and an
// inverse CDF in index order, promising same-seed determinism. It declares no probabilities
// output, so every finding comes from draws, errors and identities.
//
// tests/mutants/witness_test.cc proves every mutant wrong on a witness row by the reference;
// tools/mutation_score.py runs a profile on each and prints the score; the catalogue is also
// exported as JSON (sampcert_mutant_catalogue) for that tool.
#include <Eigen/Core>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row_validation.h"

namespace {

using sampcert::DType;
using sampcert::Error;
using sampcert::ErrorCode;
using sampcert::RowView;

enum class M {
  kNone,
  kGreedyThresholdDeclared,
  kScaleInInputDtype,
  kScaleBeforeMax,
  kScaledLogitsBf16,
  kProbsF16,
  kSoftmaxSumBf16,
  kPosInfToken0,
  kPosInfMasked,
  kPosInfClamped,
  kMaskMultiply,
  kMaskAdditiveLog,
  kT0Divide,
  kT0Epsilon,
  kT0AsT1,
  kGreedyBelow1e5,
  kMaskFloor1e4,
  kMaskFloorF16Min,
  kMaskNarrow32,
  kAllMaskedToken0,
  kNanToken0,
  kAllNanOutOfVocab,
  kNanToFloor,
  kTopKExactLowest,
  kTopKAboveVError,
  kTopPExclusive,
  kTopPCumsumLogprobs,
  kTopPBf16Cumsum,
  kTopPTinyAllMasked,
  kTopPUnrenormalized,
  kTopPBeforeTemperature,
  kMinPBeforeTemperature,
  kTopPAppliedAtOne,
  kRaceExponentialZero,
  kGumbelUOne,
  kUniformOnePastEnd,
  kCdfF32,
  kRngOffsetFrozen,
  kRngByBatchPosition,
  kRngUnseededInBatch,
  kRngGlobalState,
  kBatchFirstRowParams,
  kBatchSlotParams,
  kBatchDropsTopP,
  kBatchThresholdTopKExact,
  kGreedyMateEpsilon,
  kRngKeySeedPlusRow,
  kRngCounterRowPlusDraw,
  kRngCounter32,
  kMaskByteIsOne,
  kTopKSignedZero,
  kTopKCapped1024,
  kMinPSkippedBelowEps,
  kParamsBf16,
};

struct Entry {
  M id;
  const char* name;
  const char* failure_class;  // BRIEF.md's failure classes and issue 19's engine classes
  const char* mechanism;
  const char* citation;
  const char* rare;  // nullptr, or why the standard profile cannot be expected to hit it
};

// The catalogue. "control" entries are correct samplers that must pass.
constexpr Entry kCatalogue[] = {
    {M::kNone, "none", "control", "the correct sampler", "", nullptr},
    {M::kGreedyThresholdDeclared, "greedy_threshold_declared", "control",
     "temperatures below 1e-5 sampled greedily, declared as POL-5's greedy threshold (a "
     "Warning, conformant)",
     "vllm-project/vllm vllm/v1/sample/sampler.py (_SAMPLING_EPS = 1e-5: a temperature below "
     "it is sampled greedily)",
     nullptr},
    // --- half precision, NaN from infinities, the maximum subtracted after scaling ---
    {M::kScaleInInputDtype, "scale_in_input_dtype", "half_overflow",
     "logits / T computed and stored in the input dtype: fp16 overflows to inf at small T (and "
     "rounds the scaled logits), inf - inf is NaN, an error for valid input",
     "vllm-project/vllm#890 (fp16 logits / 1e-5 give inf, softmax NaN); pytorch/torchchat#259",
     nullptr},
    {M::kScaleBeforeMax, "scale_before_max", "max_after_scaling",
     "logits / T in fp32 first, the maximum subtracted afterwards: x / T overflows at tiny T, "
     "inf - inf is NaN, an error for valid input",
     "ggerganov/llama.cpp src/llama-sampling.cpp (temperature divides the logits, softmax "
     "subtracts the maximum after); SlopDotCash/asi#2890",
     nullptr},
    {M::kScaledLogitsBf16, "scaled_logits_bf16", "half_precision",
     "the scaled logits x / T rounded to bf16 before the softmax (the softmax run in the "
     "model's dtype): a near-tie drawn with the wrong odds",
     "vllm-project/vllm-omni#3252 (softmax in native bf16/fp16)", nullptr},
    {M::kProbsF16, "probs_f16", "low_precision_tail",
     "probabilities stored in fp16 before the draw: those below half of fp16's smallest "
     "subnormal (2^-25) flush to 0, the tail is never drawn",
     "cloveranon/Clover-Edition#168 (fp16 softmax, then multinomial)", nullptr},
    {M::kSoftmaxSumBf16, "softmax_sum_bf16", "low_precision_cumsum",
     "the softmax's normalizing sum accumulated in bf16, which saturates: the probabilities sum "
     "to more than 1 and an inverse CDF on u never reaches the last tokens",
     "pytorch/executorch#20089 (softmax and sum accumulate in bf16, saturating near 256)", nullptr},
    {M::kPosInfToken0, "pos_inf_token0", "pos_inf_loses",
     "a +inf logit makes the softmax all NaN and the draw falls through to token 0",
     "JustVugg/colibri#369; robertknight/rten#1089 (NaN or +inf logits: token 0)", nullptr},
    {M::kPosInfMasked, "pos_inf_masked", "pos_inf_loses",
     "non-finite logits given probability 0: a +inf logit loses instead of winning",
     "JustVugg/colibri#370 (max over finite logits only, a non-finite logit gets probability 0)",
     nullptr},
    {M::kPosInfClamped, "pos_inf_clamped", "pos_inf_loses",
     "+-inf replaced by the dtype's largest / lowest finite value before the softmax: +inf "
     "ties with large finite logits and -inf tokens come back at a huge temperature",
     "InternLM/lmdeploy#3059 (replace inf with max or min finite value, then softmax)", nullptr},
    {M::kMaskMultiply, "mask_multiply", "zero_times_inf",
     "the mask applied by multiplying (x - min x) * mask: a masked token gets the smallest "
     "logit instead of -inf, 0 * inf and -inf - -inf give NaN",
     "guidance-ai/guidance#1266", nullptr},
    {M::kMaskAdditiveLog, "mask_additive_log", "zero_times_inf",
     "the mask applied as x + log(mask): a masked NaN or +inf logit stays NaN (NaN + -inf, inf "
     "- inf), an error for valid input",
     "allenai/allennlp#893 (vector + mask.log() gives NaN)", nullptr},
    // --- temperature 0 ---
    {M::kT0Divide, "t0_divide", "t0_division",
     "T = 0 divides the logits by 0: inf and NaN, an error for valid input",
     "Lightning-AI/litgpt#401 (temperature=0 leads to inf tensors)", nullptr},
    {M::kT0Epsilon, "t0_epsilon", "t0_division",
     "logits / (T + 1e-9): T = 0 becomes a tiny temperature, so tied maxima are drawn "
     "uniformly instead of by the declared lowest-index tie-break",
     "Lightning-AI/litgpt#401 (logits / (temperature + 1e-9))", nullptr},
    {M::kT0AsT1, "t0_as_t1", "t0_division",
     "temperature 0 treated as temperature 1 (softmax of the raw logits)",
     "guidance-ai/guidance#1266 (temperatures of 0.0 were treated the same as 1.0)", nullptr},
    {M::kGreedyBelow1e5, "greedy_below_1e-5", "t0_division",
     "temperatures below 1e-5 sampled greedily without declaring the threshold",
     "vllm-project/vllm vllm/v1/sample/sampler.py (_SAMPLING_EPS = 1e-5)", nullptr},
    // --- masks ---
    {M::kMaskFloor1e4, "mask_floor_1e4", "finite_mask_floor",
     "masked tokens filled with -1e4: they outrank legitimate logits below -1e4 and come back "
     "at a large temperature",
     "ai-glimpse/toynlp#50 (mask fill -inf or -10000)", nullptr},
    {M::kMaskFloorF16Min, "mask_floor_f16_min", "finite_mask_floor",
     "masked tokens filled with fp16's lowest finite value -65504",
     "pytorch/benchmark#794 (masked_fill -1e9 replaced by -65504 for fp16)", nullptr},
    {M::kMaskNarrow32, "mask_narrow_32", "narrow_mask",
     "the mask covers only whole 32-token words of the vocabulary: the last V mod 32 tokens "
     "stay allowed when masked",
     "Blaizzy/mlx-vlm#1917 and #1805 (bitmask sized from the tokenizer, logits padded); "
     "tenstorrent/vllm#333",
     nullptr},
    // --- empty and NaN rows ---
    {M::kAllMaskedToken0, "all_masked_token0", "empty_or_nan_row",
     "an empty support (every token masked or -inf) silently returns token 0",
     "sgl-project/sglang#33697 (seeded sampling selects token 0 for an empty distribution)",
     nullptr},
    {M::kNanToken0, "nan_token0", "empty_or_nan_row",
     "a NaN logit in the support is not checked: the NaN softmax returns token 0",
     "JustVugg/colibri#369 and #370 (argmax NaN-pinned to index 0)", nullptr},
    {M::kAllNanOutOfVocab, "all_nan_out_of_vocab", "empty_or_nan_row",
     "a row whose every allowed logit is NaN returns the out-of-range id V",
     "vllm-project/vllm#53029 (all-NaN row laundered into an out-of-vocab token id)", nullptr},
    {M::kNanToFloor, "nan_to_floor", "empty_or_nan_row",
     "NaN logits replaced by -1e30 instead of an error: an all-NaN row is sampled uniformly",
     "sgl-project/sglang#33187 (SGLANG_SANITIZE_NAN_LOGITS: nan_to_num(-1e30))", nullptr},
    // --- top-k ---
    {M::kTopKExactLowest, "topk_exact_lowest", "topk_ties",
     "top-k keeps exactly k tokens, ties at the k-th value broken by index, while declaring "
     "keep-all ties",
     "vllm-project/vllm#50979 (the Triton top-k keeps exactly k, truncating ties)", nullptr},
    {M::kTopKAboveVError, "topk_above_v_error", "topk_bounds",
     "top_k larger than the vocabulary raises (torch.topk: k out of range) instead of keeping "
     "every token",
     "opentensor/text-prompting#28 (ensure topk isn't out of bounds)", nullptr},
    // --- top-p ---
    {M::kTopPExclusive, "topp_exclusive", "topp_off_by_one",
     "top-p keeps the largest prefix whose mass is <= p, dropping the token that reaches p",
     "ggml-org/llama.cpp#1953; Biohub/esm#360; fishaudio/fish-speech#1171", nullptr},
    {M::kTopPCumsumLogprobs, "topp_cumsum_logprobs", "topp_off_by_one",
     "the top-p cumulative sum taken over log-probabilities (all <= 0), which never reaches p: "
     "top-p keeps every token",
     "skyzh/tiny-llm#32 (cumsum of sorted_logprobs instead of sorted_probs)", nullptr},
    {M::kTopPBf16Cumsum, "topp_bf16_cumsum", "low_precision_cumsum",
     "the top-p cumulative sum computed in bf16: it saturates on a long vocabulary and the cut "
     "lands in the wrong place",
     "NVIDIA/Megatron-LM#7182 (top-p softmax/cumsum in bf16 saturates on a 131k vocabulary); "
     "tensorflow/tensorflow#115731",
     nullptr},
    {M::kTopPTinyAllMasked, "topp_tiny_all_masked", "topp_off_by_one",
     "Hugging Face's ascending top-p (drop cumsum <= 1 - p) in fp32: when 1 - p rounds to 1 "
     "every token is dropped and the draw is uniform over the vocabulary",
     "ml-explore/mlx-lm#1912", nullptr},
    {M::kTopPUnrenormalized, "topp_unrenormalized", "no_renormalisation",
     "top-p after top-k measured against the mass before top-k (no renormalization between the "
     "steps): it keeps too many tokens",
     "ROCm/aiter#3842 (its kernel applies top-p on the original un-renormalized mass)", nullptr},
    {M::kTopPBeforeTemperature, "topp_before_temperature", "pipeline_order",
     "the top-p cut computed at T = 1, though temperature first is declared",
     "vllm-project/tpu-inference#1385; fishaudio/fish-speech#1150", nullptr},
    {M::kMinPBeforeTemperature, "minp_before_temperature", "pipeline_order",
     "the min-p threshold computed at T = 1, though temperature first is declared",
     "vllm-project/vllm-metal#728 (min_p applied to raw logits); ggml-org/llama.cpp#7498", nullptr},
    {M::kTopPAppliedAtOne, "topp_applied_at_one", "topp_off_by_one",
     "top-p applied even at p = 1: argmax(cumsum > 1) is 0, so the cut-off is the largest "
     "probability and the row becomes greedy",
     "BlinkDL/ChatRWKV#170", nullptr},
    // --- the uniform and the random numbers ---
    {M::kRaceExponentialZero, "race_exponential_zero", "uniform_endpoint",
     "exponential race argmax(p / q) with q = -log(u) from a 24-bit uniform: q = 0 for some "
     "column (V 2^-24 of the draws) and that column wins, masked or not (p / 0 = inf, 0 / 0 = "
     "NaN is argmax's pick)",
     "pytorch/xla#2562 (exponential_ samples 0); pytorch/pytorch#48841 (multinomial selects "
     "zero-weight elements)",
     nullptr},
    {M::kGumbelUOne, "gumbel_u_one", "uniform_endpoint",
     "Gumbel noise -log(-log(u)) from a 32-bit hash: u = 1 gives +inf and that column wins, "
     "masked or not (V 2^-32 of the draws)",
     "sgl-project/sglang#33423",
     "wrong on about V 2^-32 of the draws (6e-5 at V = 262144), and seen only when the "
     "column it picks is outside the kept set of a tested row: a handful of such events in a "
     "standard run"},
    {M::kUniformOnePastEnd, "uniform_one_past_end", "uniform_endpoint",
     "a float uniform (uint32 * 2^-32 in fp32) that rounds to 1.0: the inverse CDF runs past "
     "the end and returns the id V",
     "pytorch/pytorch#2740; triton-lang/triton#601 (tl.rand could generate 1.0)",
     "wrong on 2^-25 of the draws: about 2 of a standard run's 59 million planned draws"},
    {M::kCdfF32, "cdf_f32", "low_precision_tail",
     "the inverse CDF's cumulative sums in fp32: after a dominant token, tiny probabilities add "
     "nothing and the tail behind it is never drawn",
     "pytorch/pytorch#28390; torch/torch7#418 (float multinomial never samples rare events)",
     nullptr},
    {M::kRngOffsetFrozen, "rng_offset_frozen", "rng_offset",
     "the draw index does not advance between calls: every call restarts the row's stream",
     "NVIDIA/TensorRT-Edge-LLM#212 (philoxOffset left at 0 at every decode step)", nullptr},
    {M::kRngByBatchPosition, "rng_by_batch_position", "batch_dependence",
     "the random stream keyed by the row's position in the batch instead of its row id",
     "NVIDIA/TensorRT-Edge-LLM#212 (curand_init(seed, batchIdx, offset))", nullptr},
    {M::kRngUnseededInBatch, "rng_unseeded_in_batch", "same_seed_different_tokens",
     "in a batch of more than one row the seed is ignored and a global generator draws",
     "vllm-project/vllm#51226 (seed ignored on CPU when another request in the batch has none)",
     nullptr},
    {M::kRngGlobalState, "rng_global_state", "same_seed_different_tokens",
     "draws from a generator seeded once per instance: the same seed gives other tokens",
     "vllm-project/vllm#21310 (the same seed does not reproduce the output)", nullptr},
    // --- batches ---
    {M::kBatchFirstRowParams, "batch_first_row_params", "batchmate_params",
     "every row of a batch sampled with the first row's temperature, top-k, top-p and min-p",
     "Blaizzy/mlx-vlm#1647 (one shared sampler built from the first request); "
     "jjang-ai/vmlx#234",
     nullptr},
    {M::kBatchSlotParams, "batch_slot_params", "slot_params",
     "rows grouped greedy first, then each row's parameters read by its slot in that order "
     "instead of by its input row",
     "flashinfer-ai/flashinfer#5324 (per-request thresholds indexed by output slot vs row)",
     nullptr},
    {M::kBatchDropsTopP, "batch_drops_top_p", "batchmate_params",
     "the batched path (more than one row) ignores top_p",
     "paiml/aprender#2080 (batched decode dropped per-request top_p)", nullptr},
    {M::kBatchThresholdTopKExact, "batch_threshold_topk_exact", "dispatch_threshold",
     "batches of 8 rows or more take a top-k path that keeps exactly k (ties by index)",
     "vllm-project/vllm#50979 (batch >= 8: Triton, exact k; below: PyTorch, keep ties)", nullptr},
    {M::kGreedyMateEpsilon, "greedy_mate_epsilon", "batchmate_t0",
     "a greedy row in a batch with a sampled row is drawn at T = 1e-6: tied maxima drawn "
     "uniformly instead of by the lowest-index tie-break",
     "FlashML-org/FreeToken#471 (mixed batches approximate greedy with temperature 1e-6)", nullptr},
    // --- issue 33's plan gaps: the random stream, IN-3's bytes, truncation's extremes ---
    {M::kRngKeySeedPlusRow, "rng_key_seed_plus_row", "rng_stream_key",
     "the stream keyed by seed + row id (one 64-bit key): seed s + 1 at row id r draws the "
     "stream of seed s at row id r + 1",
     "curand_init(seed + request_id, 0, offset) style keying (issue 33's blind set: streams of "
     "two (seed, row id) pairs coincide)",
     nullptr},
    {M::kRngCounterRowPlusDraw, "rng_counter_row_plus_draw", "rng_stream_overlap",
     "the Philox counter is row id + draw index: row id r + 1's stream is row id r's shifted by "
     "one draw",
     "curand_init(seed, 0, row_id + offset) style offsets (issue 33's blind set: neighbouring "
     "rows' streams overlap, lagged by one draw)",
     nullptr},
    {M::kRngCounter32, "rng_counter_32bit", "rng_counter_bits",
     "the draw index kept in 32 bits: draw 2^32 repeats draw 0",
     "issue 33's blind set (a uint32 offset in the kernel's Philox counter)", nullptr},
    {M::kMaskByteIsOne, "mask_byte_is_one", "mask_encoding",
     "the mask read as `byte == 1` instead of SPEC IN-3's `nonzero = allowed`: tokens allowed "
     "by any other byte are masked",
     "issue 33's blind set (a bool mask compared with 1 after a byte cast)", nullptr},
    {M::kTopKSignedZero, "topk_signed_zero", "topk_ties",
     "top-k compares logits by their sign-aware total order (a radix sort's key): -0 ranks "
     "below +0, so a -0 tied with a +0 k-th value is dropped under keep-all ties",
     "issue 33's blind set (radix-select top-k on the float's bit pattern)", nullptr},
    {M::kTopKCapped1024, "topk_capped_1024", "truncation_extremes",
     "top_k silently capped at 1024 (a kernel's largest tile)",
     "issue 33's blind set; FlashInfer/vLLM top-k kernels with a maximum k", nullptr},
    {M::kMinPSkippedBelowEps, "minp_skipped_below_1e-5", "truncation_extremes",
     "min-p skipped when min_p < 1e-5, as if off",
     "vllm-project/vllm vllm/v1/sample (min-p applied only above _SAMPLING_EPS = 1e-5)", nullptr},
    {M::kParamsBf16, "params_bf16", "param_rounding",
     "top_p and min_p rounded to bf16 (a parameter tensor in the logits' dtype): top_p 0.8 "
     "cuts at 0.80078125, min_p 0.7 at 0.69921875",
     "issue 33's blind set (sampling parameters cast to the model dtype)", nullptr},
};

const Entry* Find(std::string_view name) {
  for (const Entry& e : kCatalogue) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

std::string_view MutantName() {
  const char* m = std::getenv("SAMPCERT_MUTANT");
  return m != nullptr ? m : "none";
}

constexpr double kInf = std::numeric_limits<double>::infinity();

double RoundBf16(double x) { return static_cast<float>(Eigen::bfloat16(static_cast<float>(x))); }
double RoundF16(double x) { return static_cast<float>(Eigen::half(static_cast<float>(x))); }

// The largest finite value of a dtype.
double DTypeMax(DType d) {
  switch (d) {
    case DType::kF16: return 65504.0;
    case DType::kBF16: return 3.3895313892515355e38;
    case DType::kF32: break;
  }
  return FLT_MAX;
}

Error Numerical(std::size_t r, const char* what) {
  return Error{ErrorCode::kNumericalFailure,
               "row " + std::to_string(r) + ": probability tensor contains " + what,
               static_cast<int64_t>(r)};
}

class MutantSampler {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_MIN_P | SAMPCERT_CAP_TEMPERATURE_ZERO |
      SAMPCERT_CAP_BATCH;

  static Error CheckAvailable() {
    if (Find(MutantName()) == nullptr) {
      return Error{ErrorCode::kInvalidArgument,
                   "unknown SAMPCERT_MUTANT '" + std::string(MutantName()) + "'"};
    }
    return Error{};
  }
  static sampcert::Policies DeclaredPolicies() {
    sampcert::Policies p;
    p.greedy_tie_break = sampcert::GreedyTieBreak::kLowestIndex;
    p.tie_rule = sampcert::TieRule::kKeepAll;
    p.order = sampcert::PipelineOrder::kTemperatureFirst;
    p.nan_policy = sampcert::NanPolicy::kError;
    p.determinism = sampcert::Determinism::kSameSeed;
    p.accuracy = sampcert::AccuracyClass::kF32;
    if (MutantName() == "greedy_threshold_declared") p.greedy_threshold = 1e-5f;
    return p;
  }
  static void Describe(sampcert_sampler_info* info) {
    static const std::string name = "mutant_" + std::string(MutantName());
    info->name = name.c_str();
    info->version = "1";
    sampcert::adapters::PoliciesToInfo(DeclaredPolicies(), info);
    info->thread_safe = 0;  // scratch and the generators of the RNG mutants are per instance
  }

  Error Probabilities(const sampcert_batch&, double*) {
    return Error{ErrorCode::kUnsupported, "no probabilities output"};
  }
  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out);

 private:
  bool Is(M m) const { return mutant_ == m; }
  // The row as this sampler reads it: the batch mutants read another row's parameters.
  RowView Params(const sampcert_batch& batch, std::size_t r) const;
  // Fills w_ (the weights the draws follow, 0 = never drawn) or forced_ (every draw is that
  // id; kUniformVocab: uniform over the vocabulary) for row r; an error for the row.
  Error Prepare(const sampcert_batch& batch, std::size_t r);
  Error Validate(const RowView& row, std::size_t r, bool* nan_to_floor);
  // x_ (the logits as this sampler sees them: -inf outside the support) and their maximum.
  Error Logits(const RowView& row, std::size_t r, bool nan_to_floor, double* max);
  double Temperature(const sampcert_batch& batch, const RowView& row) const;
  Error Weights(const RowView& row, std::size_t r, double t, double max);
  void Truncate(const sampcert_batch& batch, const RowView& row, double max);
  void TopK(int64_t k, bool exact);
  std::vector<std::size_t> ByLogitDescending() const;
  // Keeps the smallest prefix, in decreasing logit, whose weight reaches p of `mass` (then the
  // ties with the last kept token); `cut` holds the weights the cut is measured on.
  void TopP(const std::vector<double>& cut, double p, double mass);
  int64_t Draw(const sampcert_batch& batch, std::size_t r, uint64_t seed, uint64_t index);
  double Uniform(const sampcert_batch& batch, std::size_t r, uint64_t seed, uint64_t index);

  static constexpr int64_t kUniformVocab = -2;
  M mutant_ = Find(MutantName())->id;
  std::mt19937_64 global_rng_{20260301};  // the RNG-state mutants' generator, one per instance
  std::vector<double> x_, w_, cum_;
  std::vector<float> cum_f32_;
  int64_t forced_ = -1;
  std::size_t vocab_ = 0;
};

RowView MutantSampler::Params(const sampcert_batch& batch, std::size_t r) const {
  RowView row = sampcert::adapters::ToRowView(batch, r);
  std::size_t from = r;
  if (Is(M::kBatchFirstRowParams)) from = 0;
  if (Is(M::kBatchSlotParams)) {  // greedy rows first (stable), parameters read by slot
    std::vector<std::size_t> order(batch.num_rows);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return (batch.rows[a].temperature == 0.0f) > (batch.rows[b].temperature == 0.0f);
    });
    from = order[r];
  }
  const sampcert_row& p = batch.rows[from];
  row.temperature = p.temperature;
  row.top_k = p.top_k;
  row.top_p = p.top_p;
  row.min_p = p.min_p;
  if (Is(M::kBatchDropsTopP) && batch.num_rows > 1) row.top_p = 1.0f;
  if (Is(M::kParamsBf16)) {
    row.top_p = static_cast<float>(RoundBf16(row.top_p));
    row.min_p = static_cast<float>(RoundBf16(row.min_p));
  }
  if (Is(M::kTopKCapped1024)) row.top_k = std::min<int64_t>(row.top_k, 1024);
  if (Is(M::kMinPSkippedBelowEps) && row.min_p < 1e-5f) row.min_p = 0.0f;
  return row;
}

Error MutantSampler::Validate(const RowView& row, std::size_t r, bool* nan_to_floor) {
  Error e = sampcert::ValidateRow(row, DeclaredPolicies(), r);
  if (e.code == ErrorCode::kEmptySupport && Is(M::kAllMaskedToken0)) {
    forced_ = 0;
    return Error{};
  }
  if (e.code == ErrorCode::kNanLogit) {
    bool all_nan = true;
    for (std::size_t i = 0; i < row.vocab; ++i) {
      const bool allowed = row.mask == nullptr || row.mask[i] != 0;
      if (allowed && !std::isnan(sampcert::DecodeLogit(row.dtype, row.logits, i))) all_nan = false;
    }
    if (Is(M::kNanToken0)) forced_ = 0;
    if (Is(M::kAllNanOutOfVocab) && all_nan) forced_ = static_cast<int64_t>(row.vocab);
    if (Is(M::kNanToFloor)) *nan_to_floor = true;
    if (forced_ >= 0 || *nan_to_floor) return Error{};
  }
  if (e.code == ErrorCode::kOk && Is(M::kTopKAboveVError) &&
      row.top_k > static_cast<int64_t>(row.vocab)) {
    return Error{ErrorCode::kInvalidArgument,
                 "row " + std::to_string(r) + ": selected index k out of range",
                 static_cast<int64_t>(r)};
  }
  return e;
}

Error MutantSampler::Logits(const RowView& row, std::size_t r, bool nan_to_floor, double* max) {
  const std::size_t v = row.vocab;
  x_.resize(v);
  for (std::size_t i = 0; i < v; ++i) {
    x_[i] = static_cast<double>(sampcert::DecodeLogit(row.dtype, row.logits, i));
    if (nan_to_floor && std::isnan(x_[i])) x_[i] = -1e30;
  }
  if (Is(M::kMaskMultiply) && row.mask != nullptr) {  // (x - min x) * mask
    const double lo = *std::min_element(x_.begin(), x_.end());
    for (std::size_t i = 0; i < v; ++i) {
      x_[i] = (x_[i] - lo) * (row.mask[i] != 0 ? 1.0 : 0.0);
      if (std::isnan(x_[i])) return Numerical(r, "nan");
    }
  } else if (row.mask != nullptr) {
    // The mask words cover whole 32-token words only, for the narrow-mask mutant.
    const std::size_t covered = Is(M::kMaskNarrow32) ? v / 32 * 32 : v;
    for (std::size_t i = 0; i < covered; ++i) {
      if (Is(M::kMaskByteIsOne) ? row.mask[i] == 1 : row.mask[i] != 0) continue;
      if (Is(M::kMaskAdditiveLog)) {
        x_[i] += -kInf;  // NaN and +inf stay NaN
        if (std::isnan(x_[i])) return Numerical(r, "nan");
      } else if (Is(M::kMaskFloor1e4)) {
        x_[i] = -1e4;
      } else if (Is(M::kMaskFloorF16Min)) {
        x_[i] = -65504.0;
      } else {
        x_[i] = -kInf;
      }
    }
  }
  for (double& x : x_) {
    if (Is(M::kPosInfMasked) && x == kInf) x = -kInf;
    if (Is(M::kPosInfClamped) && std::isinf(x)) x = std::copysign(DTypeMax(row.dtype), x);
  }
  *max = *std::max_element(x_.begin(), x_.end());
  if (*max == -kInf) {
    return Error{ErrorCode::kEmptySupport, "row " + std::to_string(r) + ": empty support",
                 static_cast<int64_t>(r)};
  }
  return Error{};
}

double MutantSampler::Temperature(const sampcert_batch& batch, const RowView& row) const {
  double t = row.temperature;
  if (Is(M::kT0AsT1) && t == 0) t = 1;
  if (Is(M::kT0Epsilon)) t += 1e-9;
  if ((Is(M::kGreedyBelow1e5) || Is(M::kGreedyThresholdDeclared)) && t < 1e-5) t = 0;
  if (Is(M::kGreedyMateEpsilon) && t == 0) {
    for (std::size_t i = 0; i < batch.num_rows; ++i) {
      if (batch.rows[i].temperature > 0.0f) t = 1e-6;
    }
  }
  return t;
}

Error MutantSampler::Weights(const RowView& row, std::size_t r, double t, double max) {
  const std::size_t v = row.vocab;
  w_.assign(v, 0.0);
  if (max == kInf) {
    if (Is(M::kPosInfToken0) && t > 0) {
      forced_ = 0;
      return Error{};
    }
    for (std::size_t i = 0; i < v; ++i) w_[i] = x_[i] == kInf ? 1.0 : 0.0;
    if (t == 0) std::fill(std::find(w_.begin(), w_.end(), 1.0) + 1, w_.end(), 0.0);
    return Error{};
  }
  if (t == 0 && Is(M::kT0Divide)) return Numerical(r, "inf or nan (logits / 0)");
  if (t == 0) {  // greedy: the lowest-index maximum
    w_[static_cast<std::size_t>(std::find(x_.begin(), x_.end(), max) - x_.begin())] = 1.0;
    return Error{};
  }
  // The scaling mutants divide before subtracting the maximum, rounding to their dtype.
  if (Is(M::kScaleInInputDtype) || Is(M::kScaleBeforeMax) || Is(M::kScaledLogitsBf16)) {
    std::vector<double> y(v);
    for (std::size_t i = 0; i < v; ++i) {
      const float q = static_cast<float>(x_[i]) / static_cast<float>(t);
      y[i] = q;
      if (Is(M::kScaledLogitsBf16) || (Is(M::kScaleInInputDtype) && row.dtype == DType::kBF16)) {
        y[i] = RoundBf16(q);
      } else if (Is(M::kScaleInInputDtype) && row.dtype == DType::kF16) {
        y[i] = RoundF16(q);
      }
    }
    const double m = *std::max_element(y.begin(), y.end());
    for (std::size_t i = 0; i < v; ++i) {
      w_[i] = std::exp(y[i] - m);
      if (std::isnan(w_[i])) return Numerical(r, "nan (inf - inf after scaling)");
    }
    return Error{};
  }
  for (std::size_t i = 0; i < v; ++i) w_[i] = std::exp((x_[i] - max) / t);
  return Error{};
}

std::vector<std::size_t> MutantSampler::ByLogitDescending() const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < w_.size(); ++i) {
    if (w_[i] > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return x_[a] > x_[b]; });
  return order;
}

void MutantSampler::TopK(int64_t k, bool exact) {
  const std::vector<std::size_t> order = ByLogitDescending();
  if (k <= 0 || static_cast<std::size_t>(k) >= order.size()) return;
  const double kth = x_[order[static_cast<std::size_t>(k) - 1]];
  // The signed-zero mutant's order: -0 below +0 (the float's sign-aware total order).
  auto below = [&](double a) {
    if (Is(M::kTopKSignedZero) && a == 0 && kth == 0) return std::signbit(a) && !std::signbit(kth);
    return a < kth;
  };
  for (std::size_t j = static_cast<std::size_t>(k); j < order.size(); ++j) {
    if (exact || below(x_[order[j]])) w_[order[j]] = 0.0;
  }
}

void MutantSampler::TopP(const std::vector<double>& cut, double p, double mass) {
  const std::vector<std::size_t> order = ByLogitDescending();
  if (order.empty()) return;
  const double target = p * mass;
  double before = 0;
  std::size_t j = 0;
  if (Is(M::kTopPBf16Cumsum)) {  // the normalized cumulative sum in bf16
    double z = 0;
    for (const std::size_t i : order) z += cut[i];
    while (j < order.size() && before < p)
      before = RoundBf16(before + RoundBf16(cut[order[j++]] / z));
  } else if (Is(M::kTopPExclusive)) {
    while (j < order.size() && (j == 0 || before + cut[order[j]] <= target))
      before += cut[order[j++]];
  } else if (Is(M::kTopPCumsumLogprobs)) {
    while (j < order.size() && before < p) before += std::log(cut[order[j++]] / mass);
  } else {
    while (j < order.size() && before < target) before += cut[order[j++]];
  }
  const double last = x_[order[j - 1]];
  while (j < order.size() && x_[order[j]] == last) ++j;
  for (; j < order.size(); ++j) w_[order[j]] = 0.0;
}

void MutantSampler::Truncate(const sampcert_batch& batch, const RowView& row, double max) {
  auto total = [&](const std::vector<double>& w) {
    return std::accumulate(w.begin(), w.end(), 0.0);
  };
  const double before_top_k = total(w_);
  const bool exact_k =
      Is(M::kTopKExactLowest) || (Is(M::kBatchThresholdTopKExact) && batch.num_rows >= 8);
  TopK(row.top_k, exact_k);
  // The weights at T = 1 of the kept tokens, for the mutants that cut before the temperature.
  auto at_t1 = [&] {
    std::vector<double> w1(w_.size(), 0.0);
    for (std::size_t i = 0; i < w_.size(); ++i) w1[i] = w_[i] > 0 ? std::exp(x_[i] - max) : 0.0;
    return w1;
  };
  if (row.top_p < 1.0f) {
    if (Is(M::kTopPTinyAllMasked) && 1.0f - row.top_p == 1.0f) {
      // Ascending fp32 cumsum, drop cumsum <= 1 - p = 1: all dropped unless it reaches 1.
      const std::vector<std::size_t> desc = ByLogitDescending();
      const double z = total(w_);
      float cum = 0;
      for (auto it = desc.rbegin(); it != desc.rend(); ++it) {
        cum += static_cast<float>(w_[*it] / z);
      }
      if (cum < 1.0f) forced_ = kUniformVocab;
    }
    if (Is(M::kTopPBeforeTemperature)) {
      const std::vector<double> w1 = at_t1();
      TopP(w1, row.top_p, total(w1));
    } else {
      TopP(w_, row.top_p, Is(M::kTopPUnrenormalized) ? before_top_k : total(w_));
    }
  } else if (Is(M::kTopPAppliedAtOne)) {
    for (double& w : w_) w = w == 1.0 ? 1.0 : 0.0;  // keeps the maximum and its ties
  }
  if (row.min_p > 0.0f) {
    const std::vector<double> cut = Is(M::kMinPBeforeTemperature) ? at_t1() : w_;
    for (std::size_t i = 0; i < w_.size(); ++i) {
      if (cut[i] < static_cast<double>(row.min_p)) w_[i] = 0.0;
    }
  }
}

Error MutantSampler::Prepare(const sampcert_batch& batch, std::size_t r) {
  forced_ = -1;
  const RowView row = Params(batch, r);
  vocab_ = row.vocab;
  bool nan_to_floor = false;
  if (Error e = Validate(row, r, &nan_to_floor); e.code != ErrorCode::kOk || forced_ >= 0) {
    return e;
  }
  double max = 0;
  if (Error e = Logits(row, r, nan_to_floor, &max); e.code != ErrorCode::kOk) return e;
  const double t = Temperature(batch, row);
  if (Error e = Weights(row, r, t, max); e.code != ErrorCode::kOk || forced_ >= 0) return e;
  if (t > 0 && max < kInf) Truncate(batch, row, max);
  if (forced_ != -1) return Error{};
  double z = std::accumulate(w_.begin(), w_.end(), 0.0);
  if (Is(M::kProbsF16)) {
    for (double& w : w_) w = RoundF16(w / z);
  }
  if (Is(M::kSoftmaxSumBf16)) {  // p = w / (a bf16 running sum), drawn against u, not u * sum
    double zb = 0;
    for (const double w : w_) zb = RoundBf16(zb + w);
    for (double& w : w_) w /= zb;
  }
  cum_.resize(w_.size());
  std::partial_sum(w_.begin(), w_.end(), cum_.begin());
  if (Is(M::kCdfF32)) {
    cum_f32_.resize(w_.size());
    float c = 0;
    for (std::size_t i = 0; i < w_.size(); ++i) cum_f32_[i] = c += static_cast<float>(w_[i]);
  }
  return Error{};
}

double MutantSampler::Uniform(const sampcert_batch& batch, std::size_t r, uint64_t seed,
                              uint64_t index) {
  const bool global = Is(M::kRngGlobalState) || (Is(M::kRngUnseededInBatch) && batch.num_rows > 1);
  if (global) return (static_cast<double>(global_rng_() >> 11) + 0.5) * 0x1p-53;
  const uint64_t row_id = Is(M::kRngByBatchPosition) ? r : batch.rows[r].row_id;
  if (Is(M::kRngKeySeedPlusRow)) return sampcert::CanonicalUniform(seed + row_id, 0, index);
  if (Is(M::kRngCounterRowPlusDraw)) return sampcert::CanonicalUniform(seed, 0, row_id + index);
  if (Is(M::kRngCounter32)) index &= 0xffffffffULL;
  return sampcert::CanonicalUniform(seed, row_id, index);
}

int64_t MutantSampler::Draw(const sampcert_batch& batch, std::size_t r, uint64_t seed,
                            uint64_t index) {
  const double u = Uniform(batch, r, seed, index);
  const auto v = static_cast<double>(vocab_);
  if (forced_ == kUniformVocab) return static_cast<int64_t>(u * v);
  if (forced_ >= 0) return forced_;
  if (Is(M::kRaceExponentialZero) || Is(M::kGumbelUOne)) {
    // Some column's noise hits the endpoint with probability V 2^-bits per draw; it wins.
    const uint64_t row_id = batch.rows[r].row_id;
    const double hit = sampcert::CanonicalUniform(seed ^ 0x9e3779b97f4a7c15ULL, row_id, index);
    const double rate = v * (Is(M::kGumbelUOne) ? 0x1p-32 : 0x1p-24);
    if (hit < rate) {
      return static_cast<int64_t>(
          sampcert::CanonicalUniform(seed ^ 0xbf58476d1ce4e5b9ULL, row_id, index) * v);
    }
  }
  if (Is(M::kCdfF32)) {
    const float target = static_cast<float>(u) * cum_f32_.back();
    const auto it = std::upper_bound(cum_f32_.begin(), cum_f32_.end(), target);
    if (it != cum_f32_.end()) return it - cum_f32_.begin();
  } else {
    double target = u * cum_.back();
    if (Is(M::kSoftmaxSumBf16)) target = u;
    if (Is(M::kUniformOnePastEnd)) {
      const auto bits =
          static_cast<uint32_t>(sampcert::CanonicalBits(seed, batch.rows[r].row_id, index) >> 20);
      target = static_cast<double>(static_cast<float>(bits) * 0x1p-32f) * cum_.back();
      const auto it = std::upper_bound(cum_.begin(), cum_.end(), target);
      return it - cum_.begin();  // V when the float uniform rounded to 1
    }
    const auto it = std::upper_bound(cum_.begin(), cum_.end(), target);
    if (it != cum_.end()) return it - cum_.begin();
  }
  // Rounding left the target at or past the end: the last token of positive weight.
  std::size_t last = w_.size() - 1;
  while (last > 0 && !(w_[last] > 0)) --last;
  return static_cast<int64_t>(last);
}

Error MutantSampler::Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
                            uint64_t draws_per_row, int64_t* out) {
  for (std::size_t r = 0; r < batch.num_rows; ++r) {
    if (Error e = Prepare(batch, r); e.code != ErrorCode::kOk) return e;
    for (uint64_t j = 0; j < draws_per_row; ++j) {
      const uint64_t index = Is(M::kRngOffsetFrozen) ? j : first_draw + j;
      out[r * draws_per_row + j] = Draw(batch, r, seed, index);
    }
  }
  return Error{};
}

}  // namespace

extern "C" SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major,
                                                            uint32_t /*host_minor*/,
                                                            const sampcert_sampler_api** out) {
  return sampcert::adapters::HandOutTable(
      host_major, sampcert::adapters::BuiltinApi<MutantSampler>::Table(), out);
}

// The catalogue as JSON, for tools/mutation_score.py: [{"name", "class", "mechanism",
// "citation", "rare"}...], controls first. The string is static; the caller must not free it.
extern "C" SAMPCERT_EXPORT const char* sampcert_mutant_catalogue() {
  static const std::string json = [] {
    nlohmann::json all = nlohmann::json::array();
    for (const Entry& e : kCatalogue) {
      all.push_back({{"name", e.name},
                     {"class", e.failure_class},
                     {"mechanism", e.mechanism},
                     {"citation", e.citation},
                     {"rare", e.rare != nullptr ? nlohmann::json(e.rare) : nlohmann::json()}});
    }
    return all.dump();
  }();
  return json.c_str();
}
