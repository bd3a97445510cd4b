// tool_mutant_equivalence ORIGINAL MUTANT [--rows N] [--seed S] [--profile P] [--draws D]
//
// The equivalence check of tools/tool_mutants.py (issue 33): a mutant the certification does
// not kill is called equivalent only when it behaves exactly as the unmutated sampler, which the
// suite certifies CONFORMANT (equal to the reference within its declared accuracy), on
//   - every row of the profile's covering design (coverage.h's MakeDesign, realized as the run
//     realizes it), for every dtype both declare, and
//   - N random rows per dtype from the property generators (properties/generators.h: extreme
//     logits, temperatures down to 0, masks, truncation, invalid rows too),
// where "exactly" means: the same outcome (both succeed, or both fail with the same error
// code), bit-identical probabilities where both declare them, and the same D draws at a fixed
// (seed, row id) (the stream is shared: both draw by the canonical uniform). ORIGINAL and
// MUTANT are anything `sampcert run --sampler` takes (plug-in path, exec:'COMMAND').
//
// Exit 0 and "EQUIVALENT ..." when nothing differs; 1 and "DIFFERENT: ..." with the first exact
// difference (an outcome, an error code, a token in one support and not the other, the
// declared capabilities); 3 and "VALUES DIFFER ..." when only values differ (probabilities by
// their largest relative difference, and how many draws differ): not equivalent, a survivor
// whose difference the record states; 2 on a usage error or an original that cannot be opened.
#include <rapidcheck.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "properties/coverage.h"
#include "properties/generators.h"
#include "properties/plan.h"
#include "properties/row_case.h"
#include "registry/open_sampler.h"

namespace {

using sampcert::DType;
using sampcert::adapters::Sampler;
using sampcert::properties::RowCase;

struct Options {
  std::string original, mutant, profile = "standard";
  int rows = 64;
  uint64_t seed = 1;
  uint64_t draws = 64;
};

// What two samplers' results on one row differ by.
struct Difference {
  std::string exact;      // an outcome, an error code, a token: "" when none
  double max_rel = 0;     // the largest relative difference of a probability (both > 0)
  std::string rel_where;  // where it is
  std::size_t draws_differing = 0;
};

// Compares `a` (the original) and `b` (the mutant) on `row`: a different outcome or error code,
// a probability that is zero in one and not the other, is an exact difference; other
// probabilities are compared by their relative difference, and draws by how many differ.
Difference Compare(Sampler& a, Sampler& b, const RowCase& row, const Options& opt) {
  Difference d;
  const sampcert::adapters::Batch batch = sampcert::properties::OneRow(row);
  if (a.info().Has(SAMPCERT_CAP_PROBABILITIES) && b.info().Has(SAMPCERT_CAP_PROBABILITIES)) {
    auto pa = a.Probabilities(batch);
    auto pb = b.Probabilities(batch);
    if (pa.ok() != pb.ok()) {
      d.exact = std::string("probabilities: ") +
                (pa.ok() ? "original succeeds, mutant fails: " + pb.error().message
                         : "original fails, mutant succeeds");
      return d;
    }
    if (!pa.ok() && pa.error().code != pb.error().code) {
      d.exact = "probabilities: error codes differ";
      return d;
    }
    if (pa.ok()) {
      for (std::size_t i = 0; i < pa->size(); ++i) {
        const double x = (*pa)[i], y = (*pb)[i];
        if (std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y)) continue;
        if (!(x > 0 && y > 0)) {
          d.exact = "probabilities: token " + std::to_string(i) + ": " + std::to_string(x) +
                    " vs " + std::to_string(y);
          return d;
        }
        const double rel = std::fabs(x - y) / x;
        if (rel > d.max_rel) {
          d.max_rel = rel;
          d.rel_where = "token " + std::to_string(i);
        }
      }
    }
  }
  auto da = a.Sample(batch, opt.seed, 0, opt.draws);
  auto db = b.Sample(batch, opt.seed, 0, opt.draws);
  if (da.ok() != db.ok()) {
    d.exact =
        std::string("draws: ") + (da.ok() ? "original succeeds, mutant fails: " + db.error().message
                                          : "original fails, mutant succeeds");
    return d;
  }
  if (!da.ok()) {
    if (da.error().code != db.error().code) d.exact = "draws: error codes differ";
    return d;
  }
  for (std::size_t j = 0; j < da->size(); ++j) d.draws_differing += (*da)[j] != (*db)[j];
  return d;
}

