#include "properties/coverage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "properties/infinity.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// The dtype's own extremes, exactly (f16: 2^-24, 2^-14, 65504; bf16: 2^-133, 2^-126, its max).
float MinSubnormal(DType d) {
  return d == DType::kF16    ? std::ldexp(1.0f, -24)
         : d == DType::kBF16 ? std::ldexp(1.0f, -133)
                             : std::numeric_limits<float>::denorm_min();
}
float MinNormal(DType d) {
  return d == DType::kF16 ? std::ldexp(1.0f, -14) : std::numeric_limits<float>::min();
}
float MaxNormal(DType d) {
  return d == DType::kF16    ? 65504.0f
         : d == DType::kBF16 ? 3.38953139e38f
                             : std::numeric_limits<float>::max();
}
float Below(float x) { return std::nextafter(x, -kInf); }
float Above(float x) { return std::nextafter(x, kInf); }

// ---- Vocabulary ----
template <std::size_t V>
void SetVocab(const RealizeInput& in, RowCase* r) {
  r->dtype = in.dtype;
  if (in.dtype == DType::kF32) {
    r->bits32.assign(V, 0);
  } else {
    r->bits16.assign(V, 0);
  }
}

// ---- Row shapes (every logit set; the special logit, the mask's NaN, come later) ----
void Flat(const RealizeInput&, RowCase* r) {
  for (std::size_t i = 0; i < r->vocab(); ++i) r->SetLogit(i, 1.5f);
}
void Peaked(const RealizeInput& in, RowCase* r) {
  std::mt19937_64 rng(in.seed);
  for (std::size_t i = 0; i < r->vocab(); ++i) {
    r->SetLogit(i, static_cast<float>(PortableNormal(rng)));
  }
  r->SetLogit(r->vocab() / 2, 12.0f);
}
void Zipf(const RealizeInput&, RowCase* r) {
  // p_i proportional to 1 / (i + 1)^1.1: logit -1.1 log(i + 1).
  for (std::size_t i = 0; i < r->vocab(); ++i) {
    r->SetLogit(i, static_cast<float>(-1.1 * PortableLog(static_cast<double>(i + 1))));
  }
}
void TwoLevel(const RealizeInput&, RowCase* r) {
  // Interleaved, so that a mask of the first tokens keeps both levels.
  for (std::size_t i = 0; i < r->vocab(); ++i) r->SetLogit(i, i % 2 == 0 ? 2.0f : -3.0f);
}
void HugeRange(const RealizeInput& in, RowCase* r) {
  std::mt19937_64 rng(in.seed);
  const float half = MaxNormal(in.dtype) / 2;
  for (std::size_t i = 0; i < r->vocab(); ++i) r->SetLogit(i, PortableUniform(rng, -half, half));
}
void Ties(const RealizeInput&, RowCase* r) {
  // Every value twice (0, 0, -1, -1, ...): ties at the top and at every odd cut.
  for (std::size_t i = 0; i < r->vocab(); ++i) r->SetLogit(i, -static_cast<float>(i / 2));
}
void MaskNarrower(const RealizeInput& in, RowCase* r) {
  // A padded vocabulary: an LLM-like body, the last V / 8 tokens (at least one) not allowed.
  std::mt19937_64 rng(in.seed);
  const std::size_t v = r->vocab();
  for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, static_cast<float>(2 * PortableNormal(rng)));
  r->mask.assign(v, 1);
  for (std::size_t i = v - std::max<std::size_t>(1, v / 8); i < v; ++i) r->mask[i] = 0;
}

// ---- The special logit, at token 0 (allowed under every shape's mask) ----
template <float (*F)(DType)>
void LogitOf(const RealizeInput& in, RowCase* r) {
  r->SetLogit(0, F(in.dtype));
}
float PosZero(DType) { return 0.0f; }
float NegZero(DType) { return -0.0f; }
float NegMaxNormal(DType d) { return -MaxNormal(d); }
float PosInf(DType) { return kInf; }
float NegInf(DType) { return -kInf; }
float Nan(DType) { return kNan; }
void Ordinary(const RealizeInput&, RowCase*) {}
void NanMasked(const RealizeInput&, RowCase* r) {
  r->SetLogit(0, kNan);
  if (r->mask.empty()) r->mask.assign(r->vocab(), 1);
  r->mask[0] = 0;
  // A narrower mask of V = 2 allowed token 0 alone: the last token is allowed instead.
  if (std::none_of(r->mask.begin(), r->mask.end(), [](uint8_t m) { return m != 0; })) {
    r->mask.back() = 1;
  }
}

