// The one reader of every JSON document sampcert reads (report.json, the manifest, row files,
// expectations files, a worker's message): bounded and strict. Each kind of document has its
// limits in one table (SPEC.md section 13): the file's size, the nesting depth, the length of
// one string or key and the number of values; a key given twice in one object is refused (the
// last would win silently), and so is invalid UTF-8. nlohmann's parser is iterative, so a
// document nested past the limit is refused without deep recursion; every later recursive walk
// (the schema validator, comparisons, dumps) then sees at most the limit's depth.
//
// Files are opened without blocking (a FIFO is refused, not waited on), must be regular files
// (no /dev/zero, no directory), are checked for size before they are read, and, where the name
// comes from a file rather than from the user, are opened without following a symlink.
#ifndef SAMPCERT_RESULTS_STRICT_JSON_H_
#define SAMPCERT_RESULTS_STRICT_JSON_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace sampcert::results {

// What is read; each kind has one row in the limits table (strict_json.cc).
enum class JsonKind {
  kReport,         // report.json
  kManifest,       // report.manifest.json
  kRowFile,        // row.*.json
  kExpectations,   // --expect FILE
  kWorkerMessage,  // a worker's result on its pipe (no file)
};

struct JsonLimits {
  std::size_t max_bytes;   // the document (the file's size)
  std::size_t max_depth;   // arrays and objects inside each other (a scalar root is 0)
  std::size_t max_string;  // bytes of one string or key
  std::size_t max_values;  // values of every kind, containers included
};
const JsonLimits& LimitsOf(JsonKind kind);
std::string_view KindName(JsonKind kind);  // "report", "row file", ...

// Parses `text` under the limits of `kind`. On failure returns false and sets *error to what
// was wrong and where (the byte offset, a limit and its value, the repeated key).
bool ParseJson(std::string_view text, JsonKind kind, nlohmann::json* out, std::string* error);

enum class Symlinks { kFollow, kRefuse };

// Reads a whole regular file of at most `max_bytes`. A symlink is refused (kRefuse) or followed
// to a regular file (kFollow: a path the user gave); a device, FIFO, socket or directory is
// refused, and so is a file larger than the limit, before anything is read.
bool ReadRegularFile(const std::string& path, std::size_t max_bytes, Symlinks symlinks,
                     std::string* text, std::string* error);

// ReadRegularFile with the kind's size limit, then ParseJson. `text` (optional) gets the bytes
// that were parsed, for a hash that must describe exactly them.
bool ReadJsonFile(const std::string& path, JsonKind kind, Symlinks symlinks, nlohmann::json* out,
                  std::string* error, std::string* text = nullptr);

// Exact integers: a JSON integer (never a float such as 1.0 or 1e3, a boolean or a string)
// within [0, max] or [min, max]; anything else is nullopt, never a truncated or wrapped value.
std::optional<uint64_t> ExactUnsigned(const nlohmann::json& v, uint64_t max = UINT64_MAX);
std::optional<int64_t> ExactSigned(const nlohmann::json& v, int64_t min = INT64_MIN,
                                   int64_t max = INT64_MAX);

// The JSON type of `v` in words ("a float", "a boolean", "a negative integer"), for errors.
std::string TypeInWords(const nlohmann::json& v);

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_STRICT_JSON_H_
