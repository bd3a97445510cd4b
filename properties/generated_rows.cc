#include "properties/generated_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "properties/case_check.h"
#include "properties/coverage.h"
#include "properties/families.h"
#include "properties/generators.h"
#include "properties/portable_random.h"
#include "properties/reproduction.h"
#include "sampcert/row_validation.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

using results::Failure;
using results::Status;
using results::TestResult;

constexpr const char* kPooledFamily = "generated rows";

// A design row's shrinks: its first half of tokens, then its second (each with its mask), while
// it has two or more. Shrink takes the first that still fails, so an unshrunk 1,025-token row
// comes down to the part its failure needs, as a generated row does.
rc::Seq<RowCase> HalveRow(const RowCase& row) {
  const std::size_t v = row.vocab();
  if (v < 2) return rc::Seq<RowCase>();
  std::vector<RowCase> halves;
  for (const auto& [begin, end] : {std::pair{std::size_t{0}, v / 2}, std::pair{v / 2, v}}) {
    RowCase h = row;
    const auto cut = [&](auto& values) {
      if (!values.empty()) values.assign(values.begin() + begin, values.begin() + end);
    };
    cut(h.bits32);
    cut(h.bits16);
    cut(h.mask);
    halves.push_back(std::move(h));
  }
  return rc::seq::fromContainer(std::move(halves));
}

class Results {
 public:
  explicit Results(std::string dtype) : dtype_(std::move(dtype)) {}
  TestResult& At(const std::string& property, const std::string& family) {
    auto key = std::make_pair(property, family);
    auto it = results_.find(key);
    if (it == results_.end()) {
      TestResult r;
      r.property = property;
      r.dtype = dtype_;
      r.family = family;
      it = results_.emplace(key, std::move(r)).first;
    }
    return it->second;
  }
  std::map<std::pair<std::string, std::string>, TestResult>& all() { return results_; }
  std::vector<TestResult> Take() {
    std::vector<TestResult> out;
    for (auto& [key, r] : results_) out.push_back(std::move(r));
    return out;
  }

 private:
  std::string dtype_;
  std::map<std::pair<std::string, std::string>, TestResult> results_;
};

// The capability each property needs.
std::vector<std::pair<std::string, uint32_t>> PropertyNeeds() {
  return {{"PROB-1", SAMPCERT_CAP_PROBABILITIES}, {"FIN-1", SAMPCERT_CAP_PROBABILITIES},
          {"NORM-1", SAMPCERT_CAP_PROBABILITIES}, {"SHIFT-1", SAMPCERT_CAP_PROBABILITIES},
          {"PERM-1", SAMPCERT_CAP_PROBABILITIES}, {"BATCH-1", SAMPCERT_CAP_BATCH},
          {"BATCH-2", SAMPCERT_CAP_BATCH},        {"LIM-1", SAMPCERT_CAP_TEMPERATURE_ZERO},
          {"SEED-1", SAMPCERT_CAP_SEEDS},         {"SEED-2", SAMPCERT_CAP_SEEDS},
          {"SEED-3", SAMPCERT_CAP_SEEDS}};
}

// The properties reported NotSupported (family "*") for a declaration.
std::vector<std::pair<std::string, std::string>> NotSupportedKeys(
    const adapters::SamplerInfo& info) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [property, cap] : PropertyNeeds()) {
    if (!info.Has(cap)) keys.emplace_back(property, "*");
  }
  if (info.policies.determinism == Determinism::kNone) keys.emplace_back("DET-1", "*");
  return keys;
}

struct GeneratedCase {
  int index;
  uint64_t seed;
  rc::Shrinkable<RowCase> shrinkable;
  // A design row (coverage.h): its index in the design (else -1), and the design.
  int64_t design_row = -1;
  const Design* design = nullptr;
};

