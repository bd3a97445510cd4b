#include "impls/stable_cpu/stable_cpu_sampler.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <type_traits>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "impls/stable_cpu/vector_kernels.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/row_validation.h"

namespace sampcert::impls {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kLog2E = 1.44269504088896341f;

// count_H(i) over the history a rule sees (PEN-IN-1). The ids are valid (INV-8 checked).
std::vector<uint32_t> Counts(const RowView& row, PenaltyHistory scope) {
  std::vector<uint32_t> count(row.vocab, 0);
  if (scope == PenaltyHistory::kPromptAndOutput) {
    for (std::size_t j = 0; j < row.num_prompt_tokens; ++j) {
      ++count[static_cast<std::size_t>(row.prompt_tokens[j])];
    }
  }
  for (std::size_t j = 0; j < row.num_output_tokens; ++j) {
    ++count[static_cast<std::size_t>(row.output_tokens[j])];
  }
  return count;
}

// PEN-2 then PEN-3 on x, in double: the repetition rule once per seen token with the sign rule,
// then x - alpha * count - beta. Infinities stay (PEN-4).
void Penalize(const RowView& row, const Policies& pol, std::vector<double>& x) {
  const double r = row.repetition_penalty;
  if (r != 1.0 && r != 0.0) {
    const std::vector<uint32_t> count = Counts(row, pol.repetition_history);
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (count[i] > 0 && std::isfinite(x[i])) x[i] = x[i] > 0 ? x[i] / r : x[i] * r;
    }
  }
  if (row.presence_penalty != 0.0f || row.frequency_penalty != 0.0f) {
    const std::vector<uint32_t> count = Counts(row, pol.additive_history);
    const double alpha = row.frequency_penalty;
    const double beta = row.presence_penalty;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (count[i] > 0 && std::isfinite(x[i])) x[i] = x[i] - alpha * count[i] - beta;
    }
  }
}

}  // namespace

Policies StableCpuSampler::DeclaredPolicies() {
  Policies p;  // the defaults are SPEC's exact semantics
  p.tie_rule = TieRule::kKeepAll;
  p.greedy_tie_break = GreedyTieBreak::kUniform;
  p.order = PipelineOrder::kTemperatureFirst;
  p.nan_policy = NanPolicy::kError;
  p.determinism = Determinism::kCrossDevice;
  p.accuracy = AccuracyClass::kF32;
  p.repetition_history = PenaltyHistory::kPromptAndOutput;  // vLLM's conventions
  p.additive_history = PenaltyHistory::kOutputOnly;
  return p;
}

void StableCpuSampler::Describe(sampcert_sampler_info* info) {
  info->name = "stable_cpu";
  info->version = "1";
  adapters::PoliciesToInfo(DeclaredPolicies(), info);
  info->thread_safe = 1;
}

