#pragma once

#include <limits>

namespace sampcert::properties {

// The float infinity the row builders write. One definition for the library: its unity build
// (SAMPCERT_UNITY_BUILD) puts several of its files in one translation unit.
inline constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace sampcert::properties
