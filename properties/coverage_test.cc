// The coverage model and its covering design (coverage.h): SPEC.md's table is the code's, the
// design covers every pair and every truncation triple (checked here by a direct search over the
// rows, not by the construction's own bookkeeping), is the same byte for byte on every call,
// leaves out what the declaration lacks, realizes valid rows, and a design row re-runs alone by
// its --case index. A failing row shrinks only to rows that fail the same way.
#include "properties/coverage.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "properties/case_check.h"
#include "properties/conformance.h"
#include "properties/generated_rows.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "properties/row_case.h"
#include "registry/open_sampler.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

adapters::SamplerInfo InfoOf(const char* name) {
  auto s = registry::OpenSampler(name);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return (*s)->info();
}

// stable_cpu's, naive's (no min_p) and stable_cpu's without top_p.
std::vector<std::pair<std::string, adapters::SamplerInfo>> Declarations() {
  adapters::SamplerInfo no_top_p = InfoOf("stable_cpu");
  no_top_p.capabilities &= ~SAMPCERT_CAP_TOP_P;
  return {{"stable_cpu", InfoOf("stable_cpu")}, {"naive", InfoOf("naive")}, {"no_top_p", no_top_p}};
}

TEST(Coverage, SpecSectionIsTheTable) {
  std::ifstream in(SAMPCERT_SPEC_PATH);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string spec = ss.str();
  const std::size_t at = spec.find("### Coverage model");
  ASSERT_NE(at, std::string::npos) << "SPEC.md has no '### Coverage model' section";
  const std::size_t end = spec.find("\n## ", at);
  const std::string section = spec.substr(at, end - at);
  const std::string table = CoverageModelMarkdown();
  EXPECT_NE(section.find(table), std::string::npos)
      << "SPEC.md's coverage table differs from the code's; paste this into the section:\n"
      << table;
  // And every axis and class name is in the section (the table's rendering puts them there).
  for (const CoverageAxis& axis : CoverageModel()) {
    EXPECT_NE(section.find("`" + std::string(axis.name) + "`"), std::string::npos) << axis.name;
    for (const CoverageClass& c : axis.classes) {
      EXPECT_NE(section.find("`" + std::string(c.name) + "`"), std::string::npos) << c.name;
    }
  }
}

TEST(Coverage, EveryDesignedAxisHasAClassThatGoesWithEveryClass) {
  for (const CoverageAxis& axis : CoverageModel()) {
    if (!axis.designed) continue;
    const CoverageClass& first = axis.classes.front();
    EXPECT_EQ(first.need, ClassNeed::kNone) << axis.name;
    EXPECT_FALSE(first.needs_two_tokens) << axis.name;
    EXPECT_NE(first.vocab, 1u) << axis.name;
    for (const CoverageClass& c : axis.classes) {
      EXPECT_EQ(c.apply == nullptr, c.need == ClassNeed::kInvalid) << axis.name << "=" << c.name;
    }
  }
}

// The classes of an axis in the design of a declaration: those not listed as excluded.
std::set<std::size_t> Included(const Design& d, const CoverageAxis& axis) {
  std::set<std::size_t> in;
  for (std::size_t c = 0; c < axis.classes.size(); ++c) {
    bool excluded = false;
    for (const ExcludedClass& e : d.excluded) {
      excluded |= e.axis == axis.name && e.cls == axis.classes[c].name;
    }
    if (!excluded) in.insert(c);
  }
  return in;
}

// Whether no valid row can hold these classes together: V = 1 with a class that needs two tokens.
bool Infeasible(const Design& d, const std::vector<std::pair<std::size_t, std::size_t>>& picks) {
  bool one = false, two = false;
  for (const auto& [a, c] : picks) {
    const CoverageClass& cls = CoverageModel()[d.axes[a]].classes[c];
    one |= cls.vocab == 1;
    two |= cls.needs_two_tokens;
  }
  return one && two;
}