Error StableCpuSampler::Prepare(const sampcert_batch& batch, std::size_t r) {
  const RowView row = adapters::ToRowView(batch, r);
  const Policies policies = DeclaredPolicies();
  if (Error e = ValidateRowParameters(row, policies, r); e.code != ErrorCode::kOk) return e;
  const std::size_t v = row.vocab;

  // 1. f32 logits, masked and banned tokens (a -inf bias, the minimum length's id: BIAS-2,
  //    MINLEN-1) at -inf. In place when the input is f32 without a mask or a ban.
  // 2. The maximum, in the widening pass where there is one. A NaN (in an allowed place: masked
  //    ones are -inf by now) or an empty support sends the row to the reference validator for
  //    the exact error message.
  const float* x = static_cast<const float*>(row.logits);
  bool has_nan = false;
  float m = 0.0f;
  const bool eos_banned = row.EosBanned(row.num_output_tokens);
  const bool copy = row.HasMask() || row.HasBias() || eos_banned;
  if (row.dtype != DType::kF32 || copy) {
    x_.resize(v);
    switch (row.dtype) {
      case DType::kF16: m = kernels::WidenF16(row.logits, v, x_.data(), &has_nan); break;
      case DType::kBF16: m = kernels::WidenBF16(row.logits, v, x_.data(), &has_nan); break;
      case DType::kF32: std::memcpy(x_.data(), row.logits, 4 * v); break;
    }
    x = x_.data();
  }
  if (row.mask != nullptr) {
    for (std::size_t i = 0; i < v; ++i) x_[i] = row.mask[i] != 0 ? x_[i] : -kInf;
  } else if (row.packed_mask != nullptr) {  // SPEC section 19: only the V bits of tokens
    for (std::size_t i = 0; i < v; ++i) x_[i] = PackedAllowed(row.packed_mask, i) ? x_[i] : -kInf;
  }
  for (std::size_t j = 0; j < row.num_bias; ++j) {  // ids valid and distinct (INV-9 checked)
    if (row.bias_values[j] == -kInf) x_[static_cast<std::size_t>(row.bias_tokens[j])] = -kInf;
  }
  if (eos_banned) x_[static_cast<std::size_t>(row.eos_token_id)] = -kInf;
  if (row.dtype == DType::kF32 || copy) m = kernels::MaxAndNan(x, v, &has_nan);
  if (has_nan || m == -kInf) {
    Error e = ValidateRow(row, policies, r);
    if (e.code == ErrorCode::kOk) e = Error{ErrorCode::kInternal, "unexpected valid row"};
    return e;
  }

  // A finite or +inf bias moves a logit (BIAS-1); +-0 biases take the path of the row without
  // them, so that they change nothing bit for bit (BIAS-4), and bans are -inf already.
  bool moves = false;
  for (std::size_t j = 0; j < row.num_bias; ++j) {
    moves = moves || (row.bias_values[j] != 0.0f && row.bias_values[j] != -kInf);
  }
  if (row.HasPenalties() || moves) {
    PreparePenalized(row, x);
    return Error{};
  }

  // 3. Weights. Limits (SEM-3, SEM-4): 1 on the winners. Truncation with keep-all ties leaves
  //    the winners alone (they tie with the maximum), so it is skipped there.
  w_.resize(v);
  const std::size_t blocks = (v + kBlock - 1) / kBlock;
  block_prefix_.resize(blocks + 1);
  const float t = row.temperature;
  if (t == 0.0f || m == kInf) {
    for (std::size_t i = 0; i < v; ++i) w_[i] = x[i] == m ? 1.0f : 0.0f;
    SumBlocks();
    return Error{};
  }
  // Subtract the maximum, then scale by log2(e) / T and take 2^y (three roundings in y: SPEC
  // BAND-1), writing block sums on the way. Two corners take a double-precision pass: a scale
  // that is not a normal float (T below ~4e-39 or above ~1.2e38), and rows whose finite logits
  // span more than FLT_MAX when T is so large (> 1e36) that the overflowed x - m would matter.
  const float scale = kLog2E / t;
  const bool scale_ok = scale >= std::numeric_limits<float>::min() && scale < kInf;
  if (scale_ok && !(m > 0.0f && t > 1e36f)) {
    kernels::WeightsAndBlockSums(x, v, m, scale, w_.data(), kBlock, block_prefix_.data() + 1);
    if (row.top_k == 0 && row.top_p == 1.0f && row.min_p == 0.0f) {
      FinishBlocks();
      return Error{};
    }
  } else {
    for (std::size_t i = 0; i < v; ++i) {
      w_[i] = static_cast<float>(
          std::exp((static_cast<double>(x[i]) - static_cast<double>(m)) / static_cast<double>(t)));
    }
  }

  // 4. Truncation, temperature first, in the declared order top-k, top-p, min-p.
  if (row.top_k > 0 && static_cast<std::size_t>(row.top_k) < v) TopK(x, row.top_k);
  if (row.top_p < 1.0f) TopP(x, row.top_p);
  if (row.min_p > 0.0f) MinP(row.min_p);
  SumBlocks();
  return Error{};
}

