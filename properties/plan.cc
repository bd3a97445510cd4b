#include "properties/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "properties/portable_random.h"
#include "properties/statistical_item.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/tolerant_null.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

uint32_t DTypeCap(DType d) { return 1u << static_cast<int>(d); }

PlanItem NewItem(std::string kind, std::string dtype, std::string name) {
  PlanItem it;
  it.kind = std::move(kind);
  it.dtype = std::move(dtype);
  it.name = std::move(name);
  return it;
}

}  // namespace

DType DTypeFromName(const std::string& s) {
  return s == "f16" ? DType::kF16 : s == "bf16" ? DType::kBF16 : DType::kF32;
}

bool ProfileByName(const std::string& name, Profile* out) {
  // quick: a smoke run in seconds; standard: the certification profile (TV 0.01 at power 0.9);
  // full: more cases, larger rows, more draws.
  if (name == "quick") {
    *out = Profile{"quick", 40, 4096, 0.05, 1 << 16, 1e-3, 0.2, 100, 1 << 20, 8, 0.5};
  } else if (name == "standard") {
    *out = Profile{"standard", 300, 262144, 0.01, 1 << 20, 1e-3, 0.2, 400, 1 << 21, 8, 0.2};
  } else if (name == "full") {
    *out = Profile{"full", 2000, 262144, 0.005, 1 << 22, 1e-3, 0.2, 2000, 1 << 23, 32, 0.1};
  } else {
    return false;
  }
  return true;
}

RowCase MakeRow(DType dtype, const std::vector<float>& logits, float t, uint64_t row_id) {
  RowCase r;
  r.dtype = dtype;
  if (dtype == DType::kF32) {
    r.bits32.assign(logits.size(), 0);
  } else {
    r.bits16.assign(logits.size(), 0);
  }
  for (std::size_t i = 0; i < logits.size(); ++i) r.SetLogit(i, logits[i]);
  r.temperature = t;
  r.row_id = row_id;
  return r;
}

std::vector<float> LlmLike(std::size_t v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(v);
  for (float& f : x) f = static_cast<float>(2.0 * PortableNormal(rng));
  for (int k = 0; k < 4; ++k) x[rng() % v] = 6.0f + static_cast<float>(k);
  return x;
}

