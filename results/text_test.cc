#include "results/text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "results/result_json.h"
#include "results/shell_quote.h"

namespace sampcert::results {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

TEST(SanitizeUtf8, KeepsValidTextAndReplacesInvalidSequences) {
  EXPECT_EQ(SanitizeUtf8("plain"), "plain");
  EXPECT_EQ(SanitizeUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a" + kReplacement + "b");            // not a lead byte
  EXPECT_EQ(SanitizeUtf8("\x80"), kReplacement);  // stray continuation
  EXPECT_EQ(SanitizeUtf8("\xE2\x82"
                         "A"),
            kReplacement + "A");                                     // truncated: one U+FFFD
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), kReplacement + kReplacement);  // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xF4\x90\x80\x80").substr(0, 3), kReplacement);  // above U+10FFFF
  EXPECT_EQ(SanitizeUtf8("tail\xF0\x9F"), "tail" + kReplacement);
  EXPECT_EQ(SanitizeUtf8(std::string("nul\0in", 6)), std::string("nul\0in", 6));
}

// The sanitized text is always valid for nlohmann's dump (which throws type_error 316 on
// invalid UTF-8): this is what aborted a run whose sampler had a Latin-1 name.
TEST(SanitizeUtf8, AnyBytesSurviveJson) {
  std::srand(7);
  for (int n = 0; n < 2000; ++n) {
    std::string bytes;
    for (int k = 0; k < 12; ++k) bytes += static_cast<char>(std::rand() & 0xFF);
    const nlohmann::json j = SanitizeUtf8(bytes);
    EXPECT_NO_THROW((void)j.dump()) << n;
  }
  TestResult r;
  r.property = "ERR-1";
  r.failure =
      Failure{"message \xFF\xFE", "input \xC3", "", "sampcert run --sampler '\xE9'", "", ""};
  r.note = "\x80";
  const nlohmann::json j = ToJson(r);
  EXPECT_NO_THROW((void)j.dump());
  EXPECT_EQ(ResultFromJson(j).failure->message, "message " + kReplacement + kReplacement);
}