// ---- Float parameters ----
template <float (*F)(DType)>
void TemperatureOf(const RealizeInput& in, RowCase* r) {
  r->temperature = F(in.dtype);
}
float FloatMinSubnormal(DType) { return std::numeric_limits<float>::denorm_min(); }
float FloatMinNormal(DType) { return std::numeric_limits<float>::min(); }
float FloatMax(DType) { return std::numeric_limits<float>::max(); }
float One(DType) { return 1.0f; }
float Tiny(DType) { return 1e-8f; }
float Huge(DType) { return 1e30f; }
float Half(DType) { return 0.5f; }
float BelowOne(DType) { return Below(1.0f); }
void ThresholdBelow(const RealizeInput& in, RowCase* r) {
  r->temperature = Below(in.policies->greedy_threshold);
}
void ThresholdAbove(const RealizeInput& in, RowCase* r) {
  r->temperature = Above(in.policies->greedy_threshold);
}

template <int64_t K, int64_t PerV>
void TopKOf(const RealizeInput&, RowCase* r) {
  r->top_k = K + PerV * static_cast<int64_t>(r->vocab());
}

template <float (*F)(DType)>
void TopPOf(const RealizeInput& in, RowCase* r) {
  r->top_p = F(in.dtype);
}
template <float (*F)(DType)>
void MinPOf(const RealizeInput& in, RowCase* r) {
  r->min_p = F(in.dtype);
}

// The row's probabilities where truncation sees them, in double, in decreasing order: the
// tempered softmax over the support (under truncation-first, or at T = 0, at T = 1; with +inf
// logits, uniform over them). Only to place top_p and min_p next to the row's own thresholds.
std::vector<double> SortedProbs(const RealizeInput& in, const RowCase& r) {
  const std::size_t v = r.vocab();
  std::vector<double> x;
  bool pos_inf = false;
  for (std::size_t i = 0; i < v; ++i) {
    const float f = r.Logit(i);
    if ((!r.mask.empty() && !r.mask[i]) || std::isnan(f) || f == -kInf) continue;
    pos_inf |= f == kInf;
    x.push_back(f);
  }
  if (x.empty()) return {};
  if (pos_inf) {
    const double n = static_cast<double>(std::count(x.begin(), x.end(), kInf));
    std::vector<double> p;
    for (double f : x) p.push_back(f == kInf ? 1 / n : 0);
    std::sort(p.rbegin(), p.rend());
    return p;
  }
  const bool at_one = in.policies->order == PipelineOrder::kTruncationFirst || !(r.temperature > 0);
  const double t = at_one ? 1.0 : r.temperature;
  const double m = *std::max_element(x.begin(), x.end());
  double z = 0;
  for (double& e : x) {
    const double a = (e - m) / t;
    e = a < -700 ? 0 : PortableExp(a);
    z += e;
  }
  for (double& e : x) e /= z;
  std::sort(x.rbegin(), x.rend());
  return x;
}
// top_p one float ulp either side of the mass of the two most probable tokens (the cut between
// the second and the third), kept in (0, 1].
template <bool kAbove>
void TopPAtCut(const RealizeInput& in, RowCase* r) {
  const std::vector<double> p = SortedProbs(in, *r);
  const double c = p.size() >= 2 ? p[0] + p[1] : 1.0;
  const float f = static_cast<float>(c);
  const float x = kAbove ? Above(f) : Below(f);
  r->top_p = std::clamp(x, std::numeric_limits<float>::denorm_min(), 1.0f);
}
// min_p one float ulp either side of the second most probable token's ratio to the first (its
// keep threshold p_2 >= min_p p_1), kept in [0, 1).
template <bool kAbove>
void MinPAtRatio(const RealizeInput& in, RowCase* r) {
  const std::vector<double> p = SortedProbs(in, *r);
  const double ratio = p.size() >= 2 && p[0] > 0 ? p[1] / p[0] : 0.0;
  const float f = static_cast<float>(ratio);
  const float x = kAbove ? Above(f) : Below(f);
  r->min_p = std::clamp(x, 0.0f, Below(1.0f));
}