std::vector<std::pair<std::string, RowCase>> PlannedRows(DType dtype, uint32_t caps) {
  std::vector<std::pair<std::string, RowCase>> rows;
  rows.emplace_back("llm_like_V1000", MakeRow(dtype, LlmLike(1000, 1), 0.7f, 101));
  {
    // A flat, irregular row: 64 values in [-1, 1) in a fixed scrambled order.
    std::vector<float> flat(64);
    for (std::size_t i = 0; i < flat.size(); ++i) {
      flat[i] = static_cast<float>((i * 37) % 64) / 32.0f - 1.0f;
    }
    rows.emplace_back("flat_V64", MakeRow(dtype, flat, 1.0f, 102));
  }
  {
    // Near-ties closer than T: consecutive representable values above 4 at T = 2 ulps.
    const float ulp = dtype == DType::kF32 ? 0x1p-21f : dtype == DType::kF16 ? 0x1p-8f : 0x1p-5f;
    std::vector<float> x(16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 4.0f + ulp * static_cast<float>(i % 5);
    rows.emplace_back("near_ties_V16", MakeRow(dtype, x, 2 * ulp, 103));
  }
  rows.emplace_back("wide_V32768", MakeRow(dtype, LlmLike(32768, 2), 1.0f, 104));
  rows.emplace_back("overflow_shape",
                    MakeRow(dtype, {30000, -5, 20, 100, 29990, 29995}, 0.4f, 105));
  if (caps & SAMPCERT_CAP_TOP_K) {
    RowCase r = MakeRow(dtype, LlmLike(200, 3), 0.8f, 106);
    r.top_k = 20;
    rows.emplace_back("top_k_V200", r);
  }
  if (caps & SAMPCERT_CAP_TOP_P) {
    RowCase r = MakeRow(dtype, LlmLike(200, 4), 0.8f, 107);
    r.top_p = 0.8f;
    rows.emplace_back("top_p_V200", r);
  }
  if (caps & SAMPCERT_CAP_TOP_K) {
    // A boundary (SPEC section 7): the (k+1)-th logit one step of the dtype below the k-th,
    // inside the rounding band (BAND-1), so the (k+1)-th token is may-keep and DIST-2 tests the
    // null conditioned on what the sampler kept. f32: k = 10 at T = 0.8. A half-precision step
    // is far wider than fp32's band except next to the maximum at a huge T (log-weights near 0,
    // step / T = 6e-8 for bf16 against a band of 3.6e-7): k = 1, the top two one step apart.
    RowCase r = MakeRow(dtype, LlmLike(200, 8), 0.8f, 115);
    const bool half = dtype != DType::kF32;
    r.top_k = half ? 1 : 10;
    if (half) r.temperature = 0x1p20f;
    std::vector<std::size_t> order(r.vocab());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return r.Logit(a) > r.Logit(b) || (r.Logit(a) == r.Logit(b) && a < b);
    });
    const std::size_t kth = order[static_cast<std::size_t>(r.top_k - 1)];
    const std::size_t next = order[static_cast<std::size_t>(r.top_k)];
    // The next value below the k-th: one step of the bit pattern toward -inf.
    const bool positive = r.Logit(kth) > 0;
    if (dtype == DType::kF32) {
      r.bits32[next] = positive ? r.bits32[kth] - 1 : r.bits32[kth] + 1;
    } else {
      r.bits16[next] = static_cast<uint16_t>(positive ? r.bits16[kth] - 1 : r.bits16[kth] + 1);
    }
    rows.emplace_back("top_k_near_tie_V200", r);
  }
  if (caps & SAMPCERT_CAP_TOP_P) {
    // A boundary: top_p within fp32's epsilon of the cumulative sum of the two most probable
    // tokens (the sum in double from the dtype's logits, portable exp; the reference's own sum
    // differs by ~1e-16, far inside the band), so the third token is may-keep.
    RowCase r = MakeRow(dtype, {0, 0, 0, 0, 0, 0, 0, 0}, 1.0f, 116);
    const double w[] = {16, 8, 4, 2, 1.5, 1.25, 1.1, 1.05};
    for (std::size_t i = 0; i < 8; ++i) r.SetLogit(i, static_cast<float>(PortableLog(w[i])));
    double z = 0, top2 = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      const double e = PortableExp(static_cast<double>(r.Logit(i)));
      z += e;
      if (i < 2) top2 += e;
    }
    r.top_p = static_cast<float>(top2 / z);
    rows.emplace_back("top_p_on_cumsum_V8", r);
  }
  if (caps & SAMPCERT_CAP_MIN_P) {
    RowCase r = MakeRow(dtype, LlmLike(200, 5), 0.8f, 108);
    r.min_p = 0.05f;
    rows.emplace_back("min_p_V200", r);
  }
  if (caps & SAMPCERT_CAP_TEMPERATURE_ZERO) {
    rows.emplace_back("greedy_ties", MakeRow(dtype, {1, 5, 5, 2, 5, 0}, 0.0f, 109));
  }
  const float inf = std::numeric_limits<float>::infinity();
  rows.emplace_back("pos_inf_ties", MakeRow(dtype, {1, inf, 3, inf, inf}, 1.0f, 110));
  if (caps & SAMPCERT_CAP_MASK) {
    RowCase r = MakeRow(dtype, LlmLike(300, 6), 0.9f, 111);
    r.mask.assign(300, 1);
    std::mt19937_64 rng(7);
    for (auto& m : r.mask) m = (rng() % 10) >= 3;
    for (std::size_t i = 0; i < 300; ++i) {
      if (r.Logit(i) >= 6.0f) r.mask[i] = 0;  // the spikes are masked: the floor bug shows
    }
    rows.emplace_back("masked_V300", r);
  }
  {
    // One dominant token, ~5% spread over 50000 tiny ones (the tail-mass check, TAIL-1):
    // each tail logit is log(0.05 / 50000 / 0.95).
    const float tail = static_cast<float>(PortableLog(0.05 / 50000.0 / 0.95));
    std::vector<float> x(50001, tail);
    x[0] = 0.0f;
    rows.emplace_back("dominant_tail_V50001", MakeRow(dtype, x, 1.0f, 112));
  }
  {
    // Tails at depth (TAIL-1's nested sets): one dominant token; 20,000 tokens at 1e-6 of it,
    // 60,000 at 8e-8 (below 1e-7 absolute, above 2^-24 of the maximum) and 100,000 at 1e-8
    // (below 2^-24 of the maximum, where an fp32 exponential race loses everything).
    std::vector<float> x(180001);
    x[0] = 0.0f;
    const float a = static_cast<float>(PortableLog(1e-6));
    const float b = static_cast<float>(PortableLog(8e-8));
    const float c = static_cast<float>(PortableLog(1e-8));
    for (std::size_t i = 1; i < x.size(); ++i) x[i] = i <= 20000 ? a : i <= 80000 ? b : c;
    rows.emplace_back("deep_tail_V180001", MakeRow(dtype, x, 1.0f, 113));
  }
  {
    // A precision probe: two tokens whose probabilities (0.50183, 0.49817) lie a quarter of a
    // bf16 ulp from bf16 rounding boundaries, so a sampler that carries its probabilities in
    // bf16 draws 0.50098 : 0.49902 (TV 8.5e-4) while declaring fp32. The logit 2^-7 - 2^-11 is
    // exact in every dtype. Planned with 16x the profile's draws (two cells, cheap).
    rows.emplace_back("rounding_probe_V2", MakeRow(dtype, {0x1p-7f - 0x1p-11f, 0.0f}, 1.0f, 114));
  }
  return rows;
}