void StableCpuSampler::PreparePenalized(const RowView& row, const float* x) {
  const std::size_t v = row.vocab;
  xd_.assign(x, x + v);
  // BIAS-1: the bias first, in double (a sum of two binary32 values never overflows there); a
  // +inf bias makes a finite logit +inf, and infinities (the -inf biases among them) stay.
  for (std::size_t j = 0; j < row.num_bias; ++j) {
    double& xi = xd_[static_cast<std::size_t>(row.bias_tokens[j])];
    if (std::isfinite(xi)) xi += static_cast<double>(row.bias_values[j]);
  }
  Penalize(row, DeclaredPolicies(), xd_);
  double m = -std::numeric_limits<double>::infinity();
  for (double e : xd_) m = std::max(m, e);  // no NaN here: the row was validated
  w_.resize(v);
  const double t = row.temperature;
  if (t == 0.0 || std::isinf(m)) {
    for (std::size_t i = 0; i < v; ++i) w_[i] = xd_[i] == m ? 1.0f : 0.0f;
    SumBlocks();  // the limits: keep-all truncation leaves the winners alone
    return;
  }
  for (std::size_t i = 0; i < v; ++i) w_[i] = static_cast<float>(std::exp((xd_[i] - m) / t));
  if (row.top_k > 0 && static_cast<std::size_t>(row.top_k) < v) TopK(xd_.data(), row.top_k);
  if (row.top_p < 1.0f) TopP(xd_.data(), row.top_p);
  if (row.min_p > 0.0f) MinP(row.min_p);
  SumBlocks();
}

template <typename V>
void StableCpuSampler::TopK(const V* x, int64_t k) {
  const std::size_t v = w_.size();
  std::vector<V>& values = [this]() -> std::vector<V>& {
    if constexpr (std::is_same_v<V, float>) {
      return scratch_values_;
    } else {
      return scratch_values_d_;
    }
  }();
  values.assign(x, x + v);
  const auto kth_pos = values.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(values.begin(), kth_pos, values.end(), std::greater<V>());
  const V kth = *kth_pos;  // -inf when the support has fewer than k tokens: keeps all
  for (std::size_t i = 0; i < v; ++i) {
    if (x[i] < kth) w_[i] = 0.0f;  // keep-all: every token tied with the k-th stays
  }
}

template <typename V>
void StableCpuSampler::TopP(const V* x, float p) {
  const std::size_t v = w_.size();
  scratch_index_.clear();
  double z = 0;
  for (std::size_t i = 0; i < v; ++i) {
    if (w_[i] > 0.0f) {
      scratch_index_.push_back(static_cast<uint32_t>(i));
      z += w_[i];
    }
  }
  std::sort(scratch_index_.begin(), scratch_index_.end(),
            [x](uint32_t a, uint32_t b) { return x[a] > x[b]; });
  // Keep token j iff the mass strictly before it is < p (SEM-6), then every token tied with
  // the last kept one.
  const double target = static_cast<double>(p) * z;
  double before = 0;
  std::size_t j = 0;
  while (j < scratch_index_.size() && before < target) before += w_[scratch_index_[j++]];
  const V last = x[scratch_index_[j - 1]];
  while (j < scratch_index_.size() && x[scratch_index_[j]] == last) ++j;
  for (; j < scratch_index_.size(); ++j) w_[scratch_index_[j]] = 0.0f;
}

void StableCpuSampler::MinP(float min_p) {
  // The maximum's weight is exp(0) = 1 exactly, and it is never truncated: w_i >= min_p * 1.
  for (float& w : w_) {
    if (w < min_p) w = 0.0f;
  }
}

void StableCpuSampler::SumBlocks() {
  const std::size_t v = w_.size();
  block_prefix_.resize((v + kBlock - 1) / kBlock + 1);
  kernels::BlockSums(w_.data(), v, kBlock, block_prefix_.data() + 1);
  FinishBlocks();
}

void StableCpuSampler::FinishBlocks() {
  const std::size_t v = w_.size();
  const std::size_t blocks = block_prefix_.size() - 1;
  block_prefix_[0] = 0;
  for (std::size_t b = 0; b < blocks; ++b) block_prefix_[b + 1] += block_prefix_[b];
  total_ = block_prefix_[blocks];
  last_positive_ = -1;
  for (std::size_t i = v; i-- > 0;) {
    if (w_[i] > 0.0f) {
      last_positive_ = static_cast<int64_t>(i);
      break;
    }
  }
}

