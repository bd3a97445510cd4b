#include "results/text.h"

#include <cstdint>
#include <cstdio>

namespace sampcert::results {
namespace {

// Decodes one code point at text[i]. Returns its length (1..4) and sets *cp, or returns 0 for
// an invalid sequence; *bad_len is then the length of the maximal invalid prefix to replace
// (Unicode's "maximal subpart" practice, so "\xE2\x82" + "A" gives one U+FFFD and then A).
std::size_t Decode(std::string_view text, std::size_t i, char32_t* cp, std::size_t* bad_len) {
  const auto b = [&](std::size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t c = b(i);
  *bad_len = 1;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  std::size_t len;
  char32_t v;
  uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    v = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    v = c & 0x07;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if (i + k >= text.size()) return 0;
    const uint8_t x = b(i + k);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (x < l || x > h) return 0;
    v = (v << 6) | (x & 0x3F);
    *bad_len = k + 1;
  }
  *cp = v;
  return len;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Calls f(code point) for each code point of the sanitized text.
template <typename F>
void ForEachCodePoint(std::string_view text, F f) {
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t cp;
    std::size_t bad;
    const std::size_t n = Decode(text, i, &cp, &bad);
    if (n == 0) {
      f(char32_t{0xFFFD});
      i += bad;
    } else {
      f(cp);
      i += n;
    }
  }
}

std::string Hex(const char* format, unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

bool IsBidiControl(char32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string VisibleControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachCodePoint(text, [&](char32_t cp) {
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F) {
      out += Hex("\\x%02x", static_cast<unsigned>(cp));
    } else if ((cp >= 0x80 && cp <= 0x9F) || IsBidiControl(cp)) {
      out += Hex("\\u%04X", static_cast<unsigned>(cp));
    } else {
      AppendUtf8(cp, &out);
    }
  });
  return out;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachCodePoint(text, [&](char32_t cp) { AppendUtf8(cp, &out); });
  return out;
}

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachCodePoint(text, [&](char32_t cp) {
    if (cp < 0x20 || cp == 0x7F) {
      out += Hex("\\x%02x", static_cast<unsigned>(cp));
    } else if ((cp >= 0x80 && cp <= 0x9F) || IsBidiControl(cp)) {
      out += Hex("\\u%04x", static_cast<unsigned>(cp));
    } else {
      AppendUtf8(cp, &out);
    }
  });
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachCodePoint(text, [&](char32_t cp) {
    switch (cp) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>': out += "&gt;"; return;
      case '"': out += "&quot;"; return;
      case '\'': out += "&apos;"; return;
      default: break;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')) {
      out += Hex("\\x%02x", static_cast<unsigned>(cp));
    } else if (cp == 0xFFFE || cp == 0xFFFF || IsBidiControl(cp)) {
      out += Hex("\\u%04X", static_cast<unsigned>(cp));
    } else {
      AppendUtf8(cp, &out);
    }
  });
  return out;
}

}  // namespace sampcert::results
