// Root causes: the message class and the grouping (SPEC section 12, "Root causes").
#include "reports/root_causes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sampcert::reports {
namespace {

using results::Status;
using results::TestResult;

TEST(MessageClassTest, FirstClauseWithNumbersWrittenHash) {
  EXPECT_EQ(MessageClass("draws do not follow the reference (678 draws in all): G = 3.5"),
            "draws do not follow the reference");
  EXPECT_EQ(MessageClass("returned token 0 for invalid input; SPEC wants NanLogit: row 0"),
            "returned token # for invalid input");
  EXPECT_EQ(MessageClass("probabilities sum to 1.0000002 at T=-1.5e-07 and nan, -inf"),
            "probabilities sum to # at T=# and #, #");
  EXPECT_EQ(MessageClass("token id 70000 outside [0, 65536)"), "token id # outside [#, #)");
}

TEST(MessageClassTest, KeepsIdsAndWordsThatHoldDigitsOrNumberLetters) {
  EXPECT_EQ(MessageClass("SUPP-2: token 1 must be kept"), "SUPP-2");
  EXPECT_EQ(MessageClass("probabilities: token 3 must be kept (reference 0.3)"),
            "token # must be kept");
  EXPECT_EQ(MessageClass("fp16 inference on V32768 rows"), "fp16 inference on V32768 rows");
  EXPECT_EQ(MessageClass("an infinite nanny"), "an infinite nanny");
  EXPECT_EQ(MessageClass("  spaced \t  out  "), "spaced out");
}

TestResult Failed(const std::string& property, const std::string& dtype, const std::string& family,
                  Status status, const std::string& message) {
  TestResult r;
  r.property = property;
  r.dtype = dtype;
  r.family = family;
  r.status = status;
  r.failure = results::Failure{};
  r.failure->message = message;
  r.failure->input = family + " input";
  return r;
}

TEST(RootCausesTest, OneDefectAcrossRowsAndDtypesIsOneCause) {
  std::vector<TestResult> rs = {
      Failed("DIST-1", "f32", "flat_V64", Status::kFail, "draws do not follow the reference (1)"),
      Failed("DIST-1", "f32", "zipf_V9", Status::kFail, "draws do not follow the reference (2)"),
      Failed("INV-ERR-1", "f32", "nan", Status::kFail, "returned token 3 for invalid input"),
      Failed("DIST-1", "bf16", "flat_V64", Status::kFail, "draws do not follow the reference (3)"),
      Failed("INV-ERR-1", "f16", "nan", Status::kFail, "returned error NumericalFailure (row 0)"),
  };
  const std::vector<RootCause> causes = RootCauses(rs);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].property, "DIST-1");
  EXPECT_EQ(causes[0].results, (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(causes[0].dtypes, (std::vector<std::string>{"f32", "bf16"}));
  EXPECT_EQ(causes[0].families, (std::vector<std::string>{"flat_V64", "zipf_V9"}));
  EXPECT_EQ(causes[0].input, "flat_V64 input");  // no rows: the lead is the group's first
  // Two ways of getting invalid input wrong are two causes, ordered by property then class.
  EXPECT_EQ(causes[1].message_class, "returned error NumericalFailure");
  EXPECT_EQ(causes[2].message_class, "returned token # for invalid input");
}

TEST(RootCausesTest, TheSmallestCompleteInputLeads) {
  // An unshrunk design row of 1,025 tokens first, a shrunk 6-token row later: the small one
  // leads (its input, row file and reproduction), whatever the order of the results.
  std::vector<TestResult> rs = {
      Failed("SUPP-1", "f32", "design_V1025", Status::kFail, "token 7 is outside the support"),
      Failed("SUPP-1", "f32", "no_record", Status::kFail, "token 8 is outside the support"),
      Failed("SUPP-1", "f16", "overflow", Status::kFail, "token 2 is outside the support"),
      Failed("SUPP-1", "bf16", "overflow", Status::kFail, "token 3 is outside the support"),
  };
  rs[0].failure->row = std::string(1025 * 12, 'x');
  rs[0].failure->row_file = "row.big.json";
  rs[1].failure->row.clear();
  rs[2].failure->row = std::string(6 * 12, 'x');
  rs[2].failure->row_file = "row.small.json";
  rs[2].failure->minimal_input = "6 tokens";
  rs[3].failure->row = std::string(6 * 12, 'x');  // as small, but later: the first one leads
  rs[3].failure->row_file = "row.later.json";
  const std::vector<RootCause> causes = RootCauses(rs);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].lead, 2u);
  EXPECT_EQ(causes[0].row_file, "row.small.json");
  EXPECT_EQ(causes[0].input, "6 tokens");
  EXPECT_EQ(causes[0].message, "token 2 is outside the support");
  EXPECT_EQ(causes[0].results, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(RootCausesTest, KnownAndPassingResultsAreNoCauseAndNotReachedIsCounted) {
  std::vector<TestResult> rs = {
      Failed("TAIL-1", "f32", "deep", Status::kKnownFailure, "tail mass off"),
      Failed("PROB-1", "f32", "x", Status::kInconclusive, "token 1 off"),
      Failed("RANGE-1", "f32", "x", Status::kCrash, "the sampler's worker died of signal 11"),
  };
  TestResult pass;
  pass.property = "FIN-1";
  rs.push_back(pass);
  TestResult not_reached;
  not_reached.property = "NORM-1";
  not_reached.status = Status::kInconclusive;
  not_reached.note = "not reached on 2 case(s): an earlier check of the case failed";
  rs.push_back(not_reached);
  // A failing result without a failure record that is no consequence is a cause of its own,
  // shown by its note.
  TestResult timeout;
  timeout.property = "ALL";
  timeout.status = Status::kTimeout;
  timeout.note = "the sampler used its 300 s of CPU time for this item";
  rs.push_back(timeout);
  const std::vector<RootCause> causes = RootCauses(rs);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].status, Status::kCrash);  // the most severe first, whatever the counts
  EXPECT_EQ(causes[0].message_class, "the sampler's worker died of signal #");
  EXPECT_EQ(causes[0].input, "x input");
  EXPECT_EQ(causes[1].status, Status::kTimeout);
  EXPECT_EQ(causes[1].message_class, "the sampler used its # s of CPU time for this item");
  EXPECT_EQ(causes[1].message, timeout.note);
  EXPECT_EQ(causes[1].reproduction, "");
  EXPECT_EQ(causes[2].property, "PROB-1");
  EXPECT_EQ(NotReached(rs), 1u);
}

}  // namespace
}  // namespace sampcert::reports
