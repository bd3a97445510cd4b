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
#include "reports/report_set.h"
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
               {"expectations", ""},
               {"plan_version", "0123456789abcdef"},
               {"filters", nlohmann::json::object()}};
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
  fail.failure = results::Failure{"draws <b>do not</b> follow",
                                  "in",
                                  "min",
                                  "sampcert run --sampler x --item f32/flat_V64",
                                  "",
                                  ""};
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
    r.context = {{"profile", "quick"},
                 {"seed", 11},
                 {"shard", std::to_string(i) + "/" + std::to_string(n)},
                 {"filters", nlohmann::json::object()}};
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
  EXPECT_EQ(d[0], "REGRESSION ALL/f16: Crash -> Timeout");  // a new Timeout
  EXPECT_EQ(d[1], "FIX DIST-1/f32: Fail -> Pass");
  EXPECT_EQ(d[2], "REGRESSION PROB-1/f32: Pass -> Fail");
}

// Issue 11: a run that turns everything into Crash, or loses results, is a regression (before:
// "DIFFERENCE"/"NEW"/"REMOVED", exit 0); reports of different plans are not compared.
TEST(Diff, NewFailuresAndRemovedResultsAreRegressions) {
  const Report before = Synthetic();
  Report all_crash = Synthetic();
  for (TestResult& r : all_crash.results) r.status = Status::kCrash;
  for (const std::string& line : Diff(before, all_crash)) {
    EXPECT_EQ(line.rfind("REGRESSION", 0), 0u) << line;
  }
  EXPECT_EQ(Diff(before, all_crash).size(), 3u);  // ALL/f16 was Crash already
  Report fewer = Synthetic();
  fewer.results.erase(fewer.results.begin());  // PROB-1/f32 gone
  const auto d = Diff(before, fewer);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "REGRESSION PROB-1/f32: removed (was Pass)");
  Report new_test = Synthetic();
  TestResult t = new_test.results[0];
  t.property = "TAIL-1";
  t.status = Status::kInconclusive;
  new_test.results.push_back(t);
  ASSERT_EQ(Diff(before, new_test).size(), 1u);
  EXPECT_EQ(Diff(before, new_test)[0], "REGRESSION TAIL-1/f32: new, Inconclusive");
  Report family_gone = Synthetic();
  TestResult extra = family_gone.results[0];
  extra.family = "flat";
  Report with_extra = Synthetic();
  with_extra.results.push_back(extra);
  ASSERT_EQ(Diff(with_extra, family_gone).size(), 1u);
  EXPECT_EQ(Diff(with_extra, family_gone)[0], "REGRESSION PROB-1/f32/flat: removed (was Pass)");
  Report replanned = all_crash;
  replanned.context["plan_version"] = "fedcba9876543210";
  const auto p = Diff(before, replanned);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rfind("PLAN CHANGED \"0123456789abcdef\" -> \"fedcba9876543210\"", 0), 0u) << p[0];
}

// Issue 11: wrong-typed JSON was an uncaught nlohmann exception (exit 134) and an unknown status
// was read as Pass; now every problem is an error naming its JSON path.
TEST(Json, SchemaViolationsAreErrorsWithTheirPath) {
  const nlohmann::json good = ReportToJson(Synthetic());
  std::string why;
  ReportFromJson(good, &why);
  ASSERT_EQ(why, "");
  struct Case {
    const char* pointer;
    nlohmann::json value;
    const char* expect;
  };
  for (const Case& c : {Case{"/results/1/status", "Passed", "/results/1/status"},
                        Case{"/results/0/cases", "12", "/results/0/cases"},
                        Case{"/sampler/name", 5, "/sampler/name"},
                        Case{"/completeness/complete", "yes", "/completeness/complete"},
                        Case{"/context/seed", -1, "/context/seed"},
                        Case{"/sampler/file_sha256", "xyz", "/sampler/file_sha256"}}) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(c.pointer)] = c.value;
    const Report r = ReportFromJson(bad, &why);
    EXPECT_NE(why.find(c.expect), std::string::npos) << c.pointer << ": " << why;
    EXPECT_TRUE(r.results.empty()) << c.pointer;
  }
  nlohmann::json no_results = good;
  no_results.erase("results");
  ReportFromJson(no_results, &why);
  EXPECT_NE(why.find("results"), std::string::npos) << why;
  ReportFromJson(nlohmann::json::array(), &why);
  EXPECT_NE(why.find("/schema_version"), std::string::npos) << why;
  // The library reader itself refuses an unknown status rather than defaulting to Pass.
  nlohmann::json r = good["results"][0];
  r["status"] = "Passed";
  EXPECT_THROW(results::ResultFromJson(r), std::exception);
}

