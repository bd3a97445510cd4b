// JUnit XML, so that CI systems show each property as a test case: one testsuite per dtype, one
// testcase per property and row family; NotSupported and KnownFailure are skipped (each with its
// type, as pytest writes an xfail), Fail a failure, Crash / Timeout / Inconclusive an error. One
// more testsuite, "<sampler>.verdict", holds the verdict: a failure when not conformant, an error
// when the run is incomplete, skipped for a partial run.
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
