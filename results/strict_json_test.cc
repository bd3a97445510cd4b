// The strict reader: limits, duplicate keys, exact integers, files that are not regular files.
#include "results/strict_json.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace sampcert::results {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool Parses(const std::string& text, JsonKind kind, std::string* why) {
  json j;
  return ParseJson(text, kind, &j, why);
}

// 200,000 levels: nlohmann's parser is iterative, so the refusal itself does not recurse; the
// walks after it (schema validation, comparison, dump) never see more than the limit.
TEST(StrictJson, DeepNestingIsRefusedWithoutRecursion) {
  std::string why;
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_FALSE(Parses(deep, JsonKind::kReport, &why));
  EXPECT_NE(why.find("nested deeper than the limit of 32"), std::string::npos) << why;
  const std::size_t limit = LimitsOf(JsonKind::kReport).max_depth;
  EXPECT_TRUE(Parses(std::string(limit, '[') + std::string(limit, ']'), JsonKind::kReport, &why))
      << why;
  EXPECT_FALSE(Parses("{\"a\":" + std::string(limit, '[') + std::string(limit, ']') + "}",
                      JsonKind::kReport, &why));
}

TEST(StrictJson, DuplicateKeysAreRefusedAtEveryLevel) {
  std::string why;
  EXPECT_FALSE(Parses(R"({"results": [1], "results": []})", JsonKind::kReport, &why));
  EXPECT_NE(why.find("\"results\" is given twice"), std::string::npos) << why;
  EXPECT_FALSE(Parses(R"({"a": [{"x": 1, "y": 2, "x": 3}]})", JsonKind::kReport, &why));
  // The same key in different objects, or in an object inside another, is fine.
  EXPECT_TRUE(Parses(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})", JsonKind::kReport, &why))
      << why;
}

TEST(StrictJson, StringsValuesAndSizeAreBounded) {
  std::string why;
  const std::size_t max_string = LimitsOf(JsonKind::kRowFile).max_string;
  EXPECT_TRUE(Parses("\"" + std::string(max_string, 'a') + "\"", JsonKind::kRowFile, &why));
  EXPECT_FALSE(Parses("\"" + std::string(max_string + 1, 'a') + "\"", JsonKind::kRowFile, &why));
  EXPECT_NE(why.find("above the limit of 4096"), std::string::npos) << why;
  EXPECT_FALSE(
      Parses("{\"" + std::string(max_string + 1, 'k') + "\": 1}", JsonKind::kRowFile, &why));
  std::string many = "[";
  for (std::size_t i = 0; i < LimitsOf(JsonKind::kManifest).max_values; ++i) many += "0,";
  many += "0]";
  EXPECT_FALSE(Parses(many, JsonKind::kManifest, &why));
  EXPECT_NE(why.find("values"), std::string::npos) << why;
  EXPECT_FALSE(Parses(std::string(LimitsOf(JsonKind::kManifest).max_bytes + 1, ' '),
                      JsonKind::kManifest, &why));
  EXPECT_FALSE(Parses("\"\xff\"", JsonKind::kReport, &why));  // not UTF-8
  EXPECT_FALSE(Parses("{\"a\": 1} x", JsonKind::kReport, &why));
  for (JsonKind k : {JsonKind::kReport, JsonKind::kManifest, JsonKind::kRowFile,
                     JsonKind::kExpectations, JsonKind::kWorkerMessage}) {
    EXPECT_FALSE(KindName(k).empty());
    EXPECT_GT(LimitsOf(k).max_depth, 4u);
  }
}

TEST(StrictJson, ExactIntegersOnly) {
  const auto u = [](const char* text, uint64_t max = UINT64_MAX) {
    return ExactUnsigned(json::parse(text), max);
  };
  EXPECT_EQ(u("0"), 0u);
  EXPECT_EQ(u("-0"), 0u);
  EXPECT_EQ(u("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(u("4294967295", UINT32_MAX), UINT32_MAX);
  for (const char* bad : {"1.0", "1e3", "-1", "1.5", "true", "false", "\"1\"", "null", "[1]",
                          "18446744073709551616"}) {
    EXPECT_FALSE(u(bad).has_value()) << bad;
  }
  EXPECT_FALSE(u("4294967296", UINT32_MAX).has_value());
  EXPECT_FALSE(u("256", 255).has_value());
  const auto s = [](const char* text) { return ExactSigned(json::parse(text)); };
  EXPECT_EQ(s("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(s("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"9223372036854775808", "2.5", "false", "-1e2"}) {
    EXPECT_FALSE(s(bad).has_value()) << bad;
  }
  EXPECT_EQ(ExactSigned(json::parse("-5"), 0, 10), std::nullopt);
  EXPECT_EQ(TypeInWords(json::parse("1.5")), "a non-integer number 1.5");
  EXPECT_EQ(TypeInWords(json::parse("true")), "the boolean true");
  EXPECT_EQ(TypeInWords(json::parse("-1")), "the negative integer -1");
}

fs::path Fresh(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(StrictJson, OnlyRegularFilesOfBoundedSize) {
  const fs::path dir = Fresh("strict_json_files");
  std::ofstream(dir / "ok.json") << R"({"a": 1})";
  json j;
  std::string why, text;
  ASSERT_TRUE(ReadJsonFile((dir / "ok.json").string(), JsonKind::kRowFile, Symlinks::kRefuse, &j,
                           &why, &text))
      << why;
  EXPECT_EQ(text, R"({"a": 1})");
  // A symlink: followed when the user named it, refused when a report names it.
  fs::create_symlink(dir / "ok.json", dir / "link.json");
  EXPECT_TRUE(
      ReadJsonFile((dir / "link.json").string(), JsonKind::kRowFile, Symlinks::kFollow, &j, &why));
  EXPECT_FALSE(
      ReadJsonFile((dir / "link.json").string(), JsonKind::kRowFile, Symlinks::kRefuse, &j, &why));
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  // Devices, a FIFO (not waited on) and a directory, even through a symlink the user gave.
  fs::create_symlink("/dev/zero", dir / "zero.json");
  ASSERT_EQ(mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  for (const char* name : {"zero.json", "fifo.json", "."}) {
    EXPECT_FALSE(ReadRegularFile((dir / name).string(), 1 << 20, Symlinks::kFollow, &text, &why));
    EXPECT_NE(why.find("not a regular file"), std::string::npos) << name << ": " << why;
  }
  // Too large: refused from its size, before it is read.
  std::ofstream(dir / "big.json") << std::string(2000, ' ') << "1";
  EXPECT_FALSE(ReadRegularFile((dir / "big.json").string(), 1000, Symlinks::kFollow, &text, &why));
  EXPECT_NE(why.find("above the limit of 1000"), std::string::npos) << why;
  EXPECT_FALSE(ReadRegularFile((dir / "missing").string(), 10, Symlinks::kFollow, &text, &why));
  EXPECT_NE(why.find("cannot open"), std::string::npos) << why;
}

}  // namespace
}  // namespace sampcert::results