// Issue 11: a sampler's bytes (invalid UTF-8, controls, U+FFFE) never abort a report and never
// make the JUnit file ill-formed or the terminal summary lie.
TEST(Text, HostileNamesAndMessagesAreSafeEverywhere) {
  Report r = Synthetic();
  adapters::SamplerInfo info;
  info.name = "\xff\xfe\x1b[2J\x1b[32mCONFORMANT\x1b[0m\xef\xbf\xbe";
  info.version = "\xc3(\x01";
  r.sampler = SamplerToJson(info, "/tmp/\xe9/p.so");
  r.results[1].failure->message = "bad \xed\xa0\x80 \xef\xbf\xbf \x02";
  r.results[2].note = "\x9b\x80";
  const nlohmann::json j = ReportToJson(r);
  std::string text;
  ASSERT_NO_THROW(text = j.dump());
  std::string why;
  ReportFromJson(nlohmann::json::parse(text), &why);
  EXPECT_EQ(why, "");
  const std::string xml = RenderJUnit(r);
  for (unsigned char c : xml) {
    EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t' || c == '\r') << static_cast<int>(c);
  }
  EXPECT_EQ(xml.find("\xef\xbf\xbe"), std::string::npos);  // U+FFFE
  EXPECT_EQ(xml.find("\xef\xbf\xbf"), std::string::npos);  // U+FFFF
  EXPECT_EQ(xml.find("\xff"), std::string::npos);
  const std::string summary = TextSummary(r, "out/report.json");
  EXPECT_EQ(summary.find('\x1b'), std::string::npos);
  EXPECT_NE(summary.find("\\x1b[32mCONFORMANT"), std::string::npos);
  EXPECT_NE(summary.find("verdict: NOT CONFORMANT"), std::string::npos);
}

// Issue 11: merge refused only a missing shard count and a seed or name mismatch; it merged
// incomplete, filtered, differently split and differently built shards.
TEST(Merge, RefusesWhatIsNotOneRun) {
  auto shard = [](const std::string& s) {
    Report r = Synthetic();
    r.context["shard"] = s;
    r.results.resize(1);
    r.results[0].family = "of shard " + s;  // each shard carries its own result
    return r;
  };
  Report merged;
  std::string why;
  ASSERT_TRUE(Merge({shard("0/2"), shard("1/2")}, &merged, &why)) << why;
  auto refused = [&](std::vector<Report> shards, const std::string& expect) {
    std::string e;
    EXPECT_FALSE(Merge(shards, &merged, &e)) << expect;
    EXPECT_NE(e.find(expect), std::string::npos) << e;
  };
  refused({shard("0/3"), shard("2/3")}, "missing 1/3");
  refused({shard("0/2"), shard("1/3"), shard("2/3")}, "different splits");
  refused({shard("0/2"), shard("01/2")}, "is not a shard");
  refused({shard("0/2"), shard("0/2")}, "given twice");
  Report incomplete = shard("1/2");
  incomplete.complete = false;
  incomplete.incomplete_reason = "SIGTERM";
  refused({shard("0/2"), incomplete}, "incomplete (SIGTERM)");
  Report filtered = shard("1/2");
  filtered.context["filters"] = {{"item", "f32/flat_V64"}};
  refused({shard("0/2"), filtered}, "filters");
  Report unrecorded = shard("1/2");
  unrecorded.context.erase("filters");
  refused({shard("0/2"), unrecorded}, "does not record its filters");
  Report other_build = shard("1/2");
  other_build.sampler["file_sha256"] = std::string(64, 'a');
  refused({shard("0/2"), other_build}, "different samplers: file_sha256");
  Report other_policy = shard("1/2");
  other_policy.sampler["policies"]["nan_policy"] = "masked";
  refused({shard("0/2"), other_policy}, "different samplers: policies");
  Report other_plan = shard("1/2");
  other_plan.context["plan_version"] = "fedcba9876543210";
  refused({shard("0/2"), other_plan}, "plan_version");
  Report moved = shard("1/2");  // the same plug-in at another path merges
  moved.sampler["argument"] = "/elsewhere/lib.so";
  EXPECT_TRUE(Merge({shard("0/2"), moved}, &merged, &why)) << why;
  // Shards with no results, and a result two shards carry.
  Report empty0 = shard("0/2"), empty1 = shard("1/2");
  empty0.results.clear();
  empty1.results.clear();
  refused({empty0, empty1}, "hold no results");
  Report carrying = shard("1/2");
  carrying.results.push_back(shard("0/2").results[0]);
  refused({shard("0/2"), carrying}, "is given twice (shards 0/2 and 1/2)");
}

