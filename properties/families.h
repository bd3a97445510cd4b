// The test families (SPEC.md section 10): one enum and one table, read by everything that needs
// to know what a plan item is: the plan (which items, their levels and draws), the worker (which
// run function), the runner (the keys an item must return, how a crashed item is named),
// `sampcert plan` and `sampcert info` (the property catalog). No code anywhere dispatches on an
// item's kind by name. Model: OpenCL-CTS's math_brute_force/function_list.cpp, one row per
// function with its tolerances and its driver.
//
// Adding a family touches three files: this one (the enum value, its functions' declarations and
// its row in FamilyTable()), the family's own .cc (its planned rows, draw planning and run
// function) and properties/CMakeLists.txt (that .cc). SPEC.md documents it.
#ifndef SAMPCERT_PROPERTIES_FAMILIES_H_
#define SAMPCERT_PROPERTIES_FAMILIES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/row_case.h"
#include "results/test_result.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

// The kinds of plan item, one row each in FamilyTable().
enum class ItemKind : uint8_t {
  kGeneratedRows,   // the generated rows of a dtype: every deterministic property, and DIST-3
  kDistribution,    // DIST-1 / DIST-2 on a planned row
  kTail,            // TAIL-1 on a planned tail row
  kPrecisionProbe,  // DIST-1 on the precision probe, planned for its own alternative
  kDeviation,       // DEV-1: a declared deviation, reported with its size
  kVerify,          // VER-1..VER-7, VER-INV-1: a speculative-decoding verifier's planned chains
  kIndependence,    // INDEP-1: pairs of draws (one stream, calls, row ids, seeds) are independent
  kPenalties,       // PEN-1..PEN-4, PEN-POL-1: planned rows with a token history and penalties
  kLogitBias,       // BIAS-1..BIAS-4, MINLEN-1: planned rows with a logit bias or a minimum length
  kPackedMask,      // PMASK-1..PMASK-3: planned masked rows given to the sampler as packed words
  kLogprobs,        // LOGP-1..LOGP-4: the log-probabilities returned with the draws, per mode
};

struct Profile;
struct Plan;
struct PlanItem;

using ResultKeys = std::vector<std::pair<std::string, std::string>>;

// Where a family's items come from, which also fixes their order in the plan: every per-dtype
// item first, then one item per planned row (dtype by dtype, rows in table order), then the
// once-per-plan items.
enum class Placement : uint8_t { kPerDtype, kPerPlannedRow, kOncePerPlan };

// What a family's draw planning sees: the profile, the declaration and, for planned-row
// families, the item's row and its reference (absent when the declaration lacks the row or
// the row is invalid under the declared policies; the item then reports NotSupported).
struct PlanContext {
  const Profile& profile;
  const adapters::SamplerInfo& info;
  const std::optional<RowCase>& row;
  const std::optional<ReferenceDistribution>& ref;
};

// What a family's run function gets: the sampler (already opened in the item's worker), the
// sampler's words of a command line (shell-quoted, for reproduction commands), the plan and the
// item; `only_case` >= 0 re-runs one generated case. For planned-row families `row` is the
// item's row and `base` the result skeleton (property, dtype, family, level, worst input),
// both checked valid by RunItem before the family runs.
struct ItemRun {
  adapters::Sampler& sampler;
  const std::string& sampler_arg;
  const Plan& plan;
  const PlanItem& item;
  int64_t only_case = -1;
  const RowCase* row = nullptr;
  results::TestResult base;
};

struct PropertyLine {
  std::string_view id;
  std::string_view summary;
};

struct Family {
  ItemKind kind;
  // The kind's name in `sampcert plan`, the plan digest, and the --item id and result family of
  // an unnamed item.
  std::string_view name;
  Placement placement;
  // Holds a share of the false-alarm budget (Bonferroni over the plan's statistical items).
  bool statistical;
  // Its draws are planned per item (draws, looks, re-run): `sampcert plan` lists it.
  bool drawn;
  // The property a crashed or hung item's result is filed under.
  std::string_view crash_property;
  std::span<const PropertyLine> properties;
  // Planned-row families: the rows of a dtype under the declared capabilities (name, row).
  std::vector<std::pair<std::string, RowCase>> (*rows)(DType dtype, uint32_t capabilities);
  // The property a planned row's result is filed under (planned-row families).
  std::string_view (*row_property)(const RowCase& row);
  // Per-dtype and once-per-plan families: whether the declaration gets an item at all.
  bool (*applies)(const adapters::SamplerInfo& info);
  // Fills the item's subtests, required draws and per-class requirements (statistical items;
  // the level, draw cap, looks and re-run are the plan's, the same for every family).
  void (*plan)(const PlanContext& context, PlanItem* item);
  std::vector<results::TestResult> (*run)(const ItemRun& run);
  // The (property, family) keys the run returns, from the plan and the declaration alone.
  ResultKeys (*keys)(const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info,
                     int64_t only_case);
};