constexpr ClassNeed kCap = ClassNeed::kCapability;
constexpr ClassNeed kBad = ClassNeed::kInvalid;

constexpr CoverageClass kDtypes[] = {
    {"f32", "one design per declared dtype", kCap, SAMPCERT_CAP_F32},
    {"f16", "one design per declared dtype", kCap, SAMPCERT_CAP_F16},
    {"bf16", "one design per declared dtype", kCap, SAMPCERT_CAP_BF16},
};

// The first class of every designed axis goes with every other class (coverage_test checks it):
// the construction always completes a row.
constexpr CoverageClass kVocabs[] = {
    {"64", "V = 64 (a multiple of 8, 32 and 64)", {}, 0, SetVocab<64>, 64},
    {"1", "V = 1", {}, 0, SetVocab<1>, 1},
    {"2", "V = 2", {}, 0, SetVocab<2>, 2},
    {"3", "V = 3 (prime)", {}, 0, SetVocab<3>, 3},
    {"8", "V = 8", {}, 0, SetVocab<8>, 8},
    {"31", "V = 31 (prime, no multiple of 8)", {}, 0, SetVocab<31>, 31},
    {"257", "V = 257 (prime, one past 256)", {}, 0, SetVocab<257>, 257},
    {"1024", "V = 1024", {}, 0, SetVocab<1024>, 1024},
    {"1025", "V = 1025 (one past 1024)", {}, 0, SetVocab<1025>, 1025},
    {"8191", "V = 8191 (prime, one below 8192)", {}, 0, SetVocab<8191>, 8191},
    {"8192", "V = 8192", {}, 0, SetVocab<8192>, 8192},
    {"262144", "V = 262144 (the largest)", {}, 0, SetVocab<262144>, 262144},
};

constexpr CoverageClass kShapes[] = {
    {"peaked", "normal(0, 1) logits, one at 12 (token V/2)", {}, 0, Peaked},
    {"flat", "every logit 1.5", {}, 0, Flat},
    {"zipf", "logit -1.1 log(i + 1): p_i proportional to (i + 1)^-1.1", {}, 0, Zipf},
    {"two_level", "logits 2 and -3, alternating", {}, 0, TwoLevel},
    {"huge_range", "uniform in +-half the dtype's largest normal", {}, 0, HugeRange},
    {"ties", "0, 0, -1, -1, ...: a tie at the top and at every odd cut", {}, 0, Ties},
    {"mask_narrower",
     "normal(0, 2) logits, the last max(1, V/8) tokens masked (a padded vocabulary)", kCap,
     SAMPCERT_CAP_MASK, MaskNarrower, 0, true},
};

constexpr CoverageClass kLogits[] = {
    {"ordinary", "the shape's logits only", {}, 0, Ordinary},
    {"pos_zero", "token 0 is +0", {}, 0, LogitOf<PosZero>},
    {"neg_zero", "token 0 is -0", {}, 0, LogitOf<NegZero>},
    {"min_subnormal", "token 0 is the dtype's smallest subnormal", {}, 0, LogitOf<MinSubnormal>},
    {"min_normal", "token 0 is the dtype's smallest normal", {}, 0, LogitOf<MinNormal>},
    {"max_normal", "token 0 is the dtype's largest finite value", {}, 0, LogitOf<MaxNormal>},
    {"neg_max_normal", "token 0 is the dtype's lowest finite value", {}, 0, LogitOf<NegMaxNormal>},
    {"pos_inf", "token 0 is +inf", {}, 0, LogitOf<PosInf>},
    {"neg_inf", "token 0 is -inf", {}, 0, LogitOf<NegInf>, 0, true},
    {"nan_masked", "token 0 is NaN and masked (and the last token allowed if none is)", kCap,
     SAMPCERT_CAP_MASK, NanMasked, 0, true},
    {"nan_allowed", "token 0 is NaN and allowed (valid under nan_policy masked)",
     ClassNeed::kNanMasked, 0, LogitOf<Nan>, 0, true},
};

