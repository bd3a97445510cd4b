#include "cli/run_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include "properties/families.h"
#include "reports/report.h"
#include "results/text.h"

namespace sampcert::cli {

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
    return 2;
  }
  const reports::Report& report = o.report;
  fmt::print(out, "{}", reports::TextSummary(report, o.report_path));
  if (!report.complete) {
    // Not a certificate, whatever the finished items say.
    fmt::print(out, "INCOMPLETE: {}\n", S(report.incomplete_reason));
    return o.signal != 0 ? 128 + o.signal : 1;
  }
  // A partial run (a shard, filters) exits by what it covered; its verdict line says PARTIAL.
  return reports::Passed(report) ? 0 : 1;
}

int RunPlanDump(const RunRequest& req, std::ostream& out, std::ostream& err) {
  RunRequest request = req;
  request.on_warning = [&err](const std::string& w) {
    fmt::print(err, "warning: {}\n", results::EscapeForTerminal(w));
  };
  const certify::PlanOutcome o = certify::PlanFor(request);
  if (o.error != certify::CertifyError::kNone) {
    fmt::print(err, "error: {}\n", results::EscapeForTerminal(o.message));
    return 2;
  }
  fmt::print(out, "{}", properties::DescribePlan(o.plan));
  return 0;
}

}  // namespace sampcert::cli
