// `sampcert report merge | diff | html | junit`: work on report.json files after a run.
#ifndef SAMPCERT_CLI_REPORT_COMMANDS_H_
#define SAMPCERT_CLI_REPORT_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace sampcert::cli {

// Joins shard reports into OUT_DIR/report.{json,html,junit.xml}. Exit 0 when the merged
// verdict is conformant, 1 when not, 2 on errors (unreadable input, shards that do not fit).
int RunReportMerge(const std::vector<std::string>& inputs, const std::string& out_dir,
                   std::ostream& out, std::ostream& err);

// Lists FIX / REGRESSION / DIFFERENCE / NEW per property and dtype (reports::Diff: a new
// non-conformant status or a removed result is a REGRESSION). Exit 0 when there is no
// REGRESSION, 1 when there is one or the plans differ ("PLAN CHANGED": not comparable), 2 on
// errors (unreadable or schema-invalid input, named by its JSON path).
int RunReportDiff(const std::string& before, const std::string& after, std::ostream& out,
                  std::ostream& err);

// Re-renders a report.json as HTML or JUnit XML into `output` (atomically).
int RunReportRender(const std::string& format, const std::string& input, const std::string& output,
                    std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_REPORT_COMMANDS_H_
