// The verifier family (SPEC.md section 15): a speculative-decoding verifier, certified against
// the exact laws of rejection sampling on planned chains. The suite draws every drafted token
// d_j from its draft distribution q_j itself, so it knows the truth: the token emitted at each
// reached position follows the target's p_j (VER-2), the accepted count follows the product of
// the acceptance rates beta_j = sum_x min(p_j, q_j) (VER-3), a token emitted after a rejection
// follows the residual (p_j - q_j)+ renormalized (VER-4); every emitted token is in the
// target's support and the accepted ones are the drafts (VER-1, exact), the same inputs give
// the same output alone, in a batch and in any order (VER-5, exact), two row ids at one draw give
// independent outputs (VER-7, a count of identical outputs with a stated false-alarm rate), and
// an invalid chain is an error (VER-INV-1).
//
// Statistics: every law's sub-tests (one per position for VER-2 and VER-4, one for VER-3) share
// the item's level by Bonferroni over all the dtype's chains, at the plan's looks; a rejection is
// re-run with 4x the trials from a fresh seed at the reserve's level, and a law fails only when
// both runs reject it (SPEC STAT-4's rule). Each sub-test is EvaluateDistributionLook's: the
// G-test on fixed cells, the score test on log p and the band-conditional score test.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "adapters/declarations.h"
#include "properties/distribution.h"
#include "properties/draw_planning.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "properties/reproduction.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_verify.h"
#include "sampcert/sampler_abi.h"
#include "sampcert/tolerance.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

