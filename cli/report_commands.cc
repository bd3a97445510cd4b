#include "cli/report_commands.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>

#include "cli/terminal_text.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report.h"
#include "reports/report_json.h"
#include "reports/report_set.h"

namespace sampcert::cli {

int RunReportMerge(const std::vector<std::string>& inputs, const std::string& out_dir,
                   std::ostream& out, std::ostream& err) {
  std::vector<reports::Report> shards;
  for (const std::string& path : inputs) {
    reports::Report r;
    std::string why;
    if (!reports::ReadReport(path, &r, &why)) {
      fmt::print(err, "error: {}\n", S(why));
      return 2;
    }
    shards.push_back(std::move(r));
  }
  reports::Report merged;
  std::string why;
  if (!reports::Merge(shards, &merged, &why)) {
    fmt::print(err, "error: cannot merge: {}\n", S(why));
    return 2;
  }
  std::string path;
  if (std::string e = reports::WriteReportSet(out_dir, merged, &path); !e.empty()) {
    fmt::print(err, "error: {}\n", S(e));
    return reports::Code(reports::ExitCode::kHostError);
  }
  fmt::print(out, "{}", reports::TextSummary(merged, path));
  return reports::Verdict(merged).exit_code;
}

int RunReportDiff(const std::string& before, const std::string& after, std::ostream& out,
                  std::ostream& err) {
  reports::Report a, b;
  std::string why;
  if (!reports::ReadReport(before, &a, &why) || !reports::ReadReport(after, &b, &why)) {
    fmt::print(err, "error: {}\n", S(why));
    return 2;
  }
  // A regression, or reports of different plans (not comparable: a new baseline is needed), is
  // exit 1; only a comparison that found nothing worse is 0.
  bool fails = false;
  const std::vector<std::string> lines = reports::Diff(a, b);
  for (const std::string& l : lines) {
    fmt::print(out, "{}\n", S(l));
    fails |= l.rfind("REGRESSION", 0) == 0 || l.rfind("PLAN CHANGED", 0) == 0;
  }
  if (lines.empty()) fmt::print(out, "no differences\n");
  return fails ? 1 : 0;
}

int RunReportRender(const std::string& format, const std::string& input, const std::string& output,
                    std::ostream& err) {
  reports::Report r;
  std::string why;
  if (!reports::ReadReport(input, &r, &why)) {
    fmt::print(err, "error: {}\n", S(why));
    return 2;
  }
  const std::string text = format == "html" ? reports::RenderHtml(r) : reports::RenderJUnit(r);
  // Into the report's own set (the default: report.html beside report.json): the file is
  // replaced and the manifest republished with its hash, so the set stays one that readers
  // accept. Elsewhere: a plain atomic write.
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path in_dir = fs::weakly_canonical(fs::absolute(input).parent_path(), ec);
  const fs::path out_path = fs::weakly_canonical(fs::absolute(output), ec);
  reports::ReportSetFiles set;
  const std::string name = out_path.filename().string();
  if (!ec && out_path.parent_path() == in_dir && reports::ReadReportSet(input, &set).empty() &&
      set.files.count(name)) {
    if (name != "report.html" && name != "report.junit.xml") {
      fmt::print(err, "error: {} is the report set's {}: give another --output\n", S(output),
                 S(name));
      return 2;
    }
    if (std::string e = reports::ReplaceSetFile(in_dir.string(), set, name, text); !e.empty()) {
      fmt::print(err, "error: {}\n", S(e));
      return 2;
    }
    return 0;
  }
  if (std::string e = reports::WriteFileAtomically(output, text); !e.empty()) {
    fmt::print(err, "error: {}\n", S(e));
    return reports::Code(reports::ExitCode::kHostError);
  }
  return 0;
}

int RunReportExpectations(const std::string& input, const std::string& reasons_file,
                          const std::string& output, std::ostream& out, std::ostream& err) {
  const int usage = reports::Code(reports::ExitCode::kUsage);
  reports::Report r;
  std::string why;
  if (!reports::ReadReport(input, &r, &why)) {
    fmt::print(err, "error: {}\n", S(why));
    return usage;
  }
  reports::Reasons reasons;
  if (!reasons_file.empty() && !reports::LoadReasons(reasons_file, &reasons, &why)) {
    fmt::print(err, "error: {}\n", S(why));
    return usage;
  }
  reports::Expectations made;
  std::vector<std::string> unreviewed;
  if (!reports::ExpectationsFromReport(r, reasons, &made, &unreviewed, &why)) {
    fmt::print(err, "error: {}: {}\n", S(input), S(why));
    return usage;
  }
  const std::string text = reports::ExpectationsToJson(made).dump(2) + "\n";
  if (output.empty()) {
    out << text;
  } else if (std::string e = reports::WriteFileAtomically(output, text); !e.empty()) {
    fmt::print(err, "error: {}\n", S(e));
    return reports::Code(reports::ExitCode::kHostError);
  }
  fmt::print(err, "{} entries{}\n", made.entries.size(),
             output.empty() ? "" : " written to " + S(output));
  if (!unreviewed.empty()) {
    fmt::print(err,
               "{} entries have no reason on file for their status; their reason is the "
               "failure's message, to be edited into why:\n",
               unreviewed.size());
    for (const std::string& k : unreviewed) fmt::print(err, "  {}\n", S(k));
  }
  return 0;
}

}  // namespace sampcert::cli
