// Text that came from outside (a sampler's name, version and error messages, a path, a report
// file) is bytes, not UTF-8, until proven otherwise. These functions make it safe where it goes:
// JSON (valid UTF-8 only; nlohmann throws type_error 316 otherwise), the terminal (no control
// characters: an ANSI escape in a name must not clear the screen or paint a fake verdict), and
// XML 1.0 (which forbids most C0 controls and U+FFFE/U+FFFF even as character references), and
// none of them passes a bidirectional control raw.
#ifndef SAMPCERT_RESULTS_TEXT_H_
#define SAMPCERT_RESULTS_TEXT_H_

#include <string>
#include <string_view>

namespace sampcert::results {

// Valid UTF-8 unchanged; every maximal invalid subsequence (a stray continuation byte, a
// truncated sequence, an overlong form, a surrogate, a code point above U+10FFFF) becomes
// U+FFFD, as the WHATWG decoder does. The one sanitizer used wherever text enters JSON.
std::string SanitizeUtf8(std::string_view text);

// The controls that reorder the text around them (U+061C, U+200E, U+200F, U+202A..U+202E,
// U+2066..U+2069): a name ending in U+202E shows what follows it reversed, so a verdict or a
// path can read as something else. Every output writes them as visible text, never raw.
bool IsBidiControl(char32_t cp);

// For HTML (whose own escaping then handles the markup characters): SanitizeUtf8, then each
// bidirectional control written as the visible text \u202E, and each C0 control but tab and
// newline, DEL and each C1 control as \xNN or \u00NN (SPEC TEXT-2: ESC, CR and C1 controls
// raw in report.html drove the terminal of whoever ran `cat` on it). Tab and newline stay: in
// HTML they are white space, and on a terminal harmless.
std::string VisibleControls(std::string_view text);

// For the terminal: SanitizeUtf8, then C0 controls, DEL, C1 controls (U+0080..U+009F, which
// some terminals also obey) and bidirectional controls written as \xNN / \u00NN / \u202e.
// Newline and tab are escaped too: one field stays on one line. Backslashes stay as they are,
// so a shell-quoted command (ShellQuote writes such bytes as $'\xNN') stays pasteable.
std::string EscapeForTerminal(std::string_view text);

// For XML 1.0 character data and attribute values: SanitizeUtf8, markup characters escaped,
// characters XML 1.0 forbids (C0 controls other than tab, newline and carriage return,
// U+FFFE, U+FFFF) and bidirectional controls written as the visible text \xNN / \uFFFE.
std::string XmlEscape(std::string_view text);

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_TEXT_H_
