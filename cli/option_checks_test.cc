// SPEC OPT-1: every numeric option is range-checked on its text and refused with its range; an
// empty value is a usage error. The Certify() half checks what every caller (the Python
// package's item_timeout included) passes: --item-timeout 1e20 overflowed where it became
// RLIMIT_CPU, and every item was a Timeout "after 0 draws" (a correct sampler NOT CONFORMANT).
#include "cli/option_checks.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "certify/certify.h"

namespace sampcert::cli {
namespace {

TEST(OptionChecks, WholeNumbersAreDigitsInRange) {
  const OptionCheck c = WholeNumber(0, static_cast<uint64_t>(INT64_MAX));
  EXPECT_EQ(c("0"), "");
  EXPECT_EQ(c("9223372036854775807"), "");
  // --case 2^64 was read as 2^63-1 by CLI11, and 2^63 too.
  for (const char* bad :
       {"18446744073709551616", "9223372036854775808", "-1", "+1", "1e3", "0x10", "", " 1", "1 "}) {
    const std::string why = c(bad);
    EXPECT_NE(why.find("[0, 9223372036854775807]"), std::string::npos) << bad << ": " << why;
  }
  EXPECT_NE(WholeNumber(1, 256)("0").find("[1, 256]"), std::string::npos);
  EXPECT_NE(WholeNumber(1, 8, "draws")("9").find("whole number of draws in [1, 8]"),
            std::string::npos);
}

TEST(OptionChecks, SecondsAreFiniteAndInRange) {
  const OptionCheck timeout = Seconds(0, true, certify::kMaxSeconds);
  EXPECT_EQ(timeout("0.5"), "");
  EXPECT_EQ(timeout("1e7"), "");
  for (const char* bad : {"1e20", "1e19", "0", "-1", "inf", "nan", "", "3s", "10000000.5"}) {
    const std::string why = timeout(bad);
    EXPECT_NE(why.find("seconds in (0, 10000000]"), std::string::npos) << bad << ": " << why;
  }
  EXPECT_EQ(Seconds(0, false, 10)("0"), "");
  EXPECT_NE(Seconds(0, false, 10)("-0.1").find("[0, 10]"), std::string::npos);
}

TEST(OptionChecks, AnEmptyValueIsNotNone) {
  EXPECT_EQ(NotEmpty()("f32"), "");
  EXPECT_NE(NotEmpty()("").find("must not be empty"), std::string::npos);
}

TEST(OptionChecks, CertifyRefusesAnItemTimeoutThatCannotBeALimit) {
  for (double seconds : {1e20, 1e7 * 2}) {
    certify::CertifyRequest req;
    req.sampler = "stable_cpu";
    req.profile = "quick";
    req.item_timeout_s = seconds;
    req.only_item = "f32/no_such_item";  // should the check be missing: fails fast all the same
    req.out_dir = (std::filesystem::path(::testing::TempDir()) / "option_checks_out").string();
    const certify::CertifyOutcome o = certify::Certify(req);
    EXPECT_EQ(o.error, certify::CertifyError::kUsage);
    EXPECT_NE(o.message.find("--item-timeout must be a number of seconds in (0, 10000000]"),
              std::string::npos)
        << o.message;
  }
}

}  // namespace
}  // namespace sampcert::cli