std::optional<RowCase> PlannedRowByName(DType dtype, const std::string& name, uint32_t caps) {
  for (auto& [n, row] : PlannedRows(dtype, caps)) {
    if (n == name) return row;
  }
  return std::nullopt;
}

namespace {

// The looks of a test of n draws with each look's share of the level: look k draws the first
// n / kLookDivisor[k] (at least 1); a look whose count repeats an earlier one, or reaches n
// before the last, is left out and its share goes to the next look kept.
std::vector<std::pair<uint64_t, double>> Looks(uint64_t n) {
  std::vector<std::pair<uint64_t, double>> looks;
  if (n == 0) return looks;
  double carried = 0;
  for (int k = 0; k < kLooks; ++k) {
    const uint64_t nk = std::max<uint64_t>(1, n / static_cast<uint64_t>(kLookDivisor[k]));
    carried += kLookShare[k];
    const bool last = k == kLooks - 1;
    if (!last && (nk >= n || (!looks.empty() && nk <= looks.back().first))) continue;
    looks.emplace_back(last ? n : nk, carried);
    carried = 0;
  }
  return looks;
}

}  // namespace

std::vector<uint64_t> LookDraws(uint64_t n) {
  std::vector<uint64_t> out;
  for (const auto& [nk, share] : Looks(n)) out.push_back(nk);
  return out;
}

std::vector<double> LookLevels(uint64_t n, double level) {
  std::vector<double> out;
  for (const auto& [nk, share] : Looks(n)) out.push_back(share * level);
  return out;
}

double DeclaredDrawCostNsPerToken(const adapters::SamplerInfo& info) {
  // ABI MINOR 1's draw_cost_ns_per_token (0: not declared; a negative or non-finite value
  // declares nothing either).
  const double cost = info.policies.draw_cost_ns_per_token;
  return std::isfinite(cost) && cost > 0 ? cost : 0;
}

