// Text that came from outside (a sampler's name, version and error messages, a path, a report
// file) is bytes, not UTF-8, until proven otherwise. These functions make it safe where it goes:
// JSON (valid UTF-8 only; nlohmann throws type_error 316 otherwise), the terminal (no control
// characters: an ANSI escape in a name must not clear the screen or paint a fake verdict), and
// XML 1.0 (which forbids most C0 controls and U+FFFE/U+FFFF even as character references).
#ifndef SAMPCERT_RESULTS_TEXT_H_
#define SAMPCERT_RESULTS_TEXT_H_

#include <string>
#include <string_view>

namespace sampcert::results {

// Valid UTF-8 unchanged; every maximal invalid subsequence (a stray continuation byte, a
// truncated sequence, an overlong form, a surrogate, a code point above U+10FFFF) becomes
// U+FFFD, as the WHATWG decoder does. The one sanitizer used wherever text enters JSON.
std::string SanitizeUtf8(std::string_view text);

// For the terminal: SanitizeUtf8, then C0 controls, DEL and C1 controls (U+0080..U+009F, which
// some terminals also obey) written as \xNN / \u00NN. Newline and tab are escaped too: one field
// stays on one line. Backslashes stay as they are, so a shell-quoted command stays pasteable.
std::string EscapeForTerminal(std::string_view text);

// For XML 1.0 character data and attribute values: SanitizeUtf8, markup characters escaped,
// characters XML 1.0 forbids (C0 controls other than tab, newline and carriage return,
// U+FFFE, U+FFFF) written as the visible text \xNN / \uFFFE.
std::string XmlEscape(std::string_view text);

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_TEXT_H_