constexpr CoverageClass kTemperatures[] = {
    {"one", "T = 1", {}, 0, TemperatureOf<One>},
    {"zero", "T = +0 (the greedy limit)", kCap, SAMPCERT_CAP_TEMPERATURE_ZERO,
     TemperatureOf<PosZero>},
    {"neg_zero", "T = -0 (equal to 0: the greedy limit)", kCap, SAMPCERT_CAP_TEMPERATURE_ZERO,
     TemperatureOf<NegZero>},
    {"min_subnormal", "T = 2^-149", {}, 0, TemperatureOf<FloatMinSubnormal>},
    {"min_normal", "T = 2^-126", {}, 0, TemperatureOf<FloatMinNormal>},
    {"tiny", "T = 1e-8", {}, 0, TemperatureOf<Tiny>},
    {"huge", "T = 1e30", {}, 0, TemperatureOf<Huge>},
    {"max_normal", "T = FLT_MAX", {}, 0, TemperatureOf<FloatMax>},
    {"threshold_below", "one ulp below the declared greedy threshold", ClassNeed::kGreedyThreshold,
     0, ThresholdBelow},
    {"threshold_above", "one ulp above the declared greedy threshold", ClassNeed::kGreedyThreshold,
     0, ThresholdAbove},
    {"negative", "T = -1", kBad},
    {"pos_inf", "T = +inf", kBad},
    {"nan", "T = NaN", kBad},
};

constexpr CoverageClass kTopKs[] = {
    {"off", "top_k = 0", {}, 0, TopKOf<0, 0>},
    {"one", "top_k = 1", kCap, SAMPCERT_CAP_TOP_K, TopKOf<1, 0>},
    {"above_1024", "top_k = 1025", kCap, SAMPCERT_CAP_TOP_K, TopKOf<1025, 0>},
    {"v_minus_1", "top_k = V - 1", kCap, SAMPCERT_CAP_TOP_K, TopKOf<-1, 1>, 0, true},
    {"v", "top_k = V", kCap, SAMPCERT_CAP_TOP_K, TopKOf<0, 1>},
    {"above_v", "top_k = V + 1", kCap, SAMPCERT_CAP_TOP_K, TopKOf<1, 1>},
    {"negative", "top_k = -1", kBad},
};

constexpr CoverageClass kTopPs[] = {
    {"off", "top_p = 1", {}, 0, TopPOf<One>},
    {"below_one", "top_p = 1 - 2^-24 (one ulp below 1)", kCap, SAMPCERT_CAP_TOP_P,
     TopPOf<BelowOne>},
    {"min_subnormal", "top_p = 2^-149 (one ulp above 0)", kCap, SAMPCERT_CAP_TOP_P,
     TopPOf<FloatMinSubnormal>},
    {"min_normal", "top_p = 2^-126", kCap, SAMPCERT_CAP_TOP_P, TopPOf<FloatMinNormal>},
    {"half", "top_p = 0.5", kCap, SAMPCERT_CAP_TOP_P, TopPOf<Half>},
    {"cut_below", "one ulp below the mass of the two most probable tokens", kCap,
     SAMPCERT_CAP_TOP_P, TopPAtCut<false>},
    {"cut_above", "one ulp above the mass of the two most probable tokens", kCap,
     SAMPCERT_CAP_TOP_P, TopPAtCut<true>},
    {"pos_zero", "top_p = +0", kBad},
    {"neg_zero", "top_p = -0", kBad},
    {"above_one", "top_p = 1 + 2^-23", kBad},
    {"max_normal", "top_p = FLT_MAX", kBad},
    {"pos_inf", "top_p = +inf", kBad},
    {"nan", "top_p = NaN", kBad},
};

