// Root causes (SPEC section 12, "Root causes"): the failures no expectation pins, grouped so
// that one defect reads as one cause. A group is (property, status, message class), where the
// message class is the failure message's first clause with every number written '#': one
// sampler bug fails one property on many rows, families and dtypes with messages that differ
// only in their numbers. report.json carries them (verdict.root_causes), and the terminal
// summary, the HTML report and the Python package show them first.
#ifndef SAMPCERT_REPORTS_ROOT_CAUSES_H_
#define SAMPCERT_REPORTS_ROOT_CAUSES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "results/test_result.h"

namespace sampcert::reports {

struct RootCause {
  std::string property;
  results::Status status = results::Status::kFail;
  std::string message_class;
  std::vector<std::size_t> results;   // indices into the results, in their (canonical) order
  std::vector<std::string> dtypes;    // f32, f16, bf16 order, each once
  std::vector<std::string> families;  // sorted, each once
  // The result shown (`lead`, an index into the results): of the group's results with a
  // failure record, the one whose complete input (its row file) is smallest, the first of
  // those on a tie; a shrunk 6-token row leads before an unshrunk 1,025-token design row. Its
  // message, input (shrunk where shrinking ran), reproduction and row file; its note alone
  // where no result has a record.
  std::size_t lead = 0;
  std::string message, input, reproduction, row_file;
};

// The message's first clause (up to the first ':', '(' or ';'; a leading "probabilities: ",
// the channel, is skipped), numbers (a digit run with its sign, point and exponent, not glued
// to a word: "SUPP-2" stays) and the words nan and inf written '#', whitespace collapsed.
std::string MessageClass(std::string_view message);

// The groups of the failing results (a result's class comes from its failure message, or its
// note where it has no failure record), most severe status first (Crash, Timeout, Fail,
// Inconclusive), then by count (largest first), property and class. A result "not reached"
// on a case because an earlier check of that case failed is a consequence of that failure, not
// a cause: NotReached counts those.
std::vector<RootCause> RootCauses(const std::vector<results::TestResult>& results);

// Failing results not reached because an earlier check of their case failed.
std::size_t NotReached(const std::vector<results::TestResult>& results);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_ROOT_CAUSES_H_
