// The declaration tables: every value has one row, names and ABI values round-trip, an unknown
// value is an error naming it, the fields cover the ABI struct, and every encoding round-trips.
#include "adapters/declarations.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

namespace sampcert::adapters {
namespace {

using nlohmann::json;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Over the enum's whole range (kValueCount, policies.h): a row each, and the round trips.
template <typename E>
void CheckVocabulary() {
  const Vocabulary<E>& v = VocabularyOf(E{});
  SCOPED_TRACE(std::string(v.what));
  EXPECT_EQ(v.values.size(), static_cast<std::size_t>(kValueCount<E>));
  std::set<std::string_view> spellings;
  for (int32_t i = 0; i < kValueCount<E>; ++i) {
    const E value = static_cast<E>(i);
    const DeclaredValue<E>* row = FindValue(value);
    ASSERT_NE(row, nullptr) << i;
    EXPECT_FALSE(row->name.empty());
    EXPECT_FALSE(row->label.empty());
    EXPECT_TRUE(spellings.insert(row->name).second) << row->name;
    if (!row->alias.empty()) {
      EXPECT_TRUE(spellings.insert(row->alias).second) << row->alias;
      EXPECT_EQ(*ValueNamed<E>(row->alias), value);
    }
    EXPECT_EQ(*NameOf(value), row->name);
    EXPECT_EQ(*LabelOf(value), row->label);
    EXPECT_EQ(*ValueNamed<E>(row->name), value);
    EXPECT_EQ(*ValueOfAbi<E>(row->abi), value);
  }
  const E past = static_cast<E>(kValueCount<E>);
  EXPECT_EQ(FindValue(past), nullptr);
  ASSERT_FALSE(NameOf(past).ok());
  EXPECT_TRUE(Contains(NameOf(past).error().message,
                       "unknown " + std::string(v.what) + " " + std::to_string(kValueCount<E>)))
      << NameOf(past).error().message;
  EXPECT_FALSE(LabelOf(past).ok());
  EXPECT_FALSE(ValueOfAbi<E>(-1).ok());
  EXPECT_FALSE(ValueOfAbi<E>(kValueCount<E>).ok());
}

TEST(Declarations, EveryEnumValueHasOneRowAndRoundTrips) {
  CheckVocabulary<GreedyTieBreak>();
  CheckVocabulary<TieRule>();
  CheckVocabulary<PipelineOrder>();
  CheckVocabulary<TruncationStep>();
  CheckVocabulary<NanPolicy>();
  CheckVocabulary<Determinism>();
  CheckVocabulary<AccuracyClass>();
  EXPECT_EQ(*NameOf(true), "sequential");
  EXPECT_EQ(*ValueOfAbi<bool>(SAMPCERT_DRAWS_RANDOM_ACCESS), false);
  EXPECT_FALSE(ValueOfAbi<bool>(2).ok());
}

TEST(Declarations, UnknownValuesAreErrorsByName) {
  const auto by_abi = ValueOfAbi<TieRule>(7);
  ASSERT_FALSE(by_abi.ok());
  EXPECT_EQ(by_abi.error().message,
            "unknown tie rule 7 (SAMPCERT_TIES_*: 0 keep-all, 1 exact-lowest-index, 2 exact-any)");
  const auto by_name = ValueNamed<Determinism>("same_seed");
  ASSERT_FALSE(by_name.ok());
  EXPECT_EQ(by_name.error().message,
            "unknown determinism level 'same_seed' (known: none, same-seed, cross-device)");
  // The command line's shorter spellings are those of their own vocabulary only.
  EXPECT_EQ(*ValueNamed<TieRule>("any"), TieRule::kExactAny);
  EXPECT_EQ(*ValueNamed<GreedyTieBreak>("any"), GreedyTieBreak::kAny);
  EXPECT_FALSE(ValueNamed<PipelineOrder>("any").ok());
}

TEST(Declarations, CapabilitiesAreTheAbiBits) {
  uint32_t all = 0;
  std::set<std::string_view> names;
  for (const Capability& c : Capabilities()) {
    EXPECT_EQ(c.bit & (c.bit - 1), 0u) << c.name << ": one bit";
    EXPECT_EQ(all & c.bit, 0u) << c.name;
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    all |= c.bit;
  }
  // Every SAMPCERT_CAP_* the ABI header defines has its row (here or a row field's), and no
  // other bit has one: read from the header's text, so a new capability is written there and in
  // its row alone.
  std::ifstream in(std::string(SOURCE_DIR) + "/include/sampcert/sampler_abi.h");
  ASSERT_TRUE(in) << SOURCE_DIR;
  const std::regex define(R"(#define SAMPCERT_CAP_\w+ \(1u << (\d+)\))");
  uint32_t defined = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, define)) defined |= 1u << std::stoi(m[1]);
  }
  EXPECT_GE(defined, SAMPCERT_CAP_VERIFY_ACCEPTANCE) << "the header's defines were not read";
  EXPECT_EQ(all, defined) << "a SAMPCERT_CAP_* without a row, or a row without its define";
  EXPECT_EQ(CapabilityNames(SAMPCERT_CAP_F32 | SAMPCERT_CAP_TEMPERATURE_ZERO),
            (std::vector<std::string>{"f32", "temperature-0"}));
}