constexpr CoverageClass kMinPs[] = {
    {"off", "min_p = 0", {}, 0, MinPOf<PosZero>},
    {"neg_zero", "min_p = -0 (equal to 0: off)", kCap, SAMPCERT_CAP_MIN_P, MinPOf<NegZero>},
    {"min_subnormal", "min_p = 2^-149", kCap, SAMPCERT_CAP_MIN_P, MinPOf<FloatMinSubnormal>},
    {"min_normal", "min_p = 2^-126", kCap, SAMPCERT_CAP_MIN_P, MinPOf<FloatMinNormal>},
    {"half", "min_p = 0.5", kCap, SAMPCERT_CAP_MIN_P, MinPOf<Half>},
    {"below_one", "min_p = 1 - 2^-24 (one ulp below 1)", kCap, SAMPCERT_CAP_MIN_P,
     MinPOf<BelowOne>},
    {"ratio_below", "one ulp below p_2 / p_1 (the second token's keep threshold)", kCap,
     SAMPCERT_CAP_MIN_P, MinPAtRatio<false>},
    {"ratio_above", "one ulp above p_2 / p_1", kCap, SAMPCERT_CAP_MIN_P, MinPAtRatio<true>},
    {"one", "min_p = 1", kBad},
    {"negative", "min_p = -2^-149", kBad},
    {"max_normal", "min_p = FLT_MAX", kBad},
    {"pos_inf", "min_p = +inf", kBad},
    {"nan", "min_p = NaN", kBad},
};

constexpr CoverageClass kBatch[] = {
    {"alone_and_batched", "the row alone and inside a batch", kCap, SAMPCERT_CAP_BATCH, nullptr, 0,
     false, "BATCH-1"},
    {"heterogeneous", "batchmates at T = 0, top_k = 1, other masks, top_p, min_p", kCap,
     SAMPCERT_CAP_BATCH, nullptr, 0, false, "BATCH-2"},
    {"duplicated", "the row twice in one batch", kCap, SAMPCERT_CAP_BATCH, nullptr, 0, false,
     "BATCH-2"},
    {"permuted", "the batch reversed", kCap, SAMPCERT_CAP_BATCH, nullptr, 0, false, "BATCH-2"},
    {"sizes_9_33_129_257", "batches one past 8, 32, 128 and 256 rows, on generated rows only", kCap,
     SAMPCERT_CAP_BATCH, nullptr, 0, false, "BATCH-2", true},
};

constexpr CoverageClass kIdentity[] = {
    {"same_seed", "the same seed and row id twice", {}, 0, nullptr, 0, false, "DET-1"},
    {"seed", "another seed, the same row id", {}, 0, nullptr, 0, false, "DET-2"},
    {"row_id", "the next row id, the same seed", {}, 0, nullptr, 0, false, "DET-3"},
    {"call_order",
     "a later call of the same stream (planned row independence_V4)",
     {},
     0,
     nullptr,
     0,
     false,
     "INDEP-1"},
};

constexpr CoverageAxis kModel[] = {
    {"dtype", false, false, "one design per declared dtype (the dtype's generated-rows item)",
     kDtypes},
    {"vocab", true, false, "the design", kVocabs},
    {"shape", true, false, "the design", kShapes},
    {"logit", true, false, "the design", kLogits},
    {"temperature", true, true, "the design (truncation triples)", kTemperatures},
    {"top_k", true, true, "the design (truncation triples)", kTopKs},
    {"top_p", true, true, "the design (truncation triples)", kTopPs},
    {"min_p", true, true, "the design (truncation triples)", kMinPs},
    {"batch", false, false, "BATCH-1, BATCH-2 on the generated and design rows", kBatch},
    {"identity", false, false, "DET-1..3 on the generated and design rows; INDEP-1", kIdentity},
};

