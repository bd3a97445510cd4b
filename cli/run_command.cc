#include "cli/run_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include "properties/families.h"
#include "reports/report.h"
#include "reports/verdict.h"
#include "results/text.h"

namespace sampcert::cli {
// The exit code of an error before any verdict (reports/verdict.h).
int ExitCodeOf(certify::CertifyError e) {
  switch (e) {
    case certify::CertifyError::kNone: break;
    case certify::CertifyError::kUsage: return reports::Code(reports::ExitCode::kUsage);
    case certify::CertifyError::kSampler:
      return reports::Code(reports::ExitCode::kSamplerUnavailable);
    case certify::CertifyError::kHost: return reports::Code(reports::ExitCode::kHostError);
  }
  return reports::Code(reports::ExitCode::kHostError);
}

int RunRun(const RunRequest& req, std::ostream& out, std::ostream& err) {
  const auto S = [](const std::string& s) { return results::EscapeForTerminal(s); };
  RunRequest request = req;
  request.on_warning = [&err](const std::string& w) {
    fmt::print(err, "warning: {}\n", results::EscapeForTerminal(w));
  };
  const bool tty = req.progress && isatty(STDERR_FILENO);
  if (tty) {
    request.on_progress = [&err](const runner::Progress& p) {
      fmt::print(err, "\r\033[K[{}/{}] {} {} {}  {:.0f} s", p.done, p.total,
                 properties::FamilyOf(p.item->kind).name, p.item->dtype, p.item->name, p.elapsed_s);
      if (p.done < p.total && p.estimated_total_s > 0) {
        fmt::print(err, ", about {:.0f} s left", p.estimated_total_s - p.elapsed_s);
      }
      err.flush();
    };
  }
  const certify::CertifyOutcome o = certify::Certify(request);
  if (tty) fmt::print(err, "\r\033[K");
  if (o.error != certify::CertifyError::kNone) {
    fmt::print(err, "error: {}\n", S(o.message));
    return ExitCodeOf(o.error);
  }
  // The summary ends with the verdict's line; the exit code is the verdict's.
  fmt::print(out, "{}", reports::TextSummary(o.report, o.report_path));
  return reports::Verdict(o.report).exit_code;
}

int RunPlanDump(const RunRequest& req, std::ostream& out, std::ostream& err) {
  RunRequest request = req;
  request.on_warning = [&err](const std::string& w) {
    fmt::print(err, "warning: {}\n", results::EscapeForTerminal(w));
  };
  const certify::PlanOutcome o = certify::PlanFor(request);
  if (o.error != certify::CertifyError::kNone) {
    fmt::print(err, "error: {}\n", results::EscapeForTerminal(o.message));
    return ExitCodeOf(o.error);
  }
  fmt::print(out, "{}", properties::DescribePlan(o.plan));
  return 0;
}

}  // namespace sampcert::cli
