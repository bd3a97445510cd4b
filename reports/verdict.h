// What a report establishes, in one place: its outcome (CONFORMANT, NOT CONFORMANT, matches
// its known failures, PARTIAL, INCOMPLETE), the sentence every format prints, and the exit code
// of the command that wrote it (SPEC section 11, "Outcomes and exit codes"). The terminal, the
// HTML, JUnit and report.json all read Verdict(), so they cannot disagree.
#ifndef SAMPCERT_REPORTS_VERDICT_H_
#define SAMPCERT_REPORTS_VERDICT_H_

#include <string>

namespace sampcert::reports {

struct Report;

// Exit codes of every sampcert command (SPEC section 11). A signal N that stops a run gives
// 128 + N (the shell's convention) after the finished items are written as an incomplete
// report.
enum class ExitCode : int {
  kOk = 0,                  // CONFORMANT, or matches its expectations, or a clean partial run
  kNotConformant = 1,       // a failure that no expectation pins, or a difference from them
  kUsage = 2,               // a bad option, argument or input file (nothing was run)
  kSamplerUnavailable = 3,  // the sampler cannot be loaded, described or created
  kHostError = 4,           // the host failed (fork, pipes, writing the reports)
  kIncomplete = 5,          // the run stopped at --time-budget: not a verdict
};
inline constexpr int kSignalExitBase = 128;
constexpr int Code(ExitCode c) { return static_cast<int>(c); }

enum class OutcomeKind {
  kConformant,           // complete, whole plan, every result conformant, nothing known
  kMatchesExpectations,  // NOT CONFORMANT, but every failure is a known one and none passes
  kNotConformant,        // a failure nothing pins, or a difference from the expectations
  kPartial,              // a shard or a filtered run: no verdict (exit 1 if this part fails)
  kIncomplete,           // stopped early (signal, --time-budget): no verdict
};

// The table: one row per outcome, its name in report.json, the word that starts its sentence
// and its HTML class.
struct OutcomeInfo {
  OutcomeKind kind;
  const char* name;      // verdict.outcome in report.json
  const char* headline;  // the sentence's first words
  const char* css;       // the HTML verdict's class
};
const OutcomeInfo& Info(OutcomeKind kind);
bool ParseOutcome(const std::string& name, OutcomeKind* out);

struct Outcome {
  OutcomeKind kind = OutcomeKind::kNotConformant;
  int exit_code = Code(ExitCode::kNotConformant);
  // One line, e.g. "NOT CONFORMANT: matches its 257 known failures, no new ones". It never
  // contains "CONFORMANT" for a partial or incomplete run.
  std::string text;
  int failures = 0;        // results not conformant and not known (new)
  int known_failures = 0;  // KnownFailure results
  int differences = 0;     // expectation differences that fail the check
  std::string scope;       // why the run does not cover the plan ("shard 1/4"); empty if whole
};

// The outcome of a report, and the exit code of the command that wrote or merged it.
Outcome Verdict(const Report& report);

// Empty when the report covers the whole plan; else what part it is ("shard 1/4", "filtered:
// --item f32/flat_V64"). A report that does not record its filters is not a whole run.
std::string PartialScope(const Report& report);
inline bool IsWholeRun(const Report& report) { return PartialScope(report).empty(); }

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_VERDICT_H_