// The declaration's reason to leave a class out, or empty when the class is in its design.
std::string ExclusionReason(const CoverageClass& c, const adapters::SamplerInfo& info,
                            const DesignOptions& options) {
  switch (c.need) {
    case ClassNeed::kNone: break;
    case ClassNeed::kCapability:
      if (!info.Has(c.capability)) {
        const std::vector<std::string> names = adapters::CapabilityNames(c.capability);
        return fmt::format("capability {} not declared", names.empty() ? "?" : names.front());
      }
      break;
    case ClassNeed::kInvalid: return "invalid input (SPEC section 5): INV-ERR-1's generated rows";
    case ClassNeed::kGreedyThreshold:
      if (!(info.policies.greedy_threshold > 0)) return "no greedy threshold declared (POL-5)";
      break;
    case ClassNeed::kNanMasked:
      if (info.policies.nan_policy != NanPolicy::kMasked) {
        return "invalid under nan_policy error (POL-4): INV-ERR-1's generated rows";
      }
      break;
  }
  if (c.generated_rows_only) {
    return fmt::format("on the generated rows only ({}'s batches of up to 257 rows)", c.property);
  }
  if (c.vocab > options.max_vocab) {
    return fmt::format("V above the profile's largest vocabulary ({})", options.max_vocab);
  }
  // The axis's first class (V = 64) stays whatever the cost: every design row may fall back to
  // it, and a declaration must not leave the design without a vocabulary (the plan's per-test
  // draw cap still bounds that row's draws).
  const double cost_ns = DeclaredDrawCostNsPerToken(info);  // the plan's reading of it
  if (c.vocab > 0 && c.vocab != kVocabs[0].vocab && cost_ns > 0) {
    const double draws = static_cast<double>(options.draws_per_row + kDesignRowCheckDraws);
    const double seconds = draws * static_cast<double>(c.vocab) * cost_ns * 1e-9;
    if (seconds > kDesignRowDrawSeconds) {
      return fmt::format(
          "V above what the declared draw cost allows a design row ({} ns per token: {:.1f} s "
          "of draws, more than {:g} s)",
          cost_ns, seconds, kDesignRowDrawSeconds);
    }
  }
  return {};
}

// The interactions to cover over the included classes: every pair of two designed axes, and
// every triple of three truncation axes, each a dense bitmap over its axes' included classes.
class Interactions {
 public:
  Interactions(const std::vector<std::vector<uint8_t>>& included, const std::vector<bool>& trunc,
               const std::vector<std::vector<bool>>& two_tokens, std::vector<bool> single_token,
               int vocab_axis, bool triples)
      : included_(included),
        two_tokens_(two_tokens),
        vocab_axis_(vocab_axis),
        single_token_(std::move(single_token)) {
    const std::size_t n = included.size();
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = a + 1; b < n; ++b) sets_.push_back({{a, b}, {}});
    }
    for (std::size_t a = 0; triples && a < n; ++a) {
      for (std::size_t b = a + 1; b < n; ++b) {
        for (std::size_t c = b + 1; c < n; ++c) {
          if (trunc[a] && trunc[b] && trunc[c]) sets_.push_back({{a, b, c}, {}});
        }
      }
    }
    for (Set& s : sets_) {
      std::size_t size = 1;
      for (std::size_t a : s.axes) size *= included[a].size();
      s.covered.assign(size, 0);
      // Combinations no valid row can hold are infeasible: marked covered, and counted.
      for (std::size_t k = 0; k < size; ++k) {
        std::vector<uint8_t> row(n, kUnset);
        Decode(s, k, &row);
        if (!Feasible(row)) {
          s.covered[k] = 1;
          ++infeasible_;
        } else {
          ++(s.axes.size() == 2 ? pairs_ : triples_);
          ++uncovered_;
        }
      }
    }
  }
  static constexpr uint8_t kUnset = 0xff;
  std::size_t uncovered() const { return uncovered_; }
  std::size_t infeasible() const { return infeasible_; }
  std::size_t pairs() const { return pairs_; }
  std::size_t triples() const { return triples_; }

  // A row's classes (positions into `included`) is feasible: no class needing V >= 2 with V = 1.
  bool Feasible(const std::vector<uint8_t>& row) const {
    if (vocab_axis_ < 0 || row[static_cast<std::size_t>(vocab_axis_)] == kUnset) return true;
    if (!single_token_[row[static_cast<std::size_t>(vocab_axis_)]]) return true;
    for (std::size_t a = 0; a < row.size(); ++a) {
      if (row[a] != kUnset && two_tokens_[a][row[a]]) return false;
    }
    return true;
  }

  // The first uncovered interaction (triples first: they are the bottleneck), as a partial row.
  std::vector<uint8_t> FirstUncovered() const {
    std::vector<uint8_t> row(included_.size(), kUnset);
    for (int pass = 0; pass < 2; ++pass) {
      for (const Set& s : sets_) {
        if ((s.axes.size() == 3) != (pass == 0)) continue;
        for (std::size_t k = 0; k < s.covered.size(); ++k) {
          if (!s.covered[k]) {
            Decode(s, k, &row);
            return row;
          }
        }
      }
    }
    return row;
  }
  // The uncovered interactions a complete assignment of `row` on its set axes would cover, that
  // involve axis `a` (assigned in `row`).
  std::size_t Gain(const std::vector<uint8_t>& row, std::size_t a) const {
    std::size_t gain = 0;
    for (const Set& s : sets_) {
      if (std::find(s.axes.begin(), s.axes.end(), a) == s.axes.end()) continue;
      bool all = true;
      for (std::size_t x : s.axes) all &= row[x] != kUnset;
      if (all && !s.covered[Index(s, row)]) ++gain;
    }
    return gain;
  }
  void Cover(const std::vector<uint8_t>& row) {
    for (Set& s : sets_) {
      uint8_t& c = s.covered[Index(s, row)];
      if (!c) --uncovered_;
      c = 1;
    }
  }

 private:
  struct Set {
    std::vector<std::size_t> axes;
    std::vector<uint8_t> covered;
  };
  std::size_t Index(const Set& s, const std::vector<uint8_t>& row) const {
    std::size_t k = 0;
    for (std::size_t a : s.axes) k = k * included_[a].size() + row[a];
    return k;
  }
  void Decode(const Set& s, std::size_t k, std::vector<uint8_t>* row) const {
    for (std::size_t i = s.axes.size(); i-- > 0;) {
      const std::size_t a = s.axes[i];
      (*row)[a] = static_cast<uint8_t>(k % included_[a].size());
      k /= included_[a].size();
    }
  }
  const std::vector<std::vector<uint8_t>>& included_;
  const std::vector<std::vector<bool>>& two_tokens_;
  int vocab_axis_;
  std::vector<bool> single_token_;
  std::vector<Set> sets_;
  std::size_t uncovered_ = 0, infeasible_ = 0, pairs_ = 0, triples_ = 0;
};

}  // namespace

