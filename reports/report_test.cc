// Reports: golden files for JSON / JUnit / HTML (SAMPCERT_REGENERATE_GOLDEN=1 rewrites them),
// escaping of everything a sampler controls, JSON round trip with NaN and infinities, merge of
// shards equal to the unsharded run, diff, waivers, atomic writes.
#include "reports/report.h"

#include <gtest/gtest.h>

#include <algorithm>
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
#include "reports/report_schema.h"
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
  // Edge-case tags, and the coverage model's (SPEC COV-1: the classes design rows exercised and
  // those the declaration excludes), which the report's coverage table gathers.
  pass.coverage = {{"T tiny", 2},
                   {"V=1", 1},
                   {"class:vocab=64", 3},
                   {"class:vocab=1", 2},
                   {"class:top_p=off", 5},
                   {"excluded:top_p=half (capability top-p not declared)", 0},
                   {"excluded:top_p=nan (invalid input <section 5>)", 0},
                   {"excluded:dtype=f16 (capability f16 not declared)", 0}};
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
  fail.cells = {"token 0", "token 1"};
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
  // SPEC REPORT-3: the speed beside the verdict (a hostile CPU name, escaped in every format).
  r.speed = {{"informational", true},
             {"status", "measured"},
             {"machine", {{"cpu", "golden <cpu> & co"}, {"cores", 2}}},
             {"dtype", "f32"},
             {"vocab", 32000},
             {"draws_per_row", 1},
             {"shapes",
              {{{"rows", 1}, {"calls", 15}, {"ns_per_row", 9524.0}, {"rows_per_s", 105e3}},
               {{"rows", 32}, {"calls", 5}, {"ns_per_row", 1.5e6}, {"rows_per_s", 666.7}}}},
             {"seconds", 0.02}};
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

// The same run against an expectations file pinning its two failures: known failures in every
// format, and the outcome "matches its known failures".
Report SyntheticKnown() {
  Report r = Synthetic();
  Expectations e;
  e.entries[{"DIST-1", "f32", "flat_V64"}].reason = "the float CDF never reaches the last cell";
  e.entries[{"ALL", "f16", "deterministic"}] = {Status::kCrash, "a NULL dereference in f16", "",
                                                ""};
  r.context["expectations"] = "golden.expectations.json";
  ApplyExpectations(e, true, &r);
  return r;
}

TEST(Golden, Json) { Golden("report.json", ReportToJson(Synthetic()).dump(2) + "\n"); }
TEST(Golden, JUnit) { Golden("report.junit.xml", RenderJUnit(Synthetic())); }
TEST(Golden, Html) { Golden("report.html", RenderHtml(Synthetic())); }
TEST(Golden, KnownJson) {
  Golden("report.known.json", ReportToJson(SyntheticKnown()).dump(2) + "\n");
}
TEST(Golden, KnownJUnit) { Golden("report.known.junit.xml", RenderJUnit(SyntheticKnown())); }
// SPEC section 11: a passing test short of the target is a screen (grey, labelled), a failing
// one short of it is red, and a passing report has no red bar.
TEST(Html, ScreensAreLabelledAndNotRed) {
  Report r = Synthetic();
  TestResult screen;
  screen.property = "DIST-3";
  screen.dtype = "f32";
  screen.family = "zipf";
  screen.status = Status::kPass;
  screen.power_tv = 0.15;
  screen.draws = 1024;
  r.results = {screen};
  const std::string passing = RenderHtml(r);
  EXPECT_NE(passing.find("class=\"bar screen\""), std::string::npos);
  EXPECT_NE(passing.find("Pass (screen)"), std::string::npos);
  EXPECT_NE(passing.find("zipf (screen)"), std::string::npos);
  EXPECT_EQ(passing.find("class=\"bar bad\""), std::string::npos);
  EXPECT_NE(passing.find("class=\"lbl tick\">0.05<"), std::string::npos);  // a numeric axis
  EXPECT_NE(passing.find("target TV"), std::string::npos);
  r.results.front().status = Status::kInconclusive;
  const std::string short_of_it = RenderHtml(r);
  EXPECT_NE(short_of_it.find("class=\"bar bad\""), std::string::npos);
  EXPECT_EQ(short_of_it.find("zipf (screen)"), std::string::npos);
}

