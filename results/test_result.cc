#include "results/test_result.h"

#include <algorithm>
#include <cmath>

namespace sampcert::results {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kPass: return "Pass";
    case Status::kWarning: return "Warning";
    case Status::kNotSupported: return "NotSupported";
    case Status::kKnownFailure: return "KnownFailure";
    case Status::kFail: return "Fail";
    case Status::kInconclusive: return "Inconclusive";
    case Status::kCrash: return "Crash";
    case Status::kTimeout: return "Timeout";
  }
  return "?";
}

bool ParseStatus(const std::string& name, Status* out) {
  for (Status s : {Status::kPass, Status::kWarning, Status::kNotSupported, Status::kKnownFailure,
                   Status::kFail, Status::kInconclusive, Status::kCrash, Status::kTimeout}) {
    if (name == StatusName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

bool IsConformant(Status s) {
  return s == Status::kPass || s == Status::kWarning || s == Status::kNotSupported;
}

std::vector<std::size_t> MostDeviatingCells(std::span<const double> observed,
                                            std::span<const double> expected, std::size_t limit) {
  const std::size_t n = std::min(observed.size(), expected.size());
  auto z = [&](std::size_t i) {
    return std::fabs(observed[i] - expected[i]) / std::sqrt(std::max(expected[i], 1.0));
  };
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return z(a) > z(b); });
  std::vector<std::size_t> out;
  for (std::size_t i : order) {
    if (out.size() == limit || !(z(i) > 0)) break;
    out.push_back(i);
  }
  return out;
}

}  // namespace sampcert::results
