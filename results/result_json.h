// One test result to and from JSON: the worker's pipe and the report use the same encoding,
// with NaN and infinities written legally (as the strings "NaN", "Infinity", "-Infinity").
#ifndef SAMPCERT_RESULTS_RESULT_JSON_H_
#define SAMPCERT_RESULTS_RESULT_JSON_H_

#include <nlohmann/json.hpp>

#include "results/test_result.h"

namespace sampcert::results {

nlohmann::json Number(double v);  // finite: a number; else "NaN" / "Infinity" / "-Infinity"
double NumberFrom(const nlohmann::json& j);

nlohmann::json ToJson(const TestResult& r);
// Throws on a missing or unknown status or a wrongly typed field (the caller says whose).
TestResult ResultFromJson(const nlohmann::json& j);

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_RESULT_JSON_H_
