#pragma once

#include <string>

#include "results/text.h"

namespace sampcert::cli {

// Text that came from a report or a sampler, made safe for the terminal
// (results::EscapeForTerminal), under the short name the commands' output lines use.
inline std::string S(const std::string& s) { return results::EscapeForTerminal(s); }

}  // namespace sampcert::cli
