// The `sampcert reference` command: output, invalid rows, usage errors.
#include "cli/reference_command.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "properties/row_case.h"

namespace sampcert::cli {
namespace {

TEST(ReferenceCommand, PrintsTheBriefsHalfOverflowRow) {
  ReferenceRequest req;
  req.dtype = "f16";
  req.logits = {"30000", "-5", "20", "100"};
  req.params.temperature = 0.1f;
  req.draws = 3;
  std::ostringstream out, err;
  EXPECT_EQ(RunReference(req, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("regime: finite"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("draws (seed 0, row id 0): 0 0 0"), std::string::npos) << out.str();
}

// A row file with a token history (SPEC section 16): its reference is the penalized row's. With
// logits (2, 2), token 0 once in the output and repetition penalty 2, token 0's logit is 1:
// p0 = 1 / (1 + e).
TEST(ReferenceCommand, RowFileCarriesItsHistory) {
  properties::RowCase row;
  row.bits32 = {0x40000000u, 0x40000000u};
  row.output_tokens = {0};
  row.repetition_penalty = 2.0f;
  const std::string path = testing::TempDir() + "/reference_history_row.json";
  std::ofstream(path) << properties::RowFileJson(row);
  ReferenceRequest req;
  req.row_file = path;
  std::ostringstream out, err;
  ASSERT_EQ(RunReference(req, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("0.268941421369995"), std::string::npos) << out.str();
  // The same row without its history: the penalty changes nothing (PEN-4), p0 = 1/2.
  row.output_tokens.clear();
  std::ofstream(path) << properties::RowFileJson(row);
  std::ostringstream out2;
  ASSERT_EQ(RunReference(req, out2, err), 0) << err.str();
  EXPECT_EQ(out2.str().find("0.268941421369995"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("0.5"), std::string::npos) << out2.str();
}

// A row file with a logit bias (SPEC section 18): logits (2, 2, 2), token 0 biased by +1 and
// token 2 banned (-inf, a bit pattern in the file): p0 = e / (e + 1). Without its bias file keys
// the row is uniform over three tokens.
TEST(ReferenceCommand, RowFileCarriesItsBias) {
  properties::RowCase row;
  row.bits32 = {0x40000000u, 0x40000000u, 0x40000000u};
  row.bias_tokens = {0, 2};
  row.bias_values = {1.0f, -std::numeric_limits<float>::infinity()};
  const std::string path = testing::TempDir() + "/reference_bias_row.json";
  std::ofstream(path) << properties::RowFileJson(row);
  ReferenceRequest req;
  req.row_file = path;
  std::ostringstream out, err;
  ASSERT_EQ(RunReference(req, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("0.7310585786300048"), std::string::npos) << out.str();
  row.bias_tokens.clear();
  row.bias_values.clear();
  std::ofstream(path) << properties::RowFileJson(row);
  std::ostringstream out2;
  ASSERT_EQ(RunReference(req, out2, err), 0) << err.str();
  EXPECT_EQ(out2.str().find("0.7310585786300048"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("0.3333333333333"), std::string::npos) << out2.str();
}

TEST(ReferenceCommand, InvalidRowIsReportedWithExitOne) {
  ReferenceRequest req;
  req.logits = {"1", "nan"};
  std::ostringstream out, err;
  EXPECT_EQ(RunReference(req, out, err), 1);
  EXPECT_NE(err.str().find("NanLogit"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("logit 1 is NaN"), std::string::npos) << err.str();
}

TEST(ReferenceCommand, UsageErrorsExitTwo) {
  std::ostringstream out, err;
  ReferenceRequest bad_dtype;
  bad_dtype.dtype = "f64";
  bad_dtype.logits = {"1"};
  EXPECT_EQ(RunReference(bad_dtype, out, err), 2);
  ReferenceRequest bad_number;
  bad_number.logits = {"1", "one"};
  EXPECT_EQ(RunReference(bad_number, out, err), 2);
  EXPECT_NE(err.str().find("'one' is not a number"), std::string::npos) << err.str();
  ReferenceRequest bad_mask;
  bad_mask.logits = {"1", "2"};
  bad_mask.mask = {1};
  EXPECT_EQ(RunReference(bad_mask, out, err), 2);
}

// Issue 11, point 5: inputs that were silently accepted (an empty field dropped, a logit that
// overflowed to +inf, a mask value 2) or crashed (--draws 2^62: std::length_error, exit 134).
TEST(ReferenceCommand, RowInputsAreValidatedBeforeAnyWork) {
  struct Case {
    std::string dtype;
    std::vector<std::string> logits;
    std::vector<int> mask;
    int64_t draws;
    const char* message;
  };
  for (const Case& c :
       {Case{"f32", {"1,,3"}, {}, 0, "field 2 is empty"},
        Case{"f32", {"1,2,"}, {}, 0, "field 3 is empty"},
        Case{"f32", {"1", "1e39"}, {}, 0, "'1e39' overflows f32"},
        Case{"f32", {"1", "-1e999"}, {}, 0, "overflows f32"},
        Case{"f16", {"1", "70000"}, {}, 0, "'70000' overflows f16"},
        Case{"bf16", {"1", "3.5e38"}, {}, 0, "overflows bf16"},
        Case{"f32", {"1", "2"}, {1, 2}, 0, "--mask values must be 0 or 1, not 2"},
        Case{"f32", {"1", "2"}, {}, int64_t{1} << 62, "--draws must be in [0, 16777216]"},
        Case{"f32", {"1", "2"}, {}, -3, "--draws must be in"}}) {
    ReferenceRequest req;
    req.dtype = c.dtype;
    req.logits = c.logits;
    req.mask = c.mask;
    req.draws = c.draws;
    std::ostringstream out, err;
    EXPECT_EQ(RunReference(req, out, err), 2) << c.message;
    EXPECT_NE(err.str().find(c.message), std::string::npos) << err.str();
    EXPECT_EQ(out.str(), "") << c.message;
  }
  // Infinities written as such, and a comma-separated single argument, are fine.
  ReferenceRequest ok;
  ok.dtype = "f16";
  ok.logits = {"1,-inf,inf,Infinity"};
  std::ostringstream out, err;
  EXPECT_EQ(RunReference(ok, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("support 3 of 4"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace sampcert::cli
