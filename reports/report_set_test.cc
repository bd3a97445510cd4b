// The report set: published together with a manifest written last, no temporary left on any
// exit path, a failed rename reported with its own errno, a kill during publication never
// leaving a set that claims to be consistent, and readers that verify every file of it.
#include "reports/report_set.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
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
  ReportSetFiles set;
  EXPECT_EQ(ReadReportSet((dir / "report.json").string(), &set), "");
  EXPECT_EQ(set.files.at("report.junit.xml"), "<testsuites/>");
  // A report.json that is not the one the manifest lists is refused by name.
  std::ofstream(dir / "report.json") << "{\"other\": 1}";
  EXPECT_NE(ReadReportSet((dir / "report.json").string(), &set).find("does not match"),
            std::string::npos);
}

// Every file the manifest lists is checked, not only report.json: a new report.html beside the
// old report.json, a row file changed or replaced by a symlink, a missing file, a manifest
// that is missing or malformed, are each refused by name.
TEST(ReportSet, ReadersVerifyEveryFileOfTheSet) {
  const fs::path dir = FreshDir("report_set_verify");
  const auto with_row = [&] {
    std::vector<std::pair<std::string, std::string>> files = kSet;
    files.insert(files.begin(), {"row.f32.X.y.json", "{}\n"});
    return files;
  };
  const std::string json_path = (dir / "report.json").string();
  const auto refusal = [&](const std::function<void()>& damage) {
    fs::remove_all(dir);
    EXPECT_EQ(PublishFiles(dir.string(), with_row()), "");
    ReportSetFiles set;
    EXPECT_EQ(ReadReportSet(json_path, &set), "");
    damage();
    return ReadReportSet(json_path, &set);
  };
  EXPECT_NE(refusal([&] {
              std::ofstream(dir / "report.html") << "<html>other</html>";
            }).find("report.html does not match"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              std::ofstream(dir / "row.f32.X.y.json") << "{} ";
            }).find("row.f32.X.y.json does not match"),
            std::string::npos);
  std::ofstream(FreshDir("report_set_outside") / "secret") << "{}\n";  // the same bytes
  EXPECT_NE(refusal([&] {
              fs::remove(dir / "row.f32.X.y.json");
              fs::create_symlink(dir.parent_path() / "report_set_outside" / "secret",
                                 dir / "row.f32.X.y.json");
            }).find("symbolic link"),
            std::string::npos);
  EXPECT_NE(refusal([&] { fs::remove(dir / "report.junit.xml"); }).find("report.junit.xml"),
            std::string::npos);
  EXPECT_NE(refusal([&] { fs::remove(dir / kManifestName); }).find("no report.manifest.json"),
            std::string::npos);
  for (const char* bad :
       {R"({"files": [], "files": []})", R"({"files": [{"name": "../x", "sha256": "00"}]})",
        R"([1])", R"({"files": [{"name": "report.json"}]})"}) {
    EXPECT_NE(refusal([&] { std::ofstream(dir / kManifestName) << bad; }), "") << bad;
  }
}

// A re-rendered report.html replaces the set's file and the manifest follows it.
TEST(ReportSet, ReplacingAFileRepublishesTheManifest) {
  const fs::path dir = FreshDir("report_set_replace");
  ASSERT_EQ(PublishFiles(dir.string(), kSet), "");
  ReportSetFiles set;
  ASSERT_EQ(ReadReportSet((dir / "report.json").string(), &set), "");
  ASSERT_EQ(ReplaceSetFile(dir.string(), set, "report.html", "<html>again</html>"), "");
  ASSERT_EQ(ReadReportSet((dir / "report.json").string(), &set), "");
  EXPECT_EQ(set.files.at("report.html"), "<html>again</html>");
  EXPECT_EQ(set.files.at("report.json"), "{\"new\": true}");
}

TEST(ReportSet, ADirectoryInTheWayIsFoundBeforeTheOldSetIsTouched) {
  const fs::path dir = FreshDir("report_set_blocked");
  ASSERT_EQ(
      PublishFiles(dir.string(),
                   {{"report.html", "old"}, {"report.junit.xml", "old"}, {"report.json", "old"}}),
      "");
  fs::remove(dir / "report.html");
  fs::create_directories(dir / "report.html" / "x");
  const std::string why = PublishFiles(dir.string(), kSet);
  EXPECT_NE(why.find("report.html is a directory"), std::string::npos) << why;
  // Nothing was published: the old report.json and its manifest are still there, and the
  // readers refuse the set because its report.html is not a file.
  EXPECT_EQ(Read(dir / "report.json"), "old");
  ReportSetFiles set;
  EXPECT_NE(ReadReportSet((dir / "report.json").string(), &set).find("report.html"),
            std::string::npos);
}

TEST(ReportSet, AFailedRenameReportsItsOwnErrnoAndCleansUp) {
  const fs::path dir = FreshDir("report_set_rename");
  ASSERT_EQ(PublishFiles(dir.string(), kSet), "");
  // A non-empty folder put where report.junit.xml goes while the set is published (after the
  // check of the destinations): rename(2) fails with EISDIR.
  const std::string why = PublishFiles(dir.string(), kSet, [&](const std::string& name) {
    if (name != "report.html") return;
    fs::remove(dir / "report.junit.xml");
    fs::create_directories(dir / "report.junit.xml" / "x");
  });
  EXPECT_NE(why.find("report.junit.xml"), std::string::npos) << why;
  EXPECT_NE(why.find(std::strerror(EISDIR)), std::string::npos) << why;
  // No temporary left, and no manifest claiming the half-published set is whole: the readers
  // refuse it.
  EXPECT_EQ(Names(dir), (std::set<std::string>{"report.html", "report.junit.xml", "report.json"}));
  ReportSetFiles set;
  EXPECT_NE(ReadReportSet((dir / "report.json").string(), &set).find("no report.manifest.json"),
            std::string::npos);
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
  // The readers refuse the killed publication's mix of a new report.html and an old
  // report.json by the missing manifest.
  ReportSetFiles set;
  EXPECT_NE(ReadReportSet((dir / "report.json").string(), &set).find("no report.manifest.json"),
            std::string::npos);
  ASSERT_EQ(PublishFiles(dir.string(), kSet), "");
  EXPECT_EQ(Names(dir), (std::set<std::string>{"report.html", "report.junit.xml", "report.json",
                                               kManifestName}));
}

}  // namespace
}  // namespace sampcert::reports
