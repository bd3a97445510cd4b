// INV-ERR-1 and VALID-1 (SPEC.md sections 5 and 10): invalid input gives the right error and no
// token; valid input gives tokens, never an error.
#include <fmt/format.h>

#include "properties/case_check.h"

namespace sampcert::properties {

Outcome CheckInvalid(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                     const Error& expected) {
  auto got = sampler.Sample(OneRow(row), seed, 0, 1);
  if (got.ok()) {
    return {.property = "INV-ERR-1",
            .ok = false,
            .message = fmt::format("returned token {} for invalid input; SPEC wants {}: {}",
                                   got->front(), ErrorCodeName(expected.code), expected.message),
            .kind = fmt::format("token, want {}", ErrorCodeName(expected.code))};
  }
  // SPEC section 5: the error report itself is part of the contract (message NUL-terminated in
  // its buffer, code equal to the returned status, a row-level error naming its row).
  if (const std::string& problem = sampler.last_error_problem(); !problem.empty()) {
    return {.property = "INV-ERR-1",
            .ok = false,
            .message = "the error report is malformed: " + problem,
            .kind = "malformed error report"};
  }
  if (got.error().code != expected.code) {
    return {.property = "INV-ERR-1",
            .ok = false,
            .message = fmt::format("returned error {} ({}); SPEC wants {}: {}",
                                   ErrorCodeName(got.error().code), got.error().message,
                                   ErrorCodeName(expected.code), expected.message),
            .kind = fmt::format("error {}, want {}", ErrorCodeName(got.error().code),
                                ErrorCodeName(expected.code))};
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