// A report whose results repeat one (dtype, property, family) is refused by every reader.
TEST(ReportJson, ARepeatedResultIsRefused) {
  Report r = Synthetic();
  r.results.push_back(r.results[1]);
  std::string why;
  ReportFromJson(ReportToJson(r), &why);
  EXPECT_NE(why.find("/results/4: the result f32/DIST-1/flat_V64 is given twice"),
            std::string::npos)
      << why;
}

// Strings that overflowed std::regex's recursion (about 30,000 characters in a field with a
// schema pattern) are refused by their length before any pattern runs.
TEST(ReportJson, LongStringsInPatternedFieldsAreRefusedNotFatal) {
  const nlohmann::json good = ReportToJson(Synthetic());
  for (const char* pointer : {"/schema_version", "/context/plan_version", "/sampler/file_sha256",
                              "/results/1/failure/row_file"}) {
    nlohmann::json j = good;
    std::string value = std::string(pointer) == "/schema_version" ? "2." : "row.";
    value += std::string(300000, '1');
    j[nlohmann::json::json_pointer(pointer)] = value;
    std::string why;
    ReportFromJson(j, &why);
    EXPECT_NE(why.find(std::string(pointer) + ": String should be no more than"), std::string::npos)
        << pointer << ": " << why;
  }
  nlohmann::json j = good;
  j["verdict"]["expectation_differences"] = {"FIX " + std::string(300000, 'x')};
  std::string why;
  ReportFromJson(j, &why);
  EXPECT_NE(why.find("/verdict/expectation_differences/0"), std::string::npos) << why;
}

TEST(Shard, OnlyCanonicalForms) {
  int i = 0, n = 0;
  EXPECT_TRUE(ParseShard("0/1", &i, &n));
  EXPECT_TRUE(ParseShard("3/12", &i, &n));
  EXPECT_EQ(i, 3);
  EXPECT_EQ(n, 12);
  for (const char* bad : {"1/1", "-1/2", "+1/2", "01/2", "1/02", "1 /2", "1/2x", "1/0", "/2", "1/",
                          "1/2/3", "0x1/2", "99999999999/99999999999", ""}) {
    EXPECT_FALSE(ParseShard(bad, &i, &n)) << bad;
  }
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

TEST(RowFiles, EachFailuresRowIsPublishedLinkedAndReadBack) {
  // A failure carrying its row gets a row file in the set, named in report.json, linked from
  // the HTML and the JUnit XML; ReadReport puts the row back (merge republishes it).
  Report report = Synthetic();
  TestResult& failed = report.results.at(1);
  ASSERT_TRUE(failed.failure.has_value());
  failed.failure->row = R"({"format":"sampcert-row/1","dtype":"f32","logit_bits":[0]})";
  const std::string dir = ::testing::TempDir() + "/row_files";
  std::filesystem::remove_all(dir);
  std::string json_path;
  ASSERT_EQ(WriteReportSet(dir, report, &json_path), "");
  const std::string name = RowFileName(failed);
  EXPECT_EQ(name, "row.f32.DIST-1.flat_V64.json");
  std::ifstream row_in(dir + "/" + name);
  std::stringstream row_text;
  row_text << row_in.rdbuf();
  EXPECT_EQ(row_text.str(), failed.failure->row + "\n");
  std::ifstream html_in(dir + "/report.html"), junit_in(dir + "/report.junit.xml");
  std::stringstream html, junit;
  html << html_in.rdbuf();
  junit << junit_in.rdbuf();
  EXPECT_NE(html.str().find("<a href=\"" + name + "\">"), std::string::npos);
  EXPECT_NE(junit.str().find("row file: " + name), std::string::npos);
  Report back;
  std::string why;
  ASSERT_TRUE(ReadReport(json_path, &back, &why)) << why;
  ASSERT_TRUE(back.results.at(1).failure.has_value());
  EXPECT_EQ(back.results.at(1).failure->row_file, name);
  EXPECT_EQ(back.results.at(1).failure->row, failed.failure->row);
  // Names are sanitized: nothing of a family reaches the file system but [A-Za-z0-9._-].
  TestResult odd = failed;
  odd.family = "../evil family/x";
  EXPECT_EQ(RowFileName(odd), "row.f32.DIST-1..._evil_family_x.json");
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