std::span<const CoverageAxis> CoverageModel() { return kModel; }

std::string CoverageModelMarkdown() {
  std::string out = "| axis | covered by | classes |\n|---|---|---|\n";
  for (const CoverageAxis& axis : kModel) {
    std::string classes;
    for (const CoverageClass& c : axis.classes) {
      classes += fmt::format("{}`{}`: {}{}", classes.empty() ? "" : "; ", c.name, c.realized,
                             c.need == ClassNeed::kInvalid ? " (invalid)"
                             : c.property.empty()          ? ""
                                                           : fmt::format(" ({})", c.property));
    }
    out += fmt::format("| `{}` | {} | {} |\n", axis.name, axis.covered_by, classes);
  }
  return out;
}

DesignOptions DesignOptionsOf(const Profile& profile) {
  return DesignOptions{profile.max_vocab, profile.design_truncation_triples,
                       profile.design_draws_per_row};
}

Design MakeDesign(DType dtype, const adapters::SamplerInfo& info, const DesignOptions& options) {
  Design design;
  // Every axis's exclusions (the dtype's and the non-designed axes' too: the report lists them).
  std::vector<std::vector<uint8_t>> included;
  std::vector<bool> trunc;
  std::vector<std::vector<bool>> two_tokens;
  int vocab_axis = -1;
  std::vector<bool> single_token;
  for (std::size_t a = 0; a < std::size(kModel); ++a) {
    const CoverageAxis& axis = kModel[a];
    std::vector<uint8_t> in;
    for (std::size_t c = 0; c < axis.classes.size(); ++c) {
      const std::string reason = ExclusionReason(axis.classes[c], info, options);
      if (!reason.empty()) {
        design.excluded.push_back(
            {std::string(axis.name), std::string(axis.classes[c].name), reason});
      } else {
        in.push_back(static_cast<uint8_t>(c));
      }
    }
    if (!axis.designed) continue;
    if (axis.classes.front().vocab > 0) {  // the vocabulary axis
      vocab_axis = static_cast<int>(design.axes.size());
      for (uint8_t c : in) single_token.push_back(axis.classes[c].vocab == 1);
    }
    std::vector<bool> two;
    for (uint8_t c : in) two.push_back(axis.classes[c].needs_two_tokens);
    design.axes.push_back(a);
    included.push_back(std::move(in));
    trunc.push_back(axis.truncation);
    two_tokens.push_back(std::move(two));
  }
  (void)dtype;  // every dtype has the same classes; the rows realize them in the dtype
  Interactions todo(included, trunc, two_tokens, std::move(single_token), vocab_axis,
                    options.truncation_triples);
  design.pairs = todo.pairs();
  design.triples = todo.triples();
  design.infeasible = todo.infeasible();
  const std::size_t n = included.size();
  while (todo.uncovered() > 0) {
    // Seeded by the first uncovered interaction; every other axis takes the class that covers
    // the most uncovered interactions with the axes already set, ties to the first in an order
    // rotated by the row's index (so that equal gains spread over the classes), or its first
    // class when no class covers anything new.
    std::vector<uint8_t> row = todo.FirstUncovered();
    const std::size_t j = design.rows.size();
    for (std::size_t a = 0; a < n; ++a) {
      if (row[a] != Interactions::kUnset) continue;
      const std::size_t m = included[a].size();
      std::size_t best_gain = 0;
      uint8_t best = Interactions::kUnset;
      for (std::size_t r = 0; r < m; ++r) {
        row[a] = static_cast<uint8_t>((r + j) % m);
        if (!todo.Feasible(row)) continue;
        const std::size_t gain = todo.Gain(row, a);
        if (best == Interactions::kUnset || gain > best_gain) {
          best = row[a];
          best_gain = gain;
        }
      }
      // Nothing left to cover through this axis: its first class (the cheapest row: V = 64, an
      // ordinary logit, T = 1, truncation off), which goes with every class.
      row[a] = best_gain == 0 ? 0 : best;
    }
    todo.Cover(row);
    std::vector<uint8_t> classes(n);
    for (std::size_t a = 0; a < n; ++a) classes[a] = included[a][row[a]];
    design.rows.push_back(std::move(classes));
  }
  return design;
}

