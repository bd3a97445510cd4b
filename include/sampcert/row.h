// One row of sampler input, as SPEC.md section 2 defines it. Logits travel as bit patterns so
// that NaN payloads, signed zeros, subnormals and infinities reach the sampler untouched.
#ifndef SAMPCERT_ROW_H_
#define SAMPCERT_ROW_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sampcert/packed_mask.h"

namespace sampcert {

enum class DType : int32_t {
  kF32 = 0,   // IEEE binary32, passed as uint32_t bit patterns
  kF16 = 1,   // IEEE binary16, passed as uint16_t bit patterns
  kBF16 = 2,  // bfloat16 (upper half of binary32), passed as uint16_t bit patterns
};

std::string_view DTypeName(DType dtype);
std::size_t DTypeBytes(DType dtype);

// The row's parameters: every scalar field of a row, in one struct. adapters/row_fields.h lists
// each member once (type, range, default, ABI member, wire name, row-file key, command-line flag,
// report label) and every encoding of a row reads that table; a new member is added there.
struct RowParams {
  float temperature = 1.0f;         // >= 0; 0 means the greedy limit (SPEC SEM-3)
  int64_t top_k = 0;                // 0 = off
  float top_p = 1.0f;               // 1 = off
  float min_p = 0.0f;               // 0 = off
  uint64_t row_id = 0;              // keys the row's random stream (SPEC DRAW-1)
  float repetition_penalty = 1.0f;  // PEN-2: finite, >= 0; 1 (or 0) = off
  float presence_penalty = 0.0f;    // PEN-3 beta: finite; 0 = off
  float frequency_penalty = 0.0f;   // PEN-3 alpha: finite; 0 = off
  uint64_t seed = 0;                // the row's own seed, read when seed_mode is kSeedOwn (SEED-1)
  int64_t seed_mode = 0;            // what keys the draws: kSeedCall, kSeedOwn or kSeedUnseeded
  int64_t min_tokens = 0;           // MINLEN-1: eos_token_id banned while fewer outputs; 0 = off
  int64_t eos_token_id = 0;         // MINLEN-1: the id a minimum length bans, in [0, vocab)
  int64_t mask_layout = 0;          // how the mask reaches the sampler: kMaskBytes or kMaskPacked

  // True when the minimum length bans eos_token_id on a row with `outputs` tokens so far.
  bool EosBanned(std::size_t outputs) const {
    return min_tokens > 0 && static_cast<uint64_t>(outputs) < static_cast<uint64_t>(min_tokens);
  }

  // True when some penalty is on (PEN-4: otherwise the history changes nothing).
  bool HasPenalties() const {
    return (repetition_penalty != 1.0f && repetition_penalty != 0.0f) || presence_penalty != 0.0f ||
           frequency_penalty != 0.0f;
  }
};

// RowParams::seed_mode (SPEC section 17; SAMPCERT_SEED_* of the ABI).
inline constexpr int64_t kSeedCall = 0;      // the call's seed (DRAW-1), as before ABI MINOR 5
inline constexpr int64_t kSeedOwn = 1;       // the row's own seed (SEED-1, SEED-2)
inline constexpr int64_t kSeedUnseeded = 2;  // the engine's own generator (SEED-3)

// RowParams::mask_layout (SPEC section 19; SAMPCERT_MASK_* of the ABI). The suite's rows always
// hold the mask as bytes (RowView::mask); kMaskPacked asks the host to give it to the sampler as
// packed words (sampcert/packed_mask.h), and a sampler's view of such a row has packed_mask set
// and mask null.
inline constexpr int64_t kMaskBytes = 0;
inline constexpr int64_t kMaskPacked = 1;

// The seed that keys a row's draws under a call's seed: its own with kSeedOwn, else the call's
// (an unseeded row's draws are the engine's; the reference keys them by the call's seed).
inline uint64_t DrawSeed(const RowParams& row, uint64_t call_seed) {
  return row.seed_mode == kSeedOwn ? row.seed : call_seed;
}

// A non-owning view of one row: its buffers and its parameters. The caller owns every buffer
// for as long as the view is used.
struct RowView : RowParams {
  DType dtype = DType::kF32;
  const void* logits = nullptr;  // vocab elements: uint32_t for kF32, uint16_t otherwise
  std::size_t vocab = 0;
  const uint8_t* mask = nullptr;  // nullptr: all allowed; else vocab bytes, nonzero = allowed
  // The mask as a sampler declaring packed-mask receives it (SPEC section 19, ABI MINOR 7):
  // ceil(vocab / 32) words, bit t % 32 of word t / 32 is token t; the last word's bits past vocab
  // are padding, never tokens. Set only with mask_layout kMaskPacked, and mask is then null.
  const uint32_t* packed_mask = nullptr;
  // The token history (SPEC section 16): buffers like the mask, which the penalties (the
  // table's fields above) read. Ids in [0, vocab); the caller owns both lists.
  const int64_t* prompt_tokens = nullptr;  // PEN-IN-1: the prompt's tokens
  std::size_t num_prompt_tokens = 0;
  const int64_t* output_tokens = nullptr;  // PEN-IN-1: the tokens generated so far, in order
  std::size_t num_output_tokens = 0;
  // The logit bias (SPEC section 18, BIAS-IN-1): num_bias distinct ids in [0, vocab) and their
  // biases (never NaN; -inf bans the token). The caller owns both lists.
  const int64_t* bias_tokens = nullptr;
  const float* bias_values = nullptr;
  std::size_t num_bias = 0;

  // True when the row asks for something of section 18: a bias, or a ban by its minimum length.
  bool HasBias() const { return num_bias > 0; }

  // Whether the row has a mask, in either layout, and whether it allows token i (< vocab).
  bool HasMask() const { return mask != nullptr || packed_mask != nullptr; }
  bool Allowed(std::size_t i) const {
    if (mask != nullptr) return mask[i] != 0;
    if (packed_mask != nullptr) return PackedAllowed(packed_mask, i);
    return true;
  }
};

}  // namespace sampcert

#endif  // SAMPCERT_ROW_H_