namespace {

// One planned chain: k + 1 target rows, k draft distributions, given to the verifier as
// probabilities or (ABI MINOR 3) as draft rows of logits whose distributions they are.
struct ChainCase {
  std::string name;
  std::vector<RowCase> targets;
  std::vector<double> q;            // k x V: the draft distributions, the suite's truth
  std::vector<RowCase> draft_rows;  // k rows of logits, or empty: q is given as probabilities
  std::string draft_problem;        // a draft row without an exact law under the declaration
  std::vector<ReferenceDistribution> draft_refs;  // the draft rows' references (their q)
  std::size_t k() const { return targets.size() - 1; }
  std::size_t vocab() const { return targets.front().vocab(); }
  bool logits() const { return !draft_rows.empty(); }
};

// The laws are exact (no accuracy-class tolerance, SPEC VER-STAT-1): the fp32 class's bands.
Policies ExactPolicies(const Policies& declared) {
  Policies exact = declared;
  exact.accuracy = AccuracyClass::kF32;
  return exact;
}

// A draft distribution: the reference distribution of a draft row (its own logits and
// temperature, SPEC's exact semantics), in double, renormalized in double.
std::vector<double> DraftOf(const RowCase& draft_row) {
  auto ref = ComputeReference(draft_row.view(), Policies{});
  std::vector<double> q(draft_row.vocab(), 0.0);
  if (!ref.ok()) return q;
  double s = 0;
  for (std::size_t x = 0; x < q.size(); ++x) s += q[x] = static_cast<double>(ref->probs[x]);
  for (double& e : q) e /= s;
  return q;
}

// A draft from explicit weights (>= 0, not all 0), normalized in double.
std::vector<double> Normalized(std::vector<double> w) {
  double s = 0;
  for (double e : w) s += e;
  for (double& e : w) e /= s;
  return w;
}

// The chain of `k` positions on LLM-like rows of V tokens (a different row per position), with
// the target at temperature t and `edit` applied to each target row, and the draft given by
// `draft` from the target row.
template <typename Edit, typename Draft>
ChainCase MakeChain(std::string name, DType dtype, std::size_t v, std::size_t k, float t,
                    uint64_t seed, Edit&& edit, Draft&& draft) {
  ChainCase c;
  c.name = std::move(name);
  for (std::size_t j = 0; j <= k; ++j) {
    RowCase row = MakeRow(dtype, LlmLike(v, Mix(seed, j)), t, 0);
    edit(row, j);
    c.targets.push_back(std::move(row));
  }
  for (std::size_t j = 0; j < k; ++j) {
    const std::vector<double> q = draft(c.targets[j], j);
    c.q.insert(c.q.end(), q.begin(), q.end());
  }
  return c;
}

const auto kNoEdit = [](RowCase&, std::size_t) {};

// The chain of `k` positions whose drafts are rows of logits (SPEC VER-IN-1, ABI MINOR 3): draft
// row j is target row j's logits scaled by 0.8 and shifted per token (a draft model that
// roughly agrees), in `draft_dtype`, with `params` setting its temperature and truncation; q_j
// is its reference distribution under the sampler's declared policies. A draft row with a
// rounding band (a kept set the declaration leaves open) has no exact q: draft_problem says so.
template <typename Params>
ChainCase MakeLogitsChain(std::string name, DType dtype, DType draft_dtype, std::size_t v,
                          std::size_t k, float t, uint64_t seed, const Policies& policies,
                          Params&& params) {
  ChainCase c = MakeChain(std::move(name), dtype, v, k, t, seed, kNoEdit,
                          [](const RowCase&, std::size_t) { return std::vector<double>{}; });
  for (std::size_t j = 0; j < k; ++j) {
    const RowCase& target = c.targets[j];
    std::vector<float> logits(v);
    for (std::size_t x = 0; x < v; ++x) {
      logits[x] = 0.8f * target.Logit(x) + 0.25f * static_cast<float>((x * 37 + j * 11) % 7);
    }
    RowCase d = MakeRow(draft_dtype, logits, 1.0f, 0);
    params(d, j);
    std::vector<double> q(v, 0.0);
    auto ref = ComputeReference(d.view(), ExactPolicies(policies));
    if (!ref.ok()) {
      c.draft_problem = fmt::format("draft row {}: {}", j + 1, ref.error().message);
    } else {
      if (std::ranges::find(ref->keep, KeepClass::kMayKeep) != ref->keep.end()) {
        c.draft_problem = fmt::format("draft row {} has a rounding band", j + 1);
      }
      double sum = 0;
      for (std::size_t x = 0; x < v; ++x) sum += q[x] = static_cast<double>(ref->probs[x]);
      for (double& e : q) e /= sum;
      c.draft_refs.push_back(*std::move(ref));
    }
    c.q.insert(c.q.end(), q.begin(), q.end());
    c.draft_rows.push_back(std::move(d));
  }
  return c;
}

// The draft at another temperature of the target's own logits (q near p, or far from it).
auto AtTemperature(float t) {
  return [t](const RowCase& target, std::size_t) {
    RowCase d = target;
    d.temperature = t;
    d.top_k = 0;
    d.mask.clear();
    return DraftOf(d);
  };
}

// The draft-logits chains (SPEC VER-PLAN-1), for a verifier declaring verify-draft-logits: each
// dtype's drafts at another temperature; f32 targets also with f16 and bf16 drafts, each with a
// truncation step of its own where declared.
void AddLogitsChains(DType dtype, uint32_t caps, const Policies& policies,
                     std::vector<ChainCase>* out) {
  if ((caps & SAMPCERT_CAP_VERIFY_DRAFT_LOGITS) == 0) return;
  if (dtype != DType::kF32) {
    out->push_back(MakeLogitsChain("draft_logits_V64_k2", dtype, dtype, 64, 2, 1.0f, 31, policies,
                                   [](RowCase& d, std::size_t) { d.temperature = 1.3f; }));
    return;
  }
  out->push_back(MakeLogitsChain("draft_logits_V64_k3", dtype, dtype, 64, 3, 1.0f, 32, policies,
                                 [&](RowCase& d, std::size_t) {
                                   d.temperature = 0.9f;
                                   if (caps & SAMPCERT_CAP_TOP_K) d.top_k = 16;
                                 }));
  if (caps & SAMPCERT_CAP_F16) {
    out->push_back(MakeLogitsChain("draft_f16_V128_k2", dtype, DType::kF16, 128, 2, 0.8f, 33,
                                   policies, [&](RowCase& d, std::size_t) {
                                     d.temperature = 1.2f;
                                     if (caps & SAMPCERT_CAP_TOP_P) d.top_p = 0.9f;
                                   }));
  }
  if (caps & SAMPCERT_CAP_BF16) {
    out->push_back(MakeLogitsChain("draft_bf16_V96_k2", dtype, DType::kBF16, 96, 2, 1.0f, 34,
                                   policies, [&](RowCase& d, std::size_t) {
                                     if (caps & SAMPCERT_CAP_MIN_P) d.min_p = 0.02f;
                                   }));
  }
}

// The planned chains of a dtype under the declared capabilities and policies (SPEC
// VER-PLAN-1).
std::vector<ChainCase> VerifyChains(DType dtype, uint32_t caps, const Policies& policies) {
  std::vector<ChainCase> out;
  // fp16 / bf16: the chains whose laws the dtype's rounding can move (the same laws on rounded
  // logits), not the whole f32 set: a row's dtype changes its logits, not the verifier's rule.
  const bool half = dtype != DType::kF32;
  // q close to p: the draft model at T = 1.25 against the target at T = 1.
  out.push_back(MakeChain("near_V64_k4", dtype, 64, 4, 1.0f, 11, kNoEdit, AtTemperature(1.25f)));
  // A vocabulary past 4096 (tile and block sizes): the draft at T = 1.5.
  auto tile = [&] {
    return MakeChain("tile_V4099_k2", dtype, 4099, 2, 1.0f, 18, kNoEdit, AtTemperature(1.5f));
  };
  // Greedy verification (target T = 0): exact matching of the arg-max.
  auto greedy = [&] {
    return MakeChain("greedy_V64_k3", dtype, 64, 3, 0.0f, 22, kNoEdit, AtTemperature(1.0f));
  };
  const bool temperature_zero = (caps & SAMPCERT_CAP_TEMPERATURE_ZERO) != 0;
  if (half) {
    out.push_back(tile());
    if (temperature_zero) out.push_back(greedy());
    AddLogitsChains(dtype, caps, policies, &out);
    return out;
  }
  // q far from p: a uniform draft against a peaked target.
  out.push_back(
      MakeChain("far_V256_k4", dtype, 256, 4, 0.7f, 12, kNoEdit, [](const RowCase& t, std::size_t) {
        return Normalized(std::vector<double>(t.vocab(), 1.0));
      }));
  // q missing mass where p has it: the target's own distribution on even tokens only.
  out.push_back(MakeChain("missing_mass_V128_k3", dtype, 128, 3, 1.0f, 13, kNoEdit,
                          [](const RowCase& t, std::size_t) {
                            std::vector<double> q = DraftOf(t);
                            for (std::size_t x = 1; x < q.size(); x += 2) q[x] = 0;
                            return Normalized(std::move(q));
                          }));
  // A long chain (k = 8) on a small vocabulary.
  out.push_back(MakeChain("long_V32_k8", dtype, 32, 8, 1.0f, 14, kNoEdit, AtTemperature(1.6f)));
  // p = q: every draft is accepted.
  out.push_back(MakeChain("equal_V48_k4", dtype, 48, 4, 1.0f, 15, kNoEdit,
                          [](const RowCase& t, std::size_t) { return DraftOf(t); }));
  // Ties: target logits on four levels, a draft with ties of its own.
  out.push_back(MakeChain(
      "ties_V40_k3", dtype, 40, 3, 1.0f, 16,
      [](RowCase& row, std::size_t j) {
        for (std::size_t x = 0; x < row.vocab(); ++x) {
          row.SetLogit(x, static_cast<float>((x * 7 + j) % 4));
        }
      },
      [](const RowCase& t, std::size_t) {
        std::vector<double> w(t.vocab());
        for (std::size_t x = 0; x < w.size(); ++x) w[x] = 1.0 + static_cast<double>(x % 2);
        return Normalized(std::move(w));
      }));
  // +inf logits: the target is uniform over its three +inf tokens.
  out.push_back(MakeChain(
      "inf_V64_k2", dtype, 64, 2, 1.0f, 17,
      [](RowCase& row, std::size_t j) {
        for (std::size_t x : {std::size_t{3}, 20 + j, std::size_t{41}}) {
          row.SetLogit(x, std::numeric_limits<float>::infinity());
        }
      },
      [](const RowCase& t, std::size_t) {
        std::vector<double> w(t.vocab(), 1.0);
        w[3] = 8;
        return Normalized(std::move(w));
      }));
  out.push_back(tile());
  if (caps & SAMPCERT_CAP_TOP_K) {
    // q with mass where p has none: the target keeps its top 8, the draft spreads everywhere.
    out.push_back(MakeChain(
        "extra_mass_V100_k3", dtype, 100, 3, 1.0f, 19,
        [](RowCase& row, std::size_t) { row.top_k = 8; }, AtTemperature(1.0f)));
    // Disjoint supports: the target keeps its top 4, the draft only the other tokens, so every
    // chain is rejected at its first position and emits from p_1.
    out.push_back(MakeChain(
        "disjoint_V64_k2", dtype, 64, 2, 1.0f, 20, [](RowCase& row, std::size_t) { row.top_k = 4; },
        [](const RowCase& t, std::size_t) {
          auto ref = ComputeReference(t.view(), Policies{});
          std::vector<double> w(t.vocab(), 0.0);
          for (std::size_t x = 0; x < w.size(); ++x) w[x] = ref.ok() && ref->probs[x] > 0 ? 0 : 1;
          return Normalized(std::move(w));
        }));
  }
  if (caps & SAMPCERT_CAP_MASK) {
    // A mask gives some drafted tokens target probability 0.
    out.push_back(MakeChain(
        "masked_V64_k3", dtype, 64, 3, 1.0f, 21,
        [](RowCase& row, std::size_t) {
          row.mask.assign(row.vocab(), 1);
          for (std::size_t x = 0; x < row.vocab(); x += 4) row.mask[x] = 0;
        },
        AtTemperature(1.0f)));
    // One mask per draft position (grammar-constrained decoding: each position has its own
    // grammar state, so its own mask): target row j masks the tokens x with x % 4 == j, so a
    // token one position forbids every other position allows, and the draft (the target's
    // logits at T = 1, unmasked) puts about a quarter of its mass on each position's forbidden
    // tokens. A verifier that reads one position's mask for the whole chain accepts or emits a
    // token its own position forbids: VER-1, on every trial.
    out.push_back(MakeChain(
        "position_masks_V64_k3", dtype, 64, 3, 1.0f, 28,
        [](RowCase& row, std::size_t j) {
          row.mask.assign(row.vocab(), 1);
          for (std::size_t x = j % 4; x < row.vocab(); x += 4) row.mask[x] = 0;
        },
        AtTemperature(1.0f)));
  }
  if (temperature_zero) out.push_back(greedy());
  // Target-side truncation: the targets cut by top-p or min-p, the draft (T = 1.3, no
  // truncation) has mass on the tokens they drop, which must never be accepted or emitted.
  auto untruncated = [](const RowCase& target, std::size_t) {
    RowCase d = target;
    d.temperature = 1.3f;
    d.top_k = 0;
    d.top_p = 1.0f;
    d.min_p = 0.0f;
    d.mask.clear();
    return DraftOf(d);
  };
  if (caps & SAMPCERT_CAP_TOP_P) {
    out.push_back(MakeChain(
        "target_top_p_V64_k3", dtype, 64, 3, 1.0f, 23,
        [](RowCase& row, std::size_t) { row.top_p = 0.9f; }, untruncated));
  }
  if (caps & SAMPCERT_CAP_MIN_P) {
    out.push_back(MakeChain(
        "target_min_p_V64_k3", dtype, 64, 3, 1.0f, 24,
        [](RowCase& row, std::size_t) { row.min_p = 0.05f; }, untruncated));
  }
  // A peaked target at T = 0.7 under a more confident draft (the same logits at T = 0.35):
  // q > p on the top tokens, where a single-threshold acceptance departs from min(1, p / q).
  out.push_back(
      MakeChain("confident_V64_k3", dtype, 64, 3, 0.7f, 25, kNoEdit, AtTemperature(0.35f)));
  if (temperature_zero) {
    // Greedy verification with tied winners (VER-LIM-1): two tokens share the maximum at T = 0.
    out.push_back(MakeChain(
        "greedy_ties_V64_k3", dtype, 64, 3, 0.0f, 26,
        [](RowCase& row, std::size_t) {
          std::size_t top = 0;
          for (std::size_t x = 1; x < row.vocab(); ++x) {
            if (row.Logit(x) > row.Logit(top)) top = x;
          }
          row.SetLogit((top + 17) % row.vocab(), row.Logit(top));
        },
        AtTemperature(1.0f)));
  }
  AddLogitsChains(dtype, caps, policies, &out);
  return out;
}

// Bonferroni's unit: the sub-tests of one chain (k + 1 positions of VER-2, VER-3, k positions
// of VER-4).
std::size_t SubtestsOf(const ChainCase& c) { return 2 * c.k() + 2; }

// A chain's trials: the G-tests of its first position and of its accepted count detect the
// profile's TV w.p. 0.9 at their share of the last look's level (at least 4096, at most the
// profile's draws). The plan's item carries the largest; each chain runs its own.
uint64_t ChainTrials(const Profile& profile, const ChainLaw& law, double item_level,
                     std::size_t subtests) {
  const double share = kLookShare[kLooks - 1] * item_level / static_cast<double>(subtests) / 3;
  uint64_t need = 4096;
  for (const std::vector<long double>* null : {&law.targets.front().probs, &law.accepted_count}) {
    const Cells cells = MakeCells(*null, profile.max_draws);
    if (cells.probability.size() < 2) continue;
    need = std::max(need, DrawsForTv(static_cast<double>(cells.probability.size() - 1), share,
                                     profile.required_tv));
  }
  return std::min(need, profile.max_draws);
}

std::size_t AllSubtests(const std::vector<ChainCase>& chains) {
  std::size_t subtests = 0;
  for (const ChainCase& c : chains) subtests += SubtestsOf(c);
  return subtests;
}

// The laws of a chain under the declared policies (the planned chains are valid: an error here
// is a bug in the plan, reported as such).
Expected<ChainLaw> LawOf(const ChainCase& c, const Policies& policies) {
  std::vector<RowView> views;
  for (const RowCase& r : c.targets) views.push_back(r.view());
  if (!c.draft_problem.empty()) {
    return Error{ErrorCode::kInternal, fmt::format("chain {}: {}", c.name, c.draft_problem)};
  }
  auto law = ComputeChainLaw(views, c.q, ExactPolicies(policies));
  if (!law.ok()) return law;
  // The laws are exact where the kept sets are: a planned chain has no rounding band.
  for (std::size_t j = 0; j < law->targets.size(); ++j) {
    for (KeepClass keep : law->targets[j].keep) {
      if (keep == KeepClass::kMayKeep) {
        return Error{ErrorCode::kInternal,
                     fmt::format("target row {} of chain {} has a rounding band", j + 1, c.name)};
      }
    }
  }
  return law;
}

// The suite's own draft draws: d_j of trial t from q_j's inverse CDF at a canonical uniform.
class DraftSampler {
 public:
  explicit DraftSampler(const ChainCase& c) : c_(c) {
    const std::size_t v = c.vocab();
    for (std::size_t j = 0; j < c.k(); ++j) {
      std::vector<double> cdf(v);
      double s = 0;
      for (std::size_t x = 0; x < v; ++x) cdf[x] = s += c.q[j * v + x];
      cdf_.push_back(std::move(cdf));
    }
  }
  int64_t Draft(uint64_t seed, uint64_t row_id, uint64_t trial, std::size_t j) const {
    const std::vector<double>& cdf = cdf_[j];
    const double target = CanonicalUniform(seed, row_id, 64 * trial + j) * cdf.back();
    auto it = std::upper_bound(cdf.begin(), cdf.end(), target);
    std::size_t x = static_cast<std::size_t>(it - cdf.begin());
    if (x >= cdf.size()) x = cdf.size() - 1;
    // Skip zero-probability tokens (equal CDF values) to the next drawable one, backwards at
    // the end.
    const std::size_t v = c_.vocab();
    while (x < cdf.size() && c_.q[j * v + x] == 0) ++x;
    if (x >= cdf.size()) {
      x = cdf.size() - 1;
      while (c_.q[j * v + x] == 0) --x;
    }
    return static_cast<int64_t>(x);
  }

