// A generated test case: one row (owning its bit patterns), or a batch of rows sharing dtype and
// vocabulary, with the family that produced it (for coverage and reports).
#ifndef SAMPCERT_PROPERTIES_ROW_CASE_H_
#define SAMPCERT_PROPERTIES_ROW_CASE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "sampcert/error.h"
#include "sampcert/row.h"

namespace sampcert::properties {

// Its parameters (temperature, top_k, ...) are RowParams' (adapters/row_fields.h lists them).
struct RowCase : RowParams {
  DType dtype = DType::kF32;
  std::vector<uint32_t> bits32;  // f32 logits
  std::vector<uint16_t> bits16;  // f16 / bf16 logits
  std::vector<uint8_t> mask;     // empty: no mask
  std::string family;            // the generator family, e.g. "overflow_after_scaling"
  // The token history (SPEC section 16; RowView's lists of the same names), which the penalties
  // among RowParams read: planned penalty rows and sequences carry it, generated rows do not.
  std::vector<int64_t> prompt_tokens;
  std::vector<int64_t> output_tokens;
  // The logit bias (SPEC section 18; RowView's lists of the same names): planned bias rows carry
  // it, generated rows do not.
  std::vector<int64_t> bias_tokens;
  std::vector<float> bias_values;

  bool HasHistory() const { return !prompt_tokens.empty() || !output_tokens.empty(); }
  std::size_t vocab() const { return dtype == DType::kF32 ? bits32.size() : bits16.size(); }
  RowView view() const;
  float Logit(std::size_t i) const;           // the value (exact in float for every dtype)
  void SetLogit(std::size_t i, float value);  // rounds to the dtype (nearest even)
};

// A one-row batch.
adapters::Batch OneRow(const RowCase& row);

// A one-line, human-readable description: dtype, V, T, truncation, first logits.
std::string Describe(const RowCase& row);

// Row files (SPEC section 11): a row's complete input as JSON, bit-exact. The logits are their
// dtype's bit patterns; temperature, top_p and min_p are given as fp32 bit patterns with their
// decimal value beside them (the bits decide; a decimal that disagrees is an error). A row with a
// token history has its lists under "prompt_tokens" and "output_tokens", one with a logit bias
// its ids under "bias_tokens" and the biases' fp32 bit patterns under "bias_bits" (SPEC
// section 11).
inline constexpr const char* kRowFileFormat = "sampcert-row/1";
std::string RowFileJson(const RowCase& row);
// Parses a row file's text, with an error that names the field on anything malformed.
Expected<RowCase> RowCaseFromRowFile(const std::string& text);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_ROW_CASE_H_
