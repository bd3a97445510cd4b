#include "adapters/declarations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "adapters/row_fields.h"
#include "results/result_json.h"

namespace sampcert::adapters {
namespace {

using nlohmann::json;

// ---- The vocabularies: one row per value, in value order ----

constexpr DeclaredValue<GreedyTieBreak> kGreedy[] = {
    {GreedyTieBreak::kUniform, SAMPCERT_GREEDY_UNIFORM, "uniform", "uniform"},
    {GreedyTieBreak::kLowestIndex, SAMPCERT_GREEDY_LOWEST_INDEX, "lowest-index", "lowest index"},
    {GreedyTieBreak::kAny, SAMPCERT_GREEDY_ANY, "any", "any winner"},
};
constexpr DeclaredValue<TieRule> kTies[] = {
    {TieRule::kKeepAll, SAMPCERT_TIES_KEEP_ALL, "keep-all", "keep all"},
    {TieRule::kExactLowestIndex, SAMPCERT_TIES_EXACT_LOWEST_INDEX, "exact-lowest-index",
     "exact, lowest index", "lowest-index"},
    {TieRule::kExactAny, SAMPCERT_TIES_EXACT_ANY, "exact-any", "exact, any", "any"},
};
constexpr DeclaredValue<PipelineOrder> kOrders[] = {
    {PipelineOrder::kTemperatureFirst, SAMPCERT_ORDER_TEMPERATURE_FIRST, "temperature-first",
     "temperature first"},
    {PipelineOrder::kTruncationFirst, SAMPCERT_ORDER_TRUNCATION_FIRST, "truncation-first",
     "truncation first"},
};
constexpr DeclaredValue<TruncationStep> kSteps[] = {
    {TruncationStep::kTopK, SAMPCERT_STEP_TOP_K, "top-k", "top-k"},
    {TruncationStep::kTopP, SAMPCERT_STEP_TOP_P, "top-p", "top-p"},
    {TruncationStep::kMinP, SAMPCERT_STEP_MIN_P, "min-p", "min-p"},
};
constexpr DeclaredValue<NanPolicy> kNans[] = {
    {NanPolicy::kError, SAMPCERT_NAN_ERROR, "error", "error"},
    {NanPolicy::kMasked, SAMPCERT_NAN_MASKED, "masked", "masked"},
};
constexpr DeclaredValue<Determinism> kDeterminisms[] = {
    {Determinism::kNone, SAMPCERT_DETERMINISM_NONE, "none", "none"},
    {Determinism::kSameSeed, SAMPCERT_DETERMINISM_SAME_SEED, "same-seed", "same seed"},
    {Determinism::kCrossDevice, SAMPCERT_DETERMINISM_CROSS_DEVICE, "cross-device", "cross device"},
};
constexpr DeclaredValue<AccuracyClass> kAccuracies[] = {
    {AccuracyClass::kF32, SAMPCERT_ACCURACY_F32, "fp32", "fp32"},
    {AccuracyClass::kBF16, SAMPCERT_ACCURACY_BF16, "bf16", "bf16"},
    {AccuracyClass::kF16, SAMPCERT_ACCURACY_F16, "fp16", "fp16"},
};
constexpr DeclaredValue<VerifyScheme> kVerifySchemes[] = {
    {VerifyScheme::kExact, SAMPCERT_VERIFY_EXACT, "exact", "exact"},
    {VerifyScheme::kTypical, SAMPCERT_VERIFY_TYPICAL, "typical", "typical acceptance (lossy)"},
    {VerifyScheme::kLenient, SAMPCERT_VERIFY_LENIENT, "lenient", "lenient acceptance (lossy)"},
};
constexpr DeclaredValue<PenaltyHistory> kHistories[] = {
    {PenaltyHistory::kPromptAndOutput, SAMPCERT_HISTORY_PROMPT_AND_OUTPUT, "prompt-and-output",
     "prompt and output"},
    {PenaltyHistory::kOutputOnly, SAMPCERT_HISTORY_OUTPUT_ONLY, "output-only", "output only"},
    {PenaltyHistory::kNone, SAMPCERT_HISTORY_NONE, "none", "none (no such penalty)"},
};
// Policies::sequential_draws.
constexpr DeclaredValue<bool> kDrawModes[] = {
    {false, SAMPCERT_DRAWS_RANDOM_ACCESS, "random-access", "random access"},
    {true, SAMPCERT_DRAWS_SEQUENTIAL, "sequential", "sequential only"},
};

// Every value of the enum has its row, rows[i] is value i, and its ABI constant is i too (the
// ABI header promises its values equal the C++ enums). kValueCount is in sampcert/policies.h.
template <typename E, std::size_t N>
consteval bool OneRowPerValue(const DeclaredValue<E> (&rows)[N]) {
  if (N != static_cast<std::size_t>(kValueCount<E>)) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(rows[i].value) != i || rows[i].abi != static_cast<int32_t>(i)) {
      return false;
    }
  }
  return true;
}
#define SAMPCERT_ONE_ROW_PER_VALUE(rows, E)      \
  static_assert(OneRowPerValue(rows),            \
                #rows ": one row per " #E        \
                      " value, in value order, " \
                      "with the ABI value equal to the enum's (and kValueCount<" #E ">)")
SAMPCERT_ONE_ROW_PER_VALUE(kGreedy, GreedyTieBreak);
SAMPCERT_ONE_ROW_PER_VALUE(kTies, TieRule);
SAMPCERT_ONE_ROW_PER_VALUE(kOrders, PipelineOrder);
SAMPCERT_ONE_ROW_PER_VALUE(kSteps, TruncationStep);
SAMPCERT_ONE_ROW_PER_VALUE(kNans, NanPolicy);
SAMPCERT_ONE_ROW_PER_VALUE(kDeterminisms, Determinism);
SAMPCERT_ONE_ROW_PER_VALUE(kAccuracies, AccuracyClass);
SAMPCERT_ONE_ROW_PER_VALUE(kVerifySchemes, VerifyScheme);
SAMPCERT_ONE_ROW_PER_VALUE(kHistories, PenaltyHistory);
#undef SAMPCERT_ONE_ROW_PER_VALUE
static_assert(std::size(kDrawModes) == 2 && !kDrawModes[0].value && kDrawModes[1].value);
// SAMPCERT_STEP_TIES_* is 0 (as tie_rule) or the SAMPCERT_TIES_* value plus one.
static_assert(SAMPCERT_STEP_TIES_AS_DECLARED == 0 &&
              SAMPCERT_STEP_TIES_KEEP_ALL == SAMPCERT_TIES_KEEP_ALL + 1 &&
              SAMPCERT_STEP_TIES_EXACT_LOWEST_INDEX == SAMPCERT_TIES_EXACT_LOWEST_INDEX + 1 &&
              SAMPCERT_STEP_TIES_EXACT_ANY == SAMPCERT_TIES_EXACT_ANY + 1);

constexpr Vocabulary<GreedyTieBreak> kGreedyVocabulary{"greedy", "greedy tie-break",
                                                       "SAMPCERT_GREEDY_", kGreedy};
constexpr Vocabulary<TieRule> kTieVocabulary{"ties", "tie rule", "SAMPCERT_TIES_", kTies};
constexpr Vocabulary<PipelineOrder> kOrderVocabulary{"order", "pipeline order", "SAMPCERT_ORDER_",
                                                     kOrders};
constexpr Vocabulary<TruncationStep> kStepVocabulary{"steps", "truncation step", "SAMPCERT_STEP_",
                                                     kSteps};
constexpr Vocabulary<NanPolicy> kNanVocabulary{"nan", "NaN policy", "SAMPCERT_NAN_", kNans};
constexpr Vocabulary<Determinism> kDeterminismVocabulary{"determinism", "determinism level",
                                                         "SAMPCERT_DETERMINISM_", kDeterminisms};
constexpr Vocabulary<AccuracyClass> kAccuracyVocabulary{"accuracy", "accuracy class",
                                                        "SAMPCERT_ACCURACY_", kAccuracies};
constexpr Vocabulary<PenaltyHistory> kHistoryVocabulary{"history", "penalty history",
                                                        "SAMPCERT_HISTORY_", kHistories};
constexpr Vocabulary<bool> kDrawVocabulary{"draws", "draw mode", "SAMPCERT_DRAWS_", kDrawModes};
constexpr Vocabulary<VerifyScheme> kVerifyVocabulary{"verify_scheme", "verify scheme",
                                                     "SAMPCERT_VERIFY_", kVerifySchemes};

// Every vocabulary, in the dump's order (sampcert declarations, the Python helper's dicts).
constexpr std::tuple<const Vocabulary<GreedyTieBreak>&, const Vocabulary<TieRule>&,
                     const Vocabulary<PipelineOrder>&, const Vocabulary<TruncationStep>&,
                     const Vocabulary<NanPolicy>&, const Vocabulary<Determinism>&,
                     const Vocabulary<AccuracyClass>&, const Vocabulary<bool>&,
                     const Vocabulary<VerifyScheme>&, const Vocabulary<PenaltyHistory>&>
    kVocabularies{kGreedyVocabulary, kTieVocabulary,         kOrderVocabulary,    kStepVocabulary,
                  kNanVocabulary,    kDeterminismVocabulary, kAccuracyVocabulary, kDrawVocabulary,
                  kVerifyVocabulary, kHistoryVocabulary};

// The capabilities that are not a row field's (Capabilities() adds those, in bit order).
constexpr Capability kCapabilities[] = {
    {SAMPCERT_CAP_F32, "f32", "f32"},
    {SAMPCERT_CAP_F16, "f16", "f16"},
    {SAMPCERT_CAP_BF16, "bf16", "bf16"},
    {SAMPCERT_CAP_MASK, "mask", "mask"},
    // top-k, top-p, min-p, penalties, seeds and min-tokens: the capabilities of row fields, in
    // their rows (row_fields.h), listed among these by their bits.
    {SAMPCERT_CAP_TEMPERATURE_ZERO, "temperature-0", "temperature 0"},
    {SAMPCERT_CAP_PROBABILITIES, "probabilities", "probabilities"},
    {SAMPCERT_CAP_BATCH, "batch", "batch"},
    {SAMPCERT_CAP_VERIFY, "verify", "verify"},
    {SAMPCERT_CAP_VERIFY_DRAFT_LOGITS, "verify-draft-logits", "verify with draft logits"},
    {SAMPCERT_CAP_VERIFY_ACCEPTANCE, "verify-acceptance", "verify's acceptance probabilities"},
    // ABI MINOR 6 (BIAS-CAP-1): the bias is a list of the row (RowView), not a table field.
    {SAMPCERT_CAP_LOGIT_BIAS, "logit-bias", "logit bias"},
    // ABI MINOR 8 (LOGP-CAP-1): the modes of the log-probabilities sample() can return.
    {SAMPCERT_CAP_LOGPROBS_RAW, "logprobs-raw", "raw log-probabilities"},
    {SAMPCERT_CAP_LOGPROBS_SCALED, "logprobs-scaled", "scaled log-probabilities"},
    {SAMPCERT_CAP_LOGPROBS_PROCESSED, "logprobs-processed", "processed log-probabilities"},
};

// ---- Helpers of the codecs ----

// ABI members are 4-byte elements, read and written by offset (the exec protocol copies them
// by the same offsets).
template <typename T>
T Load(const char* at, std::size_t k = 0) {
  static_assert(sizeof(T) == 4);
  T v;
  std::memcpy(&v, at + k * 4, 4);
  return v;
}
template <typename T>
void Store(char* at, T v, std::size_t k = 0) {
  static_assert(sizeof(T) == 4);
  std::memcpy(at + k * 4, &v, 4);
}

template <typename T>
T OrThrow(Expected<T> e) {
  if (!e.ok()) throw std::invalid_argument(e.error().message);
  return std::move(e).value();
}

// The ABI value of an enum value; one without a row passes through as its number, for the
// reader's check to refuse by name (PoliciesToInfo runs inside get_info and must not throw).
template <typename E>
int32_t AbiOf(E value) {
  const DeclaredValue<E>* row = FindValue(value);
  return row != nullptr ? row->abi : static_cast<int32_t>(value);
}

// The ABI value of a value that must have a row (the encoders).
template <typename E>
int32_t CheckedAbi(E value) {
  const DeclaredValue<E>* row = FindValue(value);
  if (row == nullptr) throw std::invalid_argument(UnknownEnumValue(value).message);
  return row->abi;
}

template <typename E>
std::string_view IdOf() {
  return VocabularyOf(E{}).id;
}

}  // namespace

