// INV-ERR-1 and VALID-1 (SPEC.md sections 5 and 10): invalid input gives the right error and no
// token; valid input gives tokens, never an error.
#include <fmt/format.h>

#include "properties/case_check.h"

namespace sampcert::properties {

Outcome CheckInvalid(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                     const Error& expected) {
  auto got = sampler.Sample(OneRow(row), seed, 0, 1);
  if (got.ok()) {
    return {"INV-ERR-1", false, true,
            fmt::format("returned token {} for invalid input; SPEC wants {}: {}", got->front(),
                        ErrorCodeName(expected.code), expected.message)};
  }
  if (got.error().code != expected.code) {
    return {
        "INV-ERR-1", false, true,
        fmt::format("returned error {} ({}); SPEC wants {}: {}", ErrorCodeName(got.error().code),
                    got.error().message, ErrorCodeName(expected.code), expected.message)};
  }
  return {"INV-ERR-1", true, true, ""};
}

bool CheckValid(CaseContext& ctx) {
  auto tokens = ctx.sampler.Sample(OneRow(ctx.row), ctx.seed, 0, kDrawsPerCase);
  if (!tokens.ok()) {
    ctx.Set("VALID-1", false,
            fmt::format("error on valid input: {}: {}", ErrorCodeName(tokens.error().code),
                        tokens.error().message));
    return false;
  }
  ctx.tokens = std::move(tokens.value());
  ctx.Set("VALID-1", true);
  return true;
}

}  // namespace sampcert::properties
