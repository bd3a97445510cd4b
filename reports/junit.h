// JUnit XML, so that CI systems show each property as a test case: one testsuite per dtype, one
// testcase per property and row family; NotSupported and Waived are skipped, Fail a failure,
// Crash / Timeout / Inconclusive an error.
#ifndef SAMPCERT_REPORTS_JUNIT_H_
#define SAMPCERT_REPORTS_JUNIT_H_

#include <string>
#include <string_view>

#include "reports/report.h"

namespace sampcert::reports {

std::string XmlEscape(std::string_view text);
std::string RenderJUnit(const Report& report);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_JUNIT_H_
