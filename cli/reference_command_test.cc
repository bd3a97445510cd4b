// The `sampcert reference` command: output, invalid rows, usage errors.
#include "cli/reference_command.h"

#include <gtest/gtest.h>

#include <sstream>

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
