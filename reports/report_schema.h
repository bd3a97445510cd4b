// reports/report.schema.json, embedded in the binary at build time, and validation of a parsed
// report against it (valijson): every `report` subcommand validates before it reads, so a
// wrongly typed or out-of-schema field is a clear error with its JSON path, never an uncaught
// exception and never a status read as something it is not.
#ifndef SAMPCERT_REPORTS_REPORT_SCHEMA_H_
#define SAMPCERT_REPORTS_REPORT_SCHEMA_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace sampcert::reports {

std::string_view ReportSchemaText();

// Empty when `report` is valid; else the first problems, each as "JSON-pointer: what".
std::string ValidateReport(const nlohmann::json& report);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_SCHEMA_H_