// ---- The families' functions (each family's file) ----

// Generated rows (generated_rows.cc): every deterministic property on the profile's generated
// rows, and DIST-3 on their pooled draws.
bool GeneratedRowsApply(const adapters::SamplerInfo& info);
void PlanGeneratedRows(const PlanContext& context, PlanItem* item);
std::vector<results::TestResult> RunGeneratedRows(const ItemRun& run);
ResultKeys GeneratedRowKeys(const Plan& plan, const PlanItem& item,
                            const adapters::SamplerInfo& info, int64_t only_case);

// Distribution (distribution.cc): DIST-1 and DIST-2 on the planned rows.
std::vector<std::pair<std::string, RowCase>> DistributionRows(DType dtype, uint32_t capabilities);
std::string_view DistributionProperty(const RowCase& row);
void PlanDistribution(const PlanContext& context, PlanItem* item);
std::vector<results::TestResult> RunDistribution(const ItemRun& run);

// Tail (tail.cc): TAIL-1's nested tail sets on the planned tail rows.
std::vector<std::pair<std::string, RowCase>> TailRows(DType dtype, uint32_t capabilities);
std::string_view TailProperty(const RowCase& row);
void PlanTail(const PlanContext& context, PlanItem* item);
std::vector<results::TestResult> RunTail(const ItemRun& run);

// Precision probe (precision_probe.cc): DIST-1 on a two-token row a quarter of a bf16 ulp from
// bf16 rounding boundaries, with the draws to see bf16-carried probabilities.
std::vector<std::pair<std::string, RowCase>> PrecisionProbeRows(DType dtype, uint32_t capabilities);
void PlanPrecisionProbe(const PlanContext& context, PlanItem* item);

// Independence (independence.cc): INDEP-1, G-tests of independence on pairs of draws of one
// stream, of a later call, of adjacent row ids and of adjacent seeds, on a planned row.
std::vector<std::pair<std::string, RowCase>> IndependenceRows(DType dtype, uint32_t capabilities);
std::string_view IndependenceProperty(const RowCase& row);
void PlanIndependence(const PlanContext& context, PlanItem* item);
std::vector<results::TestResult> RunIndependence(const ItemRun& run);

// Penalties (penalty_rows.cc): planned rows with a token history, for samplers declaring
// `penalties` (SPEC section 16): probabilities and draws against the reference for the history,
// and PEN-4's identities bit for bit. Each row is filed under the clause it decides.
std::vector<std::pair<std::string, RowCase>> PenaltyRows(DType dtype, uint32_t capabilities);
std::string_view PenaltyProperty(const RowCase& row);
std::vector<results::TestResult> RunPenalty(const ItemRun& run);

// Logit bias (bias_rows.cc): planned rows with a logit bias or a minimum length, for samplers
// declaring `logit-bias` or `min-tokens` (SPEC section 18): probabilities and draws against the
// reference, and the identities of BIAS-4 and MINLEN-1 bit for bit. Filed by content.
std::vector<std::pair<std::string, RowCase>> BiasRows(DType dtype, uint32_t capabilities);
std::string_view BiasProperty(const RowCase& row);
std::vector<results::TestResult> RunLogitBias(const ItemRun& run);

// Packed masks (packed_mask_rows.cc): planned masked rows given as packed 32-bit words, for
// samplers declaring `mask` and `packed-mask` (SPEC section 19): probabilities and draws against
// the reference, and bit for bit the same row given as bytes. Filed by content.
std::vector<std::pair<std::string, RowCase>> PackedMaskRows(DType dtype, uint32_t capabilities);
std::string_view PackedMaskProperty(const RowCase& row);
std::vector<results::TestResult> RunPackedMask(const ItemRun& run);

// Log-probabilities (logprob_rows.cc): planned rows on which the logprob modes differ, for
// samplers declaring a mode (SPEC section 20): every returned log-probability against the
// reference's, exactly within the accuracy class; deterministic (no share of the budget).
std::vector<std::pair<std::string, RowCase>> LogprobRows(DType dtype, uint32_t capabilities);
std::string_view LogprobProperty(const RowCase& row);
std::vector<results::TestResult> RunLogprobs(const ItemRun& run);

// Deviation (deviation.cc): DEV-1, a declared greedy threshold reported with its size.
bool DeviationApplies(const adapters::SamplerInfo& info);
std::vector<results::TestResult> RunDeviation(const ItemRun& run);
ResultKeys DeviationKeys(const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info,
                         int64_t only_case);