// How many scalars initialize the aggregate T (an array member counts its elements).
struct AnyScalar {
  template <typename T>
  operator T() const {  // NOLINT: converts to every member type
    return T{};
  }
};
template <typename T, typename... A>
constexpr std::size_t Scalars() {
  if constexpr (requires { T{A{}..., AnyScalar{}}; }) {
    return Scalars<T, A..., AnyScalar>();
  } else {
    return sizeof...(A);
  }
}

// A new member of sampcert_sampler_info without a row leaves a hole here, or (in the tail
// padding) changes the count of its scalars.
TEST(Declarations, FieldsCoverTheAbiStructOnce) {
  std::size_t elements = 6;  // struct_size, name, version, reserved0, reserved2, reserved1
  for (const DeclaredField& f : DeclaredFields()) elements += f.count;
  EXPECT_EQ(elements, Scalars<sampcert_sampler_info>());
  std::size_t at = offsetof(sampcert_sampler_info, capabilities);
  std::set<std::string_view> wire, report, name;
  for (const DeclaredField* f : FieldsInAbiOrder()) {
    if (at == offsetof(sampcert_sampler_info, reserved0)) at += 4;
    if (at == offsetof(sampcert_sampler_info, reserved2)) at += 4;
    if (at == offsetof(sampcert_sampler_info, reserved1)) at += 4;
    EXPECT_EQ(f->abi_offset, at) << f->name;
    EXPECT_EQ(f->minor, f->abi_offset >= SAMPCERT_SAMPLER_INFO_MINOR4_OFFSET   ? 4u
                        : f->abi_offset >= SAMPCERT_SAMPLER_INFO_MINOR3_OFFSET ? 3u
                        : f->abi_offset >= SAMPCERT_SAMPLER_INFO_MINOR1_OFFSET ? 1u
                                                                               : 0u)
        << f->name;
    at = f->abi_offset + 4 * std::size_t{f->count};
    EXPECT_TRUE(wire.insert(f->wire).second) << f->wire;
    EXPECT_TRUE(report.insert(f->report).second) << f->report;
    EXPECT_TRUE(name.insert(f->name).second) << f->name;
  }
  // Up to the last MINOR 4 field, then the struct's tail padding (size_t alignment).
  EXPECT_EQ(at, offsetof(sampcert_sampler_info, additive_history) + 4);
  constexpr std::size_t kAlign = alignof(sampcert_sampler_info);
  EXPECT_EQ((at + kAlign - 1) / kAlign * kAlign, sizeof(sampcert_sampler_info));
  EXPECT_EQ(FieldsInAbiOrder().size(), DeclaredFields().size());
}

// Every field off its default.
SamplerInfo Unusual() {
  SamplerInfo info;
  info.name = "unusual";
  info.version = "2";
  info.capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_MASK | SAMPCERT_CAP_BATCH;
  info.thread_safe = true;
  Policies& p = info.policies;
  p.greedy_tie_break = GreedyTieBreak::kAny;
  p.tie_rule = TieRule::kExactAny;
  p.top_k_tie_rule = TieRule::kKeepAll;
  p.top_p_tie_rule = TieRule::kExactLowestIndex;
  p.order = PipelineOrder::kTruncationFirst;
  p.truncation_order = {TruncationStep::kMinP, TruncationStep::kTopK, TruncationStep::kTopP};
  p.nan_policy = NanPolicy::kMasked;
  p.greedy_threshold = 0.5f;
  p.determinism = Determinism::kNone;
  p.accuracy = AccuracyClass::kBF16;
  p.sequential_draws = true;
  p.draw_cost_ns_per_token = 12.5;
  p.verify_scheme = VerifyScheme::kTypical;
  p.verify_threshold = 0.09f;
  p.verify_alpha = 0.3f;
  return info;
}

