// The reference log-probabilities of a row (SPEC section 20): what a sampler returns with its
// draws in each mode, exactly, per token.
#ifndef SAMPCERT_REFERENCE_LOGPROBS_H_
#define SAMPCERT_REFERENCE_LOGPROBS_H_

#include <cstdint>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"

namespace sampcert {

// The row's log-probabilities in `mode` (SAMPCERT_LOGPROBS_RAW, _SCALED or _PROCESSED), per
// token, in long double; -inf outside the mode's support (LOGP-IN-1):
//   raw        log-softmax of the logits as given, over all V tokens: no mask, bias, penalty,
//              minimum length, temperature or truncation;
//   scaled     log p of SEM-1..SEM-4's distribution before truncation: the mask, the bias and
//              bans, the penalties and the temperature applied (-inf outside the support);
//   processed  log p of the distribution drawn from (SEM-5..SEM-7 after them; -inf outside the
//              kept set).
// An error for an invalid row (the reference's), or for a processed row with a rounding band
// (a token whose kept-ness the declaration leaves open has no one log-probability), naming it.
Expected<std::vector<long double>> ReferenceLogprobs(const RowView& row, const Policies& policies,
                                                     int32_t mode);

}  // namespace sampcert

#endif  // SAMPCERT_REFERENCE_LOGPROBS_H_