namespace {

// The smallest n in [lo, hi] with ok(n), by doubling from lo and bisection (ok is taken as
// monotone in n); hi when none is.
template <typename Ok>
uint64_t SmallestDraws(uint64_t lo, uint64_t hi, Ok ok) {
  uint64_t good = lo;
  while (good < hi && !ok(good)) good = std::min(hi, good * 2);
  if (good >= hi) return hi;
  uint64_t bad = std::max<uint64_t>(lo, good / 2) - 1;
  if (good == lo) return lo;
  while (good - bad > 1) {
    const uint64_t mid = bad + (good - bad) / 2;
    (ok(mid) ? good : bad) = mid;
  }
  return good;
}

// Both directions of a shift d of p0 detected w.p. 0.9 by the exact binomial of n draws at
// level alpha (a direction leaving [0, 1] is not required): DetectableShiftBinomial <= d.
// Planned with a little to spare, so that the stated power (a bisection to 1e-12) never reads
// as just short of the requirement.
constexpr double kSlack = 0.999;

bool BinomialDetects(uint64_t n, double p0, double d, double alpha) {
  if (p0 - d > 0 && BinomialPower(n, p0, p0 - d, alpha) < 0.9) return false;
  if (p0 + d < 1 && BinomialPower(n, p0, p0 + d, alpha) < 0.9) return false;
  return true;
}

// The same against an interval null [lo, hi] around p0 (a bf16 / fp16 class, TOL-7).
bool BinomialDetects(uint64_t n, double p0, double d, double alpha,
                     std::pair<double, double> interval) {
  if (interval.first == p0 && interval.second == p0) return BinomialDetects(n, p0, d, alpha);
  const auto [lo, hi] = interval;
  if (p0 - d > 0 && BinomialIntervalPower(n, lo, hi, p0 - d, alpha) < 0.9) return false;
  if (p0 + d < 1 && BinomialIntervalPower(n, lo, hi, p0 + d, alpha) < 0.9) return false;
  return true;
}

// x rounded up to two significant digits (after a 1e-6 relative margin, so that the run's own
// computation of the same quantity never lands above it), with basic IEEE operations only: the
// plan must be the same on every machine (REPRO-1).
double RoundUpTwoDigits(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  x *= 1 + 1e-6;
  double scale = 1;
  while (x >= 100 * scale) scale *= 10;
  while (x < 10 * scale) scale /= 10;
  return std::ceil(x / scale) * scale;
}

// bf16 round-to-nearest-even of a probability (the precision probe's target alternative).
double RoundBf16(double p) {
  float f = static_cast<float>(p);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&f, &u, sizeof f);
  return static_cast<double>(f);
}

}  // namespace

double RequiredTv(const Plan& plan, const PlanItem& item) {
  return item.required_tv > 0 ? item.required_tv : plan.profile.required_tv;
}

double RequiredTailChange(const Plan& plan, const PlanItem& item) {
  return item.required_tail_change > 0 ? item.required_tail_change
                                       : plan.profile.required_tail_change;
}

