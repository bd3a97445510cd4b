// The three reports of a run (report.json, report.html, report.junit.xml) and its row files are
// one set: they are written into a temporary folder beside them and published together, with
// report.manifest.json (the name and SHA-256 of every file) renamed in last. The old manifest
// goes first, so at every instant the folder holds either a manifest that matches the files or
// no manifest. Every reader verifies the set (ReadReportSet): a missing manifest, a file it
// lists that is missing, not a regular file, a symlink or different from its hash, and a row
// file report.json names that the manifest does not list, are each refused by name. A kill
// mid-publication, or a folder sabotaged while it is written, therefore reads as an error,
// never as a mix of two runs.
#ifndef SAMPCERT_REPORTS_REPORT_SET_H_
#define SAMPCERT_REPORTS_REPORT_SET_H_

#include <functional>
#include <map>
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
// is removed on every exit path. A destination that exists and is not a file (a directory put
// where report.junit.xml goes) is found before the old manifest is touched: the old set stays
// whole. `kept` lists files already in `dir` that stay in the set unchanged (name, SHA-256).
// Returns an empty string or the error, with the errno of the call that failed.
// `after_publish` (tests) runs after each file is renamed into place.
std::string PublishFiles(const std::string& dir,
                         const std::vector<std::pair<std::string, std::string>>& files,
                         const std::function<void(const std::string&)>& after_publish = {},
                         const std::vector<std::pair<std::string, std::string>>& kept = {});

// The name of a failure's row file: "row.<dtype>.<property>.<family>.json", with every
// character outside [A-Za-z0-9._-] replaced by '_'.
std::string RowFileName(const results::TestResult& result);

// Renders and publishes the report's JSON, HTML and JUnit XML in `dir`, with one row file per
// failure that carries its row (Failure::row); sets *json_path.
std::string WriteReportSet(const std::string& dir, const Report& report, std::string* json_path);

// A verified report set: the bytes of every file its manifest lists, by name (the report.json
// given included), each read as a regular file (never through a symlink) within its size limit
// and matching its SHA-256.
struct ReportSetFiles {
  std::string json_name;                     // the report's own name, normally "report.json"
  std::map<std::string, std::string> files;  // name -> contents
};

// Reads report.manifest.json beside `json_path` and every file it lists. Empty on success; else
// what is wrong, by name (a missing manifest: an interrupted publication or a report copied
// without its set).
std::string ReadReportSet(const std::string& json_path, ReportSetFiles* out);

// Replaces one file of the verified set in `dir` (report.html or report.junit.xml, re-rendered)
// and republishes the manifest with its new hash, by the same protocol.
std::string ReplaceSetFile(const std::string& dir, const ReportSetFiles& set,
                           const std::string& name, const std::string& text);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_SET_H_
