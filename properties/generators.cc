#include "properties/generators.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "properties/infinity.h"
#include "properties/portable_random.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

float DTypeMax(DType d) {
  switch (d) {
    case DType::kF16: return 65504.0f;
    case DType::kBF16: return 3.38953139e38f;
    case DType::kF32: break;
  }
  return std::numeric_limits<float>::max();
}

float Bits32ToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// A special-value-weighted random float for "random_bits" rows, from a plain engine.
float RandomSpecial(std::mt19937_64& rng, DType dtype) {
  const uint64_t pick = rng() % 16;
  const float max = DTypeMax(dtype);
  switch (pick) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return kInf;
    case 3: return -kInf;
    case 4: return max;
    case 5: return -max;
    case 6: return dtype == DType::kF16 ? 5.96e-8f : std::numeric_limits<float>::denorm_min();
    case 7: return dtype == DType::kF16 ? 6.1e-5f : std::numeric_limits<float>::min();
    default: break;
  }
  if (dtype == DType::kF32) {
    float f = Bits32ToFloat(static_cast<uint32_t>(rng()));
    return std::isnan(f) ? 1.0f : f;  // NaN is placed deliberately, not by chance
  }
  const float f = std::ldexp(static_cast<float>(rng() % 2048) / 1024.0f - 1.0f,
                             static_cast<int>(rng() % 40) - 24);
  return f;
}

void Fill(RowCase* r, const std::string& family, std::size_t v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (r->dtype == DType::kF32) {
    r->bits32.assign(v, 0);
  } else {
    r->bits16.assign(v, 0);
  }
  auto normal = [&rng](float sd) { return static_cast<float>(sd * PortableNormal(rng)); };
  auto pos = [&rng, v] { return static_cast<std::size_t>(rng() % v); };
  const float max = DTypeMax(r->dtype);
  if (family == "llm_like") {
    const float sd = std::array<float, 3>{1.0f, 3.0f, 8.0f}[rng() % 3];
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, normal(sd));
    for (int k = 0; k < 1 + static_cast<int>(rng() % 8); ++k) {
      r->SetLogit(pos(), 15.0f + static_cast<float>(rng() % 15));
    }
  } else if (family == "outlier") {
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, normal(1.0f));
    r->SetLogit(pos(), rng() % 2 ? max : max / 2);
  } else if (family == "overflow_after_scaling") {
    // The brief's shape: one logit far out, scaled by a small T it leaves the dtype's range.
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, normal(50.0f));
    r->SetLogit(pos(), r->dtype == DType::kF16 ? 30000.0f : 3e37f);
    r->temperature = std::array<float, 3>{0.1f, 1e-3f, 1e-8f}[rng() % 3];
  } else if (family == "ties_top") {
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, normal(2.0f));
    const float top = 12.0f;
    for (int k = 0; k < 2 + static_cast<int>(rng() % 4); ++k) r->SetLogit(pos(), top);
  } else if (family == "ties_kth") {
    for (std::size_t i = 0; i < v; ++i) {
      r->SetLogit(i, std::round(normal(2.0f)));  // integers: many exact ties
    }
  } else if (family == "near_ties") {
    const float base = normal(10.0f);
    float x = base;
    for (std::size_t i = 0; i < v; ++i) {
      r->SetLogit(i, x);
      if (rng() % 2) x = std::nextafter(x, kInf);
    }
    const float scale = std::max(std::fabs(base), 1e-3f);
    r->temperature = scale * std::array<float, 3>{1e-7f, 1e-6f, 1e-4f}[rng() % 3];
  } else if (family == "wide_range") {
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, PortableUniform(rng, -30000.0f, 30000.0f));
  } else if (family == "all_equal") {
    const float c = normal(5.0f);
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, c);
  } else if (family == "one_finite") {
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, -kInf);
    r->SetLogit(pos(), normal(3.0f));
  } else if (family == "nan_masked") {
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, normal(2.0f));
    r->mask.assign(v, 1);
    for (int k = 0; k < 1 + static_cast<int>(v / 4); ++k) {
      const std::size_t p = pos();
      r->SetLogit(p, kNan);
      r->mask[p] = 0;
    }
    if (std::none_of(r->mask.begin(), r->mask.end(), [](uint8_t m) { return m; })) {
      r->mask[0] = 1;
      r->SetLogit(0, 1.0f);
    }
  } else if (family == "dominant_tail") {
    // One dominant token and a tail of ~5% spread over the others (the tail-mass check).
    const float tail =
        v > 1 ? static_cast<float>(PortableLog(0.05 / static_cast<double>(v - 1) / 0.95)) : 0.0f;
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, tail + normal(0.05f));
    r->SetLogit(0, 0.0f);
    r->temperature = 1.0f;
  } else if (family == "pos_inf") {
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, normal(3.0f));
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) r->SetLogit(pos(), kInf);
  } else if (family == "subnormal") {
    const float den = r->dtype == DType::kF16 ? 5.96e-8f : std::numeric_limits<float>::denorm_min();
    for (std::size_t i = 0; i < v; ++i) {
      r->SetLogit(i, den * static_cast<float>(rng() % 8));
    }
    r->temperature = den * static_cast<float>(1 + rng() % 4);
  } else {  // "random_bits"
    for (std::size_t i = 0; i < v; ++i) r->SetLogit(i, RandomSpecial(rng, r->dtype));
  }
}