TEST(Coverage, DesignCoversEveryPairAndEveryTruncationTriple) {
  for (const auto& [name, info] : Declarations()) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      const Design d = MakeDesign(dtype, info, DesignOptions{262144, true});
      ASSERT_FALSE(d.rows.empty()) << name;
      const std::size_t n = d.axes.size();
      std::vector<std::set<std::size_t>> in;
      for (std::size_t a = 0; a < n; ++a) in.push_back(Included(d, CoverageModel()[d.axes[a]]));
      for (const auto& row : d.rows) {
        for (std::size_t a = 0; a < n; ++a) {
          EXPECT_TRUE(in[a].contains(row[a])) << name << ": an excluded class in a row";
        }
      }
      std::size_t pairs = 0, triples = 0;
      for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = a + 1; b < n; ++b) {
          for (std::size_t x : in[a]) {
            for (std::size_t y : in[b]) {
              if (Infeasible(d, {{a, x}, {b, y}})) continue;
              ++pairs;
              bool found = false;
              for (const auto& row : d.rows) found |= row[a] == x && row[b] == y;
              EXPECT_TRUE(found) << name << ": pair " << CoverageModel()[d.axes[a]].name << "="
                                 << CoverageModel()[d.axes[a]].classes[x].name << ", "
                                 << CoverageModel()[d.axes[b]].name << "="
                                 << CoverageModel()[d.axes[b]].classes[y].name << " in no row";
            }
          }
        }
      }
      std::vector<std::size_t> trunc;
      for (std::size_t a = 0; a < n; ++a) {
        if (CoverageModel()[d.axes[a]].truncation) trunc.push_back(a);
      }
      ASSERT_EQ(trunc.size(), 4u);
      for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t j = i + 1; j < 4; ++j) {
          for (std::size_t k = j + 1; k < 4; ++k) {
            const std::size_t a = trunc[i], b = trunc[j], c = trunc[k];
            for (std::size_t x : in[a]) {
              for (std::size_t y : in[b]) {
                for (std::size_t z : in[c]) {
                  ++triples;
                  bool found = false;
                  for (const auto& row : d.rows) {
                    found |= row[a] == x && row[b] == y && row[c] == z;
                  }
                  EXPECT_TRUE(found) << name << ": a truncation triple in no row";
                }
              }
            }
          }
        }
      }
      EXPECT_EQ(pairs, d.pairs) << name;
      EXPECT_EQ(triples, d.triples) << name;
      std::cout << name << " " << DTypeName(dtype) << ": " << d.rows.size() << " rows cover "
                << pairs << " pairs and " << triples << " truncation triples (" << d.infeasible
                << " infeasible); " << d.excluded.size() << " classes excluded\n";
    }
  }
}

TEST(Coverage, DesignIsDeterministic) {
  for (const auto& [name, info] : Declarations()) {
    const Design a = MakeDesign(DType::kF16, info, DesignOptions{4096, true});
    const Design b = MakeDesign(DType::kF16, info, DesignOptions{4096, true});
    EXPECT_EQ(a.Canonical(), b.Canonical()) << name;
    EXPECT_EQ(a.rows, b.rows) << name;
    // And the realized rows, bit for bit.
    for (std::size_t j = 0; j < a.rows.size(); j += 7) {
      const RowCase x = RealizeDesignRow(a, j, DType::kF16, info, 99);
      const RowCase y = RealizeDesignRow(b, j, DType::kF16, info, 99);
      EXPECT_EQ(x.bits16, y.bits16);
      EXPECT_EQ(x.mask, y.mask);
      EXPECT_EQ(std::bit_cast<uint32_t>(x.temperature), std::bit_cast<uint32_t>(y.temperature));
      EXPECT_EQ(std::bit_cast<uint32_t>(x.top_p), std::bit_cast<uint32_t>(y.top_p));
      EXPECT_EQ(std::bit_cast<uint32_t>(x.min_p), std::bit_cast<uint32_t>(y.min_p));
      EXPECT_EQ(x.top_k, y.top_k);
      EXPECT_EQ(x.row_id, y.row_id);
    }
  }
  // A pinned digest of stable_cpu's standard f32 design: a change of the construction or of the
  // model changes it (and the plans' digests with it).
  const Design d = MakeDesign(DType::kF32, InfoOf("stable_cpu"), DesignOptions{262144, true});
  EXPECT_EQ(FixedHash(d.Canonical()), 14229119202228239882u)
      << "design digest " << FixedHash(d.Canonical()) << ", rows " << d.rows.size();
}