// How one field reads and writes each encoding. FromAbi returns "" or what is wrong with the
// value; the encoders throw std::invalid_argument on a value outside its vocabulary.
class FieldCodec {
 public:
  virtual std::string_view Vocabulary() const = 0;
  // How the copies outside C++ (the Python helper, PROTOCOL.md) write the ABI value: "value"
  // (the vocabulary's number), "step-ties" (0 as tie_rule, else the tie rule's number + 1),
  // "bits" (SAMPCERT_CAP_* bits), "flag" (0 or 1), "number" (a float).
  virtual std::string_view Encoding() const = 0;
  virtual std::string FromAbi(const char* member, SamplerInfo* out) const = 0;
  virtual void ToAbi(const SamplerInfo& in, char* member) const = 0;
  virtual json ToWire(const SamplerInfo& in) const = 0;
  virtual void FromWire(const json& j, SamplerInfo* out) const = 0;
  virtual json ToReport(const SamplerInfo& in) const = 0;       // null: not written
  virtual std::string ToText(const SamplerInfo& in) const = 0;  // "": no line

 protected:
  ~FieldCodec() = default;
};

namespace {

// A policy that is one value of a vocabulary (GreedyTieBreak, TieRule, ...).
template <auto Member>
class EnumCodec : public FieldCodec {
  using E = std::remove_cvref_t<decltype(std::declval<Policies&>().*Member)>;

