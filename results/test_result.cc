#include "results/test_result.h"

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

}  // namespace sampcert::results