sampcert_sampler_info FreshInfo() {
  sampcert_sampler_info i{};
  i.struct_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;
  return i;
}

TEST(Declarations, EveryEncodingRoundTrips) {
  const SamplerInfo info = Unusual();
  const json wire = InfoToJson(info);
  EXPECT_EQ(InfoToJson(InfoFromJson(wire)), wire);
  EXPECT_EQ(InfoToJson(InfoFromJson(json::parse(wire.dump()))), wire);

  sampcert_sampler_info abi = FreshInfo();
  abi.name = "unusual";
  abi.version = "2";
  SamplerInfoToAbi(info, &abi);
  EXPECT_EQ(abi.top_k_tie_rule, SAMPCERT_STEP_TIES_KEEP_ALL);
  EXPECT_EQ(abi.draw_mode, SAMPCERT_DRAWS_SEQUENTIAL);
  auto back = SamplerInfoFromAbi(abi);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(InfoToJson(*back), wire);

  // What the exec protocol does: the fields' elements by offset, in the ABI's order.
  sampcert_sampler_info copy = FreshInfo();
  for (const DeclaredField* f : FieldsInAbiOrder()) {
    std::memcpy(reinterpret_cast<char*>(&copy) + f->abi_offset,
                reinterpret_cast<const char*>(&abi) + f->abi_offset, 4 * std::size_t{f->count});
  }
  copy.name = "unusual";
  copy.version = "2";
  EXPECT_EQ(InfoToJson(*SamplerInfoFromAbi(copy)), wire);

  // PoliciesToInfo leaves what is not a policy alone.
  sampcert_sampler_info only = FreshInfo();
  only.capabilities = 7;
  PoliciesToInfo(info.policies, &only);
  EXPECT_EQ(only.capabilities, 7u);
  EXPECT_EQ(only.thread_safe, 0);
  EXPECT_EQ(only.pipeline_order, SAMPCERT_ORDER_TRUNCATION_FIRST);
}

TEST(Declarations, AMinorZeroStructEndsBeforeTheMinorOneFields) {
  sampcert_sampler_info abi = FreshInfo();
  SamplerInfoToAbi(Unusual(), &abi);
  abi.struct_size = SAMPCERT_SAMPLER_INFO_MINOR1_OFFSET;
  abi.draw_mode = 77;  // past struct_size: not read
  auto back = SamplerInfoFromAbi(abi);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->policies.top_k_tie_rule.has_value());
  EXPECT_FALSE(back->policies.sequential_draws);
  EXPECT_EQ(back->policies.draw_cost_ns_per_token, 0);
  EXPECT_EQ(back->policies.tie_rule, TieRule::kExactAny);

  sampcert_sampler_info minor0 = FreshInfo();
  minor0.struct_size = SAMPCERT_SAMPLER_INFO_MINOR1_OFFSET;
  minor0.draw_mode = 5;
  PoliciesToInfo(Unusual().policies, &minor0);
  EXPECT_EQ(minor0.draw_mode, 5u) << "written past a MINOR 0 struct";
}

TEST(Declarations, AnUnknownAbiValueNamesTheFieldAndTheValue) {
  struct Case {
    void (*set)(sampcert_sampler_info*);
    const char* expect;
  };
  const Case cases[] = {
      {[](sampcert_sampler_info* i) { i->tie_rule = 7; }, "tie_rule: unknown tie rule 7"},
      {[](sampcert_sampler_info* i) { i->greedy_tie_break = -1; },
       "greedy_tie_break: unknown greedy tie-break -1 (SAMPCERT_GREEDY_*: 0 uniform"},
      {[](sampcert_sampler_info* i) { i->truncation_order[1] = 3; },
       "truncation_order: [1]: unknown truncation step 3"},
      {[](sampcert_sampler_info* i) { i->top_p_tie_rule = 9; },
       "top_p_tie_rule: unknown top-p tie rule 9 (SAMPCERT_STEP_TIES_*: 0 as declared, 1 "
       "keep-all, 2 exact-lowest-index, 3 exact-any)"},
      {[](sampcert_sampler_info* i) { i->draw_mode = 2; },
       "draw_mode: unknown draw mode 2 (SAMPCERT_DRAWS_*: 0 random-access, 1 sequential)"},
      {[](sampcert_sampler_info* i) { i->accuracy = 3; }, "accuracy: unknown accuracy class 3"},
  };
  for (const Case& c : cases) {
    sampcert_sampler_info abi = FreshInfo();
    SamplerInfoToAbi(SamplerInfo{}, &abi);
    c.set(&abi);
    auto r = SamplerInfoFromAbi(abi);
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_TRUE(Contains(r.error().message, c.expect)) << r.error().message;
  }
}