 public:
  std::string_view Vocabulary() const override { return IdOf<E>(); }
  std::string_view Encoding() const override { return "value"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    auto v = ValueOfAbi<E>(Load<int32_t>(member));
    if (!v.ok()) return v.error().message;
    out->policies.*Member = *v;
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    Store(member, AbiOf(in.policies.*Member));
  }
  json ToWire(const SamplerInfo& in) const override { return CheckedAbi(in.policies.*Member); }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->policies.*Member = OrThrow(ValueOfAbi<E>(j.get<int64_t>()));
  }
  json ToReport(const SamplerInfo& in) const override {
    return OrThrow(NameOf(in.policies.*Member));
  }
  std::string ToText(const SamplerInfo& in) const override {
    return std::string(OrThrow(LabelOf(in.policies.*Member)));
  }
};

// PEN-POL-1: a penalty rule's history, shown in reports and `info` only for a sampler that
// declares penalties (for any other it is a default nothing reads).
template <auto Member>
class HistoryCodec final : public EnumCodec<Member> {
 public:
  json ToReport(const SamplerInfo& in) const override {
    return in.Has(SAMPCERT_CAP_PENALTIES) ? EnumCodec<Member>::ToReport(in) : json();
  }
  std::string ToText(const SamplerInfo& in) const override {
    return in.Has(SAMPCERT_CAP_PENALTIES) ? EnumCodec<Member>::ToText(in) : "";
  }
};

