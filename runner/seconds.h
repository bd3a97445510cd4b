#pragma once

#include <chrono>

namespace sampcert::runner {

// Seconds of the steady clock since `since`: how long a step took (reports, never a decision).
inline double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace sampcert::runner
