// The traceability table (clauses.h, SPEC TRACE-1): every clause has a decisive planned input or
// a reason, every evidence word names something a full declaration's plan has, every ID SPEC
// defines is a clause or one of the suite's own, and SPEC's table is the code's.
#include "properties/clauses.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "properties/coverage.h"
#include "properties/families.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

constexpr DType kDTypes[] = {DType::kF32, DType::kF16, DType::kBF16};
constexpr uint32_t kEverything = 0xffffffffu;  // every capability bit

std::set<std::string> PlannedRows() {
  std::set<std::string> names;
  for (const DType d : kDTypes) {
    for (auto* rows : {DistributionRows, TailRows, PrecisionProbeRows, IndependenceRows,
                       PenaltyRows, BiasRows, PackedMaskRows, LogprobRows}) {
      for (const auto& [name, row] : rows(d, kEverything)) names.insert(name);
    }
  }
  return names;
}

std::set<std::string> PlannedChains() {
  std::set<std::string> names;
  for (const DType d : kDTypes) {
    for (std::string& n : VerifyChainNames(d, kEverything, Policies{})) names.insert(std::move(n));
  }
  return names;
}

std::set<std::string> DesignClasses() {
  std::set<std::string> names;
  for (const CoverageAxis& a : CoverageModel()) {
    for (const CoverageClass& c : a.classes)
      names.insert(std::string(a.name) + "." + std::string(c.name));
  }
  return names;
}

std::set<std::string> Properties() {
  std::set<std::string> ids = {"ABI-1"};  // checked on every call by the runner
  for (const Family& f : FamilyTable()) {
    for (const PropertyLine& p : f.properties) ids.insert(std::string(p.id));
  }
  return ids;
}

std::string BaseId(std::string_view id) { return std::string(id.substr(0, id.find('.'))); }

std::string Spec() {
  std::ifstream in(SAMPCERT_SPEC_PATH);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Clauses, EachHasEvidenceOrAReasonAndAUniqueId) {
  std::set<std::string> ids;
  for (const Clause& c : Clauses()) {
    EXPECT_TRUE(ids.insert(std::string(c.id)).second) << "duplicate clause " << c.id;
    EXPECT_FALSE(c.promise.empty()) << c.id;
    EXPECT_NE(c.evidence.empty(), c.not_exercised.empty())
        << c.id << ": a clause has decisive planned inputs or a reason why none, not both";
  }
}

TEST(Clauses, EveryEvidenceWordNamesAPlannedInput) {
  const auto rows = PlannedRows();
  const auto chains = PlannedChains();
  const auto design = DesignClasses();
  const auto properties = Properties();
  for (const Clause& c : Clauses()) {
    for (const Evidence& e : EvidenceOf(c)) {
      switch (e.kind) {
        case EvidenceKind::kRow:
          EXPECT_TRUE(rows.contains(e.name)) << c.id << ": row " << e.name;
          break;
        case EvidenceKind::kChain:
          EXPECT_TRUE(chains.contains(e.name)) << c.id << ": chain " << e.name;
          break;
        case EvidenceKind::kDesign:
          EXPECT_TRUE(design.contains(e.name)) << c.id << ": design class " << e.name;
          break;
        case EvidenceKind::kProperty:
          EXPECT_TRUE(properties.contains(e.name)) << c.id << ": property " << e.name;
          break;
      }
    }
  }
}

TEST(Clauses, UnknownEvidenceKindIsAnError) {
  const Clause bad{.id = "X-1", .promise = "p", .evidence = "rows:llm_like_V1000"};
  EXPECT_THROW(EvidenceOf(bad), std::invalid_argument);
}

// Every ID SPEC defines (a bold definition or a table's first column) is a clause, the base of
// one (SEM-6.top_p), or the suite's own; and every clause's base ID is one SPEC names.
TEST(Clauses, CoverEverySpecId) {
  const std::string spec = Spec();
  ASSERT_FALSE(spec.empty());
  std::set<std::string> defined;
  const std::regex def(R"((?:\*\*|\n\| )((?:[A-Z]+-)+[0-9]+[a-z]?)\b)");
  for (std::sregex_iterator it(spec.begin(), spec.end(), def), end; it != end; ++it) {
    defined.insert((*it)[1]);
  }
  ASSERT_GT(defined.size(), 80u);
  std::set<std::string> mentioned;  // VER-LAW-2 is defined inside "VER-LAW-1..3"
  const std::regex any(R"(\b((?:[A-Z]+-)+[0-9]+[a-z]?)\b)");
  for (std::sregex_iterator it(spec.begin(), spec.end(), any), end; it != end; ++it) {
    mentioned.insert((*it)[1]);
  }
  std::set<std::string> covered;
  for (const Clause& c : Clauses()) covered.insert(BaseId(c.id));
  for (std::string_view id : SuiteOwnIds()) covered.insert(std::string(id));
  for (const std::string& id : defined) EXPECT_TRUE(covered.contains(id)) << id << " has no clause";
  for (const Clause& c : Clauses()) {
    EXPECT_TRUE(mentioned.contains(BaseId(c.id))) << c.id << ": SPEC has no " << BaseId(c.id);
  }
}

TEST(Clauses, SpecTableIsTheCodes) {
  const std::string spec = Spec();
  const std::size_t at = spec.find("### Traceability");
  ASSERT_NE(at, std::string::npos) << "SPEC.md has no '### Traceability' section";
  const std::string table = ClausesMarkdown();
  EXPECT_NE(spec.find(table, at), std::string::npos)
      << "SPEC.md's traceability table differs from the code's; paste this into the section:\n"
      << table;
}

}  // namespace
}  // namespace sampcert::properties