int Usage(const char* why) {
  std::cerr << "tool_mutant_equivalence: " << why
            << "\nusage: tool_mutant_equivalence ORIGINAL MUTANT [--rows N] [--seed S] "
               "[--profile P] [--draws D]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      if (i + 1 >= argc) return Usage("an option without its value");
      const std::string value = argv[++i];
      if (arg == "--rows") {
        opt.rows = std::atoi(value.c_str());
      } else if (arg == "--seed") {
        opt.seed = std::strtoull(value.c_str(), nullptr, 10);
      } else if (arg == "--profile") {
        opt.profile = value;
      } else if (arg == "--draws") {
        opt.draws = std::strtoull(value.c_str(), nullptr, 10);
      } else {
        return Usage("unknown option");
      }
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return Usage("two samplers are needed");
  opt.original = positional[0];
  opt.mutant = positional[1];
  sampcert::properties::Profile profile;
  if (!sampcert::properties::ProfileByName(opt.profile, &profile)) return Usage("no such profile");
  auto a = sampcert::registry::OpenSampler(opt.original);
  if (!a.ok()) return Usage(("original: " + a.error().message).c_str());
  auto b = sampcert::registry::OpenSampler(opt.mutant);
  if (!b.ok()) {
    // A mutant that cannot be opened (its declaration broken) is not equivalent.
    std::cout << "DIFFERENT: the mutant cannot be opened: " << b.error().message << "\n";
    return 1;
  }
  Sampler& sa = **a;
  Sampler& sb = **b;
  if (sa.info().capabilities != sb.info().capabilities) {
    std::cout << "DIFFERENT: declared capabilities differ\n";
    return 1;
  }
  std::size_t compared = 0, rows_differing = 0, draws_differing = 0, draws_total = 0;
  double max_rel = 0;
  std::string max_rel_where, draws_where;
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16};
  const uint32_t dtype_caps[] = {SAMPCERT_CAP_F32, SAMPCERT_CAP_F16, SAMPCERT_CAP_BF16};
  for (int d = 0; d < 3; ++d) {
    if (!sa.info().Has(dtype_caps[d])) continue;
    const DType dtype = dtypes[d];
    const sampcert::properties::Design design = sampcert::properties::MakeDesign(
        dtype, sa.info(), sampcert::properties::DesignOptionsOf(profile));
    std::vector<RowCase> rows;
    for (std::size_t j = 0; j < design.rows.size(); ++j) {
      rows.push_back(
          sampcert::properties::RealizeDesignRow(design, j, dtype, sa.info(), opt.seed + j));
    }
    const sampcert::properties::GenConfig config{dtype, sa.info().capabilities, profile.max_vocab,
                                                 0.15};
    const auto gen = sampcert::properties::GenRow(config);
    for (int i = 0; i < opt.rows; ++i) {
      rows.push_back(gen(rc::Random(opt.seed * 1000003 + static_cast<uint64_t>(i) * 7919 +
                                    static_cast<uint64_t>(d)),
                         100)
                         .value());
    }
    for (const RowCase& row : rows) {
      const Difference diff = Compare(sa, sb, row, opt);
      ++compared;
      if (!diff.exact.empty()) {
        std::cout << "DIFFERENT: " << sampcert::properties::Describe(row) << ": " << diff.exact
                  << "\n";
        return 1;
      }
      if (diff.max_rel > max_rel) {
        max_rel = diff.max_rel;
        max_rel_where = sampcert::properties::Describe(row) + ": " + diff.rel_where;
      }
      if (diff.draws_differing > 0 && draws_where.empty()) {
        draws_where = sampcert::properties::Describe(row);
      }
      draws_differing += diff.draws_differing;
      draws_total += opt.draws;
      rows_differing += diff.max_rel > 0 || diff.draws_differing > 0;
    }
  }
  if (rows_differing > 0) {
    // No outcome, error or support differs; only the values do, by rounding or a tie broken
    // otherwise. Whether that is within the declared accuracy is the certification's verdict.
    std::cout << "VALUES DIFFER on " << rows_differing << " of " << compared
              << " rows: largest relative probability difference " << max_rel << " ("
              << max_rel_where << "); " << draws_differing << " of " << draws_total
              << " draws differ" << (draws_where.empty() ? "" : " (first: " + draws_where + ")")
              << "\n";
    return 3;
  }
  std::cout << "EQUIVALENT on " << compared << " rows (the covering design of profile "
            << opt.profile << " and " << opt.rows << " generated rows per dtype)\n";
  return 0;
}