// SPEC TEXT-1: a plug-in named with 2 MiB of text made a 402 MB report.junit.xml (the name is in
// every test case) that the tool's own readers refused. Refused at open, by the length.
TEST(Declarations, ANameOrVersionOverTheCapIsRefused) {
  const std::string longest(kMaxSamplerText, 'n'), over(std::size_t{2} << 20, 'n');
  for (const std::string* name : {&longest, &over}) {
    for (const bool is_version : {false, true}) {
      sampcert_sampler_info abi = FreshInfo();
      SamplerInfoToAbi(SamplerInfo{}, &abi);
      abi.name = is_version ? "n" : name->c_str();
      abi.version = is_version ? name->c_str() : "1";
      auto r = SamplerInfoFromAbi(abi);
      if (name == &longest) {
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(is_version ? r->version : r->name, longest);
        continue;
      }
      ASSERT_FALSE(r.ok());
      EXPECT_TRUE(Contains(r.error().message, std::string(is_version ? "version" : "name") +
                                                  ": longer than 256 bytes"))
          << r.error().message.substr(0, 200);
      EXPECT_LT(r.error().message.size(), 200u);
    }
  }
}

TEST(Declarations, EncodersRefuseAValueWithoutARow) {
  SamplerInfo info;
  info.policies.nan_policy = static_cast<NanPolicy>(4);
  for (auto encode : {+[](const SamplerInfo& i) { (void)InfoToJson(i); },
                      +[](const SamplerInfo& i) { (void)DeclarationToReport(i); },
                      +[](const SamplerInfo& i) { (void)DeclarationText(i); }}) {
    try {
      encode(info);
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(Contains(e.what(), "unknown NaN policy 4")) << e.what();
    }
  }
  json wire = InfoToJson(SamplerInfo{});
  wire["order"] = 5;
  try {
    (void)InfoFromJson(wire);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(Contains(e.what(), "order: unknown pipeline order 5")) << e.what();
  }
  // An unknown value in a built-in's policies crosses get_info as its number (never throws),
  // for the host's SamplerInfoFromAbi to refuse.
  sampcert_sampler_info abi = FreshInfo();
  PoliciesToInfo(info.policies, &abi);
  EXPECT_EQ(abi.nan_policy, 4);
  EXPECT_FALSE(SamplerInfoFromAbi(abi).ok());
}