// POL-3's truncation order: three steps (ValidatePolicies checks it is a permutation).
class TruncationOrderCodec final : public FieldCodec {
 public:
  std::string_view Vocabulary() const override { return IdOf<TruncationStep>(); }
  std::string_view Encoding() const override { return "value"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    for (std::size_t k = 0; k < 3; ++k) {
      auto v = ValueOfAbi<TruncationStep>(Load<int32_t>(member, k));
      if (!v.ok()) return fmt::format("[{}]: {}", k, v.error().message);
      out->policies.truncation_order[k] = *v;
    }
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    for (std::size_t k = 0; k < 3; ++k) Store(member, AbiOf(in.policies.truncation_order[k]), k);
  }
  json ToWire(const SamplerInfo& in) const override {
    json out = json::array();
    for (TruncationStep s : in.policies.truncation_order) out.push_back(CheckedAbi(s));
    return out;
  }
  void FromWire(const json& j, SamplerInfo* out) const override {
    for (std::size_t k = 0; k < 3; ++k) {
      out->policies.truncation_order[k] =
          OrThrow(ValueOfAbi<TruncationStep>(j.at(k).get<int64_t>()));
    }
  }
  json ToReport(const SamplerInfo& in) const override {
    json out = json::array();
    for (TruncationStep s : in.policies.truncation_order) out.push_back(OrThrow(NameOf(s)));
    return out;
  }
  std::string ToText(const SamplerInfo& in) const override {
    std::string out;
    for (TruncationStep s : in.policies.truncation_order) {
      out += (out.empty() ? "" : ", ") + std::string(OrThrow(LabelOf(s)));
    }
    return out;
  }
};

// POL-2 at one truncation step (ABI MINOR 1): unset follows tie_rule. The ABI writes it as
// SAMPCERT_STEP_TIES_* (0, or the tie rule plus one), the wire as the tie rule or -1.
template <std::optional<TieRule> Policies::*Member>
class StepTiesCodec final : public FieldCodec {
 public:
  explicit constexpr StepTiesCodec(std::string_view what) : what_(what) {}
  std::string_view Vocabulary() const override { return IdOf<TieRule>(); }
  std::string_view Encoding() const override { return "step-ties"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    const int32_t v = Load<int32_t>(member);
    if (v == SAMPCERT_STEP_TIES_AS_DECLARED) return "";
    auto rule = ValueOfAbi<TieRule>(int64_t{v} - 1);
    if (!rule.ok()) {
      std::string known = "0 as declared";
      for (const DeclaredValue<TieRule>& row : kTies) {
        known += fmt::format(", {} {}", row.abi + 1, row.name);
      }
      return UnknownValue(what_, "SAMPCERT_STEP_TIES_", std::to_string(v), known).message;
    }
    out->policies.*Member = *rule;
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    const std::optional<TieRule>& r = in.policies.*Member;
    Store(member, r ? AbiOf(*r) + 1 : int32_t{SAMPCERT_STEP_TIES_AS_DECLARED});
  }
  json ToWire(const SamplerInfo& in) const override {
    const std::optional<TieRule>& r = in.policies.*Member;
    return r ? CheckedAbi(*r) : -1;
  }
  void FromWire(const json& j, SamplerInfo* out) const override {
    const int64_t v = j.get<int64_t>();
    out->policies.*Member =
        v == -1 ? std::nullopt : std::optional<TieRule>(OrThrow(ValueOfAbi<TieRule>(v)));
  }
  json ToReport(const SamplerInfo& in) const override {
    const std::optional<TieRule>& r = in.policies.*Member;
    return r ? json(OrThrow(NameOf(*r))) : json();
  }
  std::string ToText(const SamplerInfo& in) const override {
    const std::optional<TieRule>& r = in.policies.*Member;
    return r ? std::string(OrThrow(LabelOf(*r))) : "";
  }

 private:
  std::string_view what_;  // "top-k tie rule"
};

// POL-7 (ABI MINOR 1): the report names it only when sequential.
class DrawModeCodec final : public FieldCodec {
 public:
  std::string_view Vocabulary() const override { return IdOf<bool>(); }
  std::string_view Encoding() const override { return "value"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    auto v = ValueOfAbi<bool>(Load<uint32_t>(member));
    if (!v.ok()) return v.error().message;
    out->policies.sequential_draws = *v;
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    Store(member, static_cast<uint32_t>(AbiOf(in.policies.sequential_draws)));
  }
  json ToWire(const SamplerInfo& in) const override { return in.policies.sequential_draws; }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->policies.sequential_draws = j.get<bool>();
  }
  json ToReport(const SamplerInfo& in) const override {
    return in.policies.sequential_draws ? json(OrThrow(NameOf(true))) : json();
  }
  std::string ToText(const SamplerInfo& in) const override {
    return std::string(OrThrow(LabelOf(in.policies.sequential_draws)));
  }
};