// The cases of an item, in plan order: the profile's generated rows, then the rows of the
// dtype's covering design (family "design"). Case i's seed is a fixed function of the plan's
// seed, the dtype and i, so `--case i` regenerates exactly the row the full run saw.
template <typename F>
void ForEachCase(const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info,
                 int64_t only_case, F&& f) {
  const DType dtype = DTypeFromName(item.dtype);
  GenConfig cfg;
  cfg.dtype = dtype;
  cfg.capabilities = info.capabilities;
  cfg.max_vocab = plan.profile.max_vocab;
  const rc::Gen<RowCase> gen = GenRow(cfg);
  const int n = plan.profile.valid_cases_per_dtype;
  const Design design = MakeDesign(dtype, info, DesignOptionsOf(plan.profile));
  const int total = n + static_cast<int>(design.rows.size());
  const int first = only_case >= 0 ? static_cast<int>(std::min<int64_t>(only_case, total)) : 0;
  const int end = only_case >= 0 ? std::min(total, first + 1) : total;
  for (int i = first; i < end; ++i) {
    const uint64_t case_seed = Mix(Mix(plan.seed, static_cast<uint64_t>(dtype) + 1), i);
    if (i < n) {
      f(GeneratedCase{i, case_seed, gen(rc::Random(case_seed), 100)});
      continue;
    }
    // A design row is run as designed (its classes are the point) and shrunk like a generated
    // row when it fails: by halves of its tokens (HalveRow).
    const auto j = static_cast<std::size_t>(i - n);
    f(GeneratedCase{
        i, case_seed,
        rc::shrinkable::shrinkRecur(RealizeDesignRow(design, j, dtype, info, case_seed), &HalveRow),
        static_cast<int64_t>(j), &design});
  }
}

// The draws of a valid case that DIST-3 pools: a generated row's kDrawsPerCase (the case's own,
// `tokens`), a design row's design_draws_per_row from a stream of its own (`reseed` picks a fresh
// one for the re-run). Empty when the sampler returns none.
std::vector<int64_t> PooledDraws(adapters::Sampler& sampler, const Plan& plan,
                                 const GeneratedCase& c, const RowCase& row, uint64_t seed,
                                 const std::vector<int64_t>* tokens) {
  if (c.design_row < 0 && tokens != nullptr) return *tokens;
  const uint64_t draws =
      c.design_row < 0 ? kDrawsPerCase : std::max<uint64_t>(1, plan.profile.design_draws_per_row);
  auto drawn = sampler.Sample(OneRow(row), seed, 0, draws);
  return drawn.ok() ? std::move(*drawn) : std::vector<int64_t>{};
}

