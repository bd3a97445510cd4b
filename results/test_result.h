// The result model shared by the runner, the properties and the reports: a test's status
// (SPEC.md section 11), its measured numbers and its failure. Plain data: it crosses the
// worker's pipe as JSON (results/result_json.h) and is what every report is made of.
#ifndef SAMPCERT_RESULTS_TEST_RESULT_H_
#define SAMPCERT_RESULTS_TEST_RESULT_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sampcert::results {

// SPEC.md section 11.
enum class Status {
  kPass,
  kWarning,
  kNotSupported,
  kKnownFailure,  // a failure an expectations file pins: never conformant, never a pass
  kFail,
  kInconclusive,
  kCrash,
  kTimeout
};
const char* StatusName(Status s);
bool ParseStatus(const std::string& name, Status* out);
bool IsConformant(Status s);  // Pass, Warning, NotSupported (a KnownFailure is not)

// The (at most `limit`) cells of a goodness-of-fit test that deviate most, by
// |O - E| / sqrt(max(E, 1)), largest first (stable: ties keep the cells' order); cells that do not
// deviate are left out. The evidence a distribution failure names and the cells its chart marks.
std::vector<std::size_t> MostDeviatingCells(std::span<const double> observed,
                                            std::span<const double> expected, std::size_t limit);

struct Failure {
  std::string message;        // what went wrong
  std::string input;          // the input as generated (one line)
  std::string minimal_input;  // after shrinking (deterministic properties), else as generated
  std::string reproduction;   // a one-line command
  // The complete input of minimal_input, bit-exact, as a row file's JSON text (SPEC section 11,
  // "Row files"): `sampcert sample --row FILE` and `sampcert reference --row FILE` replay it.
  // Carried by the worker's results; a report set writes it as the file row_file beside
  // report.json and reads it back from there.
  std::string row;
  std::string row_file;
};

// The expectations entry a KnownFailure matched: the status the result had (Fail, Inconclusive,
// Crash or Timeout) and the entry's reason.
struct KnownFailure {
  Status status = Status::kFail;
  std::string reason;
};

// The coverage-model tags of TestResult::coverage (see there).
inline constexpr std::string_view kCoverageClassTag = "class:";
inline constexpr std::string_view kCoverageExcludedTag = "excluded:";

struct TestResult {
  std::string property;  // SPEC ID: "PROB-1", "DIST-1", ...
  std::string dtype;     // "f32", "f16", "bf16"
  std::string family;    // row family, or the planned row's name for distribution tests
  Status status = Status::kPass;
  uint64_t cases = 0;
  // The property's worst measured error (relative to what is allowed where that applies) and
  // the input that produced it, on a pass too.
  double worst_error = 0;
  std::string worst_input;
  double worst_temperature = std::numeric_limits<double>::quiet_NaN();  // of worst_input
  // Statistical tests.
  double p_value = std::numeric_limits<double>::quiet_NaN();
  double level = std::numeric_limits<double>::quiet_NaN();
  double power_tv = std::numeric_limits<double>::quiet_NaN();  // detectable TV w.p. 0.9
  uint64_t draws = 0;
  std::vector<double> observed, expected;  // per cell, for a failing goodness-of-fit test
  std::vector<std::string> cells;          // per cell, where known: "token 17", a band
  // Edge-case tags seen (generated rows), and on design rows (properties/coverage.h) the coverage
  // model's classes the row exercised ("class:AXIS=CLASS", rows) and the classes the declaration
  // excludes ("excluded:AXIS=CLASS (REASON)", 0): the report's coverage table.
  std::map<std::string, uint64_t> coverage;
  double seconds = 0;
  std::optional<Failure> failure;
  std::string note;
  std::optional<KnownFailure> known_failure;  // set exactly when status is kKnownFailure
};

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_TEST_RESULT_H_