class CapabilitiesCodec final : public FieldCodec {
 public:
  std::string_view Vocabulary() const override { return ""; }
  std::string_view Encoding() const override { return "bits"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    out->capabilities = Load<uint32_t>(member);
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override { Store(member, in.capabilities); }
  json ToWire(const SamplerInfo& in) const override { return in.capabilities; }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->capabilities = j.get<uint32_t>();
  }
  json ToReport(const SamplerInfo& in) const override { return CapabilityNames(in.capabilities); }
  std::string ToText(const SamplerInfo& in) const override {
    std::string s;
    for (const std::string& name : CapabilityNames(in.capabilities)) {
      s += s.empty() ? name : ", " + name;
    }
    return s.empty() ? "(none)" : s;
  }
};

class ThreadSafeCodec final : public FieldCodec {
 public:
  std::string_view Vocabulary() const override { return ""; }
  std::string_view Encoding() const override { return "flag"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    out->thread_safe = Load<int32_t>(member) != 0;
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    Store(member, int32_t{in.thread_safe ? 1 : 0});
  }
  json ToWire(const SamplerInfo& in) const override { return in.thread_safe; }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->thread_safe = j.get<bool>();
  }
  json ToReport(const SamplerInfo& in) const override { return in.thread_safe; }
  std::string ToText(const SamplerInfo& in) const override { return in.thread_safe ? "yes" : "no"; }
};

// POL-5's threshold (float everywhere) and STAT-6's draw cost (double in Policies, float in
// the ABI; ABI MINOR 1, so written and shown only when declared).
class ThresholdCodec final : public FieldCodec {
 public:
  std::string_view Vocabulary() const override { return ""; }
  std::string_view Encoding() const override { return "number"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    out->policies.greedy_threshold = Load<float>(member);
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    Store(member, in.policies.greedy_threshold);
  }
  json ToWire(const SamplerInfo& in) const override {
    return results::Number(in.policies.greedy_threshold);
  }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->policies.greedy_threshold = static_cast<float>(results::NumberFrom(j));
  }
  json ToReport(const SamplerInfo& in) const override {
    return results::Number(in.policies.greedy_threshold);
  }
  std::string ToText(const SamplerInfo& in) const override {
    return fmt::format("{}", in.policies.greedy_threshold);
  }
};

class DrawCostCodec final : public FieldCodec {
 public:
  std::string_view Vocabulary() const override { return ""; }
  std::string_view Encoding() const override { return "number"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    out->policies.draw_cost_ns_per_token = static_cast<double>(Load<float>(member));
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    Store(member, static_cast<float>(in.policies.draw_cost_ns_per_token));
  }
  json ToWire(const SamplerInfo& in) const override {
    return results::Number(in.policies.draw_cost_ns_per_token);
  }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->policies.draw_cost_ns_per_token = results::NumberFrom(j);
  }
  json ToReport(const SamplerInfo& in) const override {
    const double cost = in.policies.draw_cost_ns_per_token;
    return cost > 0 ? results::Number(cost) : json();
  }
  std::string ToText(const SamplerInfo& in) const override {
    const double cost = in.policies.draw_cost_ns_per_token;
    return cost > 0 ? fmt::format("{} ns per vocabulary token", cost) : "";
  }
};

// VER-DEV-1 (ABI MINOR 3): the verify scheme and its two parameters, in the report and
// `sampcert info` only for a lossy scheme (an exact verifier, or none, declares nothing there).
class VerifySchemeCodec final : public EnumCodec<&Policies::verify_scheme> {
 public:
  json ToReport(const SamplerInfo& in) const override {
    if (in.policies.verify_scheme == VerifyScheme::kExact) return json();
    return EnumCodec::ToReport(in);
  }
  std::string ToText(const SamplerInfo& in) const override {
    if (in.policies.verify_scheme == VerifyScheme::kExact) return "";
    return EnumCodec::ToText(in);
  }
};

// Shown on the scheme's line: "(threshold 0.09) (alpha 0.3)"; a parameter at 0 is not shown.
template <float Policies::*Member>
class VerifyParamCodec final : public FieldCodec {
 public:
  explicit constexpr VerifyParamCodec(const char* name) : name_(name) {}
  std::string_view Vocabulary() const override { return ""; }
  std::string_view Encoding() const override { return "number"; }
  std::string FromAbi(const char* member, SamplerInfo* out) const override {
    out->policies.*Member = Load<float>(member);
    return "";
  }
  void ToAbi(const SamplerInfo& in, char* member) const override {
    Store(member, in.policies.*Member);
  }
  json ToWire(const SamplerInfo& in) const override { return results::Number(in.policies.*Member); }
  void FromWire(const json& j, SamplerInfo* out) const override {
    out->policies.*Member = static_cast<float>(results::NumberFrom(j));
  }
  json ToReport(const SamplerInfo& in) const override {
    if (in.policies.verify_scheme == VerifyScheme::kExact) return json();
    return results::Number(in.policies.*Member);
  }
  std::string ToText(const SamplerInfo& in) const override {
    if (in.policies.verify_scheme == VerifyScheme::kExact || in.policies.*Member == 0) return "";
    return fmt::format("{} {}", name_, in.policies.*Member);
  }