 private:
  const ChainCase& c_;
  std::vector<std::vector<double>> cdf_;
};

// What a chain's verify() calls point into: its target rows and draft rows as views.
struct ChainViews {
  std::vector<RowView> targets, drafts;
  explicit ChainViews(const ChainCase& c) {
    for (const RowCase& r : c.targets) targets.push_back(r.view());
    for (const RowCase& r : c.draft_rows) drafts.push_back(r.view());
  }
  adapters::Chain Make(const ChainCase& c, const int64_t* d, uint64_t row_id, uint64_t draw) const {
    return {targets.data(), c.k(), c.logits() ? nullptr : c.q.data(),   d,
            row_id,         draw,  c.logits() ? drafts.data() : nullptr};
  }
  static adapters::ChainBatch Batch(const ChainCase& c) {
    return {c.targets.front().dtype,
            c.vocab(),
            {},
            c.logits() ? c.draft_rows.front().dtype : DType::kF32};
  }
};

// VER-6's tolerance on one acceptance probability a = min(1, p(d) / q(d)) (SPEC VER-6): p(d) is
// a probability the sampler computes, within TOL-3's relative bound of the declared class (or,
// below the class's floor, its absolute bound); q(d) too when the draft is given as logits (as
// probabilities it is the caller's double). min(1, .) is 1-Lipschitz, so the ratio's bound holds
// for a: |a' - a| <= min(1, r) (e_p + e_q) + abs_p / q(d), plus 1e-12 for the division.
double AcceptanceTolerance(const AccuracyParams& acc, const ReferenceDistribution& target,
                           const ReferenceDistribution* draft, double q, std::size_t d) {
  auto rel = [&](const ReferenceDistribution& r, long double prob) {
    return prob >= acc.prob_floor
               ? ProbabilityRelTolerance(acc, static_cast<double>(r.log_weights[d]), r.probs.size())
               : 0.0;
  };
  const long double p = target.probs[d];
  const double e_p = rel(target, p), abs_p = p < acc.prob_floor ? acc.abs_below_floor : 0.0;
  double e_q = 0, abs_q = 0;
  if (draft != nullptr) {
    e_q = rel(*draft, draft->probs[d]);
    abs_q = draft->probs[d] < acc.prob_floor ? acc.abs_below_floor : 0.0;
  }
  const double r = static_cast<double>(p) / q;
  // A draft probability known only to abs_q: the ratio's relative error grows by abs_q / q.
  return std::min(1.0, r) * (e_p + e_q + abs_q / q) + abs_p / q + 1e-12;
}

// The acceptance probability the declared scheme gives drafted token d (VER-6), with its
// tolerance; a negative tolerance: d's p is within its tolerance of the typical scheme's
// threshold, where the rule's answer is not determined (not checked).
struct DeclaredRule {
  double acceptance = 0;
  double tolerance = 0;
};
DeclaredRule RuleOf(const Policies& declared, const AccuracyParams& acc,
                    const ReferenceDistribution& target, const ReferenceDistribution* draft,
                    std::span<const double> q, int64_t d, double entropy) {
  const auto ds = static_cast<std::size_t>(d);
  const double tol = AcceptanceTolerance(acc, target, draft, q[ds], ds);
  const double p = static_cast<double>(target.probs[ds]);
  switch (declared.verify_scheme) {
    case VerifyScheme::kExact:
      return {static_cast<double>(AcceptanceProbability(target.probs, q, d)), tol};
    case VerifyScheme::kLenient: {
      const double l = declared.verify_threshold;
      return {std::min(1.0, p / (l * q[ds])), tol / l};
    }
    case VerifyScheme::kTypical: {
      // p's error is TOL-3's bound of the class; the threshold's comes through H: |dH| <=
      // sum_x |dp_x| (|log p_x| + 1) <= e (H + 1) for a relative error e on every p_x (taken
      // as d's, with 1e-6 for the tokens whose bound is larger).
      const double e_p =
          p >= acc.prob_floor
              ? ProbabilityRelTolerance(acc, static_cast<double>(target.log_weights[ds]), q.size())
              : 0.0;
      const double abs_p = p < acc.prob_floor ? acc.abs_below_floor : 0.0;
      const double threshold = std::min(static_cast<double>(declared.verify_threshold),
                                        declared.verify_alpha * std::exp(-entropy));
      const double band = p * e_p + abs_p + threshold * (e_p + 1e-6) * (entropy + 1);
      if (std::abs(p - threshold) <= band) return {0, -1};
      return {p > threshold ? 1.0 : 0.0, 1e-12};
    }
  }
  return {0, -1};
}
std::string RuleName(const Policies& declared) {
  switch (declared.verify_scheme) {
    case VerifyScheme::kExact: return "min(1, p / q)";
    case VerifyScheme::kLenient:
      return fmt::format("the declared lenient rule min(1, p / ({} q))", declared.verify_threshold);
    case VerifyScheme::kTypical:
      return fmt::format("the declared typical rule [p > min({}, {} exp(-H(p)))]",
                         declared.verify_threshold, declared.verify_alpha);
  }
  return "";
}

// VER-6's state over a run: what was checked, the worst error relative to its tolerance, the
// first error past it.
struct AcceptanceTally {
  uint64_t checked = 0;
  double worst = 0;
  std::optional<std::string> failure;
};

// What the trials of one run of a chain produced, in trial order.
struct Tally {
  uint64_t trials = 0;
  std::vector<int64_t> counts;                 // accepted count per trial
  std::vector<std::vector<int64_t>> emitted;   // per position: tokens emitted there
  std::vector<std::vector<int64_t>> residual;  // per position: tokens emitted after a rejection
  // Rejection tokens where p = q within a sampler's fp32 rounding (kResidualSlack): the residual
  // is empty there for the reference, not for a sampler computing p in fp32; left out of VER-4.
  uint64_t off_residual = 0;
  // VER-4, exact: a token emitted after a rejection where p is clearly below q, which the
  // residual (p - q)+ never holds.
  std::optional<std::string> residual_failure;
  std::optional<std::string> exact_failure;  // VER-1
  AcceptanceTally acceptance;                // VER-6 (declared verify-acceptance only)
};

// p(x) below q(x) by more than this relative share is outside the residual beyond any fp32
// rounding of p (a sampler of the fp32 class carries p to about 2^-20 relative).
constexpr long double kResidualSlack = 1e-5L;

// Draws trials [tally->trials, n) of a chain and checks each exactly (VER-1).
// VER-6 checks every decided position's acceptance probability when `accuracy` is set (declared
// verify-acceptance), against the reference's min(1, p / q) within AcceptanceTolerance.
void DrawTrials(adapters::Sampler& sampler, const ChainCase& c, const ChainLaw& law,
                const DraftSampler& drafts, uint64_t seed, uint64_t row_id, uint64_t n,
                const AccuracyParams* accuracy, Tally* tally) {
  const std::size_t v = c.vocab(), k = c.k();
  const Policies& declared = sampler.info().policies;
  // A declared lossy scheme (VER-DEV-1): the exact law's zero-probability counts and its
  // residual are not the scheme's, so only the support and the declared rule are exact.
  const bool lossy = declared.verify_scheme != VerifyScheme::kExact;
  tally->emitted.resize(k + 1);
  tally->residual.resize(k);
  const ChainViews views(c);
  constexpr uint64_t kChunk = 2048;
  std::vector<int64_t> drafted(kChunk * k);
  // VER-6: min(1, p / q) and its tolerance per (position, drafted token), NaN until needed.
  std::vector<std::pair<double, double>> expected(accuracy != nullptr ? k * v : 0,
                                                  {std::numeric_limits<double>::quiet_NaN(), 0.0});
  std::vector<double> entropy(k, 0.0);  // H(p_j) in nats: the typical scheme's threshold
  for (std::size_t j = 0; lossy && j < k; ++j) {
    for (const long double px : law.targets[j].probs) {
      if (px > 0) entropy[j] -= static_cast<double>(px * std::log(px));
    }
  }
  while (tally->trials < n && !tally->exact_failure) {
    const uint64_t first = tally->trials, m = std::min(kChunk, n - first);
    adapters::ChainBatch batch = ChainViews::Batch(c);
    batch.chains.reserve(m);
    for (uint64_t t = first; t < first + m; ++t) {
      int64_t* d = drafted.data() + (t - first) * k;
      for (std::size_t j = 0; j < k; ++j) d[j] = drafts.Draft(Mix(seed, 2), row_id, t, j);
      batch.chains.push_back(views.Make(c, d, row_id, t));
    }
    auto got = sampler.Verify(batch, seed);
    if (!got.ok()) {
      tally->exact_failure = fmt::format("verify() of a valid chain failed: {}: {}",
                                         ErrorCodeName(got.error().code), got.error().message);
      return;
    }
    for (uint64_t i = 0; i < m; ++i) {
      const int64_t acc = got->accepted[i];
      const std::span<const int64_t> toks = got->Emitted(i);
      const int64_t* d = batch.chains[i].drafts;
      const uint64_t trial = first + i;
      for (int64_t j = 0; j <= acc; ++j) {
        const int64_t x = toks[static_cast<std::size_t>(j)];
        const auto js = static_cast<std::size_t>(j);
        if (j < acc && x != d[js]) {
          tally->exact_failure = fmt::format(
              "trial {}: accepted {} drafts but emitted token {} at position {}, not the drafted "
              "token {}",
              trial, acc, x, j + 1, d[js]);
          return;
        }
        if (x < 0 || static_cast<std::size_t>(x) >= v) {
          tally->exact_failure = fmt::format(
              "trial {}: emitted token id {} at position {}, outside [0, {})", trial, x, j + 1, v);
          return;
        }
        const KeepClass keep = law.targets[js].keep[static_cast<std::size_t>(x)];
        if (keep != KeepClass::kMustKeep && keep != KeepClass::kMayKeep) {
          tally->exact_failure = fmt::format(
              "trial {}: emitted token {} at position {}{}, which the target row there does not "
              "keep (target probability 0)",
              trial, x, j + 1,
              j < acc ? " (an accepted draft)"
                      : (acc < static_cast<int64_t>(k) ? " (after a rejection)" : " (the bonus)"));
          return;
        }
        tally->emitted[js].push_back(x);
        if (j == acc && acc < static_cast<int64_t>(k) && lossy) {
          tally->residual[js].push_back(x);  // the scheme's rejection tokens, measured only
        } else if (j == acc && acc < static_cast<int64_t>(k)) {
          const auto xs = static_cast<std::size_t>(x);
          const long double px = law.targets[js].probs[xs], qx = c.q[js * v + xs];
          if (law.residual[js][xs] > 0) {
            tally->residual[js].push_back(x);
          } else if (px < qx * (1 - kResidualSlack)) {
            if (!tally->residual_failure) {
              tally->residual_failure = fmt::format(
                  "trial {}: after rejecting the draft at position {}, emitted token {} where "
                  "p = {:.6g} < q = {:.6g}: the residual (p - q)+ has no mass there",
                  trial, j + 1, x, static_cast<double>(px), static_cast<double>(qx));
            }
          } else {
            ++tally->off_residual;
          }
        }
      }
      if (!lossy && law.accepted_count[static_cast<std::size_t>(acc)] == 0) {
        tally->exact_failure = fmt::format(
            "trial {}: accepted {} of {} drafts, a count of probability 0 under the chain's law",
            trial, acc, k);
        return;
      }
      tally->counts.push_back(acc);
      if (accuracy != nullptr && !got->acceptance.empty()) {
        const std::size_t decided = std::min<std::size_t>(static_cast<std::size_t>(acc) + 1, k);
        for (std::size_t j = 0; j < decided; ++j) {
          const auto ds = static_cast<std::size_t>(d[j]);
          const double a = got->acceptance[i * (got->stride - 1) + j];
          const std::span<const double> qj(c.q.data() + j * v, v);
          auto& [want, tol] = expected[j * v + ds];
          if (std::isnan(want)) {  // each (position, drafted token) once
            const DeclaredRule rule =
                RuleOf(declared, *accuracy, law.targets[j], c.logits() ? &c.draft_refs[j] : nullptr,
                       qj, d[j], entropy[j]);
            want = rule.acceptance;
            tol = rule.tolerance;
          }
          if (!(tol >= 0)) continue;  // at the declared threshold, within p's tolerance
          ++tally->acceptance.checked;
          const double err = std::isfinite(a) ? std::abs(a - want) : HUGE_VAL;
          tally->acceptance.worst = std::max(tally->acceptance.worst, err / tol);
          if (!(err <= tol) && !tally->acceptance.failure) {
            tally->acceptance.failure = fmt::format(
                "trial {}: at position {} the verifier gave acceptance probability {:.9g} for "
                "drafted token {}, where {} (p = {:.6g}, q = {:.6g}) is {:.9g} (error {:.3g}, "
                "tolerance {:.3g}){}",
                trial, j + 1, a, d[j], RuleName(declared),
                static_cast<double>(law.targets[j].probs[ds]), qj[ds], want, err, tol,
                std::isnan(a) ? ": not written" : "");
          }
        }
      }
    }
    tally->trials += m;
  }
}

// One sub-test's look: its adjusted p-value and the look itself.
struct LawLook {
  std::string what;  // "position 2" or "accepted count"
  DistributionLook look;
  uint64_t samples = 0;
  int position = -1;  // 0-based target row, -1 for the count
};

// The three laws of a chain at the first `n` trials of a tally (prefix counts kept per look).
struct ChainLook {
  std::vector<LawLook> emitted, count, residual;  // count has one entry
};

// Whether a law is in force at all: the count law of p = q says "all accepted", a point mass
// the G-test cannot see, so it becomes the binomial of the rejections against a floor.
constexpr double kRejectionFloor = 1e-6;  // a sampler's own fp32 probabilities move beta this much

ChainLook EvaluateLaws(const ChainCase& c, const ChainLaw& law, const Tally& t,
                       const std::vector<std::size_t>& emitted_n,
                       const std::vector<std::size_t>& residual_n, std::size_t count_n) {
  ChainLook out;
  const std::size_t k = c.k();
  for (std::size_t j = 0; j <= k; ++j) {
    std::span<const int64_t> tokens(t.emitted[j].data(), emitted_n[j]);
    out.emitted.push_back({fmt::format("position {}", j + 1),
                           EvaluateDistributionLook(tokens, law.targets[j].probs, 3, {}),
                           tokens.size(), static_cast<int>(j)});
  }
  {
    std::span<const int64_t> counts(t.counts.data(), count_n);
    LawLook l{"accepted count", EvaluateDistributionLook(counts, law.accepted_count, 3, {}),
              counts.size()};
    // The cells are counts, not tokens: "n = 2 accepted", not "token 2".
    for (CellEvidence& e : l.look.evidence) {
      if (e.label.starts_with("token ")) e.label = "n = " + e.label.substr(6) + " accepted";
      e.token = -1;
    }
    const long double all = law.accepted_count.back();
    if (1 - all < kRejectionFloor) {
      // "Every draft accepted": the rejections against the floor (one-sided, as an interval).
      uint64_t rejected = 0;
      for (int64_t m : counts) rejected += m < static_cast<int64_t>(k);
      const double p = BinomialTwoSidedInterval(rejected, counts.size(), 0,
                                                static_cast<double>(k) * kRejectionFloor);
      l.look.p_value = std::min(1.0, p);
      l.look.worst = fmt::format(
          "binomial of the {} rejections against at most {:.0e} per "
          "position",
          rejected, kRejectionFloor);
    }
    out.count.push_back(std::move(l));
  }
  for (std::size_t j = 0; j < k; ++j) {
    std::span<const int64_t> tokens(t.residual[j].data(), residual_n[j]);
    out.residual.push_back({fmt::format("position {}", j + 1),
                            EvaluateDistributionLook(tokens, law.residual[j], 3, {}), tokens.size(),
                            static_cast<int>(j)});
  }
  return out;
}

// The smallest p-value of a law's sub-tests that have samples, and which one.
const LawLook* Worst(const std::vector<LawLook>& laws) {
  const LawLook* w = nullptr;
  for (const LawLook& l : laws) {
    if (l.samples == 0) continue;
    if (w == nullptr || l.look.p_value < w->look.p_value) w = &l;
  }
  return w;
}

// One run of a chain over its looks: the tally, and per law whether some look rejected it.
struct ChainRun {
  Tally tally;
  ChainLook last;
  bool rejected[3] = {false, false, false};  // VER-2, VER-3, VER-4
  int look = -1;                             // the first rejecting look
};

ChainRun RunChain(adapters::Sampler& sampler, const ChainCase& c, const ChainLaw& law,
                  uint64_t seed, uint64_t row_id, const std::vector<uint64_t>& looks,
                  const std::vector<double>& levels, double share, const AccuracyParams* accuracy) {
  ChainRun run;
  const DraftSampler drafts(c);
  for (std::size_t L = 0; L < looks.size(); ++L) {
    DrawTrials(sampler, c, law, drafts, seed, row_id, looks[L], accuracy, &run.tally);
    if (run.tally.exact_failure) return run;
    std::vector<std::size_t> en, rn;
    for (const auto& e : run.tally.emitted) en.push_back(e.size());
    for (const auto& r : run.tally.residual) rn.push_back(r.size());
    run.last = EvaluateLaws(c, law, run.tally, en, rn, run.tally.counts.size());
    const double level = levels[L] * share;
    const std::vector<LawLook>* laws[3] = {&run.last.emitted, &run.last.count, &run.last.residual};
    bool any = false;
    for (int i = 0; i < 3; ++i) {
      for (const LawLook& l : *laws[i]) {
        if (l.samples > 0 && l.look.p_value < level) run.rejected[i] = any = true;
      }
    }
    if (any) {
      run.look = static_cast<int>(L);
      return run;
    }
  }
  return run;
}

constexpr const char* kLawIds[3] = {"VER-2", "VER-3", "VER-4"};
constexpr const char* kLawNames[3] = {
    "the emitted-token law (each reached position follows "
    "p_j)",
    "the accepted-count law (the product of the acceptance "
    "rates)",
    "the residual law (a token after a rejection follows "
    "(p_j - q_j)+)"};

std::string DescribeChain(const ChainCase& c) {
  const RowCase& t = c.targets.front();
  std::string s = fmt::format("chain {}: {} V={} k={} target T={}", c.name, DTypeName(t.dtype),
                              c.vocab(), c.k(), t.temperature);
  if (t.top_k > 0) s += fmt::format(" top_k={}", t.top_k);
  if (!t.mask.empty()) s += " masked";
  return s;
}

TestResult Skeleton(const PlanItem& item, const ChainCase& c, const char* property) {
  TestResult r;
  r.property = property;
  r.dtype = item.dtype;
  r.family = c.name;
  r.cases = 1;
  r.worst_input = DescribeChain(c);
  r.worst_temperature = c.targets.front().temperature;
  return r;
}

void Fail(TestResult* r, std::string message, const ItemRun& run, const ChainCase& c) {
  r->status = Status::kFail;
  r->failure = results::Failure{std::move(message),
                                DescribeChain(c),
                                DescribeChain(c),
                                ReproductionCommand(run.sampler_arg, run.plan, run.item),
                                "",
                                ""};
}

std::string DescribeLawLook(const LawLook& l, const ChainCase& c) {
  const RowCase* row = l.position >= 0 ? &c.targets[static_cast<std::size_t>(l.position)] : nullptr;
  return fmt::format("{} ({} samples): p = {:.3g} by the {}{}{}", l.what, l.samples, l.look.p_value,
                     l.look.worst, l.look.evidence.empty() ? "" : "; ",
                     DescribeEvidence(l.look.evidence, row));
}

// VER-6's result over the tallies of a chain's runs.
TestResult AcceptanceResult(TestResult r, const ItemRun& ctx, const ChainCase& c,
                            std::initializer_list<const AcceptanceTally*> runs, uint64_t draws) {
  double worst = 0;
  const std::optional<std::string>* failure = nullptr;
  for (const AcceptanceTally* t : runs) {
    r.cases += t->checked;
    worst = std::max(worst, t->worst);
    if (failure == nullptr && t->failure) failure = &t->failure;
  }
  r.draws = draws;
  if (failure != nullptr) {
    Fail(&r, **failure, ctx, c);
  } else {
    r.note = fmt::format(
        "{} acceptance probabilities, each within its tolerance of {} (the largest error {:.3g} "
        "of its tolerance)",
        r.cases, RuleName(ctx.sampler.info().policies), worst);
  }
  return r;
}

// VER-DEV-1's measure: the empirical total-variation distance of `tokens` from `prob` over
// `cells` outcomes, with what sampling noise alone gives in expectation,
// sum_x sqrt(2 p_x (1 - p_x) / (pi N)) / 2 (the mean absolute deviation of a binomial share).
struct Distance {
  double tv = 0;
  double noise = 0;
  std::size_t samples = 0;
};
template <typename Prob>
Distance DistanceFrom(const std::vector<int64_t>& tokens, std::size_t cells, Prob&& prob) {
  Distance d;
  d.samples = tokens.size();
  if (tokens.empty()) return d;
  std::vector<double> n(cells, 0.0);
  for (const int64_t t : tokens) n[static_cast<std::size_t>(t)] += 1;
  const double total = static_cast<double>(tokens.size());
  for (std::size_t x = 0; x < cells; ++x) {
    const double px = prob(x);
    d.tv += std::abs(n[x] / total - px);
    d.noise += std::sqrt(2 * px * (1 - px) / (std::numbers::pi * total));
  }
  d.tv /= 2;
  d.noise /= 2;
  return d;
}

// VER-2..VER-4 under a declared lossy scheme (VER-DEV-1): a Warning with the measured distance
// from exact speculative sampling's law (the largest over the sub-tests with samples), never a
// Pass.
TestResult LossyLaw(TestResult r, int i, const ItemRun& ctx, const ChainCase& c,
                    const ChainLaw& law, const Tally& tally) {
  const std::size_t v = c.vocab(), k = c.k();
  Distance worst;
  std::string where;
  auto consider = [&](const Distance& d, std::string what) {
    // The sub-test whose distance stands out most from its noise.
    if (d.samples > 0 && (worst.samples == 0 || d.tv - d.noise > worst.tv - worst.noise)) {
      worst = d;
      where = std::move(what);
    }
  };
  if (i == 0) {
    for (std::size_t j = 0; j <= k; ++j) {
      consider(
          DistanceFrom(tally.emitted[j], v,
                       [&](std::size_t x) { return static_cast<double>(law.targets[j].probs[x]); }),
          fmt::format("position {}", j + 1));
    }
  } else if (i == 1) {
    consider(
        DistanceFrom(tally.counts, k + 1,
                     [&](std::size_t m) { return static_cast<double>(law.accepted_count[m]); }),
        "the accepted count");
  } else {
    for (std::size_t j = 0; j < k; ++j) {
      if (std::ranges::all_of(law.residual[j], [](long double x) { return x == 0; })) continue;
      consider(DistanceFrom(tally.residual[j], v,
                            [&](std::size_t x) { return static_cast<double>(law.residual[j][x]); }),
               fmt::format("position {} after a rejection", j + 1));
    }
  }
  r.draws = tally.trials;
  const Policies& declared = ctx.sampler.info().policies;
  const std::string scheme =
      declared.verify_scheme == VerifyScheme::kTypical
          ? fmt::format("the declared lossy verify scheme typical (threshold {}, alpha {})",
                        declared.verify_threshold, declared.verify_alpha)
          : fmt::format("the declared lossy verify scheme {} (lenience {})",
                        adapters::NameOrThrow(declared.verify_scheme), declared.verify_threshold);
  if (worst.samples == 0) {
    r.status = Status::kNotSupported;
    r.note = scheme + ": no samples to measure";
    return r;
  }
  r.status = Status::kWarning;
  r.worst_error = worst.tv;
  r.note = fmt::format(
      "{}: {}, exact speculative sampling's, does not hold by design; measured total-variation "
      "distance {:.3g} from it at {} ({} samples; sampling noise alone gives about {:.2g})",
      scheme, kLawNames[i], worst.tv, where, worst.samples, worst.noise);
  return r;
}

// The chains' results of one chain: VER-1..VER-4, and VER-6 where declared.
std::vector<TestResult> RunOneChain(const ItemRun& ctx, const ChainCase& c, std::size_t index,
                                    std::size_t subtests) {
  const double share = 1.0 / static_cast<double>(subtests);
  const PlanItem& item = ctx.item;
  TestResult support = Skeleton(item, c, "VER-1");
  TestResult laws[3] = {Skeleton(item, c, kLawIds[0]), Skeleton(item, c, kLawIds[1]),
                        Skeleton(item, c, kLawIds[2])};
  const bool with_acceptance = ctx.sampler.info().Has(SAMPCERT_CAP_VERIFY_ACCEPTANCE);
  std::vector<TestResult> exact_laws;  // VER-6, decided with VER-1's trials
  if (with_acceptance) exact_laws.push_back(Skeleton(item, c, "VER-6"));
  auto law = LawOf(c, ctx.sampler.info().policies);
  if (!law.ok()) {
    // Not the sampler's failure: the plan's chain has no exact law under the declaration.
    std::vector<TestResult> out{support};
    for (TestResult& l : laws) out.push_back(l);
    for (TestResult& l : exact_laws) out.push_back(l);
    for (TestResult& r : out) {
      r.status = Status::kInconclusive;
      r.note =
          "the planned chain has no exact law under this declaration (a limit of sampcert's "
          "plan, not the sampler's failure): " +
          law.error().message;
    }
    return out;
  }
  const uint64_t row_id = 1000 + index;
  // The chain's own trials (the item's draws are the largest chain's; --max-draws caps both),
  // with the plan's rule for looks and the re-run.
  const uint64_t need = ChainTrials(ctx.plan.profile, *law, item.level, subtests);
  const uint64_t trials = std::min(item.draws, need);
  const std::vector<uint64_t> looks = LookDraws(trials), rerun_looks = LookDraws(4 * trials);
  const std::vector<double> levels = LookLevels(trials, item.level),
                            rerun_levels = LookLevels(4 * trials, item.rerun_level);
  const AccuracyParams* accuracy =
      with_acceptance ? &AccuracyFor(ctx.sampler.info().policies.accuracy) : nullptr;
  auto unreached = [&](const std::string& why) {
    std::vector<TestResult> out{support};
    for (TestResult& l : laws) {
      l.status = Status::kInconclusive;
      l.note = fmt::format("not reached on chain {}: {}", c.name, why);
      out.push_back(l);
    }
    for (TestResult& l : exact_laws) {
      l.status = Status::kInconclusive;
      l.note = fmt::format("not reached on chain {}: {}", c.name, why);
      out.push_back(l);
    }
    return out;
  };
  if (ctx.sampler.info().policies.verify_scheme != VerifyScheme::kExact) {
    // VER-DEV-1: the planned trials in one run, no looks (nothing is decided statistically).
    Tally tally;
    DrawTrials(ctx.sampler, c, *law, DraftSampler(c), item.seed, row_id, trials, accuracy, &tally);
    support.cases = support.draws = tally.trials;
    if (tally.exact_failure) {
      Fail(&support, *tally.exact_failure, ctx, c);
      return unreached("VER-1 failed first");
    }
    support.note =
        fmt::format("{} trials, every emitted token in its target's support", support.cases);
    std::vector<TestResult> out{support};
    for (int i = 0; i < 3; ++i) out.push_back(LossyLaw(laws[i], i, ctx, c, *law, tally));
    for (TestResult& r : exact_laws) {
      out.push_back(AcceptanceResult(r, ctx, c, {&tally.acceptance}, tally.trials));
    }
    return out;
  }
  ChainRun first =
      RunChain(ctx.sampler, c, *law, item.seed, row_id, looks, levels, share, accuracy);
  support.cases = first.tally.trials;
  support.draws = first.tally.trials;
  if (first.tally.exact_failure) {
    Fail(&support, *first.tally.exact_failure, ctx, c);
    return unreached("VER-1 failed first");
  }
  ChainRun second;
  const bool rerun = first.look >= 0;
  if (rerun) {
    second = RunChain(ctx.sampler, c, *law, Mix(item.seed, 1), row_id, rerun_looks, rerun_levels,
                      share, accuracy);
    support.cases += second.tally.trials;
    support.draws += second.tally.trials;
    if (second.tally.exact_failure) {
      Fail(&support, *second.tally.exact_failure, ctx, c);
      return unreached("VER-1 failed first (in the re-run)");
    }
  }
  support.note =
      fmt::format("{} trials, every emitted token in its target's support", support.cases);
  const ChainRun& stated = rerun ? second : first;
  const double stated_level = share * (rerun ? rerun_levels.back() : levels.back());
  std::vector<TestResult> out{support};
  for (int i = 0; i < 3; ++i) {
    TestResult& r = laws[i];
    const std::vector<LawLook>* law_looks[2] = {nullptr, nullptr};
    auto pick = [&](const ChainLook& cl) -> const std::vector<LawLook>& {
      return i == 0 ? cl.emitted : i == 1 ? cl.count : cl.residual;
    };
    law_looks[0] = &pick(first.last);
    law_looks[1] = rerun ? &pick(second.last) : nullptr;
    const LawLook* worst = Worst(*(rerun ? law_looks[1] : law_looks[0]));
    r.draws = support.draws;
    r.level = stated_level;
    // VER-4's exact part: a token after a rejection where the residual has no mass.
    const std::optional<std::string>& outside =
        first.tally.residual_failure ? first.tally.residual_failure : second.tally.residual_failure;
    if (i == 2 && outside) {
      Fail(&r, *outside, ctx, c);
      out.push_back(r);
      continue;
    }
    if (worst == nullptr) {
      r.status = Status::kNotSupported;
      // A rejection that happens anyway on p = q is VER-3's (the count law) business.
      r.note = i == 2 ? "no token was emitted after a rejection: nothing to test" : "no samples";
      out.push_back(r);
      continue;
    }
    r.p_value = worst->look.p_value;
    r.observed = worst->look.g.observed;
    r.expected = worst->look.g.expected;
    if (rerun && first.rejected[i] && second.rejected[i]) {
      const LawLook* w1 = Worst(*law_looks[0]);
      Fail(&r,
           fmt::format("{} rejected in the first run (look {}: {}) and in its re-run with 4x the "
                       "trials (look {}: {})",
                       kLawNames[i], first.look + 1, DescribeLawLook(*w1, c), second.look + 1,
                       DescribeLawLook(*worst, c)),
           ctx, c);
      out.push_back(r);
      continue;
    }
    // Power: the detectable TV of the G-test at the deciding run's last look, on the cells of
    // the sub-test the plan powers (the first position, the count; VER-4's first position that
    // has samples): later positions and residuals get the trials that reach them.
    const LawLook& powered = *std::find_if(pick(stated.last).begin(), pick(stated.last).end(),
                                           [](const LawLook& l) { return l.samples > 0; });
    const double cells = static_cast<double>(powered.look.g.cells);
    const bool binomial = i == 1 && powered.look.worst.starts_with("binomial");
    const double tv = cells >= 2 && !binomial
                          ? DetectableTv(cells - 1, stated_level / 3, powered.samples)
                          : std::numeric_limits<double>::quiet_NaN();
    r.power_tv = tv;
    r.note = fmt::format("{}smallest p = {:.3g} ({})",
                         rerun && first.rejected[i]
                             ? "the first run rejected, its re-run with 4x the trials passed; "
                             : "",
                         worst->look.p_value, worst->what);
    if (std::isfinite(tv)) {
      r.note += fmt::format("; detects TV {:.3g} at {} ({} samples) w.p. 0.9", tv, powered.what,
                            powered.samples);
    }
    if (trials < need && i < 2) {
      r.status = Status::kInconclusive;
      r.note += fmt::format("; capped at {} trials, its power needs {}", trials, need);
    }
    // A run stops at the first look where any law rejects: a law it cut short has not had its
    // trials, so its pass says less than the plan promised.
    const std::size_t planned_looks = (rerun ? rerun_looks : looks).size();
    if (stated.look >= 0 && static_cast<std::size_t>(stated.look) + 1 < planned_looks) {
      r.status = Status::kInconclusive;
      r.note += fmt::format("; cut short at look {} of {} by another law's rejection",
                            stated.look + 1, planned_looks);
    }
    if (i == 2 && stated.tally.off_residual > 0) {
      r.note += fmt::format("; {} rejection token(s) where p = q within {:.0e} left out",
                            stated.tally.off_residual, static_cast<double>(kResidualSlack));
    }
    out.push_back(r);
  }
  // VER-6 (exact): every decided position's acceptance probability, over both runs.
  for (TestResult& r : exact_laws) {
    out.push_back(AcceptanceResult(r, ctx, c, {&first.tally.acceptance, &second.tally.acceptance},
                                   support.draws));
  }
  return out;
}

// VER-5: the same chains give the same result in one batch, alone, and in reverse order in a
// batch with other chains' trials interleaved, and twice. A chain whose VER-1 failed (a valid
// chain that errors, say) is left out: that failure is its cause, not a second one.
TestResult RunDeterminism(const ItemRun& ctx, const std::vector<ChainCase>& chains,
                          const std::set<std::string>& failed) {
  TestResult r;
  r.property = "VER-5";
  r.dtype = ctx.item.dtype;
  r.family = "batch_and_order";
  constexpr uint64_t kTrials = 16;
  // Every chain is its own vocabulary; a batch is of one chain's trials, with a duplicate.
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    const ChainCase& c = chains[i];
    if (failed.contains(c.name)) {
      ++skipped;
      continue;
    }
    const ChainViews views(c);
    const DraftSampler drafts(c);
    std::vector<int64_t> drafted(kTrials * c.k());
    adapters::ChainBatch batch = ChainViews::Batch(c);
    for (uint64_t t = 0; t < kTrials; ++t) {
      int64_t* d = drafted.data() + t * c.k();
      for (std::size_t j = 0; j < c.k(); ++j) {
        d[j] = drafts.Draft(Mix(ctx.item.seed, 3), 2000 + i, t, j);
      }
      batch.chains.push_back(views.Make(c, d, 2000 + i, t));
    }
    batch.chains.push_back(batch.chains.front());  // a duplicate, last
    auto all = ctx.sampler.Verify(batch, ctx.item.seed);
    adapters::ChainBatch reversed = batch;
    std::reverse(reversed.chains.begin(), reversed.chains.end());
    auto back = ctx.sampler.Verify(reversed, ctx.item.seed);
    auto again = ctx.sampler.Verify(batch, ctx.item.seed);
    ++r.cases;
    if (!all.ok() || !back.ok() || !again.ok()) {
      const Error& e = !all.ok() ? all.error() : !back.ok() ? back.error() : again.error();
      Fail(&r,
           fmt::format("verify() of valid chains failed: {}: {}", ErrorCodeName(e.code), e.message),
           ctx, c);
      return r;
    }
    const std::size_t n = batch.chains.size();
    for (std::size_t t = 0; t < n; ++t) {
      auto same = [&](const adapters::Verified& v, std::size_t at) {
        return v.accepted[at] == all->accepted[t] &&
               std::ranges::equal(v.Emitted(at), all->Emitted(t));
      };
      std::optional<std::string> why;
      if (!same(*again, t)) {
        why = "the same call made twice gave different results";
      } else if (!same(*back, n - 1 - t)) {
        why = "the same chains in reverse order gave different results";
      } else if (t == n - 1 && !same(*all, 0)) {
        why = "a duplicated chain (the same inputs, seed, row id and draw) gave a different result";
      } else if (t == 0 || t == 5) {
        adapters::ChainBatch alone{batch.dtype, batch.vocab, {batch.chains[t]}, batch.draft_dtype};
        auto one = ctx.sampler.Verify(alone, ctx.item.seed);
        if (!one.ok() || !same(*one, 0)) {
          why = "the chain verified alone gave a different result than in its batch";
        }
      }
      if (why) {
        Fail(&r,
             fmt::format("{} (trial {} of chain {}: {} accepted)", *why, t, c.name,
                         all->accepted[t]),
             ctx, c);
        return r;
      }
    }
  }
  r.note = fmt::format(
      "{} chains x {} trials: the same in a batch, alone, reversed, duplicated "
      "and called twice",
      chains.size() - skipped, kTrials + 1);
  if (skipped > 0) {
    r.note += fmt::format("; not reached on {} chain(s): their VER-1 failed first", skipped);
    if (skipped == chains.size()) r.status = Status::kInconclusive;
  }
  return r;
}