Plan MakePlan(const Profile& profile, const adapters::SamplerInfo& info, uint64_t seed,
              const PlanOptions& options) {
  Plan plan{profile, seed, {}, options, DeclaredDrawCostNsPerToken(info)};
  std::vector<std::string> dtypes;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (info.Has(DTypeCap(d))) dtypes.emplace_back(DTypeName(d));
  }
  for (const std::string& d : dtypes) plan.items.push_back(NewItem("deterministic", d, ""));
  // DIST-3 (the deterministic item's pooled draws) is a statistical test too.
  std::size_t statistical = dtypes.size();
  for (const std::string& d : dtypes) {
    for (const auto& [name, row] : PlannedRows(DTypeFromName(d), info.capabilities)) {
      // Greedy ties under the `any` tie-break constrain only the support (every draw a winner),
      // which the generated rows check; there is no distribution to test.
      if (info.policies.greedy_tie_break == GreedyTieBreak::kAny) {
        auto ref = ComputeReference(row.view(), info.policies);
        if (ref.ok() && ref->any_greedy_ties) continue;
      }
      plan.items.push_back(NewItem(
          name.starts_with("dominant_tail") || name.starts_with("deep_tail") ? "tail"
                                                                             : "distribution",
          d, name));
      ++statistical;
    }
  }
  if (info.policies.greedy_threshold > 0 && !dtypes.empty()) {
    plan.items.push_back(NewItem("deviation", dtypes.front(), "greedy_threshold"));
  }
  // Bonferroni over the planned statistical tests; each runs at half its share (the brief's
  // margin), the reserve pays for re-runs of suspicious results.
  const double main_budget = profile.false_alarm_budget * (1 - profile.rerun_reserve);
  const double reserve = profile.false_alarm_budget * profile.rerun_reserve;
  for (PlanItem& it : plan.items) {
    it.seed = Mix(seed, FixedHash(it.Id()));
    if (it.kind == "deterministic") {
      // DIST-3: three sub-tests on the generated rows' own draws (64 per row, one look); a
      // suspicious first look is re-run on fresh draws of the same rows at the reserve's share.
      it.level = 0.5 * main_budget / static_cast<double>(statistical);
      it.rerun_level = 0.5 * reserve / static_cast<double>(statistical);
      it.subtests = 3;
      continue;
    }
    if (it.kind != "distribution" && it.kind != "tail") continue;
    it.level = 0.5 * main_budget / static_cast<double>(statistical);
    it.rerun_level = 0.5 * reserve / static_cast<double>(statistical);
    // Each sub-test's level at the last look, where the stated power must hold.
    const double last_share = kLookShare[kLooks - 1];
    const DType dtype = DTypeFromName(it.dtype);
    const std::optional<RowCase> row = PlannedRowByName(dtype, it.name, info.capabilities);
    std::optional<ReferenceDistribution> ref;  // none: the item reports NotSupported
    if (row) {
      if (auto computed = ComputeReference(row->view(), info.policies); computed.ok()) {
        ref = std::move(*computed);
      }
    }
    if (it.kind == "tail") {
      // Draws for the profile's relative tail change on every nested tail set at the last
      // look's level, at most 4x the profile's draws (one count per set: cheap per draw).
      it.required_draws = 4 * profile.max_draws;
      if (ref) {
        const std::vector<TailSet> sets = TailSets(*ref);
        it.subtests = std::max<int>(1, static_cast<int>(sets.size()));
        const double set_level = last_share * it.level / it.subtests;
        // bf16 / fp16: each set's null is the interval of masses the class admits (TOL-6,
        // TOL-7); a point for fp32.
        const std::vector<double> tol =
            NullTolerance(ref->probs, ref->log_weights, info.policies.accuracy);
        const std::vector<std::pair<double, double>> intervals = TailIntervals(sets, tol);
        auto detects = [&](uint64_t n) {
          for (std::size_t s = 0; s < sets.size(); ++s) {
            if (!BinomialDetects(n, sets[s].mass,
                                 kSlack * profile.required_tail_change * sets[s].mass, set_level,
                                 intervals[s])) {
              return false;
            }
          }
          return true;
        };
        it.required_draws = SmallestDraws(4096, 4 * profile.max_draws, detects);
        // Where the class's tolerance puts the profile's change out of reach at the most draws,
        // the item is held to (and states) what they reach under the class's null.
        if (!tol.empty() && !detects(it.required_draws)) {
          double worst = 0;
          for (std::size_t s = 0; s < sets.size(); ++s) {
            worst =
                std::max(worst, DetectableShiftBinomial(it.required_draws, sets[s].mass, set_level,
                                                        intervals[s].first, intervals[s].second) /
                                    sets[s].mass);
          }
          if (worst > profile.required_tail_change) {
            it.required_tail_change = RoundUpTwoDigits(worst);
          }
        }
      }
    } else {
      it.subtests = 3;
      it.required_draws = 4096;
      if (ref) {
        // At a boundary the sampler may keep every may-keep token, adding cells: plan the
        // draws for the larger of the two cell sets.
        std::vector<long double> planned_null = ref->probs;
        Cells cells = MakeCells(ref->probs, profile.max_draws);
        std::vector<uint8_t> all_kept(ref->keep.size(), 0);
        for (std::size_t i = 0; i < all_kept.size(); ++i) {
          all_kept[i] = ref->keep[i] == KeepClass::kMustKeep || ref->keep[i] == KeepClass::kMayKeep;
        }
        if (auto wide = ref->RenormalizedOver(all_kept); wide.ok()) {
          Cells more = MakeCells(*wide, profile.max_draws);
          if (more.probability.size() > cells.probability.size()) {
            cells = std::move(more);
            planned_null = *wide;
          }
        }
        // bf16 / fp16: the null admits the class's tolerance (TOL-7): a chi-square radius for
        // the G-test, an interval of masses for a two-cell test. Empty (fp32): the reference.
        const std::vector<double> tol =
            NullTolerance(planned_null, ref->log_weights, info.policies.accuracy);
        const bool tolerant = !tol.empty();
        const double delta = ChiSquareRadius(cells, tol);
        std::pair<double, double> interval{0, 0};
        if (cells.probability.size() == 2) {
          const double total = cells.probability[0] + cells.probability[1];
          double e0 = 0, e1 = 0;
          for (std::size_t i = 0; i < tol.size(); ++i) {
            (cells.cell_of[i] == 0 ? e0 : e1) += cells.cell_of[i] >= 0 ? tol[i] : 0;
          }
          interval = AdmissibleMass(cells.probability[0] / total, e0, e1);
        }
        const double df = static_cast<double>(cells.probability.size()) - 1;
        // The G-test's share of the last look's level.
        const double g_level = last_share * it.level / it.subtests;
        if (it.name.starts_with("rounding_probe")) {
          // The precision probe's target is far below the profile's TV: 16x its draws. Under a
          // tolerant class whose interval excludes the probe's bf16 rounding (fp16), as many
          // more (up to 64x) as detecting that rounding beyond the interval w.p. 0.9 needs.
          it.required_draws = 16 * profile.max_draws;
          if (tolerant && cells.probability.size() == 2) {
            const double b0 = RoundBf16(cells.probability[0]);
            const double b1 = RoundBf16(cells.probability[1]);
            const double target = b0 / (b0 + b1);
            if (target < interval.first || target > interval.second) {
              while (it.required_draws < 64 * profile.max_draws &&
                     BinomialIntervalPower(it.required_draws, interval.first, interval.second,
                                           target, g_level) < 0.9) {
                it.required_draws *= 2;
              }
            }
          }
        } else if (tolerant && cells.probability.size() == 2) {
          const double p0 = cells.probability[0] / (cells.probability[0] + cells.probability[1]);
          auto detects = [&](uint64_t n) {
            return BinomialDetects(n, p0, kSlack * profile.required_tv, g_level, interval);
          };
          it.required_draws = SmallestDraws(4096, profile.max_draws, detects);
          if (!detects(it.required_draws)) {
            it.required_tv = RoundUpTwoDigits(DetectableShiftBinomial(
                it.required_draws, p0, g_level, interval.first, interval.second));
          }
        } else if (tolerant && delta > 0) {
          const uint64_t needed = DrawsForTv(df, g_level, profile.required_tv, delta);
          it.required_draws = std::min(profile.max_draws, std::max<uint64_t>(needed, 4096));
          if (needed > profile.max_draws) {
            it.required_tv = RoundUpTwoDigits(DetectableTv(df, g_level, it.required_draws, delta));
          }
        } else if (cells.probability.size() == 2) {
          // Two cells: the exact binomial's own power.
          const double p0 = cells.probability[0] / (cells.probability[0] + cells.probability[1]);
          it.required_draws = SmallestDraws(4096, profile.max_draws, [&](uint64_t n) {
            return BinomialDetects(n, p0, kSlack * profile.required_tv, g_level);
          });
        } else {
          it.required_draws =
              std::min(profile.max_draws,
                       std::max<uint64_t>(DrawsForTv(df, g_level, profile.required_tv), 4096));
        }
      }
    }
    // The draw budget: --max-draws, and the declared draw time per test over (cost x V).
    if (options.max_draws > 0) it.draw_cap = options.max_draws;
    if (plan.draw_cost_ns_per_token > 0 && row) {
      const double per_draw_ns = plan.draw_cost_ns_per_token * static_cast<double>(row->vocab());
      const double fit = std::floor(profile.draw_time_target_s * 1e9 / per_draw_ns);
      const uint64_t cap = fit < 1      ? 1
                           : fit > 1e18 ? uint64_t{1} << 60
                                        : static_cast<uint64_t>(fit);
      it.draw_cap = it.draw_cap == 0 ? cap : std::min(it.draw_cap, cap);
    }
    it.draws = it.draw_cap > 0 ? std::min(it.required_draws, it.draw_cap) : it.required_draws;
    // One re-run rule for every test (TAIL-1 and the rounding probe included): 4x the draws
    // from a fresh seed, with the same looks, at the reserve's level.
    it.rerun_draws = 4 * it.draws;
    it.looks = LookDraws(it.draws);
    it.look_levels = LookLevels(it.draws, it.level);
    it.rerun_looks = LookDraws(it.rerun_draws);
    it.rerun_look_levels = LookLevels(it.rerun_draws, it.rerun_level);
  }
  return plan;
}