 private:
  const char* name_;
};

const CapabilitiesCodec kCapabilitiesCodec;
const VerifySchemeCodec kVerifySchemeCodec;
const VerifyParamCodec<&Policies::verify_threshold> kVerifyThresholdCodec{"threshold"};
const VerifyParamCodec<&Policies::verify_alpha> kVerifyAlphaCodec{"alpha"};
const EnumCodec<&Policies::greedy_tie_break> kGreedyCodec;
const EnumCodec<&Policies::tie_rule> kTieRuleCodec;
const StepTiesCodec<&Policies::top_k_tie_rule> kTopKTiesCodec{"top-k tie rule"};
const StepTiesCodec<&Policies::top_p_tie_rule> kTopPTiesCodec{"top-p tie rule"};
const DrawModeCodec kDrawModeCodec;
const DrawCostCodec kDrawCostCodec;
const EnumCodec<&Policies::order> kOrderCodec;
const TruncationOrderCodec kTruncationOrderCodec;
const EnumCodec<&Policies::nan_policy> kNanCodec;
const ThresholdCodec kThresholdCodec;
const EnumCodec<&Policies::determinism> kDeterminismCodec;
const EnumCodec<&Policies::accuracy> kAccuracyCodec;
const ThreadSafeCodec kThreadSafeCodec;
const HistoryCodec<&Policies::repetition_history> kRepetitionHistoryCodec;
const HistoryCodec<&Policies::additive_history> kAdditiveHistoryCodec;

#define SAMPCERT_ABI(member) offsetof(sampcert_sampler_info, member)

// ---- The fields, in `sampcert info`'s order ----
const DeclaredField kFields[] = {
    // name, wire key, report key, policy?, info label, ABI type, count, ABI offset, MINOR
    {"capabilities", "capabilities", "capabilities", false, "capabilities", 'I', 1,
     SAMPCERT_ABI(capabilities), 0, &kCapabilitiesCodec},
    {"greedy_tie_break", "greedy_tie_break", "greedy_tie_break", true, "greedy ties", 'i', 1,
     SAMPCERT_ABI(greedy_tie_break), 0, &kGreedyCodec},
    {"tie_rule", "tie_rule", "tie_rule", true, "cut ties", 'i', 1, SAMPCERT_ABI(tie_rule), 0,
     &kTieRuleCodec},
    {"top_k_tie_rule", "top_k_tie_rule", "top_k_tie_rule", true, "top-k ties", 'i', 1,
     SAMPCERT_ABI(top_k_tie_rule), 1, &kTopKTiesCodec},
    {"top_p_tie_rule", "top_p_tie_rule", "top_p_tie_rule", true, "top-p ties", 'i', 1,
     SAMPCERT_ABI(top_p_tie_rule), 1, &kTopPTiesCodec},
    {"draw_mode", "sequential_draws", "draws", true, "draws", 'I', 1, SAMPCERT_ABI(draw_mode), 1,
     &kDrawModeCodec},
    {"draw_cost_ns_per_token", "draw_cost_ns_per_token", "draw_cost_ns_per_token", true,
     "draw cost", 'f', 1, SAMPCERT_ABI(draw_cost_ns_per_token), 1, &kDrawCostCodec},
    {"pipeline_order", "order", "pipeline_order", true, "order", 'i', 1,
     SAMPCERT_ABI(pipeline_order), 0, &kOrderCodec},
    {"truncation_order", "truncation_order", "truncation_order", true, "", 'i', 3,
     SAMPCERT_ABI(truncation_order), 0, &kTruncationOrderCodec},
    {"nan_policy", "nan_policy", "nan_policy", true, "NaN logits", 'i', 1, SAMPCERT_ABI(nan_policy),
     0, &kNanCodec},
    {"greedy_threshold", "greedy_threshold", "greedy_threshold", true, "greedy below", 'f', 1,
     SAMPCERT_ABI(greedy_threshold), 0, &kThresholdCodec},
    {"determinism", "determinism", "determinism", true, "determinism", 'i', 1,
     SAMPCERT_ABI(determinism), 0, &kDeterminismCodec},
    {"accuracy", "accuracy", "accuracy", true, "accuracy", 'i', 1, SAMPCERT_ABI(accuracy), 0,
     &kAccuracyCodec},
    {"thread_safe", "thread_safe", "thread_safe", false, "thread safe", 'i', 1,
     SAMPCERT_ABI(thread_safe), 0, &kThreadSafeCodec},
    {"verify_scheme", "verify_scheme", "verify_scheme", true, "verify scheme", 'i', 1,
     SAMPCERT_ABI(verify_scheme), 3, &kVerifySchemeCodec},
    {"verify_threshold", "verify_threshold", "verify_threshold", true, "", 'f', 1,
     SAMPCERT_ABI(verify_threshold), 3, &kVerifyThresholdCodec},
    {"verify_alpha", "verify_alpha", "verify_alpha", true, "", 'f', 1, SAMPCERT_ABI(verify_alpha),
     3, &kVerifyAlphaCodec},
    {"repetition_history", "repetition_history", "repetition_history", true, "repetition sees", 'i',
     1, SAMPCERT_ABI(repetition_history), 4, &kRepetitionHistoryCodec},
    {"additive_history", "additive_history", "additive_history", true, "presence/frequency see",
     'i', 1, SAMPCERT_ABI(additive_history), 4, &kAdditiveHistoryCodec},
};

