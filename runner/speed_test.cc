// The speed phase (SPEC REPORT-3) through the runner's API: a built-in sampler timed in a worker
// and in this process, one shape per call kind it declares, and a setup for every profile.
// (A plug-in crashing or spinning in the phase, and the report's section: tests/hostile_test.sh,
// isolation.speed_*.)
#include "runner/speed.h"

#include <gtest/gtest.h>

#include "properties/plan.h"
#include "registry/open_sampler.h"

namespace sampcert::runner {
namespace {

SamplerOpener Opener(const std::string& arg) {
  return [arg] { return registry::OpenSampler(arg); };
}

void ExpectMeasured(const SpeedOutcome& s, const SpeedSetup& setup, bool batch) {
  EXPECT_EQ(s.status, SpeedStatus::kMeasured) << s.message;
  EXPECT_EQ(s.message, "");
  EXPECT_EQ(s.vocab, setup.vocab);
  EXPECT_EQ(s.dtype, DType::kF32);
  ASSERT_EQ(s.shapes.size(), batch ? 2u : 1u);
  EXPECT_EQ(s.shapes[0].rows, 1u);
  EXPECT_EQ(s.shapes[0].calls, setup.calls);
  if (batch) {
    EXPECT_EQ(s.shapes[1].rows, setup.batch);
    EXPECT_EQ(s.shapes[1].calls, setup.batch_calls);
  }
  for (const SpeedShape& shape : s.shapes) {
    // A V = 32000 row takes microseconds here; a second would be a broken clock or median.
    EXPECT_GT(shape.ns_per_row, 0);
    EXPECT_LT(shape.ns_per_row, 1e9);
  }
  EXPECT_GT(s.seconds, 0);
}

TEST(Speed, ABuiltinSamplerIsTimedInAWorkerAndInProcess) {
  const SpeedSetup* quick = SpeedSetupFor("quick");
  ASSERT_NE(quick, nullptr);
  RunOptions opts;
  auto info = Describe(Opener("stable_cpu"), opts);
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_TRUE(info->Has(SAMPCERT_CAP_BATCH));
  auto isolated = MeasureSpeed(Opener("stable_cpu"), *info, *quick, opts);
  ASSERT_TRUE(isolated.ok()) << isolated.error().message;
  ExpectMeasured(*isolated, *quick, true);
  opts.isolate = false;
  auto here = MeasureSpeed(Opener("stable_cpu"), *info, *quick, opts);
  ASSERT_TRUE(here.ok()) << here.error().message;
  ExpectMeasured(*here, *quick, true);
}

TEST(Speed, OneRowPerCallWithoutBatch) {
  const SpeedSetup* quick = SpeedSetupFor("quick");
  ASSERT_NE(quick, nullptr);
  RunOptions opts;
  auto info = Describe(Opener(MINIMAL_PLUGIN_PATH), opts);
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_FALSE(info->Has(SAMPCERT_CAP_BATCH));
  auto s = MeasureSpeed(Opener(MINIMAL_PLUGIN_PATH), *info, *quick, opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ExpectMeasured(*s, *quick, false);
}

// Every profile has its row (quick small, the others at V = 128k, issue 39), and an unknown
// name has none.
TEST(Speed, EveryProfileHasASetup) {
  for (const char* name : {"quick", "standard", "full"}) {
    properties::Profile p;
    ASSERT_TRUE(properties::ProfileByName(name, &p));
    EXPECT_NE(SpeedSetupFor(p.name), nullptr) << name;
  }
  EXPECT_EQ(SpeedSetupFor("standard")->vocab, 131072u);
  EXPECT_EQ(SpeedSetupFor("standard")->batch, 64u);
  EXPECT_LT(SpeedSetupFor("quick")->vocab, SpeedSetupFor("standard")->vocab);
  EXPECT_EQ(SpeedSetupFor("nope"), nullptr);
  EXPECT_EQ(SpeedStatusName(SpeedStatus::kTimeout), "timeout");
}

}  // namespace
}  // namespace sampcert::runner
