#include "cli/option_checks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "results/text.h"

namespace sampcert::cli {
namespace {

std::string Quoted(const std::string& text) { return "'" + results::EscapeForTerminal(text) + "'"; }

}  // namespace

OptionCheck WholeNumber(uint64_t lo, uint64_t hi, const std::string& what) {
  return [lo, hi, what](const std::string& text) -> std::string {
    uint64_t v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || ec != std::errc() || ptr != end || v < lo || v > hi) {
      return fmt::format("must be a whole number{} in [{}, {}] in decimal, not {}",
                         what.empty() ? "" : " of " + what, lo, hi, Quoted(text));
    }
    return {};
  };
}

OptionCheck Seconds(double lo, bool lo_open, double hi) {
  return [lo, lo_open, hi](const std::string& text) -> std::string {
    char* end = nullptr;
    const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
    const bool parsed = !text.empty() && end != nullptr && *end == '\0' && std::isfinite(v);
    if (!parsed || (lo_open ? v <= lo : v < lo) || v > hi) {
      return fmt::format("must be a number of seconds in {}{}, {}], not {}", lo_open ? "(" : "[",
                         lo, hi, Quoted(text));
    }
    return {};
  };
}

OptionCheck NotEmpty() {
  return [](const std::string& text) -> std::string {
    return text.empty() ? "must not be empty (leave the option out to give none)" : "";
  };
}

}  // namespace sampcert::cli
