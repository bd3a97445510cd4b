// Direct probes of llama.cpp's sampler chain, outside sampcert: each mechanism that findings.json
// (and so expectations.json and README) names for llama.cpp is pinned here by calling
// llama.cpp's C API itself (llama_sampler_chain_init, llama_sampler_init_top_k / top_p / min_p /
// temp / dist, llama_sampler_apply on a llama_token_data_array), no sampcert code involved.
#include <gtest/gtest.h>
#include <llama.h>

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <vector>

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

struct Params {
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float temperature = 1.0f;
};

// The plug-in's chain, as a caller of llama.cpp builds it: top_k, top_p, min_p, temp, dist.
class Chain {
 public:
  explicit Chain(const Params& p, uint32_t seed = 1) {
    chain_.reset(llama_sampler_chain_init(llama_sampler_chain_default_params()));
    llama_sampler_chain_add(chain_.get(), llama_sampler_init_top_k(p.top_k));
    llama_sampler_chain_add(chain_.get(), llama_sampler_init_top_p(p.top_p, 1));
    llama_sampler_chain_add(chain_.get(), llama_sampler_init_min_p(p.min_p, 1));
    llama_sampler_chain_add(chain_.get(), llama_sampler_init_temp(p.temperature));
    llama_sampler_chain_add(chain_.get(), llama_sampler_init_dist(seed));
  }

  // The token llama.cpp selects for these logits (one application of the chain).
  llama_token Draw(const std::vector<float>& logits) {
    std::vector<llama_token_data> data;
    for (size_t i = 0; i < logits.size(); ++i) {
      data.push_back({static_cast<llama_token>(i), logits[i], 0.0f});
    }
    llama_token_data_array cur{data.data(), data.size(), -1, false};
    llama_sampler_apply(chain_.get(), &cur);
    EXPECT_GE(cur.selected, 0);
    EXPECT_LT(cur.selected, static_cast<int64_t>(cur.size));
    return cur.data[cur.selected].id;
  }

  std::set<llama_token> Draws(const std::vector<float>& logits, int n = 200) {
    std::set<llama_token> seen;
    for (int i = 0; i < n; ++i) seen.insert(Draw(logits));
    return seen;
  }

 private:
  std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> chain_{nullptr,
                                                                       &llama_sampler_free};
};

std::set<llama_token> Draws(const std::vector<float>& logits, Params p = {}) {
  return Chain(p).Draws(logits);
}

TEST(LlamaProbes, NanLogitReturnsTheLastCandidate) {
  // expf(NaN - max) makes dist's sum NaN, no running sum reaches the target, and dist's
  // fallback selects the last candidate: a token, no error.
  EXPECT_EQ(Draws({0, kNan, 1, 2}), (std::set<llama_token>{3}));
}

TEST(LlamaProbes, EmptySupportReturnsAMaskedToken) {
  // All -inf (every token masked): -inf - -inf = NaN, the last candidate again.
  EXPECT_EQ(Draws({-kInf, -kInf, -kInf}), (std::set<llama_token>{2}));
}

TEST(LlamaProbes, PosInfLogitLoses) {
  // SPEC SEM-4: +inf wins. dist subtracts the maximum: inf - inf = NaN, the fallback selects
  // the last candidate, a finite token of reference probability 0.
  EXPECT_EQ(Draws({0, kInf, 1}), (std::set<llama_token>{2}));
  // Three +inf tokens: always the highest-index one, never uniform over the three.
  EXPECT_EQ(Draws({1, kInf, 3, kInf, kInf}), (std::set<llama_token>{4}));
}

TEST(LlamaProbes, TinyTemperatureOverflowsBeforeTheMaximumIsSubtracted) {
  // temp divides every logit by T first: 1 / 1e-45 is inf (0 / 1e-45 is 0), dist subtracts the
  // maximum, inf - inf = NaN, and the fallback selects the last candidate, the smaller logit.
  Params p;
  p.temperature = 1e-45f;
  EXPECT_EQ(Draws({1, 0}, p), (std::set<llama_token>{1}));
}

