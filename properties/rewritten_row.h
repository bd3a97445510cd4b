// The check of a planned row whose request rewrites its logits before anything else (the
// penalties of SPEC section 16, the logit bias and minimum length of section 18): the sampler's
// probabilities against the reference within its accuracy class (PROB-1's table, where
// probabilities are declared); where the request changes nothing, the row bit for bit the same
// row without it (probabilities, and the first draws under one seed where determinism is
// declared); then the draws against the reference, as DIST-1. A row whose request is invalid is
// checked for the right error instead (INV-ERR-1).
#ifndef SAMPCERT_PROPERTIES_REWRITTEN_ROW_H_
#define SAMPCERT_PROPERTIES_REWRITTEN_ROW_H_

#include <optional>
#include <string_view>
#include <vector>

#include "properties/families.h"
#include "properties/row_case.h"
#include "results/test_result.h"

namespace sampcert::properties {

struct Rewrite {
  std::string_view what;       // "a token history": in "probabilities of a row with ..."
  std::string_view reference;  // how the reference applies it, for PROB-1's message
  // The same row without the request, where the request must change nothing (PEN-4, BIAS-4,
  // MINLEN-1's reached length), and the clause and words an identity failure names.
  std::optional<RowCase> bare;
  std::string_view identity_clause;  // "PEN-4"
  std::string_view identity_what;    // "penalties off, yet" ... / "the zero biases"
};

// The reference's error for a row whose request is invalid (INV-8: a penalty or a history id;
// INV-9: a bias or the minimum length's id; INV-6: every token masked or banned, whatever the
// logits), or an error of code kOk for a valid one. Such a
// planned row is INV-ERR-1's: the sampler must refuse it with that code, and return no token.
Error InvalidRequest(const RowCase& row);

// An invalid row (InvalidRequest) is checked by INV-ERR-1 alone; a valid one as above.
std::vector<results::TestResult> RunRewrittenRow(const ItemRun& ctx, const Rewrite& rewrite);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_REWRITTEN_ROW_H_