// VER-7 (VER-DET-1's key): a chain's randomness is keyed by (seed, row id, draw), so two row
// ids at one seed and draw give independent outputs. One chain, `row_ids_V64_k2`: flat targets
// (V = 64, T = 1) and drafts with half their mass on the drafted token, so position 1 rejects with
// probability 0.97 and the residual is uniform over the other 63 tokens; the drafts are fixed,
// so the inputs of every call are identical but for the row id. Each chain is verified alone (a
// batch position is no key either), at draw kRowIdDraw, under kRowIdPairs pairs of row ids of
// each kind: adjacent (r, r + 1), 2^32 apart (a row id kept in 32 bits) and 2^63 apart (63
// bits). Two independent outputs are identical with the chain's collision probability c
// (CollisionProbability, 0.0149); a kind fails when at least kRowIdCollisions of its pairs are,
// which a correct verifier does with probability P(Binomial(32, c) >= 16) < 1e-20 per kind,
// and a verifier that ignores the row id (or the bits a kind differs in) does in every pair.
constexpr std::size_t kRowIdPairs = 32;
constexpr std::size_t kRowIdCollisions = 16;
constexpr uint64_t kRowIdDraw = 5;
constexpr uint64_t kRowIdBase = 3000;

ChainCase RowIdChain(DType dtype) {
  return MakeChain(
      "row_ids_V64_k2", dtype, 64, 2, 1.0f, 27,
      [](RowCase& row, std::size_t) {
        for (std::size_t x = 0; x < row.vocab(); ++x) row.SetLogit(x, 0.0f);
      },
      [](const RowCase& t, std::size_t j) {
        std::vector<double> w(t.vocab(), 1.0);
        w[7 * j + 5] += static_cast<double>(t.vocab());
        return Normalized(std::move(w));
      });
}

