#include "properties/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "properties/portable_random.h"
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
    *out = Profile{"quick", 40, 4096, 0.05, 1 << 16, 1e-3, 0.2, 100, 1 << 20, 8};
  } else if (name == "standard") {
    *out = Profile{"standard", 300, 262144, 0.01, 1 << 20, 1e-3, 0.2, 400, 1 << 21, 8};
  } else if (name == "full") {
    *out = Profile{"full", 2000, 262144, 0.005, 1 << 22, 1e-3, 0.2, 2000, 1 << 23, 32};
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
  return rows;
}

Plan MakePlan(const Profile& profile, const adapters::SamplerInfo& info, uint64_t seed) {
  Plan plan{profile, seed, {}};
  std::vector<std::string> dtypes;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (info.Has(DTypeCap(d))) dtypes.emplace_back(DTypeName(d));
  }
  for (const std::string& d : dtypes) plan.items.push_back({"deterministic", d, "", 0, 0});
  std::size_t statistical = 0;
  for (const std::string& d : dtypes) {
    for (const auto& [name, row] : PlannedRows(DTypeFromName(d), info.capabilities)) {
      plan.items.push_back(
          {name.starts_with("dominant_tail") ? "tail" : "distribution", d, name, 0, 0});
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
    if (it.kind != "distribution" && it.kind != "tail") continue;
    it.level = 0.5 * main_budget / static_cast<double>(statistical);
    it.rerun_level = 0.5 * reserve / static_cast<double>(statistical);
    if (it.kind == "tail") {
      // 4x the profile's draws: one cell, cheap, and small biases of the tail are the target.
      it.draws = 4 * profile.max_draws;
      continue;
    }
    // Enough draws for the profile's TV at this test's level, on the cells of the reference.
    const DType dtype = DTypeFromName(it.dtype);
    for (const auto& [name, row] : PlannedRows(dtype, info.capabilities)) {
      if (name != it.name) continue;
      const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
      if (!ref.ok()) break;  // the item reports NotSupported
      const Cells cells = MakeCells(ref->probs, profile.max_draws);
      const double df = static_cast<double>(cells.probability.size()) - 1;
      it.draws = std::min(profile.max_draws,
                          std::max<uint64_t>(DrawsForTv(df, it.level, profile.required_tv), 4096));
      it.rerun_draws = std::min<uint64_t>(4 * it.draws, 4 * profile.max_draws);
    }
  }
  return plan;
}

std::string PlanVersion(const Plan& plan) {
  const Profile& p = plan.profile;
  std::string canonical = fmt::format(
      "plan-v1|{}|{}|{}|{}|{:.17g}|{}|{}|{}|{:.17g}|{:.17g}|{}|{}", p.name, p.valid_cases_per_dtype,
      p.max_vocab, p.max_draws, p.required_tv, p.shrink_steps, p.shrink_work, p.shrink_failures,
      p.false_alarm_budget, p.rerun_reserve, plan.seed, plan.items.size());
  for (const PlanItem& it : plan.items) {
    canonical += fmt::format("|{}:{}:{}:{:.17g}:{:.17g}:{}:{}:{}", it.kind, it.dtype, it.name,
                             it.level, it.rerun_level, it.seed, it.draws, it.rerun_draws);
  }
  return fmt::format("{:016x}", FixedHash(canonical));
}

}  // namespace sampcert::properties