int64_t StableCpuSampler::TokenFor(double u) const {
  const double target = u * total_;
  // The first block whose end passes the target, then a scan inside it, in double.
  const auto it = std::upper_bound(block_prefix_.begin() + 1, block_prefix_.end(), target);
  std::size_t b = static_cast<std::size_t>(it - block_prefix_.begin()) - 1;
  const std::size_t v = w_.size();
  for (; b * kBlock < v; ++b) {
    double c = block_prefix_[b];
    const std::size_t end = std::min(v, (b + 1) * kBlock);
    for (std::size_t i = b * kBlock; i < end; ++i) {
      c += w_[i];
      if (target < c && w_[i] > 0.0f) return static_cast<int64_t>(i);
    }
  }
  return last_positive_;  // rounding left the target at or past the end
}

Error StableCpuSampler::Probabilities(const sampcert_batch& batch, double* out) {
  const std::size_t v = static_cast<std::size_t>(batch.vocab);
  for (std::size_t r = 0; r < batch.num_rows; ++r) {
    if (Error e = Prepare(batch, r); e.code != ErrorCode::kOk) return e;
    double* o = out + r * v;
    for (std::size_t i = 0; i < v; ++i) o[i] = static_cast<double>(w_[i]) / total_;
  }
  return Error{};
}

Error StableCpuSampler::Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
                               uint64_t draws_per_row, int64_t* out) {
  // An unseeded row's seed: the handle's stream, advanced once per call that has one.
  uint64_t unseeded = 0;
  for (std::size_t r = 0; r < batch.num_rows; ++r) {
    if (batch.rows[r].seed_mode == kSeedUnseeded) {
      unseeded_state_ += 0x9e3779b97f4a7c15ULL;
      uint64_t z = unseeded_state_;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      unseeded = z ^ (z >> 31);
      break;
    }
  }
  for (std::size_t r = 0; r < batch.num_rows; ++r) {
    if (Error e = Prepare(batch, r); e.code != ErrorCode::kOk) return e;
    const sampcert_row& row = batch.rows[r];
    const uint64_t row_id = row.row_id;
    // SEED-1: the row's own seed, the call's, or (unseeded) the handle's stream.
    const uint64_t key = row.seed_mode == kSeedOwn        ? row.seed
                         : row.seed_mode == kSeedUnseeded ? unseeded
                                                          : seed;
    for (uint64_t j = 0; j < draws_per_row; ++j) {
      out[r * draws_per_row + j] = TokenFor(CanonicalUniform(key, row_id, first_draw + j));
    }
    if (adapters::BatchLogprobMode(batch) == SAMPCERT_LOGPROBS_PROCESSED) {
      WriteLogprobs(batch, r, out + r * draws_per_row, draws_per_row);
    }
  }
  return Error{};
}

void StableCpuSampler::WriteLogprobs(const sampcert_batch& batch, std::size_t r,
                                     const int64_t* tokens, uint64_t draws) {
  // The weights are the distribution drawn from, up to total_: log w - log total is log p within
  // PROB-1's relative tolerance (LOGP-1), and exactly -inf where a token was truncated or is
  // outside the support (LOGP-3).
  const double log_total = std::log(total_);
  auto logprob = [&](std::size_t i) {
    return w_[i] > 0.0f ? std::log(static_cast<double>(w_[i])) - log_total
                        : -std::numeric_limits<double>::infinity();
  };
  for (uint64_t j = 0; j < draws; ++j) {
    batch.out_logprobs[r * draws + j] = logprob(static_cast<std::size_t>(tokens[j]));
  }
  const std::size_t n = static_cast<std::size_t>(batch.top_logprobs);
  if (n == 0) return;
  const std::size_t v = w_.size();  // n <= V (CheckBatchShape)
  top_index_.resize(v);
  for (std::size_t i = 0; i < v; ++i) top_index_[i] = static_cast<uint32_t>(i);
  std::partial_sort(
      top_index_.begin(), top_index_.begin() + static_cast<std::ptrdiff_t>(n), top_index_.end(),
      [this](uint32_t a, uint32_t b) { return w_[a] > w_[b] || (w_[a] == w_[b] && a < b); });
  for (std::size_t i = 0; i < n; ++i) {
    batch.out_top_tokens[r * n + i] = top_index_[i];
    batch.out_top_logprobs[r * n + i] = logprob(top_index_[i]);
  }
}

