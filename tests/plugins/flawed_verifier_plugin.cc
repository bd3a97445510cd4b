// Flawed speculative-decoding verifiers (issue 20): stable_cpu's sampler with its verify() replaced
// by the one SAMPCERT_DEFECT names, each a mechanism from the public record, so that the
// verifier family (SPEC section 15) must catch it by the property it breaks. "none" is the
// control: stable_cpu's own exact verifier.
//
//   target_sample_match  accept d_j when a sample t ~ p_j equals it, else emit t: the emitted
//                        tokens follow p_j, but the acceptance rate is sum p q, not
//                        sum min(p, q) (the "accept when the draft equals a target sample"
//                        verifiers of greedy-first engines, biased at T > 0). VER-3.
//   no_residual          on a rejection, draw from p_j instead of (p_j - q_j)+ (the residual
//                        step left out, as in early speculative-sampling ports). VER-2, VER-4.
//   ratio_inverted       accept with min(1, q / p) instead of min(1, p / q): drafts of target
//                        probability 0 accepted too. VER-1, VER-2, VER-3.
//   unnormalized_residual  draw the residual's inverse CDF with u in (0, 1) against the
//                        unnormalized (p - q)+, whose sum is 1 - beta < 1: a u past the sum
//                        finds no token and returns the "not found" id V (the recovered-token
//                        ids >= V of public kernel threads). VER-1.
//   bonus_from_last      when all k drafts are accepted, draw the bonus token from p_k instead of
//                        p_{k+1} (an off-by-one in the target row index). VER-2, and VER-1 where
//                        p_k keeps tokens p_{k+1} does not.
//   greedy_draft         treat the draft as one-hot at d_j (drafts sampled greedily while the
//                        verifier assumes sampling, or q never passed): accept with p_j(d_j),
//                        residual p_j without d_j. VER-3, VER-4 (its emitted tokens do follow
//                        p_j: q p + p (1 - q) = p).
//   batch_position_rng   key the randomness by the chain's position in the batch instead of its
//                        row id and draw (per-request streams read by output slot). VER-5.
//   row_id_ignored       key the uniforms by (seed, draw) alone, the row id left out (a stream per
//                        draw step shared by every request of the batch): each chain's own
//                        trials follow the laws, but two row ids at one draw give the same
//                        output. VER-7 (SPEC VER-DET-1's key), nothing else.
//   unchecked_draft      no validation of the drafts: q(d) = 0 or a draft that sums to 0.5 is
//                        verified anyway. VER-INV-1.
//   draft_params_ignored with draft rows given as logits, q_j is the softmax of the draft logits
//                        at T = 1 without the draft row's truncation, not the distribution the
//                        drafts were drawn from (the proposal/acceptance mismatch of
//                        z-lab/dflash#74, a draft sampler that ignores the temperature;
//                        deepseek-ai/DeepSpec#31, drafts drawn from another dtype path than the
//                        q of the ratio; the draft top-k/top-p thread of NVIDIA/TensorRT-LLM
//                        #15775). VER-2, VER-3 on the draft-logits chains.
//   acceptance_unclamped the acceptance probabilities written as p / q, not min(1, p / q) (the
//                        ratio reported before its clamp; the tokens are right). VER-6.
//   typical              typical acceptance (Medusa, Cai et al. 2024, section 3.3.1; vLLM's
//                        TypicalAcceptanceSampler, posterior_threshold 0.09 and posterior_alpha
//                        0.3, its defaults): d_j accepted iff p_j(d_j) > min(0.09,
//                        0.3 exp(-H(p_j))), the arg-max of p_j on a rejection. Declared
//                        (SAMPCERT_VERIFY_TYPICAL): a lossy scheme, VER-2..VER-4 Warnings, never
//                        a Pass or a Fail (VER-DEV-1).
//   typical_undeclared   the same rule declared exact: VER-2 and VER-3 fail.
//   lenient              lenient acceptance, lenience 0.5 (Leviathan et al. 2023, appendix A.5):
//                        accepted with probability min(1, p / (0.5 q)), the residual (p - q)+ on
//                        a rejection. Declared (SAMPCERT_VERIFY_LENIENT): Warnings.
//   start_of_step_mask   every target row of a chain read under position 1's mask: a step that
//                        schedules several positions keeps the grammar mask it started with
//                        (vllm-project/vllm#44297: positions past a reasoning marker got the
//                        start-of-step mask). VER-1 on position_masks_V64_k3, where each
//                        position forbids other tokens; nothing on masked_V64_k3, whose
//                        positions share one mask.
//   bonus_unmasked       the bonus row (position k + 1) read without its mask: its bitmask row
//                        filled with the unconstrained mask after a padded draft
//                        (vllm-project/vllm#44006, #44292). VER-1 on the masked chains.
//   no_verify            the control without the capability: stable_cpu's sampler alone, the
//                        baseline of the verifier family's cost (docs/performance.md,
//                        "Certification run times").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "impls/stable_cpu/stable_cpu_sampler.h"
#include "sampcert/canonical_draw.h"