// The encodings' exact bytes: the worker's wire format, report.json's sampler section and
// `sampcert info`'s text.
TEST(Declarations, GoldenEncodings) {
  EXPECT_EQ(
      InfoToJson(SamplerInfo{}).dump(),
      R"({"accuracy":0,"additive_history":1,"capabilities":0,"determinism":1,)"
      R"("draw_cost_ns_per_token":0.0,)"
      R"("greedy_threshold":0.0,"greedy_tie_break":0,"name":"","nan_policy":0,"order":0,)"
      R"("repetition_history":0,"sequential_draws":false,"thread_safe":false,"tie_rule":0,"top_k_tie_rule":-1,)"
      R"("top_p_tie_rule":-1,"truncation_order":[0,1,2],"verify_alpha":0.0,)"
      R"("verify_scheme":0,"verify_threshold":0.0,"version":""})");
  EXPECT_EQ(
      InfoToJson(Unusual()).dump(),
      R"({"accuracy":1,"additive_history":1,"capabilities":521,"determinism":0,)"
      R"("draw_cost_ns_per_token":12.5,)"
      R"("greedy_threshold":0.5,"greedy_tie_break":2,"name":"unusual","nan_policy":1,)"
      R"("order":1,"repetition_history":0,"sequential_draws":true,"thread_safe":true,"tie_rule":2,)"
      R"("top_k_tie_rule":0,"top_p_tie_rule":1,"truncation_order":[2,0,1],)"
      R"("verify_alpha":0.30000001192092896,"verify_scheme":1,"verify_threshold":)"
      R"(0.09000000357627869,"version":"2"})");
  EXPECT_EQ(DeclarationToReport(SamplerInfo{}).dump(),
            R"({"capabilities":[],"policies":{"accuracy":"fp32","determinism":"same-seed",)"
            R"("greedy_threshold":0.0,"greedy_tie_break":"uniform","nan_policy":"error",)"
            R"("pipeline_order":"temperature-first","tie_rule":"keep-all",)"
            R"("truncation_order":["top-k","top-p","min-p"]},"thread_safe":false})");
  EXPECT_EQ(DeclarationToReport(Unusual()).dump(),
            R"({"capabilities":["f32","mask","batch"],"policies":{"accuracy":"bf16",)"
            R"("determinism":"none","draw_cost_ns_per_token":12.5,"draws":"sequential",)"
            R"("greedy_threshold":0.5,"greedy_tie_break":"any","nan_policy":"masked",)"
            R"("pipeline_order":"truncation-first","tie_rule":"exact-any",)"
            R"("top_k_tie_rule":"keep-all","top_p_tie_rule":"exact-lowest-index",)"
            R"("truncation_order":["min-p","top-k","top-p"],"verify_alpha":0.30000001192092896,)"
            R"("verify_scheme":"typical","verify_threshold":0.09000000357627869},)"
            R"("thread_safe":true})");
  EXPECT_EQ(DeclarationText(SamplerInfo{}),
            "capabilities:  (none)\n"
            "greedy ties:   uniform\n"
            "cut ties:      keep all\n"
            "draws:         random access\n"
            "order:         temperature first (top-k, top-p, min-p)\n"
            "NaN logits:    error\n"
            "greedy below:  0\n"
            "determinism:   same seed\n"
            "accuracy:      fp32\n"
            "thread safe:   no\n");
  EXPECT_EQ(DeclarationText(Unusual()),
            "capabilities:  f32, mask, batch\n"
            "greedy ties:   any winner\n"
            "cut ties:      exact, any\n"
            "top-k ties:    keep all\n"
            "top-p ties:    exact, lowest index\n"
            "draws:         sequential only\n"
            "draw cost:     12.5 ns per vocabulary token\n"
            "order:         truncation first (min-p, top-k, top-p)\n"
            "NaN logits:    masked\n"
            "greedy below:  0.5\n"
            "determinism:   none\n"
            "accuracy:      bf16\n"
            "thread safe:   yes\n"
            "verify scheme: typical acceptance (lossy) (threshold 0.09) (alpha 0.3)\n");
}

// VER-DEV-1: a lossy verify scheme needs its parameters in range, the exact one none.
TEST(Declarations, VerifySchemesNeedTheirParameters) {
  Policies p;
  EXPECT_EQ(ValidatePolicies(p), "");
  p.verify_threshold = 0.5f;
  EXPECT_NE(ValidatePolicies(p).find("0 with the exact scheme"), std::string::npos);
  p.verify_scheme = VerifyScheme::kLenient;
  EXPECT_EQ(ValidatePolicies(p), "");
  p.verify_threshold = 1.0f;  // a lenience of 1 is the exact rule: declare exact
  EXPECT_NE(ValidatePolicies(p).find("lenience) in (0, 1)"), std::string::npos);
  p.verify_scheme = VerifyScheme::kTypical;
  p.verify_threshold = 0.09f;
  EXPECT_NE(ValidatePolicies(p).find("verify_alpha (delta) in (0, 1]"), std::string::npos);
  p.verify_alpha = 0.3f;
  EXPECT_EQ(ValidatePolicies(p), "");
  p.verify_alpha = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(ValidatePolicies(p), "");
}

TEST(Declarations, TheDumpListsEveryTable) {
  const json d = DeclarationsDump();
  EXPECT_EQ(d.at("capabilities").size(), Capabilities().size());
  EXPECT_EQ(d.at("fields").size(), DeclaredFields().size());
  EXPECT_EQ(d.at("fields").at(0).at("name"), "capabilities");  // the ABI's order
  std::set<std::string> ids;
  for (const json& v : d.at("vocabularies")) ids.insert(v.at("id").get<std::string>());
  for (const DeclaredField& f : DeclaredFields()) {
    const std::string id(VocabularyIdOf(f));
    if (!id.empty()) {
      EXPECT_TRUE(ids.count(id)) << f.name << ": vocabulary " << id;
    }
  }
  EXPECT_EQ(ids.size(), 10u);
}

}  // namespace
}  // namespace sampcert::adapters
