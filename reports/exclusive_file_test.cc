// SPEC FILE-1: every file the tool creates is created exclusively, never through a symlink. Each
// test plants links, to a victim file, at every name the tool can use in a folder (the fixed
// names the old code used: the writability probe ".sampcert-tmp.probe.PID" and the temporary
// ".NAME.tmp.PID", which the old code opened with O_TRUNC through the link) and checks that the
// victim keeps its contents.
#include "reports/exclusive_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/report_json.h"
#include "reports/report_set.h"

namespace sampcert::reports {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Planted {
  fs::path dir, victim;
  explicit Planted(const std::string& name) {
    const fs::path root = fs::path(::testing::TempDir()) / name;
    fs::remove_all(root);
    dir = root / "out";
    fs::create_directories(dir);
    victim = root / "victim";
    std::ofstream(victim) << "precious";
  }
  void Link(const std::string& name) const { fs::create_symlink(victim, dir / name); }
  std::string Victim() const { return Read(victim); }
};

TEST(ExclusiveFile, CreateExclusiveNeverOpensWhatIsThere) {
  const Planted p("exclusive_create");
  p.Link("link");
  const std::string why = CreateExclusive((p.dir / "link").string(), "overwritten");
  EXPECT_NE(why.find(std::strerror(EEXIST)), std::string::npos) << why;
  EXPECT_EQ(p.Victim(), "precious");
  std::ofstream(p.dir / "file") << "old";
  EXPECT_NE(CreateExclusive((p.dir / "file").string(), "new"), "");
  EXPECT_EQ(Read(p.dir / "file"), "old");
  ASSERT_EQ(CreateExclusive((p.dir / "fresh").string(), "new"), "");
  EXPECT_EQ(Read(p.dir / "fresh"), "new");
}

TEST(ExclusiveFile, TheWritabilityProbeTruncatesNothing) {
  const Planted p("exclusive_probe");
  p.Link(".sampcert-tmp.probe." + std::to_string(getpid()));
  p.Link(".sampcert-tmp." + std::to_string(getpid()) + ".probe.");
  EXPECT_EQ(CheckWritableFolder(p.dir.string()), "");
  EXPECT_EQ(p.Victim(), "precious");
}

TEST(ExclusiveFile, AnAtomicWriteReplacesLinksAndWritesThroughNone) {
  const Planted p("exclusive_atomic");
  p.Link(".report.html.tmp." + std::to_string(getpid()));
  p.Link("report.html");  // the destination itself: replaced by the new file, not followed
  ASSERT_EQ(WriteFileAtomically((p.dir / "report.html").string(), "<html>"), "");
  EXPECT_EQ(p.Victim(), "precious");
  EXPECT_FALSE(fs::is_symlink(p.dir / "report.html"));
  EXPECT_EQ(Read(p.dir / "report.html"), "<html>");
  int temporaries = 0;  // none left but the planted link
  for (const auto& e : fs::directory_iterator(p.dir)) {
    temporaries += e.path().filename().string().starts_with(".report.html.tmp.");
  }
  EXPECT_EQ(temporaries, 1);
}

TEST(ExclusiveFile, APublishedSetReplacesLinksAtEveryName) {
  const Planted p("exclusive_publish");
  for (const char* name : {"report.json", "report.html", "report.junit.xml", kManifestName}) {
    p.Link(name);
  }
  ASSERT_EQ(PublishFiles(p.dir.string(),
                         {{"report.html", "h"}, {"report.junit.xml", "j"}, {"report.json", "{}"}}),
            "");
  EXPECT_EQ(p.Victim(), "precious");
  EXPECT_EQ(Read(p.dir / "report.json"), "{}");
  EXPECT_FALSE(fs::is_symlink(p.dir / kManifestName));
}

// `--out` at a dangling symlink said "File exists" (create_directories' error): now the cause.
TEST(ExclusiveFile, ADanglingLinkAsTheFolderIsNamed) {
  const Planted p("exclusive_dangling");
  fs::create_symlink(p.dir / "missing", p.dir / "out");
  const std::string why = CheckWritableFolder((p.dir / "out").string());
  EXPECT_NE(why.find("is a symbolic link to"), std::string::npos) << why;
  EXPECT_NE(why.find("which does not exist"), std::string::npos) << why;
}

}  // namespace
}  // namespace sampcert::reports