namespace {

using sampcert::Error;
using sampcert::ErrorCode;
using sampcert::impls::StableCpuSampler;

std::string Defect() {
  const char* d = std::getenv("SAMPCERT_DEFECT");
  return d != nullptr ? d : "none";
}

class FlawedVerifier {
 public:
  static constexpr uint32_t kCapabilities = StableCpuSampler::kCapabilities;
  static void Describe(sampcert_sampler_info* info) {
    StableCpuSampler::Describe(info);
    static const std::string name = "flawed_verifier_" + Defect();
    info->name = name.c_str();
    if (Defect() == "typical") {
      info->verify_scheme = SAMPCERT_VERIFY_TYPICAL;
      info->verify_threshold = 0.09f;
      info->verify_alpha = 0.3f;
    } else if (Defect() == "lenient") {
      info->verify_scheme = SAMPCERT_VERIFY_LENIENT;
      info->verify_threshold = 0.5f;
    }
    if (Defect() == "no_verify") {
      info->capabilities &= ~(SAMPCERT_CAP_VERIFY | SAMPCERT_CAP_VERIFY_DRAFT_LOGITS |
                              SAMPCERT_CAP_VERIFY_ACCEPTANCE);
    }
  }
  Error Probabilities(const sampcert_batch& batch, double* out) {
    return inner_.Probabilities(batch, out);
  }
  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out) {
    return inner_.Sample(batch, seed, first_draw, draws_per_row, out);
  }
  Error Verify(const sampcert_chain_batch& batch, uint64_t seed, int64_t* accepted,
               int64_t* tokens) {
    if (defect_ == "none") return inner_.Verify(batch, seed, accepted, tokens);
    if (defect_ == "start_of_step_mask" || defect_ == "bonus_unmasked") {
      // The exact verifier on a copy of the chains whose target rows carry the wrong masks.
      std::vector<sampcert_chain> chains(batch.chains, batch.chains + batch.num_chains);
      std::vector<std::vector<sampcert_row>> rows(chains.size());
      for (std::size_t c = 0; c < chains.size(); ++c) {
        const std::size_t k = static_cast<std::size_t>(chains[c].num_drafts);
        rows[c].assign(chains[c].target_rows, chains[c].target_rows + k + 1);
        if (defect_ == "start_of_step_mask") {
          for (sampcert_row& r : rows[c]) r.mask = rows[c][0].mask;
        } else {
          rows[c][k].mask = nullptr;
        }
        chains[c].target_rows = rows[c].data();
      }
      sampcert_chain_batch wrong = batch;
      wrong.chains = chains.data();
      return inner_.Verify(wrong, seed, accepted, tokens);
    }
    StableCpuSampler::VerifyTargets targets;
    if (Error e = inner_.ChainTargets(batch, &targets); e.code != ErrorCode::kOk) return e;
    const std::size_t v = static_cast<std::size_t>(batch.vocab);
    const std::size_t max_drafts = static_cast<std::size_t>(batch.max_drafts);
    const std::size_t stride = max_drafts + 1;
    double* acceptance = sampcert::adapters::ChainAcceptanceOut(batch);
    const sampcert_row* const* draft_rows = sampcert::adapters::ChainDraftRows(batch);
    // draft_params_ignored: each distinct draft row's softmax at T = 1, untruncated.
    std::map<const void*, std::vector<double>> plain;
    auto plain_q = [&](const sampcert_row& row) -> Error {
      if (plain.contains(row.logits)) return Error{};
      sampcert_row r = row;
      r.temperature = 1;
      r.top_k = 0;
      r.top_p = 1;
      r.min_p = 0;
      const sampcert_batch one =
          sampcert::adapters::AbiBatch(batch.draft_dtype, batch.vocab, 1, &r);
      std::vector<double> q(v);
      if (Error e = inner_.Probabilities(one, q.data()); e.code != ErrorCode::kOk) return e;
      plain.emplace(row.logits, std::move(q));
      return Error{};
    };
    // typical: each distinct target row's threshold min(0.09, 0.3 exp(-H)) and arg-max.
    const bool typical = defect_ == "typical" || defect_ == "typical_undeclared";
    std::map<const std::vector<double>*, std::pair<double, int64_t>> typical_of;
    auto typical_row = [&](const std::vector<double>& pj) {
      auto [it, fresh] = typical_of.try_emplace(&pj);
      if (fresh) {
        double h = 0;
        for (const double x : pj) h -= x > 0 ? x * std::log(x) : 0.0;
        it->second = {std::min(0.09, 0.3 * std::exp(-h)),
                      static_cast<int64_t>(std::max_element(pj.begin(), pj.end()) - pj.begin())};
      }
      return it->second;
    };
    std::vector<double> w(v);
    for (std::size_t c = 0; c < batch.num_chains; ++c) {
      const sampcert_chain& ch = batch.chains[c];
      const auto& p = targets.rows[c];
      const std::size_t k = static_cast<std::size_t>(ch.num_drafts);
      int64_t* out = tokens + c * stride;
      const uint64_t row_id = defect_ == "batch_position_rng" ? c
                              : defect_ == "row_id_ignored"   ? 0
                                                              : ch.row_id;
      const uint64_t draw = defect_ == "batch_position_rng" ? 0 : ch.draw;
      auto uniform = [&](std::size_t slot) {
        return sampcert::CanonicalUniform(seed, row_id, 64 * draw + slot);
      };
      auto draw_from = [&](const auto& weight, double u, bool normalized) {
        double total = 0;
        for (std::size_t x = 0; x < v; ++x) total += w[x] = weight(x);
        const double target = normalized ? u * total : u;
        double s = 0;
        for (std::size_t x = 0; x < v; ++x) {
          s += w[x];
          if (target < s && w[x] > 0) return static_cast<int64_t>(x);
        }
        return normalized ? static_cast<int64_t>(v - 1) : static_cast<int64_t>(v);  // "not found"
      };
      std::size_t n = 0;
      for (; n < k; ++n) {
        const std::vector<double>& pj = p[n]->p;
        const double* q =
            draft_rows == nullptr ? ch.draft_probs + n * v : targets.drafts[c][n]->p.data();
        if (defect_ == "draft_params_ignored" && draft_rows != nullptr) {
          if (Error e = plain_q(draft_rows[c][n]); e.code != ErrorCode::kOk) return e;
          q = plain.at(draft_rows[c][n].logits).data();
        }
        const int64_t d = ch.draft_tokens[n];
        const auto ds = static_cast<std::size_t>(d);
        const double u = uniform(2 * n);
        const double lenience = defect_ == "lenient" ? 0.5 : 1.0;
        if (acceptance != nullptr) {
          const double ratio =
              defect_ == "ratio_inverted" ? q[ds] / pj[ds] : pj[ds] / (lenience * q[ds]);
          acceptance[c * max_drafts + n] = defect_ == "acceptance_unclamped" ? ratio
                                           : typical ? (pj[ds] > typical_row(pj).first ? 1.0 : 0.0)
                                                     : std::min(1.0, ratio);
        }
        bool accept = false;
        if (typical) {
          const auto [threshold, top] = typical_row(pj);
          if (pj[ds] <= threshold) {
            out[n] = top;
            break;
          }
          accept = true;
        } else if (defect_ == "lenient") {
          accept = u * lenience * q[ds] < pj[ds];
        } else if (defect_ == "target_sample_match") {
          const int64_t t = p[n]->cdf.Token(u);
          accept = t == d;
          if (!accept) {
            out[n] = t;
            break;
          }
        } else if (defect_ == "ratio_inverted") {
          accept = u * pj[ds] < q[ds];
        } else if (defect_ == "greedy_draft") {
          accept = u < pj[ds];
        } else if (defect_ == "unchecked_draft") {
          accept = q[ds] <= 0 || u * q[ds] < pj[ds];
        } else {
          accept = u * q[ds] < pj[ds];
        }
        if (accept) {
          out[n] = d;
          continue;
        }
        const double u2 = uniform(2 * n + 1);
        if (defect_ == "no_residual") {
          out[n] = p[n]->cdf.Token(u2);
        } else if (defect_ == "greedy_draft") {
          out[n] = draw_from([&](std::size_t x) { return x == ds ? 0.0 : pj[x]; }, u2, true);
        } else {
          const bool normalized = defect_ != "unnormalized_residual";
          out[n] = draw_from([&](std::size_t x) { return pj[x] > q[x] ? pj[x] - q[x] : 0.0; }, u2,
                             normalized);
        }
        break;
      }
      if (n == k) {
        const std::size_t row = defect_ == "bonus_from_last" ? k - 1 : k;
        out[k] = p[row]->cdf.Token(uniform(2 * k + 1));
      }
      accepted[c] = static_cast<int64_t>(n);
    }
    return Error{};
  }