rc::Gen<std::size_t> GenVocab(std::size_t max_vocab) {
  auto capped = [max_vocab](std::vector<std::size_t> sizes) {
    std::vector<std::size_t> out;
    for (std::size_t s : sizes) {
      if (s <= max_vocab) out.push_back(s);
    }
    if (out.empty()) out.push_back(std::min<std::size_t>(max_vocab, 4));
    return rc::gen::elementOf(out);
  };
  return rc::gen::weightedOneOf<std::size_t>({
      {8, rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(10, max_vocab + 1))},
      {5, capped({17, 31, 33, 63, 65, 127, 255, 257, 1000, 1023, 1025})},
      {3, rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(4100, max_vocab + 1))},
      {1, capped({32768, 131071, 131072, 262144})},
  });
}

// The softmax of the row at temperature t in double (for placing top_p relative to the
// cumulative sums); empty when the row has no finite mass.
std::vector<double> ApproxProbs(const RowCase& r) {
  const std::size_t v = r.vocab();
  std::vector<double> x(v);
  double m = -INFINITY;
  for (std::size_t i = 0; i < v; ++i) {
    x[i] = r.Logit(i);
    if (!r.mask.empty() && !r.mask[i]) x[i] = -INFINITY;
    if (std::isnan(x[i]) || std::isinf(x[i])) x[i] = -INFINITY;
    m = std::max(m, x[i]);
  }
  if (!std::isfinite(m) || !(r.temperature > 0)) return {};
  double z = 0;
  for (double& e : x) {
    e = PortableExp((e - m) / r.temperature);
    z += e;
  }
  for (double& e : x) e /= z;
  return x;
}

}  // namespace

const std::vector<std::string>& RowFamilies() {
  static const std::vector<std::string> families = {
      "llm_like",   "outlier",       "overflow_after_scaling",
      "ties_top",   "ties_kth",      "near_ties",
      "wide_range", "all_equal",     "one_finite",
      "nan_masked", "dominant_tail", "pos_inf",
      "subnormal",  "random_bits"};
  return families;
}

rc::Gen<float> GenTemperature(bool allow_zero) {
  return rc::gen::weightedOneOf<float>({
      {allow_zero ? 2u : 0u, rc::gen::just(0.0f)},
      {1, rc::gen::just(std::numeric_limits<float>::denorm_min())},
      {1, rc::gen::just(1e-8f)},
      {8, rc::gen::map(rc::gen::inRange(-300, 101),
                       [](int e) {
                         return static_cast<float>(PortableExp(e / 100.0 * 2.302585092994045684));
                       })},
      {1, rc::gen::just(1e30f)},
      {1, rc::gen::just(std::numeric_limits<float>::max())},
  });
}

rc::Gen<uint32_t> GenF32Bits() {
  return rc::gen::weightedOneOf<uint32_t>({
      {1, rc::gen::elementOf(std::vector<uint32_t>{
              0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
              0x7f7fffffu, 0xff7fffffu, 0x00000001u, 0x807fffffu, 0x00800000u})},
      {4, rc::gen::arbitrary<uint32_t>()},
  });
}

rc::Gen<uint16_t> GenHalfBits(DType dtype) {
  const std::vector<uint16_t> special =
      dtype == DType::kF16 ? std::vector<uint16_t>{0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00,
                                                   0x7bff, 0xfbff, 0x0001, 0x0400}
                           : std::vector<uint16_t>{0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0,
                                                   0x7f7f, 0xff7f, 0x0001, 0x0080};
  return rc::gen::weightedOneOf<uint16_t>({
      {1, rc::gen::elementOf(special)},
      {4, rc::gen::arbitrary<uint16_t>()},
  });
}

