#include "properties/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "properties/portable_random.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

uint32_t DTypeCap(DType d) { return 1u << static_cast<int>(d); }

PlanItem NewItem(ItemKind kind, std::string dtype, std::string name) {
  PlanItem it;
  it.kind = kind;
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
    *out =
        Profile{"quick", 40, 4096, 0.05, 1 << 16, 1e-3, 0.2, 100, 1 << 20, 8, 0.5, 20, false, 1024};
  } else if (name == "standard") {
    *out = Profile{"standard", 300,     262144, 0.01, 1 << 20, 1e-3, 0.2,
                   400,        1 << 21, 8,      0.2,  20,      true, 1024};
  } else if (name == "full") {
    *out = Profile{"full", 2000,    262144, 0.005, 1 << 22, 1e-3, 0.2,
                   2000,   1 << 23, 32,     0.1,   20,      true, 4096};
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
  for (const Family& f : FamilyTable()) {
    if (f.placement != Placement::kPerPlannedRow) continue;
    for (auto& named : f.rows(dtype, caps)) rows.push_back(std::move(named));
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

double RequiredTv(const Plan& plan, const PlanItem& item) {
  return item.required_tv > 0 ? item.required_tv : plan.profile.required_tv;
}

double RequiredTailChange(const Plan& plan, const PlanItem& item) {
  return item.required_tail_change > 0 ? item.required_tail_change
                                       : plan.profile.required_tail_change;
}

namespace {

// The items of the plan, in their fixed order (Placement): per-dtype families, then the
// planned rows dtype by dtype, then the once-per-plan families.
std::vector<PlanItem> PlanItems(const adapters::SamplerInfo& info,
                                const std::vector<DType>& dtypes) {
  std::vector<PlanItem> items;
  for (const Family& f : FamilyTable()) {
    if (f.placement != Placement::kPerDtype || !f.applies(info)) continue;
    // The generated rows are the dtype's unnamed item (selected by --dtype); every other
    // per-dtype family's item is named after the family (selected by --item DTYPE/NAME).
    const std::string name = f.kind == ItemKind::kGeneratedRows ? "" : std::string(f.name);
    for (DType d : dtypes) items.push_back(NewItem(f.kind, std::string(DTypeName(d)), name));
  }
  for (DType d : dtypes) {
    for (const Family& f : FamilyTable()) {
      if (f.placement != Placement::kPerPlannedRow) continue;
      for (const auto& [name, row] : f.rows(d, info.capabilities)) {
        // Greedy ties under the `any` tie-break constrain only the support (every draw a
        // winner), which the generated rows check; there is no distribution to test.
        if (info.policies.greedy_tie_break == GreedyTieBreak::kAny) {
          auto ref = ComputeReference(row.view(), info.policies);
          if (ref.ok() && ref->any_greedy_ties) continue;
        }
        items.push_back(NewItem(f.kind, std::string(DTypeName(d)), name));
      }
    }
  }
  for (const Family& f : FamilyTable()) {
    if (f.placement != Placement::kOncePerPlan || dtypes.empty() || !f.applies(info)) continue;
    items.push_back(NewItem(f.kind, std::string(DTypeName(dtypes.front())), ""));
  }
  return items;
}

// The draw budget: --max-draws, and the declared draw time per test over (cost x V); then the
// looks and the re-run, one rule for every drawn test (TAIL-1 and the precision probe
// included): 4x the draws from a fresh seed, with the same looks, at the reserve's level.
void PlanDraws(const Plan& plan, const std::optional<RowCase>& row, PlanItem* it) {
  // A family may set its own cap first (the verifier family's, from its chains' sizes).
  if (plan.options.max_draws > 0) {
    it->draw_cap =
        it->draw_cap == 0 ? plan.options.max_draws : std::min(it->draw_cap, plan.options.max_draws);
  }
  if (plan.draw_cost_ns_per_token > 0 && row) {
    const double per_draw_ns = plan.draw_cost_ns_per_token * static_cast<double>(row->vocab());
    const double fit = std::floor(plan.profile.draw_time_target_s * 1e9 / per_draw_ns);
    const uint64_t cap = fit < 1 ? 1 : fit > 1e18 ? uint64_t{1} << 60 : static_cast<uint64_t>(fit);
    it->draw_cap = it->draw_cap == 0 ? cap : std::min(it->draw_cap, cap);
  }
  it->draws = it->draw_cap > 0 ? std::min(it->required_draws, it->draw_cap) : it->required_draws;
  it->rerun_draws = 4 * it->draws;
  it->looks = LookDraws(it->draws);
  it->look_levels = LookLevels(it->draws, it->level);
  it->rerun_looks = LookDraws(it->rerun_draws);
  it->rerun_look_levels = LookLevels(it->rerun_draws, it->rerun_level);
}

}  // namespace

Plan MakePlan(const Profile& profile, const adapters::SamplerInfo& info, uint64_t seed,
              const PlanOptions& options) {
  Plan plan{profile, seed, {}, options, DeclaredDrawCostNsPerToken(info)};
  // The declared draw time per test is the profile's unless --draw-time gives one; the plan
  // (and so plan_version) carries the one it used.
  if (options.draw_time_s > 0) plan.profile.draw_time_target_s = options.draw_time_s;
  std::vector<DType> dtypes;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    if (info.Has(DTypeCap(d))) dtypes.push_back(d);
  }
  plan.items = PlanItems(info, dtypes);
  std::size_t statistical = 0;
  for (const PlanItem& it : plan.items) statistical += FamilyOf(it.kind).statistical;
  // Bonferroni over the planned statistical tests; each runs at half its share (the brief's
  // margin), the reserve pays for re-runs of suspicious results.
  const double main_budget = profile.false_alarm_budget * (1 - profile.rerun_reserve);
  const double reserve = profile.false_alarm_budget * profile.rerun_reserve;
  for (PlanItem& it : plan.items) {
    it.seed = Mix(seed, FixedHash(it.Id()));
    const Family& family = FamilyOf(it.kind);
    if (!family.statistical) continue;
    it.level = 0.5 * main_budget / static_cast<double>(statistical);
    it.rerun_level = 0.5 * reserve / static_cast<double>(statistical);
    std::optional<RowCase> row;
    std::optional<ReferenceDistribution> ref;  // none: the item reports NotSupported
    if (family.placement == Placement::kPerPlannedRow) {
      row = PlannedRowByName(DTypeFromName(it.dtype), it.name, info.capabilities);
      if (row) {
        if (auto computed = ComputeReference(row->view(), info.policies); computed.ok()) {
          ref = std::move(*computed);
        }
      }
    }
    family.plan(PlanContext{plan.profile, info, row, ref}, &it);
    if (family.drawn) PlanDraws(plan, row, &it);
  }
  return plan;
}

std::string PlanVersion(const Plan& plan) {
  const Profile& p = plan.profile;
  std::string canonical = fmt::format(
      "plan-v4|{}|{}|{}|{}|{:.17g}|{}|{}|{}|{:.17g}|{:.17g}|{:.17g}|{:.17g}|{}|{}|{}|{}|{}|{:.17g}",
      p.name, p.valid_cases_per_dtype, p.max_vocab, p.max_draws, p.required_tv, p.shrink_steps,
      p.shrink_work, p.shrink_failures, p.false_alarm_budget, p.rerun_reserve,
      p.required_tail_change, p.draw_time_target_s, p.design_truncation_triples,
      p.design_draws_per_row, plan.seed, plan.items.size(), plan.options.max_draws,
      plan.draw_cost_ns_per_token);
  for (const PlanItem& it : plan.items) {
    canonical += fmt::format("|{}:{}:{}:{:.17g}:{:.17g}:{}:{}:{}:{}:{}:{}", FamilyOf(it.kind).name,
                             it.dtype, it.name, it.level, it.rerun_level, it.seed, it.draws,
                             it.rerun_draws, it.subtests, it.required_draws, it.draw_cap);
    for (std::size_t k = 0; k < it.looks.size(); ++k) {
      canonical += fmt::format(":{}@{:.17g}", it.looks[k], it.look_levels[k]);
    }
    for (std::size_t k = 0; k < it.rerun_looks.size(); ++k) {
      canonical += fmt::format(":r{}@{:.17g}", it.rerun_looks[k], it.rerun_look_levels[k]);
    }
    if (it.design_rows > 0) canonical += fmt::format(":d{}:{}", it.design_rows, it.design_digest);
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
    if (it.kind == ItemKind::kGeneratedRows) {
      out += fmt::format(
          "{:<13} {:<28} {} generated rows and {} design rows (covering design {:016x}; {} "
          "draws per design row into DIST-3)\n",
          FamilyOf(it.kind).name, it.Id(), plan.profile.valid_cases_per_dtype, it.design_rows,
          it.design_digest, plan.profile.design_draws_per_row);
    }
    if (!FamilyOf(it.kind).drawn) continue;
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
        FamilyOf(it.kind).name, it.Id(), it.draws, it.required_draws,
        short_of_power ? " CAPPED" : "", it.level, it.subtests, looks, it.rerun_draws);
  }
  out += fmt::format(
      "total planned draws of the statistical tests: {} (their power needs {}; re-runs, only "
      "after a rejection, up to {}); {} test(s) capped short of their power (Inconclusive "
      "unless they fail)\n",
      total, required, rerun, capped);
  return out;
}

}  // namespace sampcert::properties
