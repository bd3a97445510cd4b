// The checks of the command line's numeric and text options (SPEC OPT-1), on the option's text,
// before CLI11 converts it: CLI11 saturates or wraps an out-of-range integer ("--case 2^64" read
// as 2^63-1, "--seed -1" as 2^64-1) and takes any double, and a double such as 1e20 seconds
// overflowed where it became an rlimit (every item a Timeout "after 0 draws"). Each check
// refuses a value outside its range with the range, so what is accepted converts exactly.
#ifndef SAMPCERT_CLI_OPTION_CHECKS_H_
#define SAMPCERT_CLI_OPTION_CHECKS_H_

#include <cstdint>
#include <functional>
#include <string>

namespace sampcert::cli {

// A check returns "" for a valid text, else what CLI11 prints after the option's name.
using OptionCheck = std::function<std::string(const std::string&)>;

// A whole number in [lo, hi], in plain decimal: digits only (no sign, no "0x", no exponent, not
// empty). `what` names the unit ("draws"); the message gives the range.
OptionCheck WholeNumber(uint64_t lo, uint64_t hi, const std::string& what = "");

// A number of seconds in [lo, hi], or (lo, hi] when lo_open: a finite decimal (strtod's
// syntax, "1e3" included), nothing after it.
OptionCheck Seconds(double lo, bool lo_open, double hi);

// Any text but the empty one: an empty value is a usage error, never "not given".
OptionCheck NotEmpty();

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_OPTION_CHECKS_H_