TEST(Coverage, ExcludedClassesFollowTheDeclaration) {
  for (const auto& [name, info] : Declarations()) {
    const Design d = MakeDesign(DType::kF32, info, DesignOptions{4096, true});
    std::map<std::string, std::string> excluded;
    for (const ExcludedClass& e : d.excluded) excluded[e.axis + "=" + e.cls] = e.reason;
    const bool top_p = info.Has(SAMPCERT_CAP_TOP_P), min_p = info.Has(SAMPCERT_CAP_MIN_P);
    EXPECT_EQ(excluded.contains("top_p=half"), !top_p) << name;
    EXPECT_EQ(excluded.contains("top_p=cut_below"), !top_p) << name;
    EXPECT_EQ(excluded.contains("min_p=ratio_above"), !min_p) << name;
    if (!top_p) {
      EXPECT_EQ(excluded["top_p=half"], "capability top-p not declared") << name;
    }
    EXPECT_FALSE(excluded.contains("top_p=off")) << name;
    // Invalid input is never designed; the profile's vocabulary bound leaves out large V.
    EXPECT_EQ(excluded["top_p=nan"].substr(0, 13), "invalid input") << name;
    EXPECT_EQ(excluded["temperature=negative"].substr(0, 13), "invalid input") << name;
    EXPECT_TRUE(excluded.contains("vocab=8192")) << name;
    EXPECT_FALSE(excluded.contains("vocab=1025")) << name;
    EXPECT_TRUE(excluded.contains("temperature=threshold_below")) << name;
    // No row of the design uses an excluded class: checked in DesignCovers..., and here for the
    // capability the declaration lacks.
    for (std::size_t j = 0; j < d.rows.size(); ++j) {
      const RowCase r = RealizeDesignRow(d, j, DType::kF32, info, 5);
      if (!top_p) {
        EXPECT_EQ(r.top_p, 1.0f) << name;
      }
      if (!min_p) {
        EXPECT_EQ(r.min_p, 0.0f) << name;
      }
    }
  }
}

// A declared draw cost excludes the vocabulary classes whose design row would cost more than
// kDesignRowDrawSeconds of draws: at 12 ns per token (llama.cpp's) and 1024 pooled draws plus
// 1024 for the checks, V = 262144 costs 6.4 s and goes, V = 8192 costs 0.2 s and stays. No cost,
// or one the plan does not read as a declaration (non-finite), excludes nothing by cost.
TEST(Coverage, DeclaredDrawCostExcludesTheVocabulariesItCannotAfford) {
  const auto excluded_vocabs = [](double cost_ns) {
    adapters::SamplerInfo info = InfoOf("stable_cpu");
    info.policies.draw_cost_ns_per_token = cost_ns;
    std::map<std::string, std::string> out;
    for (const ExcludedClass& e :
         MakeDesign(DType::kF32, info, DesignOptions{262144, false, 1024}).excluded) {
      if (e.axis == "vocab") out[e.cls] = e.reason;
    }
    return out;
  };
  const auto llama = excluded_vocabs(12);
  ASSERT_TRUE(llama.contains("262144"));
  EXPECT_EQ(llama.at("262144"),
            "V above what the declared draw cost allows a design row (12 ns per token: 6.4 s of "
            "draws, more than 1 s)");
  EXPECT_FALSE(llama.contains("8192"));
  EXPECT_EQ(llama.size(), 1u);
  // 1 s at 12 ns per token and 2048 draws is V = 40690: a cost 8 times as high reaches 8192.
  EXPECT_TRUE(excluded_vocabs(96).contains("8192"));
  EXPECT_FALSE(excluded_vocabs(96).contains("1025"));
  for (const double none : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_TRUE(excluded_vocabs(none).empty()) << none;
  }
  // Any cost, however large (a plug-in's declaration is untrusted), keeps V = 64, the class every
  // row falls back to: the design still covers every pair, on V = 64 rows.
  adapters::SamplerInfo costly = InfoOf("stable_cpu");
  costly.policies.draw_cost_ns_per_token = 1e30;
  const Design d = MakeDesign(DType::kF32, costly, DesignOptions{262144, false, 1024});
  std::size_t vocabs_excluded = 0;
  for (const ExcludedClass& e : d.excluded) vocabs_excluded += e.axis == "vocab";
  EXPECT_EQ(vocabs_excluded, 11u);  // all 12 but V = 64
  ASSERT_FALSE(d.rows.empty());
  for (std::size_t j = 0; j < d.rows.size(); ++j) {
    EXPECT_EQ(RealizeDesignRow(d, j, DType::kF32, costly, 5).vocab(), 64u) << "row " << j;
  }
}

