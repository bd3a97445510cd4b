// Every mutant of the catalogue (tests/plugins/mutants_plugin.cc) is wrong on a witness: one
// call of the mutant's sample() on a small batch, judged by the reference (ComputeReference) or
// by one of SPEC's exact identities (DET-1, BATCH-1, the stream of DRAW-1). The correct control
// ("none") runs every witness too and must be judged right, so each check can fail.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "adapters/plugin_loader.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"

namespace {

using sampcert::DType;

// One row of a witness batch: logits as floats (exact in the witness's dtype), parameters.
struct Row {
  std::vector<float> logits = {};
  std::vector<uint8_t> mask = {};  // empty: no mask
  float t = 1.0f;
  float top_p = 1.0f;
  float min_p = 0.0f;
  int64_t top_k = 0;
  uint64_t row_id = 7;
};

// How the mutant is wrong on its witness.
enum class Check {
  kErrorOnValid,        // the reference finds the row valid; the sampler returns an error
  kTokensOnInvalid,     // the reference rejects the row; the sampler returns tokens
  kOutsideKept,         // a draw the reference gives probability 0 (or an id outside [0, V))
  kSetMass,             // the drawn share of `set` is > 8 standard deviations off its mass
  kRepeatsAcrossCalls,  // draws [0, n) and [n, 2n) of the row are equal: (sum p^2)^n < 1e-12
  kBatchIdentity,       // the witness row's tokens differ alone and inside the batch (BATCH-1)
  kSeedNotReproduced,   // the same call twice gives other tokens (DET-1)
  kStreamsCoincide,     // the row's draws equal those of `other` (seed, row id, first draw)
};

// kStreamsCoincide: the (seed, row id, first draw) whose draws DRAW-1 makes independent of the
// witness row's (on a flat row of 8 tokens, equal 64 draws have chance 8^-64).
struct Stream {
  uint64_t seed = 0;
  uint64_t row_id = 0;
  uint64_t first_draw = 0;
};

struct Witness {
  const char* mutant = nullptr;
  DType dtype = DType::kF32;
  std::vector<Row> batch = {};  // the call; `row` is the witness row
  std::size_t row = 0;
  Check check = Check::kOutsideKept;
  std::vector<std::size_t> set = {};  // kSetMass
  uint64_t draws = 20000;
  uint64_t first_draw = 0;
  uint64_t seed = 1;
  Stream other = {};  // kStreamsCoincide
};

std::vector<float> Flat(std::size_t v, float x) { return std::vector<float>(v, x); }

// A dominant token at 0, then `tail` tokens at -18.5: each about 9.2e-9 of it, 9.2e-4 in all.
Row DeepTail(std::size_t tail) {
  Row r{Flat(tail + 1, -18.5f)};
  r.logits[0] = 0;
  return r;
}

std::vector<float> LogProbs(std::vector<double> p) {
  std::vector<float> x;
  for (double q : p) x.push_back(static_cast<float>(std::log(q)));
  return x;
}

std::vector<std::size_t> Range(std::size_t from, std::size_t to) {
  std::vector<std::size_t> s;
  for (std::size_t i = from; i < to; ++i) s.push_back(i);
  return s;
}

// A draw index of seed 1, row id 7 at which the fp32 uniform (top 32 of the canonical bits)
// * 2^-32 rounds to 1: the first such index, found once by scanning from 0 (35 million draws;
// 7 s per test process under the sanitizers, where every witness's process built the list).
// Catalogue.RoundingDrawRoundsToOne checks it still is such an index.
constexpr uint64_t kDrawRoundingToOneSeed1Row7 = 35251765;
bool RoundsToOne(uint64_t seed, uint64_t row_id, uint64_t draw) {
  return (sampcert::CanonicalBits(seed, row_id, draw) >> 20) >= 0xffffff80u;
}

std::vector<Witness> AllWitnesses() {
  const std::vector<float> p532 = LogProbs({0.5, 0.3, 0.2});
  const std::vector<float> p4321 = LogProbs({0.4, 0.3, 0.2, 0.1});
  std::vector<Witness> w;
  w.push_back({"scale_in_input_dtype",
               DType::kF16,
               {{{30000, -5, 20, 100}, {}, 0.1f}},
               0,
               Check::kErrorOnValid});
  w.push_back({"scale_before_max", DType::kF32, {{{1, 0}, {}, 1e-40f}}, 0, Check::kErrorOnValid});
  w.push_back({"scaled_logits_bf16", DType::kF32, {{{100.0f, 100.2f}}}, 0, Check::kSetMass, {1}});
  w.push_back(
      {"probs_f16", DType::kF32, {DeepTail(100000)}, 0, Check::kSetMass, Range(1, 100001), 200000});
  w.push_back(
      {"softmax_sum_bf16", DType::kF32, {{Flat(1024, 0)}}, 0, Check::kSetMass, Range(256, 1024)});
  const float inf = INFINITY;
  w.push_back({"pos_inf_token0", DType::kF32, {{{0, inf, 1}}}});
  w.push_back({"pos_inf_masked", DType::kF32, {{{0, inf, 1}}}});
  w.push_back({"pos_inf_clamped", DType::kF32, {{{inf, FLT_MAX}}}});
  w.push_back({"mask_multiply", DType::kF32, {{{0, 1, 2}, {1, 1, 0}}}});
  w.push_back(
      {"mask_additive_log", DType::kF32, {{{0, 1, NAN}, {1, 1, 0}}}, 0, Check::kErrorOnValid});
  w.push_back({"t0_divide", DType::kF32, {{{0, 1, 2}, {}, 0}}, 0, Check::kErrorOnValid});
  w.push_back({"t0_epsilon", DType::kF32, {{{1, 1, 0}, {}, 0}}});
  w.push_back({"t0_as_t1", DType::kF32, {{{0, 1}, {}, 0}}});
  w.push_back({"greedy_below_1e-5",
               DType::kF32,
               {{{1.0f, std::nextafter(1.0f, 2.0f)}, {}, 1e-6f}},
               0,
               Check::kSetMass,
               {0}});
  w.push_back({"mask_floor_1e4", DType::kF32, {{{-30000, -30001}, {0, 1}}}});
  w.push_back({"mask_floor_f16_min", DType::kF32, {{{-100000, -100001}, {0, 1}}}});
  Row narrow{Flat(33, 0), std::vector<uint8_t>(33, 1)};
  narrow.mask[32] = 0;
  w.push_back({"mask_narrow_32", DType::kF32, {narrow}});
  w.push_back({"all_masked_token0", DType::kF32, {{{0, 1}, {0, 0}}}, 0, Check::kTokensOnInvalid});
  w.push_back({"nan_token0", DType::kF32, {{{0, NAN}}}, 0, Check::kTokensOnInvalid});
  w.push_back({"all_nan_out_of_vocab", DType::kF32, {{{NAN, NAN}}}, 0, Check::kTokensOnInvalid});
  w.push_back({"nan_to_floor", DType::kF32, {{{NAN, NAN}}}, 0, Check::kTokensOnInvalid});
  Row ties_k2{{1, 1, 1, 0}};
  ties_k2.top_k = 2;
  w.push_back({"topk_exact_lowest", DType::kF32, {ties_k2}, 0, Check::kSetMass, {2}});
  Row k_above{{0, 1}};
  k_above.top_k = 5;
  w.push_back({"topk_above_v_error", DType::kF32, {k_above}, 0, Check::kErrorOnValid});
  Row p06{p532};
  p06.top_p = 0.6f;
  w.push_back({"topp_exclusive", DType::kF32, {p06}, 0, Check::kSetMass, {1}});
  w.push_back({"topp_cumsum_logprobs", DType::kF32, {p06}});
  Row slope{};
  for (int i = 0; i < 4096; ++i) slope.logits.push_back(-1e-3f * static_cast<float>(i));
  slope.top_p = 0.5f;
  w.push_back({"topp_bf16_cumsum", DType::kF32, {slope}});
  Row tiny{};
  for (int i = 0; i < 4096; ++i) tiny.logits.push_back(-0.3f * static_cast<float>(i % 7));
  tiny.logits[0] = 1;
  tiny.top_p = 1e-8f;
  w.push_back({"topp_tiny_all_masked", DType::kF32, {tiny}});
  Row k2p05{p4321};
  k2p05.top_k = 2;
  k2p05.top_p = 0.5f;
  w.push_back({"topp_unrenormalized", DType::kF32, {k2p05}});
  Row cold_p{p532, {}, 0.5f, 0.6f};
  w.push_back({"topp_before_temperature", DType::kF32, {cold_p}});
  Row cold_min{{0, -1}, {}, 0.25f, 1.0f, 0.1f};
  w.push_back({"minp_before_temperature", DType::kF32, {cold_min}});
  w.push_back({"topp_applied_at_one", DType::kF32, {{{0, -1}}}, 0, Check::kSetMass, {1}});
  Row one_allowed{Flat(1 << 18, 0), std::vector<uint8_t>(1 << 18, 0)};
  one_allowed.mask[0] = 1;
  w.push_back({"race_exponential_zero", DType::kF32, {one_allowed}});
  Row wide_one{Flat(1 << 20, 0), std::vector<uint8_t>(1 << 20, 0)};
  wide_one.mask[0] = 1;
  w.push_back({"gumbel_u_one", DType::kF32, {wide_one}, 0, Check::kOutsideKept, {}, 100000});
  w.push_back({"uniform_one_past_end",
               DType::kF32,
               {{{0, 1}}},
               0,
               Check::kOutsideKept,
               {},
               1,
               kDrawRoundingToOneSeed1Row7});
  w.push_back(
      {"cdf_f32", DType::kF32, {DeepTail(100000)}, 0, Check::kSetMass, Range(1, 100001), 200000});
  w.push_back(
      {"rng_offset_frozen", DType::kF32, {{Flat(8, 0)}}, 0, Check::kRepeatsAcrossCalls, {}, 64});
  const Row a{{0, 0, 0, 0, 0, 0, 0, 0}, {}, 1, 1, 0, 0, 11};
  const Row b{{0, 0, 0, 0, 0, 0, 0, 0}, {}, 1, 1, 0, 0, 12};
  w.push_back({"rng_by_batch_position", DType::kF32, {b, a}, 1, Check::kBatchIdentity, {}, 64});
  w.push_back({"rng_unseeded_in_batch", DType::kF32, {b, a}, 1, Check::kBatchIdentity, {}, 64});
  w.push_back({"rng_global_state", DType::kF32, {a}, 0, Check::kSeedNotReproduced, {}, 64});
  const Row greedy{{0, 1}, {}, 0};
  const Row warm{{0, 1}};
  w.push_back({"batch_first_row_params", DType::kF32, {greedy, warm}, 1, Check::kSetMass, {0}});
  w.push_back({"batch_slot_params", DType::kF32, {warm, greedy}, 0, Check::kSetMass, {0}});
  Row p04{p532};
  p04.top_p = 0.4f;
  w.push_back({"batch_drops_top_p", DType::kF32, {p04, Row{p532}}});
  w.push_back({"batch_threshold_topk_exact",
               DType::kF32,
               std::vector<Row>(8, ties_k2),
               0,
               Check::kSetMass,
               {2}});
  w.push_back({"greedy_mate_epsilon", DType::kF32, {{{1, 1, 0}, {}, 0}, Row{Flat(3, 0)}}});
  // The random stream (DRAW-1): seed 2 at row id 7 against seed 1 at row id 8; row id 8 against
  // row id 7 one draw later; draw 2^32 against draw 0.
  const Row flat7{Flat(8, 0)};
  auto stream = [&](const char* mutant, uint64_t seed, uint64_t first, Stream other) {
    Witness s{mutant, DType::kF32, {flat7}, 0, Check::kStreamsCoincide, {}, 64, first, seed};
    s.other = other;
    return s;
  };
  w.push_back(stream("rng_key_seed_plus_row", 2, 0, {1, 8, 0}));
  w.push_back(stream("rng_counter_row_plus_draw", 1, 1, {1, 8, 0}));
  w.push_back(stream("rng_counter_32bit", 1, uint64_t{1} << 32, {1, 7, 0}));
  // IN-3: a mask byte 2 allows its token.
  w.push_back(
      {"mask_byte_is_one", DType::kF32, {{{0, 1, 2}, {2, 2, 1}}}, 0, Check::kSetMass, {0, 1}});
  // A -0 tied with the k-th value +0 is kept under keep-all ties.
  Row zero_tie{{1.0f, 0.0f, -0.0f, -1.0f}};
  zero_tie.top_k = 2;
  w.push_back({"topk_signed_zero", DType::kF32, {zero_tie}, 0, Check::kSetMass, {2}});
  Row k1500{};
  for (int i = 0; i < 2000; ++i) k1500.logits.push_back(-1e-3f * static_cast<float>(i));
  k1500.top_k = 1500;
  w.push_back({"topk_capped_1024", DType::kF32, {k1500}, 0, Check::kSetMass, Range(1024, 1500)});
  // min_p 5e-6: 1000 tokens at e^-13 = 2.3e-6 of the maximum are dropped, 2.3e-3 of the mass.
  Row tiny_min{Flat(1001, -13.0f)};
  tiny_min.logits[0] = 0;
  tiny_min.min_p = 5e-6f;
  w.push_back({"minp_skipped_below_1e-5", DType::kF32, {tiny_min}});
  // min_p 0.7 (0.69921875 in bf16) and a token at 0.6996 of the maximum: dropped.
  Row min07{{0.0f, std::log(0.6996f), -2.0f}};
  min07.min_p = 0.7f;
  w.push_back({"params_bf16", DType::kF32, {min07}});
  return w;
}

// The witness batch as the ABI carries it (logits as their dtype's bit patterns).
struct AbiBatch {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<sampcert_row> rows;
  sampcert_batch batch{};
  AbiBatch(DType dtype, const std::vector<Row>& rows_in) {
    for (const Row& r : rows_in) {
      std::vector<uint8_t> b;
      for (const float x : r.logits) {
        if (dtype == DType::kF32) {
          const auto u = std::bit_cast<uint32_t>(x);
          for (int k = 0; k < 4; ++k) b.push_back(static_cast<uint8_t>(u >> (8 * k)));
        } else {
          const uint16_t u = dtype == DType::kF16 ? std::bit_cast<uint16_t>(Eigen::half(x))
                                                  : std::bit_cast<uint16_t>(Eigen::bfloat16(x));
          b.push_back(static_cast<uint8_t>(u));
          b.push_back(static_cast<uint8_t>(u >> 8));
        }
      }
      bytes.push_back(std::move(b));
    }
    for (std::size_t i = 0; i < rows_in.size(); ++i) {
      const Row& r = rows_in[i];
      sampcert_row row{};
      row.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
      row.logits = bytes[i].data();
      row.mask = r.mask.empty() ? nullptr : r.mask.data();
      row.temperature = r.t;
      row.top_p = r.top_p;
      row.min_p = r.min_p;
      row.top_k = r.top_k;
      row.row_id = r.row_id;
      rows.push_back(row);
    }
    batch = sampcert_batch{};
    batch.struct_size = SAMPCERT_BATCH_STRUCT_SIZE;
    batch.dtype = static_cast<int32_t>(dtype);
    batch.vocab = rows_in.front().logits.size();
    batch.num_rows = rows.size();
    batch.rows = rows.data();
  }
  AbiBatch(const AbiBatch&) = delete;
  sampcert::RowView View(std::size_t r) const {
    sampcert::RowView view;
    view.temperature = rows[r].temperature;
    view.top_k = rows[r].top_k;
    view.top_p = rows[r].top_p;
    view.min_p = rows[r].min_p;
    view.row_id = rows[r].row_id;
    view.dtype = static_cast<DType>(batch.dtype);
    view.logits = rows[r].logits;
    view.vocab = batch.vocab;
    view.mask = rows[r].mask;
    return view;
  }
};

struct Call {
  int32_t status = SAMPCERT_STATUS_OK;
  std::vector<int64_t> tokens;  // num_rows x draws
};

class Plugin {
 public:
  Plugin() {
    auto loaded = sampcert::adapters::LoadPlugin(MUTANTS_PLUGIN_PATH);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    plugin_ = loaded.value();
  }
  // A fresh instance of `mutant` (the plug-in reads SAMPCERT_MUTANT at create) making one call.
  Call Sample(const char* mutant, const sampcert_batch& batch, uint64_t seed, uint64_t first,
              uint64_t draws, int calls = 1) const {
    setenv("SAMPCERT_MUTANT", mutant, 1);
    sampcert_error error{};
    error.struct_size = sizeof error;
    sampcert_sampler* s = nullptr;
    EXPECT_EQ(plugin_.api->create(nullptr, &s, &error), SAMPCERT_STATUS_OK) << error.message;
    Call c;
    for (int i = 0; i < calls; ++i) {
      std::vector<int64_t> out(batch.num_rows * draws, -1);
      c.status = plugin_.api->sample(s, &batch, seed, first, draws, out.data(), &error);
      c.tokens.insert(c.tokens.end(), out.begin(), out.end());
    }
    plugin_.api->destroy(s);
    return c;
  }
  void* Symbol(const char* name) const { return dlsym(plugin_.library.get(), name); }

