// RapidCheck generators of rows (SPEC.md section 10's inputs): bit-pattern logits that reach
// +-0, subnormals, the dtype's maximum, +-inf and NaN (RapidCheck's own float generator reaches
// none of these), row families built to break samplers, temperatures from 0 through subnormal
// to huge, masks, truncation parameters at their edges, and vocabulary sizes from 1 to 262144
// biased to small and to sizes that are no multiple of a vector width.
//
// Large rows are filled from a generated 64-bit seed (per-element RapidCheck generation of 2^18
// values would dominate the run); the family, dtype, size, temperature, mask kind and truncation
// parameters are RapidCheck choices and shrink, so a failing row shrinks to a smaller
// vocabulary and simpler parameters.
#ifndef SAMPCERT_PROPERTIES_GENERATORS_H_
#define SAMPCERT_PROPERTIES_GENERATORS_H_

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "properties/row_case.h"
#include "sampcert/policies.h"

namespace sampcert::properties {

struct GenConfig {
  DType dtype = DType::kF32;
  uint32_t capabilities = 0;  // SAMPCERT_CAP_*: only declared features are generated
  std::size_t max_vocab = 262144;
  double invalid_fraction = 0.15;  // share of rows made invalid on purpose (SPEC section 5)
};

// The families (SPEC section 10 / the brief's failure classes).
const std::vector<std::string>& RowFamilies();

// One row. Valid or invalid per SPEC section 5 (about invalid_fraction of them invalid).
rc::Gen<RowCase> GenRow(const GenConfig& config);

// Temperatures: 0, subnormal (1e-45), tiny (1e-8), ordinary, huge (1e30, FLT_MAX).
rc::Gen<float> GenTemperature(bool allow_zero);

// f32 / f16 / bf16 bit patterns weighted to the special values.
rc::Gen<uint32_t> GenF32Bits();
rc::Gen<uint16_t> GenHalfBits(DType dtype);

// Edge-case tags of a row (for coverage): "T=0", "T subnormal", "+inf", "NaN masked",
// "x/T overflows dtype", "V=1", "top_k tie", ...
std::vector<std::string> EdgeTags(const RowCase& row);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_GENERATORS_H_
