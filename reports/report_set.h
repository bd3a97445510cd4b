// The three reports of a run (report.json, report.html, report.junit.xml) are one set: they are
// written into a temporary folder beside them and published together, with report.manifest.json
// (the hash of each file) renamed in last. The old manifest goes first, so at every instant the
// folder holds either a manifest that matches the files or no manifest: a kill mid-publication
// can leave a new report.json beside an old report.junit.xml, but never one that claims to be
// consistent, and ReadReport refuses a report.json its manifest does not list.
#ifndef SAMPCERT_REPORTS_REPORT_SET_H_
#define SAMPCERT_REPORTS_REPORT_SET_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "reports/report.h"

namespace sampcert::reports {

inline constexpr const char* kManifestName = "report.manifest.json";

// Creates `dir` if needed and checks that a file can be created in it: `sampcert run` calls this
// before any work, so an unwritable --out is found before the run, not after it. Empty: fine.
std::string CheckWritableFolder(const std::string& dir);

// Publishes `files` (name, contents) in `dir` as one set. Stale temporary folders of dead
// processes (a SIGKILL during an earlier write) are removed first; this call's temporary folder
// is removed on every exit path. Returns an empty string or the error, with the errno of the
// call that failed. `after_publish` (tests) runs after each file is renamed into place.
std::string PublishFiles(const std::string& dir,
                         const std::vector<std::pair<std::string, std::string>>& files,
                         const std::function<void(const std::string&)>& after_publish = {});

// The name of a failure's row file: "row.<dtype>.<property>.<family>.json", with every
// character outside [A-Za-z0-9._-] replaced by '_'.
std::string RowFileName(const results::TestResult& result);

// Renders and publishes the report's JSON, HTML and JUnit XML in `dir`, with one row file per
// failure that carries its row (Failure::row); sets *json_path.
std::string WriteReportSet(const std::string& dir, const Report& report, std::string* json_path);

// Empty when `json_path` has no manifest beside it or the manifest lists its hash; else why not
// (a report set whose publication was interrupted).
std::string CheckManifest(const std::string& json_path);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_SET_H_
