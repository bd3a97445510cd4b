#include "properties/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "properties/portable_random.h"
#include "properties/statistical_item.h"
#include "properties/statistics.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

uint32_t DTypeCap(DType d) { return 1u << static_cast<int>(d); }

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

Plan MakePlan(const Profile& profile, const adapters::SamplerInfo& info, uint64_t seed) {
  Plan plan{profile, seed, {}};
  std::vector<std::string> dtypes;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (info.Has(DTypeCap(d))) dtypes.emplace_back(DTypeName(d));
  }
  for (const std::string& d : dtypes) plan.items.push_back({"deterministic", d, "", 0, 0});
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
      plan.items.push_back({name.starts_with("dominant_tail") || name.starts_with("deep_tail")
                                ? "tail"
                                : "distribution",
                            d, name, 0, 0});
      ++statistical;
    }
  }
  if (info.policies.greedy_threshold > 0 && !dtypes.empty()) {
    plan.items.push_back({"deviation", dtypes.front(), "greedy_threshold", 0, 0});
  }
  // Bonferroni over the planned statistical tests; each runs at half its share (the brief's
  // margin), the reserve pays for re-runs of suspicious results.
  const double main_budget = profile.false_alarm_budget * (1 - profile.rerun_reserve);
  const double reserve = profile.false_alarm_budget * profile.rerun_reserve;
  for (PlanItem& it : plan.items) {
    it.seed = Mix(seed, FixedHash(it.Id()));
    if (it.kind == "deterministic") {
      // DIST-3: three sub-tests on the generated rows' own draws; a suspicious first look is
      // re-run on fresh draws of the same rows at the reserve's share.
      it.level = 0.5 * main_budget / static_cast<double>(statistical);
      it.rerun_level = 0.5 * reserve / static_cast<double>(statistical);
      it.subtests = 3;
      continue;
    }
    if (it.kind != "distribution" && it.kind != "tail") continue;
    it.level = 0.5 * main_budget / static_cast<double>(statistical);
    it.rerun_level = 0.5 * reserve / static_cast<double>(statistical);
    if (it.kind == "tail") {
      // 4x the profile's draws: one count per tail set, cheap, and small relative changes of
      // deep tails are the target. The re-run draws as many from a fresh seed.
      it.draws = 4 * profile.max_draws;
      it.rerun_draws = it.draws;
      const std::optional<RowCase> row =
          PlannedRowByName(DTypeFromName(it.dtype), it.name, info.capabilities);
      if (!row) continue;
      const Expected<ReferenceDistribution> ref = ComputeReference(row->view(), info.policies);
      if (ref.ok()) it.subtests = std::max<int>(1, static_cast<int>(TailSets(*ref).size()));
      continue;
    }
    it.subtests = 3;
    // Enough draws for the profile's TV at this test's level, on the cells of the reference.
    const DType dtype = DTypeFromName(it.dtype);
    for (const auto& [name, row] : PlannedRows(dtype, info.capabilities)) {
      if (name != it.name) continue;
      const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
      if (!ref.ok()) break;  // the item reports NotSupported
      // At a boundary the sampler may keep every may-keep token, adding cells: plan the draws
      // for the larger of the two cell sets.
      Cells cells = MakeCells(ref->probs, profile.max_draws);
      std::vector<uint8_t> all_kept(ref->keep.size(), 0);
      for (std::size_t i = 0; i < all_kept.size(); ++i) {
        all_kept[i] = ref->keep[i] == KeepClass::kMustKeep || ref->keep[i] == KeepClass::kMayKeep;
      }
      if (auto wide = ref->RenormalizedOver(all_kept); wide.ok()) {
        Cells more = MakeCells(*wide, profile.max_draws);
        if (more.probability.size() > cells.probability.size()) cells = std::move(more);
      }
      const double df = static_cast<double>(cells.probability.size()) - 1;
      const double g_level = it.level / it.subtests;  // the G-test's share of the item's level
      if (it.name.starts_with("rounding_probe")) {
        // The precision probe's target is far below the profile's TV: 16x its draws.
        it.draws = 16 * profile.max_draws;
      } else if (cells.probability.size() == 2) {
        // Two cells: the exact binomial's own power, doubling the draws until it suffices.
        const double p0 = cells.probability[0] / (cells.probability[0] + cells.probability[1]);
        it.draws = 4096;
        while (it.draws < profile.max_draws &&
               DetectableShiftBinomial(it.draws, p0, g_level) > profile.required_tv) {
          it.draws *= 2;
        }
        it.draws = std::min(it.draws, profile.max_draws);
      } else {
        it.draws = std::min(profile.max_draws,
                            std::max<uint64_t>(DrawsForTv(df, g_level, profile.required_tv), 4096));
      }
      it.rerun_draws = std::max(it.draws, std::min<uint64_t>(4 * it.draws, 4 * profile.max_draws));
    }
  }
  return plan;
}

std::string PlanVersion(const Plan& plan) {
  const Profile& p = plan.profile;
  std::string canonical =
      fmt::format("plan-v2|{}|{}|{}|{}|{:.17g}|{}|{}|{}|{:.17g}|{:.17g}|{:.17g}|{}|{}", p.name,
                  p.valid_cases_per_dtype, p.max_vocab, p.max_draws, p.required_tv, p.shrink_steps,
                  p.shrink_work, p.shrink_failures, p.false_alarm_budget, p.rerun_reserve,
                  p.required_tail_change, plan.seed, plan.items.size());
  for (const PlanItem& it : plan.items) {
    canonical +=
        fmt::format("|{}:{}:{}:{:.17g}:{:.17g}:{}:{}:{}:{}", it.kind, it.dtype, it.name, it.level,
                    it.rerun_level, it.seed, it.draws, it.rerun_draws, it.subtests);
  }
  return fmt::format("{:016x}", FixedHash(canonical));
}

}  // namespace sampcert::properties