TEST(EscapeForTerminal, EscapesControlCharacters) {
  // An ANSI sequence that clears the screen and prints a green verdict stays visible text.
  const std::string spoof = "x\x1b[2J\x1b[32mCONFORMANT\x1b[0m\r\n";
  const std::string shown = EscapeForTerminal(spoof);
  EXPECT_EQ(shown, "x\\x1b[2J\\x1b[32mCONFORMANT\\x1b[0m\\x0d\\x0a");
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
  EXPECT_EQ(EscapeForTerminal("\xC2\x9B"
                              "31m"),
            "\\u009b31m");                                   // C1 CSI
  EXPECT_EQ(EscapeForTerminal("'it'\\''s'"), "'it'\\''s'");  // shell quoting survives
  EXPECT_EQ(EscapeForTerminal("\x7F\xFF"), "\\x7f" + kReplacement);
  EXPECT_EQ(EscapeForTerminal("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(XmlEscape, OnlyCharactersXml10Allows) {
  EXPECT_EQ(XmlEscape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
  EXPECT_EQ(XmlEscape("\x01\x1b\t\n"), "\\x01\\x1b\t\n");
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBE\xEF\xBF\xBF"), "\\uFFFE\\uFFFF");
  EXPECT_EQ(XmlEscape("\xFF"), kReplacement);
  EXPECT_EQ(XmlEscape("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

// What bash makes of the quoted word is the word: run it through bash and compare.
std::string ThroughBash(const std::string& quoted, int* status) {
  std::string cmd = "printf '%s' " + quoted, sh = "'";
  for (char c : cmd) sh += c == '\'' ? std::string("'\\''") : std::string(1, c);
  FILE* p = popen(("bash -c " + sh + "'").c_str(), "r");
  if (p == nullptr) return "(popen failed)";
  std::string got;
  char buf[256];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) got.append(buf, n);
  *status = pclose(p);
  return got;
}

TEST(ShellQuote, TheShellReadsBackTheSameWord) {
  EXPECT_EQ(ShellQuote("stable_cpu"), "stable_cpu");
  EXPECT_EQ(ShellQuote("/tmp/lib-1.2/x.so"), "/tmp/lib-1.2/x.so");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("~/x.so"), "'~/x.so'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  const std::string marker = ::testing::TempDir() + "/shell_quote_ran";
  std::remove(marker.c_str());
  for (const std::string& word :
       {std::string("/tmp/$(touch ") + marker + ")/p.so", std::string("a b"), std::string("`id`"),
        std::string("x;touch ") + marker, std::string("'\"\\$HOME"), std::string("*"),
        std::string("=ls"), std::string("new\nline"),
        std::string("caf\xC3\xA9 $(touch ") + marker + ")"}) {
    int status = -1;
    EXPECT_EQ(ThroughBash(ShellQuote(word), &status), word) << ShellQuote(word);
    EXPECT_EQ(status, 0);
  }
  EXPECT_EQ(ShellJoin({"sampcert", "run", "--sampler", "/a b/$(x).so", "--case", "3"}),
            "sampcert run --sampler '/a b/$(x).so' --case 3");
  FILE* f = std::fopen(marker.c_str(), "r");
  EXPECT_EQ(f, nullptr) << "a quoted word ran a command";
  if (f) std::fclose(f);
}

// A word with bytes the terminal would not show as themselves is written $'...' with \xNN:
// printing the line changes nothing (EscapeForTerminal leaves it alone) and pasting it passes
// exactly the bytes. Before, the terminal's escaping turned a newline inside '...' into the
// four characters \x0a.
TEST(ShellQuote, ControlBytesAreAnsiCQuotedExactlyAndTerminalSafe) {
  EXPECT_EQ(ShellQuote("a\nb\tc\x1b"
                       "d\re"),
            "$'a\\x0ab\\x09c\\x1b"
            "d\\x0de'");
  EXPECT_EQ(ShellQuote("x\xff'\\"), "$'x\\xff\\'\\\\'");
  EXPECT_EQ(ShellQuote("r\xE2\x80\xAEl"), "$'r\\xe2\\x80\\xael'");  // U+202E
  EXPECT_EQ(ShellQuote("\xC2\x9B"
                       "1"),
            "$'\\xc2\\x9b"
            "1'");                                                // C1 CSI, then a digit
  EXPECT_EQ(ShellQuote("caf\xC3\xA9\n"), "$'caf\xC3\xA9\\x0a'");  // valid UTF-8 stays
  std::srand(11);
  for (int n = 0; n < 120; ++n) {
    std::string word;
    for (int k = 0; k < 10; ++k) {
      const int b = 1 + std::rand() % 255;  // no NUL: an argument cannot hold one
      word += static_cast<char>(b);
    }
    const std::string quoted = ShellQuote(word);
    EXPECT_EQ(EscapeForTerminal(quoted), quoted) << n;
    int status = -1;
    EXPECT_EQ(ThroughBash(quoted, &status), word) << quoted;
    EXPECT_EQ(status, 0);
  }
}

TEST(Bidi, ControlsAreVisibleTextInEveryOutput) {
  const std::string name =
      "abc\xE2\x80\xAE"
      "def\xE2\x81\xA6\xE2\x80\x8F\xD8\x9C";
  EXPECT_EQ(EscapeForTerminal(name), "abc\\u202edef\\u2066\\u200f\\u061c");
  EXPECT_EQ(XmlEscape(name), "abc\\u202Edef\\u2066\\u200F\\u061C");
  EXPECT_EQ(VisibleControls(name), "abc\\u202Edef\\u2066\\u200F\\u061C");
  for (char32_t cp : {0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066,
                      0x2067, 0x2068, 0x2069}) {
    EXPECT_TRUE(IsBidiControl(cp)) << static_cast<unsigned>(cp);
  }
  EXPECT_FALSE(IsBidiControl(0x200D));  // zero-width joiner: part of emoji, not a reordering
  EXPECT_FALSE(IsBidiControl(0x05D0));  // Hebrew letters stay as they are
}

}  // namespace
}  // namespace sampcert::results