std::string PlanVersion(const Plan& plan) {
  const Profile& p = plan.profile;
  std::string canonical = fmt::format(
      "plan-v3|{}|{}|{}|{}|{:.17g}|{}|{}|{}|{:.17g}|{:.17g}|{:.17g}|{:.17g}|{}|{}|{}|{:.17g}",
      p.name, p.valid_cases_per_dtype, p.max_vocab, p.max_draws, p.required_tv, p.shrink_steps,
      p.shrink_work, p.shrink_failures, p.false_alarm_budget, p.rerun_reserve,
      p.required_tail_change, p.draw_time_target_s, plan.seed, plan.items.size(),
      plan.options.max_draws, plan.draw_cost_ns_per_token);
  for (const PlanItem& it : plan.items) {
    canonical += fmt::format("|{}:{}:{}:{:.17g}:{:.17g}:{}:{}:{}:{}:{}:{}", it.kind, it.dtype,
                             it.name, it.level, it.rerun_level, it.seed, it.draws, it.rerun_draws,
                             it.subtests, it.required_draws, it.draw_cap);
    for (std::size_t k = 0; k < it.looks.size(); ++k) {
      canonical += fmt::format(":{}@{:.17g}", it.looks[k], it.look_levels[k]);
    }
    for (std::size_t k = 0; k < it.rerun_looks.size(); ++k) {
      canonical += fmt::format(":r{}@{:.17g}", it.rerun_looks[k], it.rerun_look_levels[k]);
    }
    // Per-class requirements (TOL-7) only where set, so that fp32 plans keep their digests.
    if (it.required_tv > 0 || it.required_tail_change > 0) {
      canonical += fmt::format(":{:.17g}:{:.17g}", it.required_tv, it.required_tail_change);
    }
  }
  return fmt::format("{:016x}", FixedHash(canonical));
}