int64_t StableCpuSampler::Cdf::Token(double u) const {
  if (last_positive < 0) return -1;
  const double target = u * c.back();
  const auto it = std::upper_bound(c.begin(), c.end(), target);
  return it == c.end() ? last_positive : static_cast<int64_t>(it - c.begin());
}

Error StableCpuSampler::ChainTargets(const sampcert_chain_batch& batch, VerifyTargets* out) {
  const std::size_t v = static_cast<std::size_t>(batch.vocab);
  const sampcert_row* const* draft_rows = adapters::ChainDraftRows(batch);
  // A row's identity: its buffers and parameters, the history's included (SPEC section 16).
  using Key =
      std::tuple<int32_t, const void*, const uint8_t*, const uint32_t*, uint32_t, uint32_t,
                 uint32_t, int64_t, const int64_t*, const int64_t*, uint64_t, uint64_t, uint32_t,
                 uint32_t, uint32_t, const int64_t*, const float*, uint64_t, int64_t, int64_t>;
  std::map<Key, const Target*> memo;
  // Per position, the key of the previous chain's row there (targets, then drafts).
  std::vector<Key> last_keys;
  std::vector<const Target*> last_rows;
  // The Target of `row` at slot `slot` of chain c ("target" or "draft" row j + 1).
  auto lookup = [&](const sampcert_row& row, int32_t dtype, std::size_t slot, std::size_t c,
                    const char* what, std::size_t j, const Target** got) -> Error {
    const Key key{dtype,
                  row.logits,
                  row.mask,
                  row.mask_layout == kMaskPacked ? row.packed_mask : nullptr,
                  std::bit_cast<uint32_t>(row.temperature),
                  std::bit_cast<uint32_t>(row.top_p),
                  std::bit_cast<uint32_t>(row.min_p),
                  row.top_k,
                  row.prompt_tokens,
                  row.output_tokens,
                  row.num_prompt_tokens,
                  row.num_output_tokens,
                  std::bit_cast<uint32_t>(row.repetition_penalty),
                  std::bit_cast<uint32_t>(row.presence_penalty),
                  std::bit_cast<uint32_t>(row.frequency_penalty),
                  row.bias_tokens,
                  row.bias_values,
                  row.num_bias,
                  row.min_tokens,
                  row.eos_token_id};
    if (last_keys.size() <= slot) {
      last_keys.resize(slot + 1);
      last_rows.resize(slot + 1, nullptr);
    }
    // Consecutive trials of one chain repeat the rows of the chain before: look there first.
    if (last_rows[slot] != nullptr && last_keys[slot] == key) {
      *got = last_rows[slot];
      return Error{};
    }
    auto it = memo.find(key);
    if (it == memo.end()) {
      const sampcert_batch one = adapters::AbiBatch(dtype, batch.vocab, 1, &row);
      std::vector<double> probs(v);
      if (Error e = Probabilities(one, probs.data()); e.code != ErrorCode::kOk) {
        e.message = fmt::format("chain {}, {} row {}: {}", c, what, j + 1, e.message);
        e.row = static_cast<int64_t>(c);
        return e;
      }
      Cdf cdf(v, [&](std::size_t x) { return probs[x]; });
      out->store.push_back(Target{std::move(probs), std::move(cdf)});
      it = memo.emplace(key, &out->store.back()).first;
    }
    last_keys[slot] = key;
    last_rows[slot] = *got = it->second;
    return Error{};
  };
  out->rows.assign(batch.num_chains, {});
  out->drafts.assign(draft_rows != nullptr ? batch.num_chains : 0, {});
  for (std::size_t c = 0; c < batch.num_chains; ++c) {
    const sampcert_chain& ch = batch.chains[c];
    if (ch.num_drafts > kMaxDrafts) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("chain {}: stable_cpu verifies at most {} drafted tokens, not {}", c,
                               kMaxDrafts, ch.num_drafts),
                   static_cast<int64_t>(c)};
    }
    const std::size_t k = static_cast<std::size_t>(ch.num_drafts);
    for (std::size_t j = 0; j <= k; ++j) {
      const Target* t = nullptr;
      if (Error e = lookup(ch.target_rows[j], batch.dtype, j, c, "target", j, &t);
          e.code != ErrorCode::kOk) {
        return e;
      }
      out->rows[c].push_back(t);
    }
    for (std::size_t j = 0; draft_rows != nullptr && j < k; ++j) {
      const Target* q = nullptr;
      if (Error e =
              lookup(draft_rows[c][j], batch.draft_dtype, kMaxDrafts + 1 + j, c, "draft", j, &q);
          e.code != ErrorCode::kOk) {
        return e;
      }
      const auto d = static_cast<std::size_t>(ch.draft_tokens[j]);
      if (q->p[d] <= 0) {
        return Error{ErrorCode::kInvalidDraft,
                     fmt::format("chain {}, draft {}: drafted token {} has draft probability 0 "
                                 "under its draft row (it cannot have been drawn)",
                                 c, j + 1, d),
                     static_cast<int64_t>(c)};
      }
      out->drafts[c].push_back(q);
    }
  }
  return Error{};
}