// The drafted tokens of RowIdChain: each position's heavy token (q = 0.51 against p = 1/64).
std::vector<int64_t> RowIdDrafts(const ChainCase& c) {
  std::vector<int64_t> d(c.k());
  for (std::size_t j = 0; j < c.k(); ++j) d[j] = static_cast<int64_t>(7 * j + 5);
  return d;
}

// The probability that two independent verifications of chain c with drafts d give the same
// output (the accepted count and the emitted tokens): sum over outputs of P(output)^2.
long double CollisionProbability(const ChainCase& c, const ChainLaw& law,
                                 std::span<const int64_t> d) {
  const std::size_t v = c.vocab(), k = c.k();
  auto squares = [](const auto& dist) {
    long double s = 0;
    for (const auto x : dist) s += static_cast<long double>(x) * static_cast<long double>(x);
    return s;
  };
  long double reach = 1, total = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const long double a = AcceptanceProbability(
        law.targets[j].probs, std::span<const double>(c.q).subspan(j * v, v), d[j]);
    total += (reach * (1 - a)) * (reach * (1 - a)) * squares(law.residual[j]);
    reach *= a;
  }
  return total + reach * reach * squares(law.targets[k].probs);
}

// P(Binomial(n, c) >= at_least), summed exactly.
long double BinomialUpperTail(std::size_t n, std::size_t at_least, long double c) {
  long double tail = 0;
  for (std::size_t i = at_least; i <= n; ++i) {
    const auto li = static_cast<long double>(i), ln = static_cast<long double>(n);
    tail += std::exp(std::lgamma(ln + 1) - std::lgamma(li + 1) - std::lgamma(ln - li + 1) +
                     li * std::log(c) + (ln - li) * std::log1p(-c));
  }
  return tail;
}

