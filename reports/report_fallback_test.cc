// A report set that cannot be published where it was asked for is saved in a fresh folder that
// the error names; never lost.
#include "reports/report_fallback.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sampcert::reports {
namespace {

namespace fs = std::filesystem;

TEST(ReportFallback, ABrokenOutFolderSavesTheSetElsewhereAndSaysWhere) {
  const fs::path parent = fs::path(::testing::TempDir()) / "report_fallback";
  fs::remove_all(parent);
  fs::create_directories(parent);
  Report report;
  report.context = {{"profile", "quick"}};
  report.sampler = {{"name", "s"}};
  results::TestResult r;
  r.property = "RANGE-1";
  r.dtype = "f32";
  r.family = "deterministic";
  report.results.push_back(r);
  std::string path;
  EXPECT_EQ(WriteReportSetOrFallback((parent / "ok").string(), report, &path), "");
  EXPECT_EQ(path, (parent / "ok" / "report.json").string());
  // The folder replaced by a regular file (what a sampler could do during the run).
  std::ofstream(parent / "out") << "not a folder";
  const std::string why = WriteReportSetOrFallback((parent / "out").string(), report, &path);
  const std::string said = "the results are saved in ";
  const auto at = why.find(said);
  ASSERT_NE(at, std::string::npos) << why;
  const fs::path saved = why.substr(at + said.size());
  EXPECT_EQ(saved.parent_path(), parent) << "beside --out first";
  EXPECT_EQ(path, (saved / "report.json").string());
  std::ifstream in(saved / "report.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("RANGE-1"), std::string::npos);
}

// A full disk (here: RLIMIT_FSIZE 0, every write fails with EFBIG) left an empty
// sampcert-unpublished-* folder per place tried and per run; now each is removed.
TEST(ReportFallback, AFullDiskLeavesNoEmptyFolders) {
  const fs::path parent = fs::path(::testing::TempDir()) / "report_fallback_full";
  fs::remove_all(parent);
  fs::create_directories(parent / "tmp");
  std::ofstream(parent / "out") << "not a folder";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit none{0, 0};
    setrlimit(RLIMIT_FSIZE, &none);
    setenv("TMPDIR", (parent / "tmp").c_str(), 1);
    Report report;
    report.context = {{"profile", "quick"}};  // every report the tool writes has its context
    report.sampler = {{"name", "s"}};
    std::string path;
    const std::string why = WriteReportSetOrFallback((parent / "out").string(), report, &path);
    _exit(why.find("nor save it elsewhere") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the run had room after all";
  for (const fs::path& dir : {parent, parent / "tmp"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      EXPECT_FALSE(e.path().filename().string().starts_with("sampcert-unpublished-")) << e.path();
    }
  }
}

}  // namespace
}  // namespace sampcert::reports