rc::Gen<RowCase> GenRow(const GenConfig& cfg) {
  return rc::gen::exec([cfg] {
    RowCase r;
    r.dtype = cfg.dtype;
    const uint32_t caps = cfg.capabilities;
    r.family = *rc::gen::elementOf(RowFamilies());
    std::size_t v = *GenVocab(cfg.max_vocab);
    if (r.family == "dominant_tail") v = std::min<std::size_t>(cfg.max_vocab, 20000);
    r.temperature = *GenTemperature((caps & SAMPCERT_CAP_TEMPERATURE_ZERO) != 0);
    Fill(&r, r.family, v, *rc::gen::arbitrary<uint64_t>());
    if (r.temperature == 0.0f && !(caps & SAMPCERT_CAP_TEMPERATURE_ZERO)) r.temperature = 1e-8f;
    if (!(caps & SAMPCERT_CAP_MASK)) {
      r.mask.clear();
    } else if (r.mask.empty()) {
      const int kind =
          *rc::gen::weightedElement<int>({{10, 0}, {1, 1}, {2, 2}, {2, 3}, {1, 4}, {2, 5}, {2, 6}});
      if (kind != 0) r.mask.assign(v, kind == 4 ? 1 : 0);
      const uint64_t s = *rc::gen::arbitrary<uint64_t>();
      std::mt19937_64 rng(s);
      if (kind == 2) r.mask[rng() % v] = 1;  // one allowed
      if (kind == 3) {                       // a few
        for (int k = 0; k < 3; ++k) r.mask[rng() % v] = 1;
      }
      if (kind == 5) {  // the last ones
        for (std::size_t i = v - std::min<std::size_t>(v, 1 + rng() % 3); i < v; ++i) {
          r.mask[i] = 1;
        }
      }
      if (kind == 6) {
        for (auto& m : r.mask) m = (rng() % 5) != 0;  // about 80%
      }
      // kind 1: nothing allowed (an invalid row, SPEC INV-6)
    }
    if (caps & SAMPCERT_CAP_TOP_K) {
      const int kind =
          *rc::gen::weightedElement<int>({{6, 0}, {2, 1}, {2, 2}, {1, 3}, {1, 4}, {2, 5}});
      if (kind == 1) r.top_k = 1;
      if (kind == 3) r.top_k = static_cast<int64_t>(v);
      if (kind == 4) r.top_k = static_cast<int64_t>(v) + 5;
      if (kind == 5) r.top_k = *rc::gen::inRange<int64_t>(1, static_cast<int64_t>(v) + 1);
      if (kind == 2) {  // k at a tie: the k-th largest value is shared with its neighbour
        std::vector<float> vals;
        for (std::size_t i = 0; i < v; ++i) {
          const float x = r.Logit(i);
          if (!std::isnan(x)) vals.push_back(x);
        }
        std::sort(vals.rbegin(), vals.rend());
        r.top_k = 1;
        for (std::size_t j = 1; j < vals.size(); ++j) {
          if (vals[j] == vals[j - 1]) {
            r.top_k = static_cast<int64_t>(j);  // the j-th (1-based) ties with the (j+1)-th
            break;
          }
        }
      }
    }
    if (caps & SAMPCERT_CAP_TOP_P) {
      const int kind =
          *rc::gen::weightedElement<int>({{6, 0}, {1, 1}, {1, 2}, {2, 3}, {2, 4}, {1, 5}});
      if (kind == 1) r.top_p = std::nextafter(1.0f, 0.0f);
      if (kind == 2) r.top_p = 1e-6f;
      if (kind == 3) {
        r.top_p = static_cast<float>(*rc::gen::inRange(5, 100)) / 100.0f;
      }
      if (kind == 4 || kind == 5) {  // mid-gap between cumulative sums, or exactly on one
        std::vector<double> p = ApproxProbs(r);
        if (p.size() > 1 && p.size() <= 4096) {
          std::sort(p.rbegin(), p.rend());
          const std::size_t j =
              static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, p.size() - 1));
          double c = 0;
          for (std::size_t i = 0; i <= j; ++i) c += p[i];
          const double target = kind == 4 ? c + p[j + 1] / 2 : c;
          if (target > 0 && target < 1) r.top_p = static_cast<float>(target);
        }
      }
    }
    if (caps & SAMPCERT_CAP_MIN_P) {
      const int kind = *rc::gen::weightedElement<int>({{6, 0}, {1, 1}, {1, 2}, {2, 3}, {1, 4}});
      if (kind == 1) r.min_p = 0.05f;
      if (kind == 2) r.min_p = 0.5f;
      if (kind == 3) r.min_p = static_cast<float>(*rc::gen::inRange(1, 300)) / 1000.0f;
      if (kind == 4) r.min_p = std::nextafter(1.0f, 0.0f);
    }
    // Invalid on purpose (SPEC section 5), one cause at a time.
    if (*rc::gen::inRange(0, 1000) < static_cast<int>(cfg.invalid_fraction * 1000)) {
      std::vector<int> kinds = {0, 1, 2, 3};  // T NaN, T < 0, T = inf, NaN allowed logit
      if (caps & SAMPCERT_CAP_TOP_K) kinds.push_back(4);
      if (caps & SAMPCERT_CAP_TOP_P) kinds.insert(kinds.end(), {5, 6, 7});
      if (caps & SAMPCERT_CAP_MIN_P) kinds.insert(kinds.end(), {8, 9, 10});
      kinds.push_back(11);  // all -inf
      switch (*rc::gen::elementOf(kinds)) {
        case 0: r.temperature = kNan; break;
        case 1: r.temperature = -r.temperature - 0.5f; break;
        case 2: r.temperature = kInf; break;
        case 3: {
          std::size_t i = 0;
          while (i + 1 < v && !r.mask.empty() && !r.mask[i]) ++i;
          r.SetLogit(i, kNan);
          if (!r.mask.empty()) r.mask[i] = 1;
          break;
        }
        case 4: r.top_k = -1 - *rc::gen::inRange<int64_t>(0, 3); break;
        case 5: r.top_p = 0.0f; break;
        case 6: r.top_p = 1.5f; break;
        case 7: r.top_p = kNan; break;
        case 8: r.min_p = 1.0f; break;
        case 9: r.min_p = -0.1f; break;
        case 10: r.min_p = kNan; break;
        default:
          for (std::size_t i = 0; i < v; ++i) r.SetLogit(i, -kInf);
          break;
      }
      r.family += "+invalid";
    }
    r.row_id = *rc::gen::inRange<uint64_t>(0, 1u << 20);
    return r;
  });
}