TestResult RunRowIds(const ItemRun& ctx) {
  TestResult r;
  r.property = "VER-7";
  r.dtype = ctx.item.dtype;
  r.family = "row_id_pairs";
  const ChainCase c = RowIdChain(DTypeFromName(ctx.item.dtype));
  r.worst_input = DescribeChain(c);
  r.worst_temperature = 1;
  auto law = LawOf(c, ctx.sampler.info().policies);
  if (!law.ok()) {
    r.status = Status::kInconclusive;
    r.note = fmt::format("no exact law for {}: {}", c.name, law.error().message);
    return r;
  }
  const std::vector<int64_t> d = RowIdDrafts(c);
  const long double collision = CollisionProbability(c, *law, d);
  const long double false_alarm = BinomialUpperTail(kRowIdPairs, kRowIdCollisions, collision);
  const ChainViews views(c);
  struct Kind {
    const char* name;
    uint64_t first_step, other;  // pair i: (base + first_step i, that + other)
  };
  const Kind kinds[] = {{"adjacent row ids (r, r + 1)", 2, 1},
                        {"row ids 2^32 apart", 1, uint64_t{1} << 32},
                        {"row ids 2^63 apart", 1, uint64_t{1} << 63}};
  auto verify = [&](uint64_t row_id) -> Expected<adapters::Verified> {
    adapters::ChainBatch one = ChainViews::Batch(c);
    one.chains.push_back(views.Make(c, d.data(), row_id, kRowIdDraw));
    return ctx.sampler.Verify(one, ctx.item.seed);
  };
  std::string counts;
  std::size_t most = 0;
  for (const Kind& kind : kinds) {
    std::size_t same = 0;
    uint64_t first_same = 0;
    for (std::size_t i = 0; i < kRowIdPairs; ++i) {
      const uint64_t a = kRowIdBase + kind.first_step * i, b = a + kind.other;
      auto va = verify(a);
      auto vb = verify(b);
      ++r.cases;
      if (!va.ok() || !vb.ok()) {
        const Error& e = !va.ok() ? va.error() : vb.error();
        Fail(&r,
             fmt::format("verify() of a valid chain failed: {}: {}", ErrorCodeName(e.code),
                         e.message),
             ctx, c);
        return r;
      }
      if (va->accepted[0] == vb->accepted[0] &&
          std::ranges::equal(va->Emitted(0), vb->Emitted(0))) {
        if (same++ == 0) first_same = a;
      }
    }
    counts += fmt::format("{}{} {}/{}", counts.empty() ? "" : ", ", kind.name, same, kRowIdPairs);
    most = std::max(most, same);
    if (same >= kRowIdCollisions) {
      Fail(&r,
           fmt::format("VER-DET-1: the chain {} with identical inputs, seed and draw {} gave the "
                       "same output under {} of {} pairs of {} (first: row ids {} and {}); "
                       "independent outputs coincide with probability {:.4f} each, {} or more "
                       "of {} with probability {:.1e}: its randomness ignores the row id",
                       c.name, kRowIdDraw, same, kRowIdPairs, kind.name, first_same,
                       first_same + kind.other, static_cast<double>(collision), kRowIdCollisions,
                       kRowIdPairs, static_cast<double>(false_alarm)),
           ctx, c);
      return r;
    }
  }
  r.worst_error = static_cast<double>(most) / kRowIdCollisions;  // 1 fails
  r.note = fmt::format(
      "{} at draw {}, each chain alone, identical outputs in {} (each pair coincides with "
      "probability {:.4f}; a kind fails at {} of {}, by chance with probability {:.1e})",
      c.name, kRowIdDraw, counts, static_cast<double>(collision), kRowIdCollisions, kRowIdPairs,
      static_cast<double>(false_alarm));
  return r;
}