// Verify (verify.cc): the verifier's laws on the planned chains of a dtype (SPEC section 15).
bool VerifyApplies(const adapters::SamplerInfo& info);
void PlanVerify(const PlanContext& context, PlanItem* item);
std::vector<results::TestResult> RunVerify(const ItemRun& run);
// The names of the planned chains of a dtype (SPEC VER-PLAN-1), for the traceability table.
std::vector<std::string> VerifyChainNames(DType dtype, uint32_t capabilities,
                                          const Policies& policies);
ResultKeys VerifyKeys(const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info,
                      int64_t only_case);
// VER-7 (SPEC VER-DET-1's key) alone, and its planned chain's numbers: the probability that two
// independent outputs coincide, and that one kind of row-id pair fails by chance.
results::TestResult RunVerifyRowIds(const ItemRun& run);
struct RowIdBound {
  double collision = 0;
  double false_alarm = 0;
};
RowIdBound VerifyRowIdBound(DType dtype, const Policies& policies);

// The keys of a planned-row item: its row's property and the row's name (conformance.cc).
ResultKeys PlannedRowKeys(const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info,
                          int64_t only_case);

// ---- The table ----

inline constexpr PropertyLine kGeneratedRowsProperties[] = {
    {"FIN-1", "every returned probability is finite and in [0, 1]"},
    {"NORM-1", "returned probabilities sum to 1 within the tolerance"},
    {"RANGE-1", "every token id is in [0, V)"},
    {"SUPP-1", "no draw and no mass outside the support"},
    {"SUPP-2", "no must-drop token drawn; no must-keep token at probability 0"},
    {"LIM-1", "T = 0 draws the arg-max set, per the greedy tie-break"},
    {"LIM-2", "+inf logits win, uniformly"},
    {"INV-ERR-1", "invalid input returns the right error and no token"},
    {"VALID-1", "valid input returns tokens, never an error"},
    {"SHIFT-1", "adding a constant to the logits changes no probability"},
    {"PERM-1", "permuting the tokens permutes the probabilities"},
    {"BATCH-1", "a row's results do not depend on the rest of the batch"},
    {"BATCH-2", "nor on batchmates' parameters, duplicates, order or the batch size"},
    {"DET-1", "same seed and row id, same tokens"},
    {"DET-2", "different seeds, different streams"},
    {"DET-3", "different row ids, different streams"},
    {"PROB-1", "probabilities within the tolerance table of the reference"},
    {"SEED-1", "a row's own seed keys its draws, whatever its batchmates and the call's seed"},
    {"SEED-2", "two rows of one seed and one row id in a batch draw the same tokens"},
    {"SEED-3", "an unseeded row draws inside its support"},
    {"DIST-3", "the generated rows' draws, pooled, follow their references (PIT, score test)"},
};
inline constexpr PropertyLine kDistributionProperties[] = {
    {"DIST-1", "draws follow the reference distribution (G-test)"},
    {"DIST-2", "draws at truncation boundaries follow the reference, given the kept set"},
    {"LIM-1", "T = 0 draws the arg-max set, per the greedy tie-break (a planned row of ties)"},
    {"LIM-2", "+inf logits win, uniformly (the test of a planned row of tied +inf logits)"},
};
inline constexpr PropertyLine kTailProperties[] = {
    {"TAIL-1", "each nested tail set's drawn count matches its reference mass (binomial)"},
};
inline constexpr PropertyLine kIndependenceProperties[] = {
    {"INDEP-1", "draws of one stream, of later calls, adjacent row ids and seeds are independent"},
};
inline constexpr PropertyLine kPenaltyProperties[] = {
    {"PEN-1", "penalties rewrite the logits before temperature and truncation (a planned row)"},
    {"PEN-2", "repetition divides positive logits, multiplies negative ones, once per token"},
    {"PEN-3", "presence and frequency subtract alpha * count + beta * [count > 0]"},
    {"PEN-4", "penalties off with a history: bit for bit the row without it"},
    {"PEN-POL-1", "each rule sees the history its declaration names (prompt-only tokens)"},
    {"INV-ERR-1", "an invalid penalty or history id is refused with InvalidPenalty (INV-8)"},
};
inline constexpr PropertyLine kBiasProperties[] = {
    {"BIAS-1", "the bias is added before the penalties, temperature and truncation"},
    {"BIAS-2", "a -inf bias bans a token, a +inf bias makes it win; -inf logits stay out"},
    {"BIAS-3", "logit plus bias is the exact sum, never an overflow"},
    {"BIAS-4", "biases of +-0 change nothing: bit for bit the row without them"},
    {"MINLEN-1", "the end-of-sequence id is banned while the output is shorter than min_tokens"},
    {"INV-ERR-1", "an invalid bias or minimum-length id is refused with InvalidLogitBias (INV-9)"},
};
inline constexpr PropertyLine kPackedMaskProperties[] = {
    {"PMASK-1", "bit t % 32 of word t / 32 is token t: the words allow exactly those tokens"},
    {"PMASK-3", "a mask given packed changes nothing: bit for bit the row given as bytes"},
    {"INV-ERR-1", "every token masked, padding bits set: EmptySupport (PMASK-2, INV-6)"},
};
inline constexpr PropertyLine kLogprobProperties[] = {
    {"LOGP-1",
     "each draw's log-probability is its token's in the declared mode (raw, scaled, "
     "processed), within the class's bound; -inf outside the mode's support; the top n "
     "most probable first"},
};
inline constexpr PropertyLine kDeviationProperties[] = {
    {"DEV-1", "a declared greedy threshold is reported as a Warning with its size"},
};

