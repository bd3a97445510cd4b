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
  req.temperature = 0.1f;
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

}  // namespace
}  // namespace sampcert::cli