// VER-INV-1 with the drafts as logits: a drafted token outside its draft row's kept set (q = 0
// there), second in a batch after a valid chain, is kInvalidDraft naming chain 1. Empty when
// it is, else what the verifier did.
std::string InvalidLogitsDraft(const ItemRun& ctx, const ChainCase& c) {
  const ChainViews views(c);
  const DraftSampler drafts(c);
  std::vector<int64_t> valid, outside;
  for (std::size_t j = 0; j < c.k(); ++j) valid.push_back(drafts.Draft(ctx.item.seed, 3001, 0, j));
  outside = valid;
  const std::size_t v = c.vocab();
  for (std::size_t x = 0; x < v; ++x) {
    if (c.q[x] == 0) {
      outside[0] = static_cast<int64_t>(x);
      break;
    }
  }
  adapters::ChainBatch batch = ChainViews::Batch(c);
  batch.chains = {views.Make(c, valid.data(), 3001, 0), views.Make(c, outside.data(), 3001, 1)};
  auto got = ctx.sampler.Verify(batch, ctx.item.seed);
  if (got.ok()) return "returned tokens";
  if (got.error().code != ErrorCode::kInvalidDraft) {
    return fmt::format("returned {} ({})", ErrorCodeName(got.error().code), got.error().message);
  }
  if (got.error().row != 1) {
    return fmt::format("named chain {}, not chain 1 ({})", got.error().row, got.error().message);
  }
  return ctx.sampler.last_error_problem().empty()
             ? ""
             : "reported its error badly: " + ctx.sampler.last_error_problem();
}

