// `sampcert report merge | diff | html | junit`: work on report.json files after a run.
#ifndef SAMPCERT_CLI_REPORT_COMMANDS_H_
#define SAMPCERT_CLI_REPORT_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace sampcert::cli {

// Joins shard reports into OUT_DIR/report.{json,html,junit.xml}. Exit: the merged report's
// verdict (reports::Verdict: 0 conformant or matching its expectations, 1 not), 2 on errors
// (unreadable input, shards that do not fit), 4 when the reports cannot be written.
int RunReportMerge(const std::vector<std::string>& inputs, const std::string& out_dir,
                   std::ostream& out, std::ostream& err);

// Lists FIX / REGRESSION / DIFFERENCE / NEW per property and dtype (reports::Diff: a new
// non-conformant status or a removed result is a REGRESSION). Exit 0 when there is no
// REGRESSION, 1 when there is one or the plans differ ("PLAN CHANGED": not comparable), 2 on
// errors (unreadable or schema-invalid input, named by its JSON path).
int RunReportDiff(const std::string& before, const std::string& after, std::ostream& out,
                  std::ostream& err);

// Re-renders a report.json as HTML or JUnit XML into `output` (atomically). Exit 0, 2 for an
// unreadable input, 4 when the output cannot be written.
int RunReportRender(const std::string& format, const std::string& input, const std::string& output,
                    std::ostream& err);

// `report expectations`: the expectations file (reports/expectations.h) pinning every failure of
// a complete, unfiltered report.json, to `output` or standard output; each entry keeps its
// reason from `reasons_file` (an earlier expectations file, either format) where it still
// applies, and the entries without one are listed on `err`. Exit 0, 2 for unreadable input or
// a partial or incomplete report, 4 when the output cannot be written.
int RunReportExpectations(const std::string& input, const std::string& reasons_file,
                          const std::string& output, std::ostream& out, std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_REPORT_COMMANDS_H_