 private:
  StableCpuSampler inner_;
  std::string defect_ = Defect();
};

using Api = sampcert::adapters::BuiltinApi<FlawedVerifier>;

// unchecked_draft skips the drafts' validation (the shape checks stay: a null pointer would
// crash the host's copy, which is not the defect under test).
int32_t UncheckedVerify(sampcert_sampler* sampler, const sampcert_chain_batch* batch, uint64_t seed,
                        int64_t* accepted, int64_t* tokens, sampcert_error* error) {
  return sampcert::adapters::Guarded(error, [&] {
    if (batch == nullptr || batch->chains == nullptr || batch->num_chains == 0) {
      return Error{ErrorCode::kInvalidArgument, "no chains"};
    }
    for (uint64_t c = 0; c < batch->num_chains; ++c) {
      const sampcert_chain& ch = batch->chains[c];
      if (ch.num_drafts == 0) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("chain {}: k = 0", c),
                     static_cast<int64_t>(c)};
      }
      // The ids are checked (an id past V would read past the row); the distributions are not.
      for (uint64_t j = 0; j < ch.num_drafts; ++j) {
        if (ch.draft_tokens[j] < 0 || static_cast<uint64_t>(ch.draft_tokens[j]) >= batch->vocab) {
          return Error{ErrorCode::kInvalidDraft,
                       fmt::format("chain {}: drafted id out of range", c),
                       static_cast<int64_t>(c)};
        }
      }
    }
    return reinterpret_cast<FlawedVerifier*>(sampler)->Verify(*batch, seed, accepted, tokens);
  });
}

}  // namespace

extern "C" SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major,
                                                            uint32_t /*host_minor*/,
                                                            const sampcert_sampler_api** out) {
  static sampcert_sampler_api api = [] {
    sampcert_sampler_api a = *Api::Table();
    if (Defect() == "unchecked_draft") a.verify = &UncheckedVerify;
    return a;
  }();
  return sampcert::adapters::HandOutTable(host_major, &api, out);
}
