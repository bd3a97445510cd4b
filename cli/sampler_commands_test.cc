// `sampcert list`, `info` and `sample`.
#include "cli/sampler_commands.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sampcert::cli {
namespace {

TEST(SamplerCommands, ListNamesEveryBuiltin) {
  std::ostringstream out;
  EXPECT_EQ(RunList(out), 0);
  for (const char* name : {"stable_cpu", "naive", "floor_fix"}) {
    EXPECT_NE(out.str().find(name), std::string::npos) << out.str();
  }
}

TEST(SamplerCommands, InfoPrintsTheDeclaration) {
  std::ostringstream out, err;
  EXPECT_EQ(RunInfo("stable_cpu", out, err), 0);
  EXPECT_NE(out.str().find("min-p"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("determinism:   cross device"), std::string::npos) << out.str();
  EXPECT_EQ(RunInfo("./missing.so", out, err), 3);
  EXPECT_NE(err.str().find("no such file"), std::string::npos) << err.str();
}

TEST(SamplerCommands, SampleDrawsOrReportsTheSamplersError) {
  ReferenceRequest req;
  req.dtype = "f16";
  req.logits = {"30000", "-5", "20", "100"};
  req.params.temperature = 0.1f;
  req.draws = 4;
  std::ostringstream out, err;
  EXPECT_EQ(RunSample("stable_cpu", req, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("stable_cpu draws (seed 0, row id 0): 0 0 0 0"), std::string::npos)
      << out.str();
  EXPECT_EQ(RunSample("naive", req, out, err), 1);
  EXPECT_NE(err.str().find("NumericalFailure"), std::string::npos) << err.str();
  EXPECT_EQ(RunSample("nope", req, out, err), 3);
}

}  // namespace
}  // namespace sampcert::cli
