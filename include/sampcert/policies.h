// The policy vocabulary of SPEC.md section 4: where real samplers legitimately differ, a
// sampler declares which way it goes and is checked against that declaration.
#ifndef SAMPCERT_POLICIES_H_
#define SAMPCERT_POLICIES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace sampcert {

// How many values a policy enum has: they are 0 .. kValueCount - 1. ValidatePolicies refuses
// any other, and adapters/declarations.cc (the names) fails to build without one row per value.
template <typename E>
inline constexpr int32_t kValueCount = 0;

// POL-1: which of the tokens tied at the maximum the greedy limit (T = 0) draws.
// kAny (ABI MINOR 1): some tied maximum, with no promise which (llama.cpp's greedy after a
// partial sort): every draw must be a winner, and nothing is tested about which.
enum class GreedyTieBreak : int32_t { kUniform = 0, kLowestIndex = 1, kAny = 2 };
template <>
inline constexpr int32_t kValueCount<GreedyTieBreak> = 3;

// POL-2: tokens tied at a truncation cut (the k-th value of top-k, the last value of the
// top-p prefix). Exact ties only; near-ties are the rounding band's business (BAND-1).
enum class TieRule : int32_t {
  kKeepAll = 0,           // every token tied at the cut is kept
  kExactLowestIndex = 1,  // exactly as many as the cut needs, lowest indices first
  kExactAny = 2,          // exactly as many as the cut needs, any of the tied ones
};
template <>
inline constexpr int32_t kValueCount<TieRule> = 3;

// POL-3: where temperature sits relative to truncation.
enum class PipelineOrder : int32_t {
  kTemperatureFirst = 0,  // HF / vLLM: scale, then truncate on the tempered distribution
  kTruncationFirst = 1,   // llama.cpp default chain: truncate at T = 1, temperature last
};
template <>
inline constexpr int32_t kValueCount<PipelineOrder> = 2;

enum class TruncationStep : int32_t { kTopK = 0, kTopP = 1, kMinP = 2 };
template <>
inline constexpr int32_t kValueCount<TruncationStep> = 3;

// POL-4: what a NaN logit in an allowed position means.
enum class NanPolicy : int32_t { kError = 0, kMasked = 1 };
template <>
inline constexpr int32_t kValueCount<NanPolicy> = 2;

// POL-6: what reproducibility the sampler promises.
enum class Determinism : int32_t {
  kNone = 0,
  kSameSeed = 1,     // same seed and row id, same tokens
  kCrossDevice = 2,  // and the same tokens on every device / build
};
template <>
inline constexpr int32_t kValueCount<Determinism> = 3;

// ACC-1: what the sampler's probabilities are accurate to. Internal accumulation is fp32 in
// every class; the half classes round their probabilities to the half type.
enum class AccuracyClass : int32_t { kF32 = 0, kBF16 = 1, kF16 = 2 };
template <>
inline constexpr int32_t kValueCount<AccuracyClass> = 3;

// VER-SEM-1 / VER-DEV-1 (ABI MINOR 3): a verifier's acceptance scheme. kExact is
// speculative sampling's rule; the others are lossy, declared deviations with their parameters.
enum class VerifyScheme : int32_t { kExact = 0, kTypical = 1, kLenient = 2 };
template <>
inline constexpr int32_t kValueCount<VerifyScheme> = 3;

// PEN-POL-1 (ABI MINOR 4): which history a penalty rule sees (SPEC section 16).
// kNone: the sampler has no such rule; a row asking for it is NotSupported (never sent).
enum class PenaltyHistory : int32_t { kPromptAndOutput = 0, kOutputOnly = 1, kNone = 2 };
template <>
inline constexpr int32_t kValueCount<PenaltyHistory> = 3;

struct Policies {
  GreedyTieBreak greedy_tie_break = GreedyTieBreak::kUniform;
  TieRule tie_rule = TieRule::kKeepAll;
  PipelineOrder order = PipelineOrder::kTemperatureFirst;
  std::array<TruncationStep, 3> truncation_order = {TruncationStep::kTopK, TruncationStep::kTopP,
                                                    TruncationStep::kMinP};
  NanPolicy nan_policy = NanPolicy::kError;
  // POL-5: temperatures strictly below this (and above 0) are treated as 0. 0 = no threshold.
  // A declared deviation: the report shows it as a Warning with its size (vLLM uses 1e-5).
  float greedy_threshold = 0.0f;
  Determinism determinism = Determinism::kSameSeed;
  AccuracyClass accuracy = AccuracyClass::kF32;
  // POL-2 per truncation step (ABI MINOR 1): a sampler whose top-k and top-p cuts treat ties
  // differently (Hugging Face keeps ties at the k-th value but breaks them in sort order at the
  // top-p cut). Unset: the step follows tie_rule.
  std::optional<TieRule> top_k_tie_rule;
  std::optional<TieRule> top_p_tie_rule;
  TieRule TopKTies() const { return top_k_tie_rule.value_or(tie_rule); }
  TieRule TopPTies() const { return top_p_tie_rule.value_or(tie_rule); }
  // POL-7 (ABI MINOR 1): the sampler draws from a stateful stream per (seed, row id) and can
  // only be asked for draws in order; the host replays streams to serve any other request.
  bool sequential_draws = false;
  // STAT-6 (ABI MINOR 1): the declared cost of one draw per vocabulary token, in ns; 0 = not
  // declared. The plan caps the draws of a slow sampler from it, deterministically.
  double draw_cost_ns_per_token = 0;
  // VER-DEV-1 (ABI MINOR 3): the verifier's acceptance scheme and its parameters (typical:
  // accept d iff p(d) > min(threshold, alpha exp(-H(p))); lenient: accept with probability
  // min(1, p(d) / (threshold q(d)))).
  VerifyScheme verify_scheme = VerifyScheme::kExact;
  float verify_threshold = 0.0f;
  float verify_alpha = 0.0f;
  // PEN-POL-1 (ABI MINOR 4): the history the repetition rule sees (vLLM, HF, llama.cpp: prompt
  // and output) and the one presence and frequency see (vLLM, OpenAI: output only).
  PenaltyHistory repetition_history = PenaltyHistory::kPromptAndOutput;
  PenaltyHistory additive_history = PenaltyHistory::kOutputOnly;
};

// Returns an empty string when the policies are well formed, else what is wrong with them
// (for instance a truncation order that is not a permutation of the three steps).
std::string ValidatePolicies(const Policies& policies);

}  // namespace sampcert

#endif  // SAMPCERT_POLICIES_H_
