// The report set (issue 11, point 7): published together with a manifest written last, no
// temporary left on any exit path, a failed rename reported with its own errno, a kill during
// publication never leaving a set that claims to be consistent.
#include "reports/report_set.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reports/sha256.h"

namespace sampcert::reports {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const std::vector<std::pair<std::string, std::string>> kSet = {
    {"report.html", "<html>new</html>"},
    {"report.junit.xml", "<testsuites/>"},
    {"report.json", "{\"new\": true}"}};

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const fs::path dir = FreshDir("sha256_file");
  std::ofstream(dir / "f") << "abc";
  std::string why;
  EXPECT_EQ(FileSha256((dir / "f").string(), &why), Sha256Hex("abc"));
  EXPECT_EQ(FileSha256((dir / "missing").string(), &why), "");
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(ReportSet, PublishesAllFilesAndTheManifestAndNoTemporaries) {
  const fs::path dir = FreshDir("report_set_ok");
  ASSERT_EQ(PublishFiles(dir.string(), kSet), "");
  EXPECT_EQ(Names(dir), (std::set<std::string>{"report.html", "report.junit.xml", "report.json",
                                               kManifestName}));
  EXPECT_EQ(Read(dir / "report.json"), "{\"new\": true}");
  EXPECT_NE(Read(dir / kManifestName).find(Sha256Hex("<testsuites/>")), std::string::npos);
  EXPECT_EQ(CheckManifest((dir / "report.json").string()), "");
  // A report.json that is not the one the manifest lists is refused by name.
  std::ofstream(dir / "report.json") << "{\"other\": 1}";
  EXPECT_NE(CheckManifest((dir / "report.json").string()).find("does not match"),
            std::string::npos);
}

TEST(ReportSet, AFailedRenameReportsItsOwnErrnoAndCleansUp) {
  const fs::path dir = FreshDir("report_set_rename");
  ASSERT_EQ(PublishFiles(dir.string(), kSet), "");
  // A non-empty folder where report.junit.xml goes: rename(2) fails with EISDIR.
  fs::remove(dir / "report.junit.xml");
  fs::create_directories(dir / "report.junit.xml" / "x");
  const std::string why = PublishFiles(dir.string(), kSet);
  EXPECT_NE(why.find("report.junit.xml"), std::string::npos) << why;
  EXPECT_NE(why.find(std::strerror(EISDIR)), std::string::npos) << why;
  // No temporary left, and no manifest claiming the half-published set is whole.
  EXPECT_EQ(Names(dir), (std::set<std::string>{"report.html", "report.junit.xml", "report.json"}));
}

TEST(ReportSet, UnwritableFolderFoundBeforehand) {
  EXPECT_EQ(CheckWritableFolder(FreshDir("report_set_writable").string()), "");
  const std::string under_file = (FreshDir("report_set_file") / "f").string();
  std::ofstream(under_file) << "x";
  EXPECT_NE(CheckWritableFolder(under_file + "/sub"), "");
  if (geteuid() != 0) {  // root writes anywhere
    const fs::path ro = FreshDir("report_set_readonly");
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(CheckWritableFolder(ro.string()).find("not writable"), std::string::npos);
    fs::permissions(ro, fs::perms::owner_all);
  }
}

// SIGKILL after the first file is published: before, report.json could be new beside an old
// report.junit.xml with a 28 MB temporary left. Now the old manifest is gone (the folder says its
// set is not known to be consistent), report.json is still the old one (it is renamed after the
// others), and the next publication removes the dead process's temporary folder.
TEST(ReportSet, AKillDuringPublicationLeavesNoConsistentLookingMix) {
  const fs::path dir = FreshDir("report_set_kill");
  ASSERT_EQ(
      PublishFiles(dir.string(),
                   {{"report.html", "old"}, {"report.junit.xml", "old"}, {"report.json", "old"}}),
      "");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    PublishFiles(dir.string(), kSet, [](const std::string&) { raise(SIGKILL); });
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(Read(dir / "report.html"), "<html>new</html>");
  EXPECT_EQ(Read(dir / "report.json"), "old");
  EXPECT_FALSE(fs::exists(dir / kManifestName));
  int temporaries = 0;
  for (const std::string& n : Names(dir)) temporaries += n.rfind(".sampcert-tmp.", 0) == 0;
  EXPECT_EQ(temporaries, 1);  // the killed process could not clean up
  ASSERT_EQ(PublishFiles(dir.string(), kSet), "");
  EXPECT_EQ(Names(dir), (std::set<std::string>{"report.html", "report.junit.xml", "report.json",
                                               kManifestName}));
}

}  // namespace
}  // namespace sampcert::reports