TEST(Coverage, DesignRowsAreValidAndRealizeTheirClasses) {
  for (const auto& [name, info] : Declarations()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Design d = MakeDesign(dtype, info, DesignOptions{4096, true});
      for (std::size_t j = 0; j < d.rows.size(); ++j) {
        const RowCase r = RealizeDesignRow(d, j, dtype, info, j);
        EXPECT_EQ(r.family, "design");
        const auto ref = ComputeReference(r.view(), info.policies);
        EXPECT_TRUE(ref.ok()) << name << " " << DTypeName(dtype) << " row " << j << ": "
                              << (ref.ok() ? "" : ref.error().message) << " " << Describe(r);
        // A few classes read back from the row (by their names, independently of `apply`).
        std::map<std::string, std::string> cls;
        for (std::size_t a = 0; a < d.axes.size(); ++a) {
          const CoverageAxis& axis = CoverageModel()[d.axes[a]];
          cls[std::string(axis.name)] = std::string(axis.classes[d.rows[j][a]].name);
        }
        const auto v = static_cast<int64_t>(r.vocab());
        EXPECT_EQ(std::to_string(v), cls["vocab"]);
        const std::map<std::string, int64_t> top_k = {
            {"off", 0},           {"one", 1}, {"above_1024", 1025},
            {"v_minus_1", v - 1}, {"v", v},   {"above_v", v + 1}};
        EXPECT_EQ(r.top_k, top_k.at(cls["top_k"])) << cls["top_k"];
        if (cls["temperature"] == "zero" || cls["temperature"] == "neg_zero") {
          EXPECT_EQ(r.temperature, 0.0f);
          EXPECT_EQ(std::signbit(r.temperature), cls["temperature"] == "neg_zero");
        }
        if (cls["top_p"] == "cut_below" || cls["top_p"] == "cut_above") {
          EXPECT_GT(r.top_p, 0.0f);
          EXPECT_LE(r.top_p, 1.0f);
        }
        if (cls["logit"] == "pos_inf") {
          EXPECT_EQ(r.Logit(0), std::numeric_limits<float>::infinity());
        }
        if (cls["logit"] == "nan_masked") {
          EXPECT_TRUE(std::isnan(r.Logit(0)));
          EXPECT_EQ(r.mask[0], 0);
        }
        if (cls["shape"] == "mask_narrower" && cls["logit"] != "nan_masked") {
          EXPECT_EQ(r.mask.back(), 0);
        }
      }
    }
  }
}