 private:
  sampcert::adapters::LoadedPlugin plugin_;
};

sampcert::Policies Declared(const char* mutant) {
  sampcert::Policies p;
  p.greedy_tie_break = sampcert::GreedyTieBreak::kLowestIndex;
  if (std::string(mutant) == "greedy_threshold_declared") p.greedy_threshold = 1e-5f;
  return p;
}

std::vector<int64_t> RowTokens(const Call& c, std::size_t row, uint64_t draws) {
  return {c.tokens.begin() + static_cast<std::ptrdiff_t>(row * draws),
          c.tokens.begin() + static_cast<std::ptrdiff_t>((row + 1) * draws)};
}

// Is `mutant` wrong on witness `w`? The reason, or "" when it is judged right.
std::string Wrong(const Plugin& plugin, const char* mutant, const Witness& w) {
  const AbiBatch in(w.dtype, w.batch);
  const auto ref = sampcert::ComputeReference(in.View(w.row), Declared(mutant), w.row);
  const Call call = plugin.Sample(mutant, in.batch, w.seed, w.first_draw, w.draws);
  switch (w.check) {
    case Check::kErrorOnValid:
      if (!ref.ok()) return "";
      return call.status != SAMPCERT_STATUS_OK ? "an error for a valid row" : "";
    case Check::kTokensOnInvalid:
      if (ref.ok()) return "";
      return call.status == SAMPCERT_STATUS_OK ? "tokens for an invalid row: " + ref.error().message
                                               : "";
    default: break;
  }
  if (!ref.ok() || call.status != SAMPCERT_STATUS_OK) return "";
  const std::vector<int64_t> t = RowTokens(call, w.row, w.draws);
  const auto& probs = ref.value().probs;
  if (w.check == Check::kOutsideKept) {
    for (const int64_t x : t) {
      const auto i = static_cast<std::size_t>(x);
      if (x < 0 || i >= probs.size() ||
          (probs[i] == 0 && ref.value().keep[i] != sampcert::KeepClass::kMayKeep)) {
        return "token " + std::to_string(x) + " has reference probability 0";
      }
    }
    return "";
  }
  if (w.check == Check::kSetMass) {
    long double mass = 0;
    for (const std::size_t i : w.set) mass += probs[i];
    const std::set<std::size_t> in_set(w.set.begin(), w.set.end());
    double count = 0;
    for (const int64_t x : t) count += in_set.contains(static_cast<std::size_t>(x)) ? 1 : 0;
    const double n = static_cast<double>(w.draws);
    const double m = static_cast<double>(mass);
    const double sd = std::sqrt(n * m * (1 - m)) + 1;
    if (std::fabs(count - n * m) > 8 * sd) {
      return "drew " + std::to_string(count) + " of the set, reference mean " +
             std::to_string(n * m);
    }
    return "";
  }
  if (w.check == Check::kRepeatsAcrossCalls) {
    const Call next = plugin.Sample(mutant, in.batch, w.seed, w.first_draw + w.draws, w.draws);
    long double collide = 0;
    for (const long double p : probs) collide += p * p;
    const bool rare = std::pow(collide, static_cast<long double>(w.draws)) < 1e-12L;
    return rare && RowTokens(next, w.row, w.draws) == t ? "the next call repeats the draws" : "";
  }
  if (w.check == Check::kBatchIdentity) {
    const AbiBatch alone(w.dtype, {w.batch[w.row]});
    const Call one = plugin.Sample(mutant, alone.batch, w.seed, w.first_draw, w.draws);
    return one.tokens != t ? "other tokens alone than inside the batch" : "";
  }
  if (w.check == Check::kStreamsCoincide) {
    Row other_row = w.batch[w.row];
    other_row.row_id = w.other.row_id;
    const AbiBatch other(w.dtype, {other_row});
    const Call o = plugin.Sample(mutant, other.batch, w.other.seed, w.other.first_draw, w.draws);
    return o.tokens == t ? "the draws of another (seed, row id, draw) stream" : "";
  }
  // The same call twice on one instance.
  const Call again = plugin.Sample(mutant, in.batch, w.seed, w.first_draw, w.draws, 2);
  return RowTokens(again, w.row + w.batch.size(), w.draws) != RowTokens(again, w.row, w.draws)
             ? "the same seed, other tokens"
             : "";
}

class Witnesses : public testing::TestWithParam<Witness> {
 protected:
  static const Plugin& Loaded() {
    static const Plugin plugin;
    return plugin;
  }
};

TEST_P(Witnesses, MutantIsWrongAndTheControlIsNot) {
  const Witness& w = GetParam();
  const std::string mutant = Wrong(Loaded(), w.mutant, w);
  EXPECT_NE(mutant, "") << w.mutant << " is not wrong on its witness";
  const std::string control = Wrong(Loaded(), "none", w);
  EXPECT_EQ(control, "") << "the control is judged wrong on " << w.mutant << "'s witness";
  if (std::string(w.mutant) == "greedy_below_1e-5") {  // declared, the same rule is right
    EXPECT_EQ(Wrong(Loaded(), "greedy_threshold_declared", w), "");
  }
  std::cout << "[witness] " << w.mutant << ": " << mutant << "\n";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, Witnesses, testing::ValuesIn(AllWitnesses()),
                         [](const testing::TestParamInfo<Witness>& p) {
                           std::string name = p.param.mutant;
                           for (char& c : name) c = std::isalnum(c) ? c : '_';
                           return name;
                         });

// uniform_one_past_end's witness draw: its uniform rounds to 1 in fp32, and the one before
// does not (so the witness is that draw, not a neighbour).
TEST(Catalogue, RoundingDrawRoundsToOne) {
  EXPECT_TRUE(RoundsToOne(1, 7, kDrawRoundingToOneSeed1Row7));
  EXPECT_FALSE(RoundsToOne(1, 7, kDrawRoundingToOneSeed1Row7 - 1));
}

// Every mutant of the plug-in's catalogue has exactly one witness, and nothing else does.
TEST(Catalogue, EveryMutantHasAWitness) {
  const Plugin plugin;
  auto* catalogue = reinterpret_cast<const char* (*)()>(plugin.Symbol("sampcert_mutant_catalogue"));
  ASSERT_NE(catalogue, nullptr);
  std::multiset<std::string> mutants, witnessed;
  for (const auto& e : nlohmann::json::parse(catalogue())) {
    if (e["class"] != "control") mutants.insert(e["name"].get<std::string>());
  }
  for (const Witness& w : AllWitnesses()) witnessed.insert(w.mutant);
  EXPECT_EQ(mutants, witnessed);
  EXPECT_GE(mutants.size(), 40u);
}

}  // namespace