// DIST-3 over the full item (not a single --case): all valid rows, and each family's.
void AddPooledResults(const ItemRun& run, const PooledDistribution& pooled,
                      const std::map<std::string, PooledDistribution>& pooled_by_family,
                      const std::map<int64_t, std::set<std::string>>& failed_by_case,
                      Results* out) {
  adapters::Sampler& sampler = run.sampler;
  const Plan& plan = run.plan;
  const PlanItem& item = run.item;
  const adapters::SamplerInfo& info = sampler.info();
  Results& results = *out;
  // DIST-3's level: half to the test over all rows, half shared equally by the families'
  // own tests (a defect confined to one family is diluted in the pool). The families are
  // those with a valid row in the plan, fixed before anything runs (DistributionFamilies).
  const std::vector<std::string> families = DistributionFamilies(plan, item, info);
  const double family_share = 0.5 / static_cast<double>(std::max<std::size_t>(1, families.size()));
  auto pooled_result = [&](const std::string* family, const PooledDistribution& first_pool,
                           double share) {
    PlanItem look = item;
    look.level = item.level * share;
    TestResult first = first_pool.Result(look);
    if (family != nullptr) first.family = *family;
    if (first.status != Status::kFail) return first;
    // Suspicious: re-run on fresh draws (a derived seed) of the same valid rows, at the
    // reserve's level; a failure needs both looks (STAT-4).
    PooledDistribution again;
    ForEachCase(plan, item, info, -1, [&](const GeneratedCase& c) {
      const RowCase row = c.shrinkable.value();
      if (family != nullptr && row.family != *family) return;
      const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
      if (!ref.ok()) return;
      const uint64_t seed = Mix(c.seed, 1);
      const std::vector<int64_t> tokens = PooledDraws(sampler, plan, c, row, seed, nullptr);
      if (!tokens.empty()) again.Add(*ref, tokens, seed, c.index, row.family);
    });
    PlanItem rerun = item;
    rerun.level = item.rerun_level * share;
    std::vector<PooledDistribution::RowEvidence> worst_rows;
    TestResult second = again.Result(rerun, &worst_rows);
    second.family = first.family;
    if (second.status == Status::kFail) {
      second.failure->message +=
          fmt::format(" (re-run on fresh draws; first look: adjusted p = {:.3g} < {:.3g})",
                      first.p_value, look.level);
      // The row that contributes most is the failure's input and row file (`sampcert sample
      // --row` replays it); the reproduction re-runs the whole pooled test.
      Failure& f = *second.failure;
      f.reproduction = ReproductionCommand(run.sampler_arg, plan, item);
      // A named row that an exact property of this item already fails is linked to it: one
      // defect reads as one cause.
      std::string linked;
      for (const PooledDistribution::RowEvidence& e : worst_rows) {
        auto it = failed_by_case.find(e.case_index);
        if (it == failed_by_case.end()) continue;
        std::string props;
        for (const std::string& p : it->second) props += (props.empty() ? "" : ", ") + p;
        linked +=
            fmt::format("{}case {} also fails {}", linked.empty() ? "" : "; ", e.case_index, props);
      }
      if (!linked.empty()) {
        f.message += fmt::format("; linked: {} (the same rows: look there first)", linked);
      }
      if (!worst_rows.empty()) {
        const int64_t worst = worst_rows.front().case_index;
        ForEachCase(plan, item, info, worst, [&](const GeneratedCase& c) {
          const RowCase row = c.shrinkable.value();
          f.input = fmt::format("case {} (contributes most): {}", c.index, Describe(row));
          f.minimal_input = f.input;
          f.row = RowFileJson(row);
        });
      }
    } else {
      second.note = fmt::format(
          "first look adjusted p = {:.3g} below the level; the re-run on "
          "fresh draws gave {:.3g}. {}",
          first.p_value, second.p_value, second.note);
    }
    second.level = look.level;
    return second;
  };
  results.At("DIST-3", kPooledFamily) = pooled_result(nullptr, pooled, 0.5);
  for (const std::string& family : families) {
    auto it = pooled_by_family.find(family);
    results.At("DIST-3", family) = pooled_result(
        &family, it == pooled_by_family.end() ? PooledDistribution{} : it->second, family_share);
  }
}

}  // namespace

// generated_rows.h. The same way matters where a property fails in several: an empty support's
// row that returned a token must not shrink to a NaN row that returned a token, which a library
// may do for another reason (JAX's bf16 ties_top row did, before `kind`).
RowCase Shrink(adapters::Sampler& sampler, const rc::Shrinkable<RowCase>& start,
               const std::string& property, const std::string& kind, uint64_t seed, int max_steps,
               uint64_t max_work) {
  rc::Shrinkable<RowCase> current = start;
  int steps = 0;
  uint64_t work = 0;
  bool progressed = true;
  while (progressed && steps < max_steps && work < max_work) {
    progressed = false;
    auto shrinks = current.shrinks();
    while (auto next = shrinks.next()) {
      if (++steps > max_steps || work >= max_work) break;
      const RowCase candidate = next->value();
      work += std::max<uint64_t>(candidate.vocab(), 1024);
      bool fails = false;
      for (const Outcome& o : CheckCase(sampler, candidate, seed)) {
        fails |= o.property == property && o.reached && !o.ok && o.kind == kind;
      }
      if (fails) {
        current = *next;
        progressed = true;
        break;
      }
    }
  }
  return current.value();
}