TEST(LlamaProbes, TopKAbove128CutsHugeLogitsInItsBucketSort) {
  // top-k > 128 sorts by buckets: int(6.4 * x + 64) overflows for x > 3.4e8, so the largest
  // logit lands in the lowest bucket and is cut. top_k 128 takes the other path and keeps it.
  std::vector<float> x(130, 0.0f);
  x[0] = 1e10f;
  Params p;
  p.top_k = 129;
  EXPECT_EQ(Draws(x, p).count(0), 0u);
  p.top_k = 128;
  EXPECT_EQ(Draws(x, p), (std::set<llama_token>{0}));
}

TEST(LlamaProbes, TopKAbove128PutsAPosInfLogitLastAndMinPCutsIt) {
  // The bucket sort's int(6.4 * x + 64) of +inf is INT_MIN on x86, clamped to the lowest
  // bucket: top_k 130 of 130 keeps every token but marks the array sorted with the +inf token
  // among the last. min-p trusts that order: it keeps the prefix down to the first logit below
  // the first one's + log(min_p), so it cuts the +inf token, the only one of reference
  // probability 1, and the finite tokens of the prefix are drawn by their probabilities (no
  // NaN: not the NaN fallback's last candidate).
  std::vector<float> x(130);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -0.01f * static_cast<float>(i);
  x[7] = kInf;
  Params p;
  p.top_k = 130;
  p.min_p = 0.5f;
  const std::set<llama_token> drawn = Draws(x, p);
  EXPECT_EQ(drawn.count(7), 0u);
  EXPECT_GT(drawn.size(), 1u);
  EXPECT_LT(*drawn.rbegin(), 70);  // logit -0.7 < log(0.5): min-p's prefix ends before it
  p.top_k = 0;  // no sort: min-p finds the true maximum and keeps the +inf token alone
  EXPECT_EQ(Draws(x, p), (std::set<llama_token>{7}));
}

TEST(LlamaProbes, InvalidParametersReturnTokens) {
  // Nothing is refused: T < 0 is greedy, top_p 1.5 and top_k -1 are off, min_p 1.5 keeps the
  // top token.
  Params p;
  p.temperature = -1;
  EXPECT_EQ(Draws({0, 3, 1}, p), (std::set<llama_token>{1}));
  p = {};
  p.top_p = 1.5f;
  EXPECT_EQ(Draws({0, 1, 2, 3}, p).size(), 4u);
  p = {};
  p.top_k = -1;
  EXPECT_EQ(Draws({0, 1, 2, 3}, p).size(), 4u);
  p = {};
  p.min_p = 1.5f;
  EXPECT_EQ(Draws({0, 1, 2, 3}, p), (std::set<llama_token>{3}));
}

TEST(LlamaProbes, SmallTemperatureRoundsTheQuotientsBeforeTheSoftmax) {
  // temp computes x / T in float32 before dist subtracts the maximum: at T = 1.209e-5 the
  // quotients are about 1e6, where float32's spacing is 0.0625, so logits one float32 step
  // apart (x differs by 9.5e-7, x / T by 0.079) differ by 0 or 0.0625 after rounding, and
  // the probabilities dist computes from them are off by several percent.
  const std::vector<float> x{12.089959f, 12.089959f, 12.089959f, 12.08996f};
  const float t = 1.209e-05f;
  std::vector<llama_token_data> data;
  for (size_t i = 0; i < x.size(); ++i) data.push_back({static_cast<llama_token>(i), x[i], 0});
  llama_token_data_array cur{data.data(), data.size(), -1, false};
  std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> temp(llama_sampler_init_temp(t),
                                                                     &llama_sampler_free);
  llama_sampler_apply(temp.get(), &cur);
  // Exact: p_i proportional to exp((x_i - max) / T), in long double.
  long double sum = 0;
  std::vector<long double> exact;
  for (float xi : x) exact.push_back(std::exp(((long double)xi - x[3]) / t));
  for (long double e : exact) sum += e;
  long double llama_sum = 0;
  std::vector<long double> llama;
  for (const auto& d : data) llama.push_back(std::exp((long double)d.logit - data[3].logit));
  for (long double e : llama) llama_sum += e;
  const long double rel = std::fabs(llama[3] / llama_sum - exact[3] / sum) / (exact[3] / sum);
  EXPECT_GT(static_cast<double>(rel), 0.01) << "llama's top probability within 1% of exact";
}

