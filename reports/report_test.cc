// Reports: golden files for JSON / JUnit / HTML (SAMPCERT_REGENERATE_GOLDEN=1 rewrites them),
// escaping of everything a sampler controls, JSON round trip with NaN and infinities, merge of
// shards equal to the unsharded run, diff, waivers, atomic writes.
#include "reports/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "adapters/sampler.h"
#include "registry/open_sampler.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report_json.h"
#include "runner/runner.h"

namespace sampcert::reports {
namespace {

using results::Status;
using results::TestResult;

Report Synthetic() {
  Report r;
  r.context = {{"tool", "sampcert"},
               {"tool_version", "0.1.0"},
               {"git_revision", "golden"},
               {"compiler", "GCC"},
               {"cpu", "golden cpu"},
               {"profile", "quick"},
               {"seed", 7},
               {"shard", "0/1"},
               {"jobs", 1},
               {"isolation", "fork"},
               {"time_budget_s", 4},
               {"seconds", 1.5},
               {"false_alarm_budget", 1e-3},
               {"required_tv", 0.05},
               {"expectations", ""}};
  adapters::SamplerInfo info;
  info.name = "<script>alert(1)</script>";
  info.version = "1 & \"2\"";
  info.capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_PROBABILITIES;
  r.sampler = SamplerToJson(info, "./lib<evil>.so");
  TestResult pass;
  pass.property = "PROB-1";
  pass.dtype = "f32";
  pass.family = "llm_like";
  pass.cases = 12;
  pass.worst_error = 0.25;
  pass.worst_input = "f32 V=3 T=0.5 logits=[1,2,3] (llm_like)";
  pass.worst_temperature = 0.5;
  pass.coverage = {{"T tiny", 2}, {"V=1", 1}};
  TestResult fail;
  fail.property = "DIST-1";
  fail.dtype = "f32";
  fail.family = "flat_V64";
  fail.status = Status::kFail;
  fail.cases = 1;
  fail.p_value = 0;
  fail.level = 1e-5;
  fail.power_tv = 0.04;
  fail.draws = 4096;
  fail.observed = {100, 3996};
  fail.expected = {2048, 2048};
  fail.worst_error = std::numeric_limits<double>::infinity();
  fail.failure = results::Failure{"draws <b>do not</b> follow", "in", "min",
                                  "sampcert run --sampler x --item f32/flat_V64"};
  TestResult crash;
  crash.property = "ALL";
  crash.dtype = "f16";
  crash.family = "deterministic";
  crash.status = Status::kCrash;
  crash.note = "the sampler's worker died of signal 11 (Segmentation fault)";
  TestResult skipped;
  skipped.property = "BATCH-1";
  skipped.dtype = "f32";
  skipped.family = "*";
  skipped.status = Status::kNotSupported;
  r.results = {pass, fail, crash, skipped};
  return r;
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Golden(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(SAMPCERT_GOLDEN_DIR) / name;
  if (std::getenv("SAMPCERT_REGENERATE_GOLDEN") != nullptr) {
    ASSERT_EQ(WriteFileAtomically(path.string(), text), "");
    GTEST_SKIP() << "regenerated " << path;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing: run with SAMPCERT_REGENERATE_GOLDEN=1";
  EXPECT_EQ(Slurp(path), text) << "golden file " << path
                               << " differs; if the change is intended, rerun with "
                                  "SAMPCERT_REGENERATE_GOLDEN=1 and review the diff";
}

TEST(Golden, Json) { Golden("report.json", ReportToJson(Synthetic()).dump(2) + "\n"); }
TEST(Golden, JUnit) { Golden("report.junit.xml", RenderJUnit(Synthetic())); }
TEST(Golden, Html) { Golden("report.html", RenderHtml(Synthetic())); }

TEST(Escaping, SamplerControlledStringsAreText) {
  const std::string html = RenderHtml(Synthetic());
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>do not</b>"), std::string::npos);
  EXPECT_EQ(html.find("lib<evil>"), std::string::npos);
  const std::string xml = RenderJUnit(Synthetic());
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
  EXPECT_NE(xml.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(HtmlEscape("a&<>\"'"), "a&amp;&lt;&gt;&quot;&#39;");
  // No network fetches: nothing is loaded from elsewhere.
  for (const char* fetch : {"src=\"http", "href=\"http", "@import", "url("}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
}

TEST(Json, RoundTripKeepsNanAndInfinity) {
  const Report r = Synthetic();
  const nlohmann::json j = ReportToJson(r);
  EXPECT_EQ(j["results"][1]["worst_error"], "Infinity");
  EXPECT_FALSE(j["results"][0].contains("statistics"));  // a deterministic result has none
  std::string why;
  const Report back = ReportFromJson(nlohmann::json::parse(j.dump()), &why);
  ASSERT_EQ(why, "");
  ASSERT_EQ(back.results.size(), r.results.size());
  EXPECT_TRUE(std::isinf(back.results[1].worst_error));
  EXPECT_EQ(back.results[1].observed, r.results[1].observed);
  EXPECT_EQ(back.results[2].status, Status::kCrash);
  EXPECT_EQ(ReportToJson(back), j);
  // A report of another schema MAJOR is refused by name.
  nlohmann::json other = j;
  other["schema_version"] = "1.0";
  ReportFromJson(other, &why);
  EXPECT_NE(why.find("schema version 1.0"), std::string::npos) << why;
}

// Shards decide their own tests: merging them gives the unsharded verdict and results.
TEST(Merge, ShardsEqualTheUnshardedRun) {
  auto s = registry::OpenSampler("naive");
  ASSERT_TRUE(s.ok());
  properties::Profile profile;
  ASSERT_TRUE(properties::ProfileByName("quick", &profile));
  profile.valid_cases_per_dtype = 15;
  const properties::Plan plan = properties::MakePlan(profile, (*s)->info(), 11);
  auto run = [&](int i, int n) {
    runner::RunOptions o;
    o.isolate = false;
    o.shard_index = i;
    o.shard_count = n;
    Report r;
    r.context = {
        {"profile", "quick"}, {"seed", 11}, {"shard", std::to_string(i) + "/" + std::to_string(n)}};
    r.sampler = SamplerToJson((*s)->info(), "naive");
    auto outcome = runner::RunPlan([] { return registry::OpenSampler("naive"); }, "naive", plan,
                                   (*s)->info(), o);
    EXPECT_TRUE(outcome.ok());
    r.results = outcome.ok() ? outcome->results : std::vector<results::TestResult>{};
    return r;
  };
  const Report whole = run(0, 1);
  Report merged;
  std::string why;
  ASSERT_TRUE(Merge({run(0, 3), run(2, 3), run(1, 3)}, &merged, &why)) << why;
  EXPECT_TRUE(Diff(whole, merged).empty());
  EXPECT_EQ(Aggregate(whole.results), Aggregate(merged.results));
  EXPECT_EQ(whole.results.size(), merged.results.size());
  EXPECT_EQ(Conformant(whole), Conformant(merged));
  EXPECT_FALSE(Merge({run(0, 3), run(1, 3)}, &merged, &why));  // a shard missing
  EXPECT_NE(why.find("2 of 3 shards"), std::string::npos) << why;
  Report other_seed = run(2, 3);
  other_seed.context["seed"] = 12;
  EXPECT_FALSE(Merge({run(0, 3), run(1, 3), other_seed}, &merged, &why));
  EXPECT_NE(why.find("seed"), std::string::npos) << why;
}

TEST(Diff, ClassifiesChanges) {
  Report before = Synthetic();
  Report after = Synthetic();
  after.results[1].status = Status::kPass;     // DIST-1 f32: Fail -> Pass
  after.results[0].status = Status::kFail;     // PROB-1 f32: Pass -> Fail
  after.results[2].status = Status::kTimeout;  // ALL f16: Crash -> Timeout
  const std::vector<std::string> d = Diff(before, after);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], "DIFFERENCE ALL/f16: Crash -> Timeout");
  EXPECT_EQ(d[1], "FIX DIST-1/f32: Fail -> Pass");
  EXPECT_EQ(d[2], "REGRESSION PROB-1/f32: Pass -> Fail");
}

TEST(Waivers, KnownFailuresAreWaivedAndChangesReported) {
  std::vector<TestResult> results = Synthetic().results;
  Expectations exp;
  exp[{"DIST-1", "f32"}] = {Status::kFail, "known: the floor"};
  exp[{"PROB-1", "f32"}] = {Status::kFail, "was broken"};    // now passes: FIX
  exp[{"ALL", "f16"}] = {Status::kTimeout, "used to hang"};  // now crashes: DIFFERENCE
  const std::vector<std::string> d = ApplyExpectations(exp, &results);
  EXPECT_EQ(results[1].status, Status::kWaived);
  EXPECT_NE(results[1].note.find("known: the floor"), std::string::npos);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].rfind("DIFFERENCE ALL/f16", 0), 0u) << d[0];
  EXPECT_EQ(d[1].rfind("FIX PROB-1/f32", 0), 0u) << d[1];
  std::vector<TestResult> fresh = Synthetic().results;
  const std::vector<std::string> none = ApplyExpectations({}, &fresh);
  ASSERT_EQ(none.size(), 2u);  // DIST-1 and the crash, unexpected
  EXPECT_EQ(none[0].rfind("REGRESSION", 0), 0u);
}

TEST(AtomicWrite, ReplacesWholeFilesAndLeavesNoTemporaries) {
  const auto dir = std::filesystem::temp_directory_path() / "sampcert_atomic_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "report.json").string();
  ASSERT_EQ(WriteFileAtomically(path, "first"), "");
  ASSERT_EQ(WriteFileAtomically(path, "second, longer"), "");
  EXPECT_EQ(Slurp(path), "second, longer");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_NE(WriteFileAtomically((dir / "missing" / "x.json").string(), "x"), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sampcert::reports