std::string Design::Canonical() const {
  std::string out;
  for (const std::vector<uint8_t>& row : rows) {
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const CoverageAxis& axis = kModel[axes[a]];
      out += fmt::format("{}{}={}", a ? "," : "", axis.name, axis.classes[row[a]].name);
    }
    out += ";";
  }
  for (const ExcludedClass& e : excluded) out += fmt::format("!{}={}:{};", e.axis, e.cls, e.reason);
  return out;
}

RowCase RealizeDesignRow(const Design& design, std::size_t j, DType dtype,
                         const adapters::SamplerInfo& info, uint64_t seed) {
  RowCase row;
  row.dtype = dtype;
  const RealizeInput in{dtype, &info.policies, seed};
  for (std::size_t a = 0; a < design.axes.size(); ++a) {
    kModel[design.axes[a]].classes[design.rows[j][a]].apply(in, &row);
  }
  row.row_id = Mix(seed, 0x20e) % (uint64_t{1} << 20);
  row.family = std::string(kDesignFamily);
  return row;
}

std::vector<std::string> DesignRowTags(const Design& design, std::size_t j, DType dtype) {
  std::vector<std::string> tags = {fmt::format("{}dtype={}", kClassTagPrefix, DTypeName(dtype))};
  for (std::size_t a = 0; a < design.axes.size(); ++a) {
    const CoverageAxis& axis = kModel[design.axes[a]];
    tags.push_back(
        fmt::format("{}{}={}", kClassTagPrefix, axis.name, axis.classes[design.rows[j][a]].name));
  }
  return tags;
}

std::vector<std::string> ExcludedTags(const Design& design) {
  std::vector<std::string> tags;
  for (const ExcludedClass& e : design.excluded) {
    tags.push_back(fmt::format("{}{}={} ({})", kExcludedTagPrefix, e.axis, e.cls, e.reason));
  }
  return tags;
}

std::vector<std::string> PropertyClassTags(std::string_view property) {
  std::vector<std::string> tags;
  for (const CoverageAxis& axis : kModel) {
    for (const CoverageClass& c : axis.classes) {
      if (!c.property.empty() && c.property == property && !c.generated_rows_only) {
        tags.push_back(fmt::format("{}{}={}", kClassTagPrefix, axis.name, c.name));
      }
    }
  }
  return tags;
}

}  // namespace sampcert::properties