// The penalties sampler alone (llama_sampler_init_penalties, as common/sampling.cpp makes it),
// fed `history` by llama_sampler_accept in order, applied once to `logits`: the penalized
// logits, by token.
std::vector<float> Penalized(const std::vector<float>& logits,
                             const std::vector<llama_token>& history, float repeat, float freq,
                             float present) {
  std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> pen(
      llama_sampler_init_penalties(static_cast<int32_t>(logits.size()),
                                   static_cast<int32_t>(history.size()), repeat, freq, present),
      &llama_sampler_free);
  for (llama_token t : history) llama_sampler_accept(pen.get(), t);
  std::vector<llama_token_data> data;
  for (size_t i = 0; i < logits.size(); ++i) {
    data.push_back({static_cast<llama_token>(i), logits[i], 0.0f});
  }
  llama_token_data_array cur{data.data(), data.size(), -1, false};
  llama_sampler_apply(pen.get(), &cur);
  std::vector<float> out(logits.size());
  for (size_t i = 0; i < cur.size; ++i) out[cur.data[i].id] = cur.data[i].logit;
  return out;
}

// The plug-in's penalties variant as a caller of llama.cpp builds it: penalties, then the
// default chain (top_k 0, top_p 1, min_p 0, temp 1, dist), the history accepted on the chain.
std::set<llama_token> DrawsWithPenalties(const std::vector<float>& logits,
                                         const std::vector<llama_token>& history, float repeat,
                                         float freq, float present, int n = 200) {
  std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> chain(
      llama_sampler_chain_init(llama_sampler_chain_default_params()), &llama_sampler_free);
  llama_sampler_chain_add(
      chain.get(),
      llama_sampler_init_penalties(static_cast<int32_t>(logits.size()),
                                   static_cast<int32_t>(history.size()), repeat, freq, present));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(0));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(1.0f, 1));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_min_p(0.0f, 1));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_temp(1.0f));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_dist(1));
  for (llama_token t : history) llama_sampler_accept(chain.get(), t);
  std::set<llama_token> seen;
  for (int i = 0; i < n; ++i) {
    std::vector<llama_token_data> data;
    for (size_t j = 0; j < logits.size(); ++j) {
      data.push_back({static_cast<llama_token>(j), logits[j], 0.0f});
    }
    llama_token_data_array cur{data.data(), data.size(), -1, false};
    llama_sampler_apply(chain.get(), &cur);
    seen.insert(cur.data[cur.selected].id);
  }
  return seen;
}

TEST(LlamaProbes, PenaltiesSeeEveryAcceptedTokenRepetitionOncePerToken) {
  // What the penalties variant declares (README): every accepted token counts, the prompt's as
  // much as the output's (llama-server accepts the prompt into the same sampler), the
  // repetition rule divides a positive logit and multiplies a non-positive one, once per token
  // however often it was seen, and presence and frequency subtract beta + alpha * count.
  EXPECT_EQ(Penalized({2, -2, 1, 0.5f}, {0, 1, 1, 0, 1}, 2.0f, 0, 0),
            (std::vector<float>{1, -4, 1, 0.5f}));
  EXPECT_EQ(Penalized({2, -2, 1, 0.5f}, {0, 1, 1, 0, 1}, 1.0f, 0.5f, 0.25f),
            (std::vector<float>{2 - 1.25f, -2 - 1.75f, 1, 0.5f}));
  // penalty_last_n = -1 (common's "context size") is clamped to 0 by the library: no penalty.
  std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> off(
      llama_sampler_init_penalties(4, -1, 2.0f, 0.5f, 0.25f), &llama_sampler_free);
  EXPECT_STREQ(llama_sampler_name(off.get()), "?penalties");
}