bool GeneratedRowsApply(const adapters::SamplerInfo&) { return true; }

void PlanGeneratedRows(const PlanContext& context, PlanItem* item) {
  // The dtype's covering design is part of the plan (REPRO-1): its size and digest.
  const Design design =
      MakeDesign(DTypeFromName(item->dtype), context.info, DesignOptionsOf(context.profile));
  item->design_rows = design.rows.size();
  item->design_digest = FixedHash(design.Canonical());
  // DIST-3: four sub-tests on the generated rows' own draws (64 per row, one look): the PIT
  // histogram, its top bin, the score test and the positions inside ties; a suspicious first
  // look is re-run on fresh draws of the same rows at the reserve's share.
  item->subtests = 4;
}

std::vector<TestResult> RunGeneratedRows(const ItemRun& run) {
  adapters::Sampler& sampler = run.sampler;
  const Plan& plan = run.plan;
  const PlanItem& item = run.item;
  const int64_t only_case = run.only_case;
  const adapters::SamplerInfo& info = sampler.info();
  Results results(item.dtype);
  for (const auto& [property, family] : NotSupportedKeys(info)) {
    TestResult& r = results.At(property, family);
    r.status = Status::kNotSupported;
    r.note = property == "DET-1" ? "the sampler declares no determinism"
                                 : "the sampler does not declare the capability this property "
                                   "needs";
  }
  std::map<std::pair<std::string, std::string>, uint64_t> unreached;
  int shrunk = 0;
  // DIST-3, over the full item only (not a single --case): all valid rows, and each family's.
  PooledDistribution pooled;
  std::map<std::string, PooledDistribution> pooled_by_family;
  std::map<int64_t, std::set<std::string>> failed_by_case;  // to link a DIST-3 failure's rows
  // The design's excluded classes are the same on each of its rows: their tags, made once.
  std::vector<std::string> excluded;
  const Design* excluded_of = nullptr;
  ForEachCase(plan, item, info, only_case, [&](const GeneratedCase& c) {
    const RowCase row = c.shrinkable.value();
    std::vector<std::string> tags = EdgeTags(row);
    if (c.design != nullptr) {
      for (std::string& t : DesignRowTags(*c.design, static_cast<std::size_t>(c.design_row),
                                          DTypeFromName(item.dtype))) {
        tags.push_back(std::move(t));
      }
      if (excluded_of != c.design) {
        excluded = ExcludedTags(*c.design);
        excluded_of = c.design;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const DrawsHook hook = [&](const ReferenceDistribution& ref, const std::vector<int64_t>& t) {
      // A design row's pooled draws come from a stream of their own (Mix(seed, 2)).
      const uint64_t seed = c.design_row < 0 ? c.seed : Mix(c.seed, 2);
      const std::vector<int64_t> drawn = PooledDraws(sampler, plan, c, row, seed, &t);
      if (drawn.empty()) return;
      pooled.Add(ref, drawn, seed, c.index, row.family);
      pooled_by_family[row.family].Add(ref, drawn, seed, c.index, row.family);
    };
    const std::vector<Outcome> outcomes =
        CheckCase(sampler, row, c.seed, only_case < 0 ? &hook : nullptr);
    // Timing is reported, never used: `seconds` is on REPRO-1's list of timing fields.
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const Outcome& o : outcomes) {
      if (o.reached && !o.ok) failed_by_case[c.index].insert(o.property);
      TestResult& r = results.At(o.property, row.family);
      if (!o.reached) {
        ++unreached[{o.property, row.family}];
        continue;
      }
      ++r.cases;
      r.seconds += took / static_cast<double>(outcomes.size());
      for (const std::string& t : tags) ++r.coverage[t];
      if (c.design != nullptr) {
        // The batch and identity classes this property covers on the row, and the classes the
        // declaration excludes (count 0, the reason in the tag): the report's coverage table.
        for (const std::string& t : PropertyClassTags(o.property)) ++r.coverage[t];
        for (const std::string& t : excluded) r.coverage.emplace(t, 0);
      }
      if (o.error > r.worst_error || r.worst_input.empty()) {
        r.worst_error = std::max(r.worst_error, o.error);
        r.worst_input = Describe(row);
        r.worst_temperature = row.temperature;
      }
      if (o.ok || r.status == Status::kFail) continue;
      r.status = Status::kFail;
      Failure f;
      f.message = o.message;
      f.input = Describe(row);
      f.reproduction = ReproductionCommand(run.sampler_arg, plan, item, c.index);
      // The first failure of each (property, family) is shrunk, in plan order, while the
      // item's shrink budget lasts (profile.shrink_failures keys); a case run alone under
      // --case is always shrunk. Both are fixed by the plan, never by a clock (REPRO-1).
      if (only_case >= 0 || shrunk < plan.profile.shrink_failures) {
        ++shrunk;
        const RowCase minimal = Shrink(sampler, c.shrinkable, o.property, o.kind, c.seed,
                                       plan.profile.shrink_steps, plan.profile.shrink_work);
        f.minimal_input = Describe(minimal);
        f.row = RowFileJson(minimal);
      } else {
        f.minimal_input = f.input;
        f.row = RowFileJson(row);
        r.note =
            "not shrunk (the item's shrink budget went to earlier failures): its "
            "reproduction command shrinks it";
      }
      r.failure = std::move(f);
    }
  });
  for (const auto& [key, count] : unreached) {
    TestResult& r = results.At(key.first, key.second);
    r.note = fmt::format("not reached on {} case(s): an earlier check of the case failed", count);
    if (r.cases == 0) r.status = Status::kInconclusive;
  }
  if (only_case < 0) AddPooledResults(run, pooled, pooled_by_family, failed_by_case, &results);
  return results.Take();
}

std::vector<std::string> DistributionFamilies(const Plan& plan, const PlanItem& item,
                                              const adapters::SamplerInfo& info) {
  std::set<std::string> families;
  ForEachCase(plan, item, info, -1, [&](const GeneratedCase& c) {
    const RowCase row = c.shrinkable.value();
    // A family gets its own test when one of its rows is testable: valid (the "+invalid"
    // families are INV-ERR-1's rows; the few a declared policy makes valid, a NaN logit under
    // `masked`, are left to the test over all rows) and with a must-keep token of positive
    // probability (the pooled tests leave draws of may-keep tokens out, so a row whose kept
    // tokens are all may-keep, e.g. ties at a cut under `exact, any`, adds nothing).
    if (row.family.ends_with("+invalid") || families.contains(row.family)) return;
    if (ValidateRow(row.view(), info.policies, 0).code != ErrorCode::kOk) return;
    const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
    if (!ref.ok()) return;
    for (std::size_t i = 0; i < ref->probs.size(); ++i) {
      if (ref->keep[i] == KeepClass::kMustKeep && ref->weights[i] > 0) {
        families.insert(row.family);
        return;
      }
    }
  });
  return {families.begin(), families.end()};
}

std::vector<std::pair<std::string, std::string>> GeneratedRowKeys(const Plan& plan,
                                                                  const PlanItem& item,
                                                                  const adapters::SamplerInfo& info,
                                                                  int64_t only_case) {
  std::set<std::pair<std::string, std::string>> keys;
  for (auto& k : NotSupportedKeys(info)) keys.insert(std::move(k));
  ForEachCase(plan, item, info, only_case, [&](const GeneratedCase& c) {
    const RowCase row = c.shrinkable.value();
    for (const std::string& p : KeysForCase(row, info).properties) keys.emplace(p, row.family);
  });
  if (only_case < 0) {
    keys.emplace("DIST-3", kPooledFamily);
    for (const std::string& family : DistributionFamilies(plan, item, info)) {
      keys.emplace("DIST-3", family);
    }
  }
  return {keys.begin(), keys.end()};
}

}  // namespace sampcert::properties