// SPEC section 11 outside the HTML: a Pass short of the target carries the label in report.json
// (schema-valid, read back), the terminal summary and JUnit; the same result at full power, and a
// result short of it that is Inconclusive, carry none.
TEST(Screens, LabelledInJsonTerminalAndJUnit) {
  Report r = Synthetic();  // target TV 0.05
  TestResult screen;
  screen.property = "DIST-3";
  screen.dtype = "f32";
  screen.family = "zipf";
  screen.status = Status::kPass;
  screen.cases = 1;
  screen.p_value = 0.5;
  screen.level = 1e-5;
  screen.power_tv = 0.15;
  screen.draws = 1024;
  TestResult full = screen;
  full.property = "DIST-1";
  full.family = "flat_V64";
  full.power_tv = 0.04;
  full.draws = 4096;
  r.results = {screen, full};

  const nlohmann::json j = ReportToJson(r);
  EXPECT_EQ(ValidateReport(j), "");
  EXPECT_EQ(j["results"][0].value("screen", false), true);
  EXPECT_FALSE(j["results"][1].contains("screen"));
  // A cell of screens alone certifies nothing (SPEC section 11): screened, not certified.
  EXPECT_EQ(j["verdict"]["screened"], nlohmann::json::array({"DIST-3/f32"}));
  EXPECT_EQ(j["verdict"]["certified"], nlohmann::json::array({"DIST-1/f32"}));
  std::string error;
  const Report back = ReportFromJson(j, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(ReportToJson(back), j);
  nlohmann::json wrong = j;
  wrong["results"][0]["screen"] = false;  // only ever written as true
  EXPECT_NE(ValidateReport(wrong), "");

  const std::string text = TextSummary(r, "r.json");
  EXPECT_NE(text.find("DIST-3       Pass (screen)"), std::string::npos) << text;
  EXPECT_NE(text.find("screens (1): passed with power short of the profile's target TV 0.05"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DIST-3     f32     1 detect TV 0.15"), std::string::npos) << text;
  EXPECT_NE(text.find("2 Pass, 1 of them screens"), std::string::npos) << text;
  EXPECT_EQ(text.find("DIST-1       Pass (screen)"), std::string::npos) << text;

  const std::string xml = RenderJUnit(r);
  EXPECT_NE(xml.find("name=\"zipf (screen)\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("Pass (screen): detects TV 0.15 with 1024 draws, short of the profile's "
                     "target TV 0.05"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"flat_V64\""), std::string::npos) << xml;

  // At full power, or short of it but not passing (Inconclusive), nothing says screen.
  for (const double power : {0.05, 0.15}) {
    Report plain = r;
    plain.results[0].power_tv = power;
    if (power > 0.05) plain.results[0].status = Status::kInconclusive;
    const nlohmann::json pj = ReportToJson(plain);
    EXPECT_EQ(ValidateReport(pj), "");
    EXPECT_FALSE(pj["results"][0].contains("screen")) << power;
    EXPECT_EQ(TextSummary(plain, "r.json").find("screen"), std::string::npos) << power;
    EXPECT_EQ(RenderJUnit(plain).find("screen"), std::string::npos) << power;
  }
}

// SPEC TRACE-1 in the report (schema 3.3): each clause with its evidence words marked exercised
// by this report's results, valid against the schema, read back unchanged.
TEST(Clauses, WrittenMarkedAndReadBack) {
  Report r = Synthetic();
  r.clauses = {{"DIST-1", "draws follow", {"row:flat_V64", "row:wide_V32768"}, ""},
               {"PROB-1", "probabilities", {"property:PROB-1", "design:vocab.64"}, ""},
               {"DRAW-2", "u in (0, 1)", {}, "no plan can force it"}};
  const nlohmann::json j = ReportToJson(r);
  const nlohmann::json& c = j.at("clauses");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(c[0]["evidence"][0]["exercised"]);   // the flat_V64 result
  EXPECT_FALSE(c[0]["evidence"][1]["exercised"]);  // no wide_V32768 result
  EXPECT_TRUE(c[1]["evidence"][0]["exercised"]);   // PROB-1 ran
  EXPECT_TRUE(c[1]["evidence"][1]["exercised"]);   // class:vocab=64 in the coverage tags
  EXPECT_EQ(c[2]["not_exercised"], "no plan can force it");
  std::string error;
  const Report back = ReportFromJson(j, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(back.clauses.size(), 3u);
  EXPECT_EQ(back.clauses[0].evidence, r.clauses[0].evidence);
  EXPECT_EQ(back.clauses[2].not_exercised, "no plan can force it");
  nlohmann::json bad = j;
  bad["clauses"][2].erase("not_exercised");  // neither evidence nor a reason
  ReportFromJson(bad, &error);
  EXPECT_NE(error, "");
}

TEST(Golden, KnownHtml) { Golden("report.known.html", RenderHtml(SyntheticKnown())); }

// The coverage table: per class, the properties that exercised it with their rows summed over
// results; a class is excluded only where nothing exercised it; malformed tags are skipped.
TEST(CoverageTable, GathersClassesAndExclusions) {
  TestResult a, b;
  a.property = "VALID-1";
  a.dtype = "f32";
  a.coverage = {{"class:vocab=64", 3},
                {"excluded:top_p=half (capability top-p not declared)", 0},
                {"excluded:bad tag", 0},
                {"T tiny", 4}};
  b.property = "DET-1";
  b.dtype = "f16";
  b.coverage = {{"class:vocab=64", 2}, {"class:top_p=half", 1}};
  TestResult c = a;
  c.dtype = "f16";
  const std::vector<CoverageCell> t = CoverageTable({a, b, c});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].axis, "top_p");
  EXPECT_EQ(t[0].cls, "half");
  EXPECT_EQ(t[0].excluded, "");  // exercised on f16: not excluded
  EXPECT_EQ(t[0].rows_by_property.at("DET-1"), 1u);
  EXPECT_EQ(t[1].axis, "vocab");
  EXPECT_EQ(t[1].rows_by_property.at("VALID-1"), 6u);
  EXPECT_EQ(t[1].rows_by_property.at("DET-1"), 2u);
  const std::vector<CoverageCell> only_a = CoverageTable({a});
  ASSERT_EQ(only_a.size(), 2u);
  EXPECT_EQ(only_a[0].excluded, "capability top-p not declared");
  EXPECT_TRUE(only_a[0].rows_by_property.empty());
  // In report.json, validated by the schema.
  Report r = Synthetic();
  r.results = {a};
  const nlohmann::json j = ReportToJson(r);
  ASSERT_TRUE(j.contains("coverage"));
  EXPECT_EQ(j["coverage"][0]["excluded"], "capability top-p not declared");
  EXPECT_EQ(j["coverage"][1]["properties"]["VALID-1"], 3);
  std::string error;
  ReportFromJson(j, &error);
  EXPECT_EQ(error, "");
}

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

// SPEC TEXT-2: ESC, CR and C1 controls from a sampler's strings went raw into <title> and the
// sampler's name (`cat report.html` cleared the terminal); now each is visible text, in every
// rendered string (the name, the version, a failure's message).
TEST(Escaping, ControlCharactersAreVisibleTextInHtml) {
  Report r = Synthetic();
  const std::string hostile =
      "a\x1b[2J\rb\xc2\x9b"
      "31mc\x07\x7f";
  r.sampler["name"] = hostile;
  r.sampler["version"] = hostile;
  for (TestResult& t : r.results) {
    if (t.failure) t.failure->message = hostile;
  }
  const std::string html = RenderHtml(r);
  for (const std::string raw : {"\x1b", "\r", "\xc2\x9b", "\x07", "\x7f"}) {
    EXPECT_EQ(html.find(raw), std::string::npos) << "raw control " << static_cast<int>(raw.back());
  }
  EXPECT_NE(html.find("<title>sampcert report: a\\x1b[2J\\x0db\\u009B31mc\\x07\\x7f</title>"),
            std::string::npos);
  EXPECT_EQ(HtmlEscape("tab\tand\nnewline stay"), "tab\tand\nnewline stay");
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
  EXPECT_EQ(Verdict(whole).text, Verdict(merged).text);
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

// SPEC REPORT-3: the speed section is written, schema-valid and read back, shown beside the
// verdict in the terminal and the HTML, and never part of the verdict; a merge of shards has none.
TEST(Speed, BesideTheVerdictNeverInIt) {
  const Report with = Synthetic();
  Report without = with;
  without.speed = nullptr;
  const nlohmann::json j = ReportToJson(with);
  EXPECT_EQ(ValidateReport(j), "");
  EXPECT_EQ(j.at("speed").at("machine").at("cpu"), "golden <cpu> & co");
  EXPECT_FALSE(ReportToJson(without).contains("speed"));
  EXPECT_EQ(j.at("verdict"), ReportToJson(without).at("verdict"));
  std::string why;
  EXPECT_EQ(ReportFromJson(j, &why).speed, with.speed) << why;
  EXPECT_TRUE(ReportFromJson(ReportToJson(without), &why).speed.is_null()) << why;

  const std::string line =
      "speed (informational, not part of the verdict): f32 V=32000: 1 row 9.5 us/row (105.0 k "
      "rows/s); 32 rows 1.50 ms/row (666.7 rows/s); on golden <cpu> & co (2 cores)";
  EXPECT_EQ(SpeedLine(with), line);
  EXPECT_EQ(SpeedLine(without), "");
  const std::string text = TextSummary(with, "r.json");
  EXPECT_NE(text.find("\n" + line + "\nverdict: "), std::string::npos) << text;
  EXPECT_EQ(TextSummary(without, "r.json").find("speed"), std::string::npos);
  EXPECT_NE(RenderHtml(with).find("<p id=\"speed\">speed (informational, not part of the "
                                  "verdict): f32 V=32000"),
            std::string::npos);
  EXPECT_NE(RenderHtml(with).find("golden &lt;cpu&gt; &amp; co"), std::string::npos);
  // JUnit: in the verdict's output, whatever the verdict; the counts are those without it.
  const std::string junit = RenderJUnit(with);
  EXPECT_NE(junit.find("rows/s); on golden &lt;cpu&gt; &amp; co (2 cores)\n</system-out>"),
            std::string::npos)
      << junit;
  EXPECT_EQ(RenderJUnit(without).find("speed (informational"), std::string::npos);
  Report failing = with;
  failing.results[0].status = results::Status::kFail;
  const std::string failing_junit = RenderJUnit(failing);
  EXPECT_NE(failing_junit.find("<system-out>speed (informational"), std::string::npos);
  EXPECT_EQ(failing_junit.substr(0, failing_junit.find("name=\"verdict\"")),
            RenderJUnit([&] {
              Report r = failing;
              r.speed = nullptr;
              return r;
            }())
                .substr(0, failing_junit.find("name=\"verdict\"")));

  Report crashed = with;
  crashed.speed["status"] = "crash";
  crashed.speed["shapes"] = nlohmann::json::array();
  crashed.speed["message"] = "the sampler's worker died of signal 11 during sample()";
  EXPECT_EQ(ValidateReport(ReportToJson(crashed)), "");
  EXPECT_EQ(SpeedLine(crashed),
            "speed (informational, not part of the verdict): not measured, crash in the speed "
            "phase: the sampler's worker died of signal 11 during sample(); on golden <cpu> & co "
            "(2 cores)");
  EXPECT_EQ(Verdict(crashed).exit_code, Verdict(without).exit_code);
  // The schema knows the section: an unknown status or field is refused with its path.
  nlohmann::json bad = j;
  bad["speed"]["status"] = "fast";
  EXPECT_NE(ValidateReport(bad).find("/speed/status"), std::string::npos) << ValidateReport(bad);
  bad = j;
  bad["speed"]["verdict"] = "CONFORMANT";
  EXPECT_NE(ValidateReport(bad), "");

  auto shard = [&](const std::string& s) {
    Report r = with;
    r.context["shard"] = s;
    r.results.resize(1);
    r.results[0].family = "of shard " + s;
    return r;
  };
  Report merged;
  ASSERT_TRUE(Merge({shard("0/2"), shard("1/2")}, &merged, &why)) << why;
  EXPECT_TRUE(merged.speed.is_null());
  EXPECT_FALSE(ReportToJson(merged).contains("speed"));
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
    std::string value = std::string(pointer) == "/schema_version" ? "3." : "row.";
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

Expectation E(Status status, std::string reason, std::string message = {}, std::string row = {}) {
  Expectation e;
  e.status = status;
  e.reason = std::move(reason);
  e.message_contains = std::move(message);
  e.minimal_input = std::move(row);
  return e;
}

Expectations Pinned(std::initializer_list<std::pair<ResultKey, Expectation>> entries) {
  Expectations e;
  for (const auto& [k, v] : entries) e.entries[k] = v;
  return e;
}

std::vector<std::string> Lines(const Report& r) {
  std::vector<std::string> out;
  for (const ExpectationDifference& d : r.expectation_differences) out.push_back(d.text);
  return out;
}

TEST(Expectations, PinnedFailuresBecomeKnownAndEveryChangeIsReported) {
  Report r = Synthetic();
  ApplyExpectations(
      Pinned({{{"DIST-1", "f32", "flat_V64"}, E(Status::kFail, "known: the floor")},
              {{"PROB-1", "f32", "llm_like"}, E(Status::kFail, "was broken")},
              {{"ALL", "f16", "deterministic"}, E(Status::kTimeout, "used to hang")}}),
      true, &r);
  EXPECT_EQ(r.results[1].status, Status::kKnownFailure);
  ASSERT_TRUE(r.results[1].known_failure.has_value());
  EXPECT_EQ(r.results[1].known_failure->status, Status::kFail);
  EXPECT_EQ(r.results[1].known_failure->reason, "known: the floor");
  EXPECT_EQ(r.results[2].status, Status::kCrash);  // pinned as Timeout: not known
  const std::vector<std::string> d = Lines(r);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "DIFFERENCE ALL/f16/deterministic: expected Timeout, now Crash");
  EXPECT_EQ(d[1], "FIX PROB-1/f32/llm_like: expected Fail, now Pass (the entry can go)");
  EXPECT_EQ(Verdict(r).kind, OutcomeKind::kNotConformant);
  EXPECT_EQ(Verdict(r).exit_code, 1);
  // Without expectations every failure is new.
  Report fresh = Synthetic();
  ApplyExpectations({}, true, &fresh);
  ASSERT_EQ(Lines(fresh).size(), 2u);  // DIST-1 and the crash
  EXPECT_EQ(Lines(fresh)[0], "REGRESSION ALL/f16/deterministic: Crash, which no entry pins");
}

// A waiver names its row family: another family of the same (property, dtype) failing is new.
TEST(Expectations, AnotherFamilyOfAPinnedCellIsANewFailure) {
  Report r = Synthetic();
  TestResult other = r.results[1];
  other.family = "masked_V300";
  r.results.push_back(other);
  ApplyExpectations(Pinned({{{"DIST-1", "f32", "flat_V64"}, E(Status::kFail, "known")},
                            {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known crash")}}),
                    true, &r);
  ASSERT_EQ(Lines(r).size(), 1u);
  EXPECT_EQ(Lines(r)[0], "REGRESSION DIST-1/f32/masked_V300: Fail, which no entry pins");
  EXPECT_EQ(r.results.back().status, Status::kFail);
  // The cell shows its most severe status: the new Fail, not the known one.
  EXPECT_EQ(Aggregate(r.results).at({"DIST-1", "f32"}), Status::kFail);
}

TEST(Expectations, PinsOnTheMessageAndTheRow) {
  const ResultKey key{"DIST-1", "f32", "flat_V64"};
  Report r = Synthetic();
  ApplyExpectations(Pinned({{key, E(Status::kFail, "why", "</b> follow", "min")},
                            {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known")}}),
                    true, &r);
  EXPECT_TRUE(Lines(r).empty()) << Lines(r)[0];
  EXPECT_EQ(Verdict(r).kind, OutcomeKind::kMatchesExpectations);
  Report other_message = Synthetic();
  ApplyExpectations(Pinned({{key, E(Status::kFail, "why", "overdraws", "")},
                            {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known")}}),
                    true, &other_message);
  ASSERT_EQ(Lines(other_message).size(), 1u);
  EXPECT_EQ(Lines(other_message)[0].rfind("DIFFERENCE DIST-1/f32/flat_V64: expected a Fail whose "
                                          "message contains \"overdraws\"",
                                          0),
            0u)
      << Lines(other_message)[0];
  Report other_row = Synthetic();
  ApplyExpectations(Pinned({{key, E(Status::kFail, "why", "", "f32 V=2 logits=[0,1]")},
                            {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known")}}),
                    true, &other_row);
  ASSERT_EQ(Lines(other_row).size(), 1u);
  EXPECT_NE(Lines(other_row)[0].find("pinned row f32 V=2 logits=[0,1], now on min"),
            std::string::npos)
      << Lines(other_row)[0];
}

TEST(Expectations, AbsentEntriesAreDifferencesOnlyInAWholeRun) {
  const Expectations gone = Pinned({{{"DIST-1", "f32", "flat_V64"}, E(Status::kFail, "known")},
                                    {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known")},
                                    {{"DIST-1", "f32", "renamed_V64"}, E(Status::kFail, "stale")}});
  Report whole = Synthetic();
  ApplyExpectations(gone, true, &whole);
  ASSERT_EQ(Lines(whole).size(), 1u);
  EXPECT_EQ(Lines(whole)[0],
            "DIFFERENCE DIST-1/f32/renamed_V64: expected Fail, but the run has no such result");
  Report shard = Synthetic();
  shard.context["shard"] = "1/4";
  ApplyExpectations(gone, true, &shard);
  EXPECT_TRUE(Lines(shard).empty());
}

// Strict by default: a known failure that now passes fails the check until the file is updated.
TEST(Expectations, AFixFailsTheCheckUnlessNotStrict) {
  const Expectations e = Pinned({{{"DIST-1", "f32", "flat_V64"}, E(Status::kFail, "known")},
                                 {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known")},
                                 {{"PROB-1", "f32", "llm_like"}, E(Status::kFail, "fixed since")}});
  Report strict = Synthetic();
  ApplyExpectations(e, true, &strict);
  EXPECT_EQ(Verdict(strict).kind, OutcomeKind::kNotConformant);
  EXPECT_EQ(Verdict(strict).text,
            "NOT CONFORMANT: differs from its expectations: 1 known failure now passes (and 2 "
            "known failures)");
  Report lax = Synthetic();
  ApplyExpectations(e, false, &lax);
  EXPECT_EQ(lax.context["expectations_strict"], false);
  EXPECT_EQ(Verdict(lax).kind, OutcomeKind::kMatchesExpectations);
  EXPECT_EQ(Verdict(lax).exit_code, 0);
  EXPECT_EQ(Verdict(lax).text,
            "NOT CONFORMANT: matches its 2 known failures, no new ones; 1 known failure now "
            "passes (not strict: update the expectations file)");
}

TEST(Expectations, LoaderRefusesOldAndMalformedFiles) {
  const auto refused = [](const std::string& text, const std::string& expect) {
    Expectations e;
    std::string why;
    EXPECT_FALSE(ExpectationsFromJson(nlohmann::json::parse(text), "x.json", &e, &why)) << text;
    EXPECT_NE(why.find(expect), std::string::npos) << why;
  };
  const std::string entry =
      R"("property": "DIST-1", "dtype": "f32", "family": "flat", "status": "Fail", "reason": "r")";
  refused(R"({"entries": [{"property": "DIST-1", "dtype": "f32", "status": "Fail"}]})",
          "earlier format");
  refused(R"({"entries": []})", "sampcert report expectations");
  refused(R"({"format": "sampcert-expectations/1", "entries": []})", "is not");
  refused(R"({"format": "sampcert-expectations/2", "entries": [{"property": "DIST-1", "dtype":
          "f32", "status": "Fail", "reason": "r"}]})",
          "entries[0]: \"family\" is missing");
  refused(R"({"format": "sampcert-expectations/2", "entries": [{)" + entry + R"(, "x": 1}]})",
          "unknown key \"x\"");
  refused(R"({"format": "sampcert-expectations/2", "entries": [{)" + entry + "}, {" + entry + "}]}",
          "DIST-1/f32/flat is pinned twice");
  refused(R"({"format": "sampcert-expectations/2", "entries": [{"property": "DIST-1", "dtype":
          "f32", "family": "flat", "status": "Pass", "reason": "r"}]})",
          "status \"Pass\" is not one an entry pins");
  refused(R"({"format": "sampcert-expectations/2", "entries": [{"property": "DIST-1", "dtype":
          "f32", "family": "flat", "status": "Waived", "reason": "r"}]})",
          "status \"Waived\"");
  refused(R"({"format": "sampcert-expectations/2", "entries": [{"property": "DIST-1", "dtype":
          "f32", "family": "flat", "status": "Fail", "reason": ""}]})",
          "must say why");
  refused(R"({"format": "sampcert-expectations/2", "seed": -1, "entries": []})", "seed");
  refused(R"({"format": "sampcert-expectations/2", "entries": [], "waivers": []})",
          "unknown key \"waivers\"");
  Expectations e;
  std::string why;
  ASSERT_TRUE(ExpectationsFromJson(
      nlohmann::json::parse(R"({"format": "sampcert-expectations/2", "sampler": "s", "seed": 1,
          "entries": [{)" + entry +
                            R"(, "message_contains": "G = "}]})"),
      "x.json", &e, &why))
      << why;
  ASSERT_EQ(e.entries.size(), 1u);
  const Expectation& x = e.entries.begin()->second;
  EXPECT_EQ(x.message_contains, "G = ");
  // Written back, it reads the same.
  Expectations back;
  ASSERT_TRUE(ExpectationsFromJson(ExpectationsToJson(e), "y.json", &back, &why)) << why;
  EXPECT_EQ(ExpectationsToJson(back), ExpectationsToJson(e));
}

// `report expectations`: every failure pinned, each keeping the reason on file for its status.
TEST(Expectations, FromAReportKeepingEachReason) {
  Report r = Synthetic();
  TestResult inconclusive = r.results[0];
  inconclusive.family = "subnormal";
  inconclusive.status = Status::kInconclusive;
  inconclusive.note = "not reached on 3 case(s)";
  r.results.push_back(inconclusive);
  Reasons reasons;
  reasons.by_cell[{"DIST-1", "f32"}] = {Status::kFail, "the float CDF"};
  reasons.by_cell[{"PROB-1", "f32"}] = {Status::kFail, "a Fail's reason, not this family's"};
  Expectations made;
  std::vector<std::string> unreviewed;
  std::string why;
  ASSERT_TRUE(ExpectationsFromReport(r, reasons, &made, &unreviewed, &why)) << why;
  ASSERT_EQ(made.entries.size(), 3u);
  EXPECT_EQ(made.entries.at({"DIST-1", "f32", "flat_V64"}).reason, "the float CDF");
  // Given for a Fail, the cell's reason does not describe an Inconclusive family: its own words.
  EXPECT_EQ(made.entries.at({"PROB-1", "f32", "subnormal"}).reason, "not reached on 3 case(s)");
  EXPECT_EQ(made.entries.at({"PROB-1", "f32", "subnormal"}).status, Status::kInconclusive);
  EXPECT_EQ(unreviewed,
            (std::vector<std::string>{"ALL/f16/deterministic", "PROB-1/f32/subnormal"}));
  // Applied to the same results, the file matches them exactly.
  ApplyExpectations(made, true, &r);
  EXPECT_TRUE(r.expectation_differences.empty());
  EXPECT_EQ(Verdict(r).text, "NOT CONFORMANT: matches its 3 known failures, no new ones");
  // A report run with the file already: the known failures keep their entries' reasons.
  Expectations again;
  ASSERT_TRUE(ExpectationsFromReport(r, {}, &again, &unreviewed, &why)) << why;
  EXPECT_EQ(ExpectationsToJson(again), ExpectationsToJson(made));
  Report shard = r;
  shard.context["shard"] = "0/2";
  EXPECT_FALSE(ExpectationsFromReport(shard, {}, &again, &unreviewed, &why));
  EXPECT_NE(why.find("partial run (shard 0/2)"), std::string::npos) << why;
  Report stopped = r;
  stopped.complete = false;
  EXPECT_FALSE(ExpectationsFromReport(stopped, {}, &again, &unreviewed, &why));
}

// A known failure is never shown as a Pass nor certified, in any format.
TEST(Verdict, AKnownFailureIsNeverAPass) {
  Report r = Synthetic();
  TestResult passing = r.results[1];
  passing.family = "masked_V300";
  passing.status = Status::kPass;
  passing.failure.reset();
  r.results.push_back(passing);  // DIST-1/f32: one family passes, one is known
  ApplyExpectations(Pinned({{{"DIST-1", "f32", "flat_V64"}, E(Status::kFail, "the floor")},
                            {{"ALL", "f16", "deterministic"}, E(Status::kCrash, "known")}}),
                    true, &r);
  EXPECT_EQ(Aggregate(r.results).at({"DIST-1", "f32"}), Status::kKnownFailure);
  EXPECT_GT(Severity(Status::kKnownFailure), Severity(Status::kPass));
  EXPECT_GT(Severity(Status::kInconclusive), Severity(Status::kKnownFailure));
  const nlohmann::json j = ReportToJson(r);
  EXPECT_EQ(j["verdict"]["outcome"], "MatchesExpectations");
  EXPECT_EQ(j["verdict"]["conformant"], false);
  EXPECT_EQ(j["verdict"]["exit_code"], 0);
  for (const auto& c : j["verdict"]["certified"]) EXPECT_NE(c, "DIST-1/f32");
  EXPECT_NE(std::find(j["verdict"]["known_failures"].begin(), j["verdict"]["known_failures"].end(),
                      "DIST-1/f32"),
            j["verdict"]["known_failures"].end());
  EXPECT_EQ(j["results"][1]["status"], "KnownFailure");
  EXPECT_EQ(j["results"][1]["known_failure"]["status"], "Fail");
  std::string why;
  const Report back = ReportFromJson(nlohmann::json::parse(j.dump()), &why);
  ASSERT_EQ(why, "");
  EXPECT_EQ(ReportToJson(back), j);
  const std::string html = RenderHtml(r);
  EXPECT_NE(html.find("class=\"verdict known\">NOT CONFORMANT: matches its 2 known failures"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"known\"><a href=\"#r-DIST-1-f32\">KnownFailure</a>"),
            std::string::npos);
  EXPECT_NE(html.find("Known failures (2)"), std::string::npos);
  EXPECT_EQ(html.find("<p>None.</p>"), std::string::npos);
  const std::string xml = RenderJUnit(r);
  EXPECT_NE(xml.find("<skipped type=\"KnownFailure\" message=\"known failure (Fail): the floor"),
            std::string::npos);
  const std::string text = TextSummary(r, "r.json");
  EXPECT_NE(text.find("known failures (2, pinned by the expectations file)"), std::string::npos);
  EXPECT_NE(text.find("verdict: NOT CONFORMANT: matches its 2 known failures, no new ones"),
            std::string::npos);
  // The known failure counts as what it was when two runs are compared: no change.
  EXPECT_TRUE(Diff(Synthetic(), r).empty()) << Diff(Synthetic(), r)[0];
}

bool MentionsConformant(const std::string& text) {
  return text.find("CONFORMANT") != std::string::npos;
}

// Issue 22, point 2: an interrupted or partial run never reads as a verdict, anywhere.
TEST(Verdict, IncompleteAndPartialRunsAreNoVerdict) {
  Report stopped = Synthetic();
  stopped.results = {stopped.results[0], stopped.results[3]};  // only passes
  stopped.complete = false;
  stopped.incomplete_reason = "interrupted by SIGINT after 3 of 40 items";
  stopped.signal = 2;
  const Outcome o = Verdict(stopped);
  EXPECT_EQ(o.kind, OutcomeKind::kIncomplete);
  EXPECT_EQ(o.exit_code, 130);
  EXPECT_EQ(o.text, "INCOMPLETE, no verdict: interrupted by SIGINT after 3 of 40 items");
  const nlohmann::json j = ReportToJson(stopped);
  EXPECT_EQ(j["verdict"]["outcome"], "Incomplete");
  EXPECT_EQ(j["verdict"]["conformant"], false);
  EXPECT_EQ(j["completeness"]["signal"], 2);
  EXPECT_TRUE(j["verdict"]["certified"].empty());  // the rest of each cell never ran
  const std::string html = RenderHtml(stopped);
  EXPECT_NE(html.find("class=\"verdict incomplete\">INCOMPLETE"), std::string::npos);
  EXPECT_FALSE(MentionsConformant(html));
  const std::string xml = RenderJUnit(stopped);
  EXPECT_NE(
      xml.find(
          "<error type=\"Incomplete\" message=\"INCOMPLETE, no verdict: interrupted by SIGINT"),
      std::string::npos);
  EXPECT_NE(xml.find("errors=\"1\""), std::string::npos);
  EXPECT_FALSE(MentionsConformant(xml));
  const std::string text = TextSummary(stopped, "r.json");
  EXPECT_FALSE(MentionsConformant(text)) << text;
  EXPECT_EQ(text.find("INCOMPLETE"), text.find('\n') + 1) << text;  // right after the header
  stopped.signal = 0;
  stopped.incomplete_reason = "stopped by --time-budget";
  EXPECT_EQ(Verdict(stopped).exit_code, 5);

  Report shard = Synthetic();
  shard.results = {shard.results[0], shard.results[3]};
  shard.context["shard"] = "1/4";
  EXPECT_EQ(Verdict(shard).kind, OutcomeKind::kPartial);
  EXPECT_EQ(Verdict(shard).exit_code, 0);
  EXPECT_EQ(Verdict(shard).text,
            "PARTIAL, no verdict for the sampler: shard 1/4; no new failure in this part");
  EXPECT_TRUE(ReportToJson(shard)["verdict"]["certified"].empty());
  EXPECT_FALSE(MentionsConformant(RenderHtml(shard)));
  EXPECT_FALSE(MentionsConformant(RenderJUnit(shard)));
  EXPECT_FALSE(MentionsConformant(TextSummary(shard, "r.json")));
  Report filtered = shard;
  filtered.context["shard"] = "0/1";
  filtered.context["filters"] = {{"item", "f32/flat_V64"}, {"case", 3}};
  EXPECT_EQ(PartialScope(filtered), "filtered: --item f32/flat_V64 --case 3");
  EXPECT_EQ(Verdict(filtered).kind, OutcomeKind::kPartial);
  Report unrecorded = shard;
  unrecorded.context.erase("filters");
  unrecorded.context["shard"] = "0/1";
  EXPECT_EQ(Verdict(unrecorded).kind, OutcomeKind::kPartial);
  // A failure found in a part fails the part's exit status, and is still no verdict.
  Report failing_shard = Synthetic();
  failing_shard.context["shard"] = "1/4";
  EXPECT_EQ(Verdict(failing_shard).text,
            "PARTIAL, no verdict for the sampler: shard 1/4; in this part: 2 failing results "
            "(1 Crash, 1 Fail)");
  EXPECT_EQ(Verdict(failing_shard).kind, OutcomeKind::kPartial);
  EXPECT_EQ(Verdict(failing_shard).exit_code, 1);
  // A merge of every shard is the whole run again.
  Report merged = shard;
  merged.context["shard"] = "merged from 4 shards";
  EXPECT_EQ(Verdict(merged).kind, OutcomeKind::kConformant);
  EXPECT_EQ(Verdict(merged).text, "CONFORMANT");
  Report empty = merged;
  empty.results.clear();
  EXPECT_EQ(Verdict(empty).kind, OutcomeKind::kNotConformant);
}

TEST(Verdict, TheTableIsComplete) {
  for (OutcomeKind k :
       {OutcomeKind::kConformant, OutcomeKind::kMatchesExpectations, OutcomeKind::kNotConformant,
        OutcomeKind::kPartial, OutcomeKind::kIncomplete}) {
    OutcomeKind back;
    ASSERT_TRUE(ParseOutcome(Info(k).name, &back));
    EXPECT_EQ(back, k);
  }
  OutcomeKind unused;
  EXPECT_FALSE(ParseOutcome("Waived", &unused));
  EXPECT_EQ(Verdict(Synthetic()).text, "NOT CONFORMANT: 2 failing results (1 Crash, 1 Fail)");
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
  // The terminal names the same file, for the run's own results (row, no row_file yet): under
  // the root cause and under the failure.
  const std::string text = TextSummary(report, dir + "/report.json");
  const std::string line = "whole input: " + name + " (beside report.json)";
  const std::size_t first = text.find(line);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find(line, first + 1), std::string::npos) << text;
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
