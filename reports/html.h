// The self-contained HTML report: one file, no network fetches, every string from a sampler
// escaped. Verdict, a property x dtype matrix, the declared policies, a drill-down per failure
// (minimal input, reproduction, observed against expected counts), power per test, error against
// temperature and edge-case coverage as inline SVG drawn here.
#ifndef SAMPCERT_REPORTS_HTML_H_
#define SAMPCERT_REPORTS_HTML_H_

#include <string>
#include <string_view>

#include "reports/report.h"

namespace sampcert::reports {

std::string HtmlEscape(std::string_view text);
std::string RenderHtml(const Report& report);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_HTML_H_