TEST(LlamaProbes, PenaltiesValidateNothing) {
  // SPEC INV-8: a NaN penalty and a history id outside [0, V) are InvalidPenalty. llama.cpp has
  // no error path for either: llama_sampler_init_penalties takes a NaN presence penalty, which
  // makes a seen token's logit NaN, and the chain still returns a token; llama_sampler_accept
  // takes the id V (one past the last token) and counts it, no candidate matches it, and the
  // chain returns tokens as if it were not there.
  const std::vector<float> x{0.5f, 1.0f, -0.5f, 0.25f};
  const std::vector<float> nan_presence = Penalized(x, {1}, 1.0f, 0.0f, kNan);
  EXPECT_TRUE(std::isnan(nan_presence[1]));
  EXPECT_EQ(nan_presence[0], x[0]);
  EXPECT_FALSE(DrawsWithPenalties(x, {1}, 1.0f, 0.0f, kNan).empty());
  EXPECT_EQ(Penalized(x, {4, 1}, 2.0f, 0.0f, 0.0f), (std::vector<float>{0.5f, 0.5f, -0.5f, 0.25f}));
  EXPECT_EQ(DrawsWithPenalties(x, {4}, 2.0f, 0.0f, 0.0f).size(), 4u);
}

TEST(LlamaProbes, PenaltiesInFloatOverflowAFiniteLogit) {
  // SPEC PEN-4: a penalty never makes a finite logit infinite (x' is the exact real). llama.cpp
  // computes x' in float (llama-sampler.cpp, llama_sampler_penalties_apply): 3e38 / 0.5 is
  // +inf, where the exact 6e38 is finite and token 0 has probability 1 to any precision; the +inf
  // then loses (dist's inf - inf = NaN, the last candidate): token 1 is always drawn, never 0.
  const std::vector<float> big{3e38f, 0.0f};
  EXPECT_EQ(Penalized(big, {0}, 0.5f, 0, 0)[0], kInf);
  EXPECT_EQ(DrawsWithPenalties(big, {0}, 0.5f, 0, 0), (std::set<llama_token>{1}));
  // The frequency term too: float(count) * alpha = 2 * 2e38 = +inf, so logits 1 and 0 seen
  // twice each both become -inf (exact: 1 - 4e38 and -4e38, token 0 at e / (1 + e) = 0.731):
  // an empty support, and dist's NaN fallback draws token 1 alone.
  const std::vector<float> small{1.0f, 0.0f};
  EXPECT_EQ(Penalized(small, {0, 0, 1, 1}, 1.0f, 2e38f, 0), (std::vector<float>{-kInf, -kInf}));
  EXPECT_EQ(DrawsWithPenalties(small, {0, 0, 1, 1}, 1.0f, 2e38f, 0), (std::set<llama_token>{1}));
}

TEST(LlamaProbes, PenaltiesRoundThePenalizedLogitToFloat) {
  // SPEC PEN-5: binary32 arithmetic is not within TOL-1's budget in general. 1000.1 / 1.3 is
  // rounded to float: off the exact quotient by about 2.4e-5 (half a float32 step at 769 is
  // 3.1e-5), which at T = 0.01 is 2.4e-3 in x' / T, a relative error of the same size in the
  // token's probability.
  const float x = 1000.1f, r = 1.3f;
  const float got = Penalized({x, 0.0f}, {0}, r, 0, 0)[0];
  const long double exact = static_cast<long double>(x) / static_cast<long double>(r);
  const long double err = std::fabs(static_cast<long double>(got) - exact);
  EXPECT_GT(static_cast<double>(err), 1e-5);
  EXPECT_LE(static_cast<double>(err), 3.1e-5);
}

}  // namespace
