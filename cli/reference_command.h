// `sampcert reference`: prints the reference distribution of one row given on the command
// line. The first job of the command-line tool; the runner joins it in a later issue.
#ifndef SAMPCERT_CLI_REFERENCE_COMMAND_H_
#define SAMPCERT_CLI_REFERENCE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"

namespace sampcert::cli {

// The most tokens `reference` and `sample` draw and print in one call (128 MiB of tokens):
// larger counts are a typo, and today they were an uncaught std::length_error.
inline constexpr int64_t kMaxDraws = int64_t{1} << 24;

struct ReferenceRequest {
  std::string row_file;  // --row: the whole row from a row file (instead of --logits & co.)
  std::string dtype = "f32";
  std::vector<std::string> logits;  // decimal values or inf / -inf / nan
  std::vector<int> mask;            // empty: all allowed
  RowParams params;                 // -t, --top-k, ... (cli/row_options.h: one flag per field)
  uint64_t seed = 0;
  int64_t draws = 0;  // tokens to draw with the reference sampler
  Policies policies;
};

// The row a request describes, with the buffers it points into.
struct ParsedRow {
  std::vector<uint32_t> bits32;
  std::vector<uint16_t> bits16;
  std::vector<uint8_t> mask;
  std::vector<int64_t> prompt_tokens;  // a row file's token history (SPEC section 16)
  std::vector<int64_t> output_tokens;
  std::vector<int64_t> bias_tokens;  // a row file's logit bias (SPEC section 18)
  std::vector<float> bias_values;
  RowView view;  // points into the vectors above
};

// Parses dtype, logits (rounded to the dtype as a cast would) and mask, and checks --draws.
// Returns false and prints the usage error to `err` on bad input: an empty logit field, a
// finite value that overflows the dtype, a mask value other than 0/1, draws outside
// [0, kMaxDraws].
bool ParseRow(const ReferenceRequest& request, ParsedRow* row, std::ostream& err);

// Converts the textual logits to bit patterns of the requested dtype (round to nearest even,
// as a cast would), runs the reference, and prints the result. Returns the process exit code:
// 0 on success, 1 when the row is invalid (the error is printed), 2 on a usage error.
int RunReference(const ReferenceRequest& request, std::ostream& out, std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_REFERENCE_COMMAND_H_
