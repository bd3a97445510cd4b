#include "reports/junit.h"

#include <fmt/format.h>

#include <map>

#include "results/text.h"

namespace sampcert::reports {

using results::Status;
using results::TestResult;

// One XML escaping for every name and message: results::XmlEscape also drops what XML 1.0
// forbids (C0 controls, U+FFFE, U+FFFF) and invalid UTF-8, so the file stays well-formed.
std::string XmlEscape(std::string_view text) { return results::XmlEscape(text); }

std::string RenderJUnit(const Report& report) {
  const std::string sampler = report.sampler.value("name", "sampler");
  std::map<std::string, std::vector<const TestResult*>> by_dtype;
  for (const TestResult& r : report.results) by_dtype[r.dtype].push_back(&r);
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string suites;
  for (const auto& [dtype, results] : by_dtype) {
    int t = 0, f = 0, e = 0, s = 0;
    double secs = 0;
    std::string cases;
    for (const TestResult* r : results) {
      ++t;
      secs += r->seconds;
      const std::string message = r->failure ? r->failure->message : r->note.empty() ? "" : r->note;
      std::string body;
      switch (r->status) {
        case Status::kPass:
        case Status::kWarning:
          if (r->status == Status::kWarning) {
            body = fmt::format("      <system-out>Warning: {}</system-out>\n", XmlEscape(message));
          }
          break;
        case Status::kNotSupported:
        case Status::kWaived:
          ++s;
          body = fmt::format("      <skipped message=\"{}: {}\"/>\n",
                             results::StatusName(r->status), XmlEscape(message));
          break;
        case Status::kFail:
          ++f;
          body = fmt::format(
              "      <failure type=\"Fail\" message=\"{}\">input: {}\nminimal: {}\nreproduce: "
              "{}{}</failure>\n",
              XmlEscape(message), XmlEscape(r->failure ? r->failure->input : ""),
              XmlEscape(r->failure ? r->failure->minimal_input : ""),
              XmlEscape(r->failure ? r->failure->reproduction : ""),
              r->failure && !r->failure->row_file.empty()
                  ? "\nrow file: " + XmlEscape(r->failure->row_file)
                  : std::string());
          break;
        case Status::kInconclusive:
        case Status::kCrash:
        case Status::kTimeout:
          ++e;
          body = fmt::format("      <error type=\"{}\" message=\"{}\"/>\n",
                             results::StatusName(r->status), XmlEscape(message));
          break;
      }
      cases += fmt::format(
          "    <testcase classname=\"sampcert.{}.{}.{}\" name=\"{}\" time=\"{:.6f}\"{}>\n{}"
          "    </testcase>\n",
          XmlEscape(sampler), XmlEscape(dtype), XmlEscape(r->property), XmlEscape(r->family),
          r->seconds, "", body);
    }
    suites += fmt::format(
        "  <testsuite name=\"sampcert.{}.{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
        "skipped=\"{}\" time=\"{:.6f}\">\n{}  </testsuite>\n",
        XmlEscape(sampler), XmlEscape(dtype), t, f, e, s, secs, cases);
    tests += t;
    failures += f;
    errors += e;
    skipped += s;
    seconds += secs;
  }
  if (!report.complete) {
    // An interrupted or budget-stopped run is no verdict: CI must not read it as green.
    suites += fmt::format(
        "  <testsuite name=\"sampcert.{0}.run\" tests=\"1\" failures=\"0\" errors=\"1\" "
        "skipped=\"0\" time=\"0\">\n    <testcase classname=\"sampcert.{0}.run\" "
        "name=\"complete\" time=\"0\">\n      <error type=\"Incomplete\" message=\"the run is "
        "incomplete, no verdict: {1}\"/>\n    </testcase>\n  </testsuite>\n",
        XmlEscape(sampler), XmlEscape(report.incomplete_reason));
    ++tests;
    ++errors;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"sampcert {}\" "
      "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.6f}\">\n{}"
      "</testsuites>\n",
      XmlEscape(sampler), tests, failures, errors, skipped, seconds, suites);
}

}  // namespace sampcert::reports
