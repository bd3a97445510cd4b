#include "results/shell_quote.h"

#include <cstdint>
#include <cstdio>

#include "results/text.h"

namespace sampcert::results {
namespace {

bool Plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '/' || c == ':' || c == '=' || c == '+' || c == ',' || c == '@' ||
         c == '%' || c == '-';
}

// The length of the UTF-8 sequence a lead byte announces (1 for ASCII and for a byte that
// cannot lead one).
std::size_t SequenceLength(uint8_t lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 1;
}

// $'...': printable ASCII as itself (\ and ' escaped), each valid character the terminal shows
// as itself raw, every other byte as \xNN (two hex digits, so a following digit is not read
// into it).
std::string AnsiCQuote(std::string_view word) {
  std::string out = "$'";
  std::size_t i = 0;
  while (i < word.size()) {
    const auto c = static_cast<uint8_t>(word[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '\\' || c == '\'') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    const std::size_t n = c >= 0x80 ? SequenceLength(c) : 1;
    const std::string_view chunk = word.substr(i, n);
    if (n > 1 && chunk.size() == n && EscapeForTerminal(chunk) == chunk) {
      out += chunk;
      i += n;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(c));
    out += hex;
    ++i;
  }
  return out + "'";
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  bool plain = !word.empty() && word.front() != '~' && word.front() != '=';
  for (char c : word) plain = plain && Plain(c);
  if (plain) return std::string(word);
  if (EscapeForTerminal(word) != word) return AnsiCQuote(word);
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

std::string ShellJoin(std::initializer_list<std::string_view> words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

}  // namespace sampcert::results