// A design row is case valid_cases_per_dtype + j of its dtype's item: run alone by --case, it
// is the same row, with its failures attributed to family "design" and reproducible.
TEST(Coverage, DesignRowRerunsByItsCaseIndex) {
  auto s = registry::OpenSampler("naive");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  const Plan plan = MakePlan(quick, (*s)->info(), 1);
  const PlanItem& item = plan.items.front();
  ASSERT_EQ(item.kind, ItemKind::kGeneratedRows);
  const std::vector<results::TestResult> all = RunItem(**s, "naive", plan, item, -1);
  const results::TestResult* failing = nullptr;
  for (const results::TestResult& r : all) {
    if (r.family == "design" && r.failure && r.property != "DIST-3") {
      failing = &r;
      break;
    }
  }
  ASSERT_NE(failing, nullptr) << "naive fails no design row";
  const std::string& repro = failing->failure->reproduction;
  const std::size_t at = repro.find("--case ");
  ASSERT_NE(at, std::string::npos) << repro;
  const int64_t index = std::stoll(repro.substr(at + 7));
  EXPECT_GE(index, quick.valid_cases_per_dtype) << "a design row's case follows the generated";
  const std::vector<results::TestResult> one = RunItem(**s, "naive", plan, item, index);
  bool again = false;
  for (const results::TestResult& r : one) {
    if (r.family == "design" && r.status != results::Status::kNotSupported) {
      EXPECT_LE(r.cases, 1u) << r.property << ": one case only";
    }
    if (r.property == failing->property && r.family == "design") {
      again = r.status == results::Status::kFail && r.failure &&
              r.failure->input == failing->failure->input;
    }
  }
  EXPECT_TRUE(again) << failing->property << " on " << failing->failure->input
                     << " does not fail again under --case " << index;
  // Run alone, the failing design row is shrunk (by halves of its tokens) like a generated
  // row: its row file holds fewer tokens than the row as designed.
  bool shrunk_checked = false;
  for (const results::TestResult& r : one) {
    if (r.property != failing->property || r.family != "design" || !r.failure) continue;
    shrunk_checked = true;
    // The input is the row as designed ("f32 V=1025 T=..."), the row file the shrunk one.
    const std::size_t v_at = r.failure->input.find(" V=");
    ASSERT_NE(v_at, std::string::npos) << r.failure->input;
    const std::size_t designed = std::stoull(r.failure->input.substr(v_at + 3));
    Expected<RowCase> minimal = RowCaseFromRowFile(r.failure->row);
    ASSERT_TRUE(minimal.ok()) << minimal.error().message;
    std::cout << "design row of " << designed << " tokens shrunk to " << minimal->vocab() << " ("
              << r.property << ")\n";
    EXPECT_LT(minimal->vocab(), designed) << "the design row of " << designed
                                          << " tokens was not shrunk: " << r.failure->minimal_input;
  }
  EXPECT_TRUE(shrunk_checked) << "the one-case run has no " << failing->property << " failure";
  // The keys of the one-case run are those its run returns.
  std::set<std::pair<std::string, std::string>> keys;
  for (const results::TestResult& r : one) keys.emplace(r.property, r.family);
  const ResultKeys want = ExpectedResultKeys(plan, item, (*s)->info(), index);
  const std::set<std::pair<std::string, std::string>> want_set(want.begin(), want.end());
  EXPECT_EQ(keys, want_set);
}

// A failing row shrinks only to rows that fail the same way: naive returns a token for a
// negative top_k and for a NaN top_p, both INV-ERR-1, but for different errors SPEC wants, so
// the top_k row does not shrink to the top_p row offered as its shrink.
TEST(Coverage, ShrinkKeepsHowTheRowFails) {
  auto s = registry::OpenSampler("naive");
  ASSERT_TRUE(s.ok()) << s.error().message;
  RowCase bad_k;
  bad_k.dtype = DType::kF32;
  for (const float x : {0.0f, 1.0f, 2.0f}) bad_k.bits32.push_back(std::bit_cast<uint32_t>(x));
  bad_k.family = "test";
  bad_k.top_k = -2;
  RowCase bad_p = bad_k;
  bad_p.top_k = 0;
  bad_p.top_p = std::numeric_limits<float>::quiet_NaN();
  for (const RowCase* row : {&bad_k, &bad_p}) {
    const std::vector<Outcome> o = CheckCase(**s, *row, 1);
    ASSERT_EQ(o.size(), 1u);
    ASSERT_FALSE(o[0].ok) << "naive refuses top_k " << row->top_k << ": no trade to test";
    ASSERT_TRUE(o[0].message.starts_with("returned token")) << o[0].message;
  }
  const auto shrinks = [&](const RowCase& r) {
    return r.top_k < 0 ? rc::seq::just(bad_p) : rc::Seq<RowCase>();
  };
  const rc::Shrinkable<RowCase> start = rc::shrinkable::shrinkRecur(bad_k, shrinks);
  const std::string kind = CheckCase(**s, bad_k, 1)[0].kind;
  EXPECT_EQ(kind, "token, want InvalidTopK");
  EXPECT_EQ(Shrink(**s, start, "INV-ERR-1", kind, 1, 100, 1 << 20).top_k, -2)
      << "the negative top_k row shrank to the NaN top_p row";
  // The same shrink is taken where the kind is the same: a second negative top_k row.
  RowCase smaller_k = bad_k;
  smaller_k.bits32.pop_back();
  const rc::Shrinkable<RowCase> same = rc::shrinkable::shrinkRecur(bad_k, [&](const RowCase& r) {
    return r.vocab() > 2 ? rc::seq::just(smaller_k) : rc::Seq<RowCase>();
  });
  EXPECT_EQ(Shrink(**s, same, "INV-ERR-1", kind, 1, 100, 1 << 20).vocab(), 2u);
}

}  // namespace
}  // namespace sampcert::properties