std::vector<std::string> EdgeTags(const RowCase& r) {
  std::vector<std::string> tags;
  const float t = r.temperature;
  if (t == 0.0f) tags.push_back("T=0");
  if (t > 0.0f && t < std::numeric_limits<float>::min()) tags.push_back("T subnormal");
  if (t > 0.0f && t <= 1e-8f) tags.push_back("T tiny");
  if (t >= 1e30f) tags.push_back("T huge");
  if (std::isnan(t) || t < 0 || std::isinf(t)) tags.push_back("T invalid");
  const std::size_t v = r.vocab();
  if (v == 1) tags.push_back("V=1");
  if (v % 8 != 0) tags.push_back("V not a multiple of 8");
  if (v >= 32768) tags.push_back("V >= 32k");
  bool pos_inf = false, neg_inf = false, nan_allowed = false, nan_masked = false, sub = false,
       dmax = false, overflow = false;
  std::size_t allowed = 0;
  const float dmax_value = DTypeMax(r.dtype);
  for (std::size_t i = 0; i < v; ++i) {
    const float x = r.Logit(i);
    const bool ok = r.mask.empty() || r.mask[i];
    allowed += ok;
    pos_inf |= x == kInf;
    neg_inf |= x == -kInf;
    if (std::isnan(x)) (ok ? nan_allowed : nan_masked) = true;
    sub |= x != 0 && std::fabs(x) < std::numeric_limits<float>::min();
    dmax |= std::fabs(x) == dmax_value;
    overflow |= t > 0 && std::isfinite(x) && std::fabs(x) / t > dmax_value;
  }
  if (pos_inf) tags.push_back("+inf logit");
  if (neg_inf) tags.push_back("-inf logit");
  if (nan_allowed) tags.push_back("NaN allowed");
  if (nan_masked) tags.push_back("NaN masked");
  if (sub) tags.push_back("subnormal logit");
  if (dmax) tags.push_back("dtype max logit");
  if (overflow) tags.push_back("x/T overflows dtype");
  if (!r.mask.empty()) {
    tags.push_back(allowed == 0   ? "mask: none allowed"
                   : allowed == 1 ? "mask: one allowed"
                   : allowed == v ? "mask: all allowed"
                                  : "mask: some allowed");
    if (allowed > 0 && allowed <= 3 && r.mask[v - 1]) tags.push_back("mask: last tokens");
  }
  if (r.top_k > 0 && static_cast<std::size_t>(r.top_k) >= v) tags.push_back("top_k >= V");
  if (r.top_k == 1) tags.push_back("top_k = 1");
  if (r.top_k < 0) tags.push_back("top_k invalid");
  if (r.top_p == std::nextafter(1.0f, 0.0f)) tags.push_back("top_p just below 1");
  if (r.top_p > 0 && r.top_p <= 1e-6f) tags.push_back("top_p tiny");
  if (!(r.top_p > 0 && r.top_p <= 1)) tags.push_back("top_p invalid");
  if (r.min_p > 0 && r.min_p < 1) tags.push_back("min_p");
  if (!(r.min_p >= 0 && r.min_p < 1)) tags.push_back("min_p invalid");
  return tags;
}

}  // namespace sampcert::properties