#undef SAMPCERT_ABI

// A field appended by a MINOR is there only where the plug-in's struct_size covers it.
bool Covers(const sampcert_sampler_info& info, const DeclaredField& f) {
  return f.minor == 0 || info.struct_size >= f.abi_offset + 4 * std::size_t{f.count};
}

template <typename E>
json VocabularyJson(const Vocabulary<E>& v) {
  json values = json::array();
  for (const DeclaredValue<E>& row : v.values) {
    values.push_back({{"name", row.name}, {"abi", row.abi}, {"label", row.label}});
    if (!row.alias.empty()) values.back()["alias"] = row.alias;
  }
  return {{"id", v.id}, {"what", v.what}, {"abi_prefix", v.abi_prefix}, {"values", values}};
}

}  // namespace

template <typename E>
const Vocabulary<E>& VocabularyOf(E) {
  return std::get<const Vocabulary<E>&>(kVocabularies);
}
// One line per vocabulary of kVocabularies: other files see only the declaration.
template const Vocabulary<GreedyTieBreak>& VocabularyOf(GreedyTieBreak);
template const Vocabulary<TieRule>& VocabularyOf(TieRule);
template const Vocabulary<PipelineOrder>& VocabularyOf(PipelineOrder);
template const Vocabulary<TruncationStep>& VocabularyOf(TruncationStep);
template const Vocabulary<NanPolicy>& VocabularyOf(NanPolicy);
template const Vocabulary<Determinism>& VocabularyOf(Determinism);
template const Vocabulary<AccuracyClass>& VocabularyOf(AccuracyClass);
template const Vocabulary<bool>& VocabularyOf(bool);
template const Vocabulary<VerifyScheme>& VocabularyOf(VerifyScheme);
template const Vocabulary<PenaltyHistory>& VocabularyOf(PenaltyHistory);

Error UnknownValue(std::string_view what, std::string_view abi_prefix, const std::string& value,
                   const std::string& known) {
  return Error{ErrorCode::kInvalidArgument,
               abi_prefix.empty()
                   ? fmt::format("unknown {} {} (known: {})", what, value, known)
                   : fmt::format("unknown {} {} ({}*: {})", what, value, abi_prefix, known)};
}

std::span<const Capability> Capabilities() {
  static const std::vector<Capability> all = [] {
    std::vector<Capability> out(std::begin(kCapabilities), std::end(kCapabilities));
    for (const RowField& f : kRowFields) {
      if (f.capability.bit != 0) out.push_back(f.capability);
    }
    std::sort(out.begin(), out.end(),
              [](const Capability& a, const Capability& b) { return a.bit < b.bit; });
    // Fields that share a capability (seed, seed_mode) list it once.
    out.erase(std::unique(out.begin(), out.end(),
                          [](const Capability& a, const Capability& b) { return a.bit == b.bit; }),
              out.end());
    return out;
  }();
  return all;
}

std::vector<std::string> CapabilityNames(uint32_t capabilities) {
  std::vector<std::string> out;
  for (const Capability& c : Capabilities()) {
    if (capabilities & c.bit) out.emplace_back(c.name);
  }
  return out;
}

std::span<const DeclaredField> DeclaredFields() { return kFields; }

std::string_view VocabularyIdOf(const DeclaredField& field) { return field.codec->Vocabulary(); }

const std::vector<const DeclaredField*>& FieldsInAbiOrder() {
  static const std::vector<const DeclaredField*> sorted = [] {
    std::vector<const DeclaredField*> out;
    for (const DeclaredField& f : kFields) out.push_back(&f);
    std::sort(out.begin(), out.end(), [](const DeclaredField* a, const DeclaredField* b) {
      return a->abi_offset < b->abi_offset;
    });
    return out;
  }();
  return sorted;
}