inline constexpr PropertyLine kVerifyProperties[] = {
    {"VER-1", "every emitted token in its target's support, the accepted ones the drafts"},
    {"VER-2", "the token emitted at each reached position follows the target p_j"},
    {"VER-3", "the accepted count follows the product of the acceptance rates"},
    {"VER-4", "a token emitted after a rejection follows the residual (p_j - q_j)+"},
    {"VER-5", "the same chain gives the same result alone, batched, reordered, twice"},
    {"VER-6", "the reported acceptance probabilities are min(1, p_j / q_j) within tolerance"},
    {"VER-7", "two row ids at one seed and draw give independent outputs (the row id is a key)"},
    {"VER-INV-1", "an invalid chain returns the right error, naming the chain"},
};

inline const std::array<Family, 11>& FamilyTable() {
  static const std::array<Family, 11> table = {{
      {ItemKind::kGeneratedRows, "deterministic", Placement::kPerDtype, true, false, "ALL",
       kGeneratedRowsProperties, nullptr, nullptr, GeneratedRowsApply, PlanGeneratedRows,
       RunGeneratedRows, GeneratedRowKeys},
      {ItemKind::kDistribution, "distribution", Placement::kPerPlannedRow, true, true,
       "distribution", kDistributionProperties, DistributionRows, DistributionProperty, nullptr,
       PlanDistribution, RunDistribution, PlannedRowKeys},
      {ItemKind::kTail, "tail", Placement::kPerPlannedRow, true, true, "tail", kTailProperties,
       TailRows, TailProperty, nullptr, PlanTail, RunTail, PlannedRowKeys},
      {ItemKind::kPrecisionProbe,
       "precision_probe",
       Placement::kPerPlannedRow,
       true,
       true,
       "precision_probe",
       {},
       PrecisionProbeRows,
       DistributionProperty,
       nullptr,
       PlanPrecisionProbe,
       RunDistribution,
       PlannedRowKeys},
      {ItemKind::kIndependence, "independence", Placement::kPerPlannedRow, true, true,
       "independence", kIndependenceProperties, IndependenceRows, IndependenceProperty, nullptr,
       PlanIndependence, RunIndependence, PlannedRowKeys},
      {ItemKind::kPenalties, "penalties", Placement::kPerPlannedRow, true, true, "penalties",
       kPenaltyProperties, PenaltyRows, PenaltyProperty, nullptr, PlanDistribution, RunPenalty,
       PlannedRowKeys},
      {ItemKind::kLogitBias, "logit_bias", Placement::kPerPlannedRow, true, true, "logit_bias",
       kBiasProperties, BiasRows, BiasProperty, nullptr, PlanDistribution, RunLogitBias,
       PlannedRowKeys},
      {ItemKind::kPackedMask, "packed_mask", Placement::kPerPlannedRow, true, true, "packed_mask",
       kPackedMaskProperties, PackedMaskRows, PackedMaskProperty, nullptr, PlanDistribution,
       RunPackedMask, PlannedRowKeys},
      {ItemKind::kLogprobs, "logprobs", Placement::kPerPlannedRow, false, false, "logprobs",
       kLogprobProperties, LogprobRows, LogprobProperty, nullptr, nullptr, RunLogprobs,
       PlannedRowKeys},
      {ItemKind::kDeviation, "deviation", Placement::kOncePerPlan, false, false, "deviation",
       kDeviationProperties, nullptr, nullptr, DeviationApplies, nullptr, RunDeviation,
       DeviationKeys},
      {ItemKind::kVerify, "verify", Placement::kPerDtype, true, true, "VER-1", kVerifyProperties,
       nullptr, nullptr, VerifyApplies, PlanVerify, RunVerify, VerifyKeys},
  }};
  return table;
}

// The row of a kind (every ItemKind has exactly one: families_test checks it).
const Family& FamilyOf(ItemKind kind);
// The kind of a name, or an error naming the unknown name.
Expected<ItemKind> ItemKindFromName(std::string_view name);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_FAMILIES_H_
