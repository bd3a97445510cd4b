// The command line's row options come from the row's table: every field has its flag, bound to
// its member, and --row excludes each of them.
#include "cli/row_options.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "adapters/row_fields.h"

namespace sampcert::cli {
namespace {

using adapters::RowField;

// Parses `args` with the row options of a fresh command; the parsed parameters, or the error.
struct Parsed {
  RowParams params;
  std::string error;
};
Parsed Parse(std::vector<std::string> args, bool with_row_file = false) {
  CLI::App app{"test"};
  Parsed out;
  std::string row_file;
  CLI::Option* row = with_row_file ? app.add_option("--row", row_file, "a row file") : nullptr;
  AddRowParamOptions(&app, &out.params, row);
  std::vector<const char*> argv{"test"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    out.error = e.what();
  }
  return out;
}

// A value of the field's type that is not its default, as the command line writes it.
std::string NonDefault(const RowField& f) {
  const RowParams defaults;
  return adapters::VisitRowField(f, defaults, [](const auto& v) -> std::string {
    using T = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_same_v<T, float>) {
      return v == 0.375f ? "0.25" : "0.375";
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return "9007199254740993";  // 2^53 + 1: not a double, so parsed as an integer
    } else {
      return "18446744073709551615";
    }
  });
}

TEST(RowOptions, EveryFieldHasItsFlag) {
  std::vector<std::string> all;
  for (const RowField& f : adapters::RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    const std::string value = NonDefault(f);
    // Each of the field's names sets the field, and only it.
    std::string names(f.flag);
    for (std::size_t start = 0; start <= names.size();) {
      const std::size_t comma = std::min(names.find(',', start), names.size());
      const std::string name = names.substr(start, comma - start);
      start = comma + 1;
      const Parsed p = Parse({name, value});
      ASSERT_EQ(p.error, "") << name;
      for (const RowField& g : adapters::RowFields()) {
        const std::string got = adapters::VisitRowField(
            g, p.params, [](const auto& v) { return fmt::format("{}", v); });
        const RowParams defaults;
        const std::string want =
            &g == &f ? value : adapters::VisitRowField(g, defaults, [](const auto& v) {
              return fmt::format("{}", v);
            });
        EXPECT_EQ(got, want) << name << " set " << g.name;
      }
    }
    // --row gives the whole row: a field's flag beside it is refused.
    EXPECT_NE(
        Parse({"--row", "r.json", std::string(f.flag.substr(0, f.flag.find(','))), value}, true)
            .error,
        "");
    // The help of --row lists it.
    std::string shortest = std::string(f.flag.substr(f.flag.rfind(',') + 1));
    if (f.flag.find(',') == std::string_view::npos) shortest = std::string(f.flag);
    EXPECT_NE(RowParamFlagList().find(shortest), std::string::npos) << RowParamFlagList();
  }
  EXPECT_EQ(RowParamFlagList(),
            "-t, --top-k, --top-p, --min-p, --row-id, --repetition-penalty, --presence-penalty, "
            "--frequency-penalty, --row-seed, --seed-mode, --min-tokens, --eos-token-id and "
            "--mask-layout");
}

TEST(RowOptions, UnsignedFieldsRefuseWhatCli11WouldWrap) {
  for (const RowField& f : adapters::RowFields()) {
    if (adapters::RowFieldType(f) != "u64") continue;
    const std::string flag(f.flag);
    for (const char* bad : {"-1", "18446744073709551616", "1e3", ""}) {
      EXPECT_NE(Parse({flag, bad}).error, "") << flag << " " << bad;
    }
  }
  EXPECT_EQ(CheckUint64("0"), "");
  EXPECT_NE(CheckUint64("-1"), "");
}

}  // namespace
}  // namespace sampcert::cli
