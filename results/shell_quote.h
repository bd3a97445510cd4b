// Quotes a word for a shell, so a reproduction command pasted into a terminal runs exactly the
// arguments it names and nothing else: a plug-in path containing `$(...)`, a backquote or a
// space stays one literal argument, and a config holding a newline, a tab or an escape
// character reaches the tool as those bytes.
#ifndef SAMPCERT_RESULTS_SHELL_QUOTE_H_
#define SAMPCERT_RESULTS_SHELL_QUOTE_H_

#include <initializer_list>
#include <string>
#include <string_view>

namespace sampcert::results {

// Words made only of characters no shell treats specially ([A-Za-z0-9_./:=+,@%-], not starting
// with '~' or '=', which bash and zsh expand) are returned as they are, so ordinary commands stay
// readable. A word holding a byte the terminal would not show as itself (a control character,
// DEL, a C1 or bidirectional control, invalid UTF-8: what EscapeForTerminal rewrites) is written
// in ANSI-C quotes, $'...', with those bytes as \xNN (bash, zsh, ksh; POSIX.1-2024 sh): the line
// holds only printable text, so printing it is safe and pasting it passes the same bytes.
// Anything else is put in single quotes, each ' written as '\''. The empty word is ''.
std::string ShellQuote(std::string_view word);

// The words, each quoted, joined by spaces: a command line to print for pasting, e.g.
// ShellJoin({"sampcert", "run", "--sampler", path, "--case", std::to_string(i)}).
std::string ShellJoin(std::initializer_list<std::string_view> words);

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_SHELL_QUOTE_H_
