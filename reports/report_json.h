// The JSON report (schema version separate from the tool version): results to and from JSON,
// with NaN and infinities encoded legally (as the strings "NaN", "Infinity", "-Infinity").
#ifndef SAMPCERT_REPORTS_REPORT_JSON_H_
#define SAMPCERT_REPORTS_REPORT_JSON_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "results/result_json.h"

namespace sampcert::reports {

// 3.0: the status KnownFailure (for Waived) with its known_failure entry, verdict.outcome,
// .text, .exit_code and .known_failures, expectation differences as objects,
// completeness.signal, context.expectations_strict.
inline constexpr const char* kSchemaVersion = "3.6";

using results::Number;
using results::NumberFrom;
using results::ResultFromJson;
using results::ToJson;

// The sampler's declaration; `file_sha256` (the plug-in file's hash, for a sampler given by path)
// is added when not empty; `config` is --sampler-config (absent: no "config" key); an "exec:"
// argument also records its command as "exec". Text is sanitized to UTF-8 here.
nlohmann::json SamplerToJson(const adapters::SamplerInfo& info, const std::string& argument,
                             const std::string& file_sha256 = "",
                             const std::optional<std::string>& config = std::nullopt);

// Writes `text` to `path` atomically (ReplaceAtomically, SPEC FILE-1): an exclusive temporary
// file in the same folder, then rename, so an interrupted run never leaves a half-written
// report and a symlink at `path` or at a temporary's name is never written through. Returns an
// empty string or the error.
std::string WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_JSON_H_