// VER-INV-1: invalid chains are errors with the right code, naming the chain. `logits`: a
// draft-logits chain whose first draft row drops some token, or nullptr.
TestResult RunInvalid(const ItemRun& ctx, const ChainCase& c, const ChainCase* logits) {
  TestResult r;
  r.property = "VER-INV-1";
  r.dtype = ctx.item.dtype;
  r.family = "invalid";
  std::vector<RowView> views;
  for (const RowCase& t : c.targets) views.push_back(t.view());
  const std::size_t v = c.vocab(), k = c.k();
  const DraftSampler drafts(c);
  std::vector<int64_t> valid_drafts;
  for (std::size_t j = 0; j < k; ++j)
    valid_drafts.push_back(drafts.Draft(ctx.item.seed, 3000, 0, j));
  const adapters::Chain valid{views.data(), k, c.q.data(), valid_drafts.data(), 3000, 0};
  // Each case edits its own copies of the chain's draft rows, drafted tokens and target rows.
  struct Case {
    std::string what;
    ErrorCode want;
    std::vector<double> q;
    std::vector<int64_t> d;
    std::vector<RowCase> targets;
    std::size_t k;
  };
  std::vector<Case> cases;
  auto add = [&](std::string what, ErrorCode want, auto edit) {
    Case cs{std::move(what), want, c.q, valid_drafts, c.targets, k};
    edit(cs);
    cases.push_back(std::move(cs));
  };
  add("a drafted token with draft probability 0", ErrorCode::kInvalidDraft, [&](Case& cs) {
    const auto d = static_cast<std::size_t>(cs.d[0]);
    cs.q[(d + 1) % v] += cs.q[d];
    cs.q[d] = 0;
  });
  add("a draft row summing to 0.5", ErrorCode::kInvalidDraft, [&](Case& cs) {
    for (std::size_t x = 0; x < v; ++x) cs.q[x] *= 0.5;
  });
  add("a NaN draft probability", ErrorCode::kInvalidDraft,
      [&](Case& cs) { cs.q[(static_cast<std::size_t>(cs.d[0]) + 1) % v] = std::nan(""); });
  add("a drafted token id equal to V", ErrorCode::kInvalidDraft,
      [&](Case& cs) { cs.d[0] = static_cast<int64_t>(v); });
  add("no drafted tokens (k = 0)", ErrorCode::kInvalidArgument, [&](Case& cs) { cs.k = 0; });
  add("a target row with temperature -1", ErrorCode::kInvalidTemperature,
      [&](Case& cs) { cs.targets[1].temperature = -1; });
  for (Case& cs : cases) {
    ++r.cases;
    std::vector<RowView> case_views;
    for (const RowCase& t : cs.targets) case_views.push_back(t.view());
    const adapters::Chain chain{case_views.data(), cs.k, cs.q.data(), cs.d.data(), 3000, 0};
    // The invalid chain second in a batch, after a valid one: the call fails, naming chain 1.
    adapters::ChainBatch batch{c.targets.front().dtype, v, {valid, chain}};
    auto got = ctx.sampler.Verify(batch, ctx.item.seed);
    std::string problem;
    if (got.ok()) {
      problem = "returned tokens";
    } else if (got.error().code != cs.want) {
      problem =
          fmt::format("returned {} ({})", ErrorCodeName(got.error().code), got.error().message);
    } else if (got.error().row != 1) {
      problem =
          fmt::format("named chain {}, not chain 1 ({})", got.error().row, got.error().message);
    } else if (!ctx.sampler.last_error_problem().empty()) {
      problem = "reported its error badly: " + ctx.sampler.last_error_problem();
    }
    if (!problem.empty()) {
      Fail(&r,
           fmt::format("{}: expected {} naming chain 1 of the batch, but verify() {}", cs.what,
                       ErrorCodeName(cs.want), problem),
           ctx, c);
      return r;
    }
  }
  if (logits != nullptr) {
    ++r.cases;
    if (std::string problem = InvalidLogitsDraft(ctx, *logits); !problem.empty()) {
      Fail(&r,
           fmt::format("a drafted token outside its draft row's kept set (draft logits, chain "
                       "{}): expected {} naming chain 1 of the batch, but verify() {}",
                       logits->name, ErrorCodeName(ErrorCode::kInvalidDraft), problem),
           ctx, *logits);
      return r;
    }
  }
  r.note = fmt::format("{} invalid chains, each the error it should be", r.cases);
  return r;
}

}  // namespace

bool VerifyApplies(const adapters::SamplerInfo& info) { return info.Has(SAMPCERT_CAP_VERIFY); }

void PlanVerify(const PlanContext& ctx, PlanItem* item) {
  const std::vector<ChainCase> chains =
      VerifyChains(DTypeFromName(item->dtype), ctx.info.capabilities, ctx.info.policies);
  const std::size_t subtests = AllSubtests(chains);
  item->subtests = static_cast<int>(subtests);
  item->required_draws = 4096;
  // The draw budget (STAT-4b): a trial of a chain costs about k + 1 target rows of V tokens; the
  // largest chain caps every chain's trials, like a planned row of that many tokens.
  if (const double cost = DeclaredDrawCostNsPerToken(ctx.info); cost > 0) {
    double tokens = 0;
    for (const ChainCase& c : chains) {
      tokens = std::max(tokens, static_cast<double>(c.vocab() * (c.k() + 1)));
    }
    const double fit = std::floor(ctx.profile.draw_time_target_s * 1e9 / (cost * tokens));
    item->draw_cap = fit < 1 ? 1 : static_cast<uint64_t>(std::min(fit, 1e18));
  }
  for (const ChainCase& c : chains) {
    if (auto law = LawOf(c, ctx.info.policies); law.ok()) {
      item->required_draws =
          std::max(item->required_draws, ChainTrials(ctx.profile, *law, item->level, subtests));
    }
  }
}

ResultKeys VerifyKeys(const Plan&, const PlanItem& item, const adapters::SamplerInfo& info,
                      int64_t) {
  ResultKeys keys;
  for (const ChainCase& c :
       VerifyChains(DTypeFromName(item.dtype), info.capabilities, info.policies)) {
    for (const char* p : {"VER-1", "VER-2", "VER-3", "VER-4"}) keys.emplace_back(p, c.name);
    if (info.Has(SAMPCERT_CAP_VERIFY_ACCEPTANCE)) keys.emplace_back("VER-6", c.name);
  }
  keys.emplace_back("VER-5", "batch_and_order");
  keys.emplace_back("VER-7", "row_id_pairs");
  keys.emplace_back("VER-INV-1", "invalid");
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<TestResult> RunVerify(const ItemRun& ctx) {
  const std::vector<ChainCase> chains = VerifyChains(
      DTypeFromName(ctx.item.dtype), ctx.sampler.info().capabilities, ctx.sampler.info().policies);
  const std::size_t subtests = AllSubtests(chains);
  std::vector<TestResult> out;
  std::set<std::string> failed;
  for (std::size_t i = 0; i < chains.size(); ++i) {
    for (TestResult& r : RunOneChain(ctx, chains[i], i, subtests)) {
      if (r.property == "VER-1" && r.status == Status::kFail) failed.insert(r.family);
      out.push_back(std::move(r));
    }
  }
  out.push_back(RunDeterminism(ctx, chains, failed));
  out.push_back(RunRowIds(ctx));
  // The draft-logits chain for VER-INV-1: one whose first draft row drops a token.
  const ChainCase* logits = nullptr;
  for (const ChainCase& c : chains) {
    if (c.logits() && c.draft_problem.empty() &&
        std::find(c.q.begin(), c.q.begin() + static_cast<std::ptrdiff_t>(c.vocab()), 0.0) !=
            c.q.begin() + static_cast<std::ptrdiff_t>(c.vocab())) {
      logits = &c;
      break;
    }
  }
  out.push_back(RunInvalid(ctx, chains.front(), logits));
  return out;
}

TestResult RunVerifyRowIds(const ItemRun& ctx) { return RunRowIds(ctx); }

RowIdBound VerifyRowIdBound(DType dtype, const Policies& policies) {
  const ChainCase c = RowIdChain(dtype);
  auto law = LawOf(c, policies);
  if (!law.ok()) return {1, 1};
  const long double collision = CollisionProbability(c, *law, RowIdDrafts(c));
  return {static_cast<double>(collision),
          static_cast<double>(BinomialUpperTail(kRowIdPairs, kRowIdCollisions, collision))};
}

std::vector<std::string> VerifyChainNames(DType dtype, uint32_t capabilities,
                                          const Policies& policies) {
  std::vector<std::string> names;
  for (const ChainCase& c : VerifyChains(dtype, capabilities, policies)) names.push_back(c.name);
  return names;
}

}  // namespace sampcert::properties