std::string DescribePlan(const Plan& plan) {
  std::string out = fmt::format(
      "plan {} (profile {}, seed {}{}{})\n", PlanVersion(plan), plan.profile.name, plan.seed,
      plan.options.max_draws > 0 ? fmt::format(", --max-draws {}", plan.options.max_draws) : "",
      plan.draw_cost_ns_per_token > 0
          ? fmt::format(", declared draw cost {:.3g} ns per token (target {:.3g} s per test)",
                        plan.draw_cost_ns_per_token, plan.profile.draw_time_target_s)
          : "");
  uint64_t total = 0, required = 0, rerun = 0;
  std::size_t capped = 0;
  for (const PlanItem& it : plan.items) {
    if (it.kind != "distribution" && it.kind != "tail") continue;
    total += it.draws;
    required += it.required_draws;
    rerun += it.rerun_draws;
    std::string looks;
    for (std::size_t k = 0; k < it.looks.size(); ++k) {
      looks += fmt::format("{}{}@{:.2g}", k ? " " : "", it.looks[k], it.look_levels[k]);
    }
    const bool short_of_power = it.draws < it.required_draws;
    capped += short_of_power;
    out += fmt::format(
        "{:<13} {:<28} draws {:>9} (power needs {:>9}){} level {:.3g} x{} looks [{}]"
        " re-run {}\n",
        it.kind, it.Id(), it.draws, it.required_draws, short_of_power ? " CAPPED" : "", it.level,
        it.subtests, looks, it.rerun_draws);
  }
  out += fmt::format(
      "total planned draws of the statistical tests: {} (their power needs {}; re-runs, only "
      "after a rejection, up to {}); {} test(s) capped short of their power (Inconclusive "
      "unless they fail)\n",
      total, required, rerun, capped);
  return out;
}

}  // namespace sampcert::properties