Error StableCpuSampler::Verify(const sampcert_chain_batch& batch, uint64_t seed, int64_t* accepted,
                               int64_t* tokens) {
  const std::size_t v = static_cast<std::size_t>(batch.vocab);
  const std::size_t max_drafts = static_cast<std::size_t>(batch.max_drafts);
  const std::size_t stride = max_drafts + 1;
  double* acceptance = adapters::ChainAcceptanceOut(batch);
  // Every target row's distribution first, so that invalid input anywhere fails the call before
  // any token is drawn; each distinct target and draft pair's residual is computed once.
  VerifyTargets targets;
  if (Error e = ChainTargets(batch, &targets); e.code != ErrorCode::kOk) return e;
  std::map<std::pair<const Target*, const double*>, Cdf> residuals;
  for (std::size_t c = 0; c < batch.num_chains; ++c) {
    const sampcert_chain& ch = batch.chains[c];
    const std::vector<const Target*>& p = targets.rows[c];
    const std::size_t k = static_cast<std::size_t>(ch.num_drafts);
    int64_t* out = tokens + c * stride;
    auto uniform = [&](std::size_t slot) {
      return CanonicalUniform(seed, ch.row_id, 64 * ch.draw + slot);
    };
    std::size_t n = 0;
    for (; n < k; ++n) {
      const Target& target = *p[n];
      const double* q =
          targets.drafts.empty() ? ch.draft_probs + n * v : targets.drafts[c][n]->p.data();
      const auto d = static_cast<std::size_t>(ch.draft_tokens[n]);
      if (acceptance != nullptr) {
        acceptance[c * max_drafts + n] = std::min(1.0, target.p[d] / q[d]);
      }
      // Accept with probability min(1, p / q): u < p / q, as u * q < p (q > 0, no division).
      if (uniform(2 * n) * q[d] < target.p[d]) {
        out[n] = ch.draft_tokens[n];
        continue;
      }
      // The residual (p - q)+, exact in double; where rounding left it empty (p and q equal to
      // the last bit everywhere), the target itself.
      auto r = residuals.find({&target, q});
      if (r == residuals.end()) {
        Cdf cdf(v, [&](std::size_t x) { return target.p[x] > q[x] ? target.p[x] - q[x] : 0.0; });
        r = residuals.emplace(std::make_pair(&target, q), std::move(cdf)).first;
      }
      int64_t t = r->second.Token(uniform(2 * n + 1));
      if (t < 0) t = target.cdf.Token(uniform(2 * n + 1));
      out[n] = t;
      break;
    }
    if (n == k) out[k] = p[k]->cdf.Token(uniform(2 * k + 1));
    accepted[c] = static_cast<int64_t>(n);
  }
  return Error{};
}

const sampcert_sampler_api* StableCpuSamplerApi() {
  return adapters::BuiltinApi<StableCpuSampler>::Table();
}

}  // namespace sampcert::impls
