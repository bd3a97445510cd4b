// Results are never lost to a broken output folder. The report set is published after every
// worker and everything below it has ended, so no sampler code runs any more; if publishing into
// --out fails even so (the folder removed, replaced by a file, or filled with something in the
// way during the run), the same set is published into a fresh folder made now, beside --out or
// else in $TMPDIR, and the error names it: the run exits 4 (host error, SPEC section 14), with
// its results on disk.
#ifndef SAMPCERT_REPORTS_REPORT_FALLBACK_H_
#define SAMPCERT_REPORTS_REPORT_FALLBACK_H_

#include <string>

#include "reports/report.h"

namespace sampcert::reports {

// WriteReportSet into `dir`; on failure, into a new "sampcert-unpublished-XXXXXX" folder
// (json_path then names the copy). Returns "" when `dir` has the set, else the error, naming
// where the results are saved (or that they could not be saved anywhere).
std::string WriteReportSetOrFallback(const std::string& dir, const Report& report,
                                     std::string* json_path);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_FALLBACK_H_
