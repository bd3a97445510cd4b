#include "cli/report_commands.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>

#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report.h"
#include "reports/report_json.h"

namespace sampcert::cli {

int RunReportMerge(const std::vector<std::string>& inputs, const std::string& out_dir,
                   std::ostream& out, std::ostream& err) {
  std::vector<reports::Report> shards;
  for (const std::string& path : inputs) {
    reports::Report r;
    std::string why;
    if (!reports::ReadReport(path, &r, &why)) {
      fmt::print(err, "error: {}\n", why);
      return 2;
    }
    shards.push_back(std::move(r));
  }
  reports::Report merged;
  std::string why;
  if (!reports::Merge(shards, &merged, &why)) {
    fmt::print(err, "error: cannot merge: {}\n", why);
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  const std::filesystem::path dir(out_dir);
  const std::string path = (dir / "report.json").string();
  for (const auto& [file, text] :
       {std::pair{path, reports::ReportToJson(merged).dump(2)},
        std::pair{(dir / "report.html").string(), reports::RenderHtml(merged)},
        std::pair{(dir / "report.junit.xml").string(), reports::RenderJUnit(merged)}}) {
    if (std::string e = reports::WriteFileAtomically(file, text); !e.empty()) {
      fmt::print(err, "error: {}\n", e);
      return 2;
    }
  }
  fmt::print(out, "{}", reports::TextSummary(merged, path));
  return reports::Conformant(merged) ? 0 : 1;
}

int RunReportDiff(const std::string& before, const std::string& after, std::ostream& out,
                  std::ostream& err) {
  reports::Report a, b;
  std::string why;
  if (!reports::ReadReport(before, &a, &why) || !reports::ReadReport(after, &b, &why)) {
    fmt::print(err, "error: {}\n", why);
    return 2;
  }
  bool regression = false;
  const std::vector<std::string> lines = reports::Diff(a, b);
  for (const std::string& l : lines) {
    fmt::print(out, "{}\n", l);
    regression |= l.rfind("REGRESSION", 0) == 0;
  }
  if (lines.empty()) fmt::print(out, "no differences\n");
  return regression ? 1 : 0;
}

int RunReportRender(const std::string& format, const std::string& input, const std::string& output,
                    std::ostream& err) {
  reports::Report r;
  std::string why;
  if (!reports::ReadReport(input, &r, &why)) {
    fmt::print(err, "error: {}\n", why);
    return 2;
  }
  const std::string text = format == "html" ? reports::RenderHtml(r) : reports::RenderJUnit(r);
  if (std::string e = reports::WriteFileAtomically(output, text); !e.empty()) {
    fmt::print(err, "error: {}\n", e);
    return 2;
  }
  return 0;
}

}  // namespace sampcert::cli
