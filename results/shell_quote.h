// Quotes a word for a POSIX shell, so a reproduction command pasted into a terminal runs
// exactly the arguments it names and nothing else: a plug-in path containing `$(...)`, a
// backquote or a space stays one literal argument.
#ifndef SAMPCERT_RESULTS_SHELL_QUOTE_H_
#define SAMPCERT_RESULTS_SHELL_QUOTE_H_

#include <initializer_list>
#include <string>
#include <string_view>

namespace sampcert::results {

// Words made only of characters no shell treats specially ([A-Za-z0-9_./:=+,@%-], not starting
// with '~' or '=', which bash and zsh expand) are returned as they are, so ordinary commands stay
// readable; anything else is put in single quotes, each ' written as '\''. The empty word is ''.
inline std::string ShellQuote(std::string_view word) {
  bool plain = !word.empty() && word.front() != '~' && word.front() != '=';
  for (char c : word) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == '+' ||
                    c == ',' || c == '@' || c == '%' || c == '-';
    if (!ok) plain = false;
  }
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

// The words, each quoted, joined by spaces: a command line to print for pasting, e.g.
// ShellJoin({"sampcert", "run", "--sampler", path, "--case", std::to_string(i)}).
inline std::string ShellJoin(std::initializer_list<std::string_view> words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

}  // namespace sampcert::results

#endif  // SAMPCERT_RESULTS_SHELL_QUOTE_H_
