#include "runner/worker_message.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "results/result_json.h"
#include "results/strict_json.h"

namespace sampcert::runner {

using nlohmann::json;
using properties::PlanItem;
using results::Status;
using results::TestResult;

namespace {

// The fields of two declarations that differ, "version: '1.0' (describe) vs '2.0' (here)".
std::string InfoDifference(const json& a, const json& b) {
  std::string out;
  for (const auto& [k, v] : a.items()) {
    if (!b.contains(k) || b[k] != v) {
      out += fmt::format("{}{}: {} (describe step) vs {} (this worker)", out.empty() ? "" : "; ", k,
                         DumpMessage(v), b.contains(k) ? DumpMessage(b[k]) : "missing");
    }
  }
  return out.empty() ? "the declarations differ" : out;
}

// The results of a message, each strictly well formed; "" or why not.
std::string ParseResults(const json& results, std::vector<TestResult>* out) {
  try {
    for (const json& r : results) {
      // ResultFromJson reads leniently (a missing status is a default); the channel is strict.
      Status status;
      if (!r.is_object() || !r.contains("status") || !r["status"].is_string() ||
          !results::ParseStatus(r["status"].get<std::string>(), &status) ||
          !r.contains("property") || !r["property"].is_string() || !r.contains("family") ||
          !r["family"].is_string() || !r.contains("dtype") || !r["dtype"].is_string()) {
        return "a malformed result (status, property, dtype and family are required)";
      }
      out->push_back(results::ResultFromJson(r));
    }
  } catch (const std::exception& e) {
    return std::string("a malformed result (") + e.what() + ")";
  }
  return {};
}

// "" when `got` is exactly `want` (both sorted), else the missing and unexpected keys.
std::string KeyMismatch(const ResultKeys& got, const ResultKeys& want) {
  if (got == want) return {};
  auto names = [](const ResultKeys& a, const ResultKeys& b) {
    ResultKeys diff;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(diff));
    std::vector<std::string> out;
    for (const auto& k : diff) out.push_back(k.first + "/" + k.second);
    return out;
  };
  return fmt::format(
      "the item returned {} results, not the {} the plan requires (missing: {}; unexpected: {})",
      got.size(), want.size(), fmt::join(names(want, got), ", "),
      fmt::join(names(got, want), ", "));
}

}  // namespace

std::string ItemFamily(const PlanItem& item) {
  return item.name.empty() ? std::string(properties::FamilyOf(item.kind).name) : item.name;
}

std::string DumpMessage(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Snippet(const std::string& s) {
  std::string out = s.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return "'" + out + (s.size() > 200 ? "...'" : "'") + fmt::format(" ({} bytes)", s.size());
}

Expected<std::vector<TestResult>> CheckWorkerMessage(const std::string& message,
                                                     const std::string& nonce,
                                                     const json& declared_info,
                                                     const PlanItem& item,
                                                     const ResultKeys* expected) {
  auto bad = [&](const std::string& why) {
    return Error{ErrorCode::kInternal, fmt::format("{}; received {}", why, Snippet(message))};
  };
  json j;
  std::string parse_error;
  if (!results::ParseJson(message, results::JsonKind::kWorkerMessage, &j, &parse_error)) {
    return bad("the worker's result is not JSON within the reader's limits (" + parse_error + ")");
  }
  if (!j.is_object() || !j.contains("nonce") || j["nonce"] != nonce) {
    return bad("the worker's result does not carry this item's nonce (not the runner's message)");
  }
  if (j.contains("crash") && j["crash"].is_string()) {
    return Error{ErrorCode::kInternal, j["crash"].get<std::string>()};
  }
  if (!j.contains("info") || j["info"] != declared_info) {
    return Error{ErrorCode::kInternal,
                 "get_info in this item's worker differs from what the describe step saw: " +
                     InfoDifference(declared_info, j.value("info", json::object()))};
  }
  if (!j.contains("results") || !j["results"].is_array()) return bad("the result has no results");
  std::vector<TestResult> out;
  if (std::string why = ParseResults(j["results"], &out); !why.empty()) return bad(why);
  ResultKeys got;
  for (const TestResult& r : out) {
    if (r.dtype != item.dtype) {
      return bad(fmt::format("a result of dtype {} from an item of dtype {}", r.dtype, item.dtype));
    }
    got.emplace_back(r.property, r.family);
  }
  std::sort(got.begin(), got.end());
  ResultKeys want;
  if (expected != nullptr) {
    want = *expected;
  } else {
    want = {{"ABI-1", ItemFamily(item)}};  // without the plan's keys: at least the runner's own
    for (const auto& k : got) {
      if (k.first != "ABI-1") want.push_back(k);
    }
  }
  std::sort(want.begin(), want.end());
  if (std::string why = KeyMismatch(got, want); !why.empty()) return bad(why);
  return out;
}

}  // namespace sampcert::runner