Expected<SamplerInfo> SamplerInfoFromAbi(const sampcert_sampler_info& info) {
  SamplerInfo out;
  // SPEC TEXT-1: the name is copied into every JUnit test case, so a 2 MiB name made a 402 MB
  // report set that the tool's own readers refuse. Read at most one byte past the cap.
  for (const auto& [field, text, to] : {std::tuple{"name", info.name, &out.name},
                                        std::tuple{"version", info.version, &out.version}}) {
    const std::size_t n = text != nullptr ? ::strnlen(text, kMaxSamplerText + 1) : 0;
    if (n > kMaxSamplerText) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("{}: longer than {} bytes (SPEC TEXT-1), starting '{}'", field,
                               kMaxSamplerText, std::string_view(text, 40))};
    }
    to->assign(text != nullptr ? text : "", n);
  }
  const char* base = reinterpret_cast<const char*>(&info);
  for (const DeclaredField& f : kFields) {
    if (!Covers(info, f)) continue;
    if (std::string why = f.codec->FromAbi(base + f.abi_offset, &out); !why.empty()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", f.name, why)};
    }
  }
  return out;
}

void PoliciesToInfo(const Policies& policies, sampcert_sampler_info* info) {
  SamplerInfo in;
  in.policies = policies;
  char* base = reinterpret_cast<char*>(info);
  for (const DeclaredField& f : kFields) {
    if (f.policy && Covers(*info, f)) f.codec->ToAbi(in, base + f.abi_offset);
  }
}

void SamplerInfoToAbi(const SamplerInfo& in, sampcert_sampler_info* info) {
  char* base = reinterpret_cast<char*>(info);
  for (const DeclaredField& f : kFields) {
    if (Covers(*info, f)) f.codec->ToAbi(in, base + f.abi_offset);
  }
}

json InfoToJson(const SamplerInfo& info) {
  json j = {{"name", info.name}, {"version", info.version}};
  for (const DeclaredField& f : kFields) j[std::string(f.wire)] = f.codec->ToWire(info);
  return j;
}

SamplerInfo InfoFromJson(const json& j) {
  SamplerInfo info;
  info.name = j.at("name").get<std::string>();
  info.version = j.at("version").get<std::string>();
  for (const DeclaredField& f : kFields) {
    try {
      f.codec->FromWire(j.at(std::string(f.wire)), &info);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: {}", f.wire, e.what()));
    }
  }
  return info;
}

json DeclarationToReport(const SamplerInfo& info) {
  json j = {{"policies", json::object()}};
  for (const DeclaredField& f : kFields) {
    json v = f.codec->ToReport(info);
    if (v.is_null()) continue;
    (f.policy ? j["policies"] : j)[std::string(f.report)] = std::move(v);
  }
  return j;
}

std::string DeclarationText(const SamplerInfo& info) {
  std::string out;
  for (const DeclaredField& f : kFields) {
    const std::string text = f.codec->ToText(info);
    if (text.empty()) continue;
    if (f.label.empty() && !out.empty()) {
      out.insert(out.size() - 1, " (" + text + ")");  // before the line's '\n'
    } else {
      // Labels align at column 15; a longer one keeps a space before its value.
      std::string label = std::string(f.label) + ":";
      if (label.size() >= 15) label += ' ';
      out += fmt::format("{:<15}{}\n", label, text);
    }
  }
  return out;
}

json DeclarationsDump() {
  json caps = json::array();
  for (const Capability& c : Capabilities()) {
    caps.push_back({{"name", c.name}, {"bit", c.bit}, {"label", c.label}});
  }
  // The defaults of the Python helper's Info: a default-constructed declaration, f32 only.
  SamplerInfo defaults;
  defaults.capabilities = SAMPCERT_CAP_F32;
  sampcert_sampler_info abi{};
  json fields = json::array();
  for (const DeclaredField* f : FieldsInAbiOrder()) {
    f->codec->ToAbi(defaults, reinterpret_cast<char*>(&abi) + f->abi_offset);
    json default_abi = json::array();
    for (uint32_t k = 0; k < f->count; ++k) {
      const char* element = reinterpret_cast<const char*>(&abi) + f->abi_offset + 4 * k;
      if (f->abi_type == 'f') {
        default_abi.push_back(results::Number(Load<float>(element)));
      } else if (f->abi_type == 'I') {
        default_abi.push_back(Load<uint32_t>(element));
      } else {
        default_abi.push_back(Load<int32_t>(element));
      }
    }
    fields.push_back({{"name", f->name},
                      {"wire", f->wire},
                      {"report", f->report},
                      {"policy", f->policy},
                      {"label", f->label},
                      {"vocabulary", f->codec->Vocabulary()},
                      {"encoding", f->codec->Encoding()},
                      {"default_abi", default_abi},
                      {"abi_type", std::string(1, f->abi_type)},
                      {"count", f->count},
                      {"abi_offset", f->abi_offset},
                      {"minor", f->minor}});
  }
  return {{"abi_version", {SAMPCERT_ABI_VERSION_MAJOR, SAMPCERT_ABI_VERSION_MINOR}},
          {"capabilities", caps},
          {"vocabularies",
           std::apply([](const auto&... v) { return json::array({VocabularyJson(v)...}); },
                      kVocabularies)},
          {"step_ties", "SAMPCERT_STEP_TIES_*: 0 as tie_rule, else the SAMPCERT_TIES_* value + 1"},
          {"fields", fields},
          {"row", RowFieldsDump()}};
}

}  // namespace sampcert::adapters
