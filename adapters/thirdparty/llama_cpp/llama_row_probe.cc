// A direct probe of llama.cpp's sampler chain on one row, outside sampcert: reads a row file of a
// report (sampcert-row/1: logits as bit patterns, mask, temperature, top_k, top_p, min_p), builds
// the candidates as a llama.cpp caller does (a masked token's logit -inf, f16 / bf16 through
// ggml's exact conversions), applies llama.cpp's own chain once (top_k, top_p, min_p, temp,
// dist; llama_sampler_apply) and says what the library did with that row. No sampcert code:
// only llama.h, ggml.h and the row file's JSON. adapters/thirdparty/findings.py runs it as the
// predicate of a llama.cpp finding on each failing row the finding claims (findings.json).
//
// Usage: llama_row_probe ROW_FILE
// Prints one JSON line: {"kept": candidates left after the chain, "nan": how many of their
// probabilities are NaN, "inf_quotients": how many kept logits are +-inf after temp (logit / T),
// "max_cut": how many of the row's largest logits (+inf included) truncation removed when it
// removed them all, "selected": the token, "invalid_selected": 1 when SPEC refuses the row
// (section 5: an allowed NaN logit, an empty support, T < 0, T = inf or NaN, top_k < 0, top_p
// NaN or outside (0, 1], min_p NaN or outside [0, 1)) and the chain selected a token anyway,
// "quotient_rounding": what temp's rounding of logit / T to float does when everything after it
// is exact: pairs of distinct kept logits whose quotients came out equal, plus kept tokens whose
// probability it moves past SPEC TOL-3's fp32 bound}.
// Exit 0, or 2 on a malformed row file.
#include <ggml.h>
#include <llama.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace {

using SamplerPtr = std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)>;

float Bits32(const nlohmann::json& j, const char* key) {
  const auto bits = j.at(key).get<uint32_t>();
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// The row's logits as llama.cpp's float candidates; a masked token gets -inf.
std::vector<llama_token_data> Candidates(const nlohmann::json& row) {
  const auto dtype = row.at("dtype").get<std::string>();
  const auto& bits = row.at("logit_bits");
  const nlohmann::json mask = row.value("mask", nlohmann::json::array());
  std::vector<llama_token_data> out;
  for (size_t i = 0; i < bits.size(); ++i) {
    float x = 0;
    if (dtype == "f32") {
      const auto b = bits[i].get<uint32_t>();
      std::memcpy(&x, &b, sizeof x);
    } else if (dtype == "f16") {
      x = ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(bits[i].get<uint16_t>()));
    } else if (dtype == "bf16") {
      ggml_bf16_t h;
      h.bits = bits[i].get<uint16_t>();
      x = ggml_bf16_to_fp32(h);
    } else {
      throw std::runtime_error("unknown dtype " + dtype);
    }
    if (!mask.empty() && mask.at(i).get<int>() == 0) x = -INFINITY;
    out.push_back(llama_token_data{static_cast<llama_token>(i), x, 0.0f});
  }
  return out;
}

// SPEC section 5's refusals that concern the row's own values (the reference's rules).
bool Invalid(const std::vector<float>& logits, float t, int64_t top_k, float top_p, float min_p) {
  bool any_finite = false;
  for (const float x : logits) {
    if (std::isnan(x)) return true;  // a masked NaN is -inf by now
    any_finite |= x > -INFINITY;
  }
  return !any_finite || !(t >= 0) || std::isinf(t) || top_k < 0 || !(top_p > 0 && top_p <= 1) ||
         !(min_p >= 0 && min_p < 1);
}

// Pairs merged plus tokens past TOL-3 (fp32 class: u = u_out = 2^-24, c = 6, lambda = 8, floor
// 2^-100): the kept candidates' quotients as temp left them against the exact x / T, each
// softmax taken in long double.
int64_t QuotientRounding(const llama_token_data_array& cur, const std::vector<float>& original,
                         float t) {
  if (!(t > 0) || std::isinf(t) || cur.size == 0) return 0;
  std::vector<long double> exact, rounded;
  for (size_t i = 0; i < cur.size; ++i) {
    const float x = original[static_cast<size_t>(cur.data[i].id)];
    if (!std::isfinite(x) || !std::isfinite(cur.data[i].logit)) return 0;  // others' findings
    exact.push_back(static_cast<long double>(x) / t);
    rounded.push_back(cur.data[i].logit);
  }
  int64_t merged = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    for (size_t j = i + 1; j < exact.size(); ++j) {
      merged += exact[i] != exact[j] && rounded[i] == rounded[j] ? 1 : 0;
    }
  }
  const auto softmax = [](std::vector<long double> v) {
    long double m = v[0], z = 0;
    for (long double x : v) m = std::max(m, x);
    for (long double& x : v) z += (x = std::exp(x - m));
    for (long double& x : v) x /= z;
    return v;
  };
  long double m = exact[0];
  for (long double x : exact) m = std::max(m, x);
  const std::vector<long double> p = softmax(exact), q = softmax(rounded);
  const long double u = std::ldexp(1.0L, -24), floor = std::ldexp(1.0L, -100);
  int64_t past = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const long double bound = u * (3 * std::fabs(exact[i] - m) + 6) +
                              8 * std::sqrt(static_cast<long double>(original.size())) * u + 2 * u;
    past += p[i] >= floor && std::fabs(q[i] - p[i]) / p[i] > bound ? 1 : 0;
  }
  return merged + past;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ROW_FILE\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    const nlohmann::json row = nlohmann::json::parse(in);
    if (row.at("format") != "sampcert-row/1") throw std::runtime_error("not a sampcert-row/1");
    std::vector<llama_token_data> data = Candidates(row);
    std::vector<float> original;
    for (const auto& d : data) original.push_back(d.logit);
    // Truncation never cuts a largest candidate (top-k, top-p and min-p keep the best first):
    // max_cut counts the row's largest logits (+inf ones included) when the chain removed every
    // one of them.
    float row_max = -INFINITY;
    for (const auto& d : data) row_max = std::fmax(row_max, d.logit);
    int64_t max_in_row = 0;
    for (const auto& d : data) max_in_row += d.logit == row_max ? 1 : 0;
    const float t = Bits32(row, "temperature_bits");
    const auto top_k = static_cast<int32_t>(row.at("top_k").get<int64_t>());

    // The chain up to temp, then dist on its own, so the quotients can be read in between.
    SamplerPtr chain(llama_sampler_chain_init(llama_sampler_chain_default_params()),
                     &llama_sampler_free);
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(top_k));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(Bits32(row, "top_p_bits"), 1));
    llama_sampler_chain_add(chain.get(), llama_sampler_init_min_p(Bits32(row, "min_p_bits"), 1));
    llama_token_data_array cur{data.data(), data.size(), -1, false};
    llama_sampler_apply(chain.get(), &cur);
    int64_t max_kept = 0;
    for (size_t i = 0; i < cur.size; ++i) max_kept += cur.data[i].logit == row_max ? 1 : 0;
    SamplerPtr temp(llama_sampler_init_temp(t), &llama_sampler_free);
    llama_sampler_apply(temp.get(), &cur);
    int64_t inf_quotients = 0;
    for (size_t i = 0; i < cur.size; ++i) inf_quotients += std::isinf(cur.data[i].logit) ? 1 : 0;
    const int64_t quotient_rounding = QuotientRounding(cur, original, t);
    SamplerPtr dist(llama_sampler_init_dist(1), &llama_sampler_free);
    llama_sampler_apply(dist.get(), &cur);
    int64_t nan = 0;
    for (size_t i = 0; i < cur.size; ++i) nan += std::isnan(cur.data[i].p) ? 1 : 0;
    const nlohmann::json out = {
        {"kept", cur.size},
        {"nan", nan},
        {"inf_quotients", inf_quotients},
        {"max_cut", max_kept == 0 && !std::isnan(row_max) && row_max > -INFINITY ? max_in_row : 0},
        {"selected", cur.selected >= 0 && static_cast<size_t>(cur.selected) < cur.size
                         ? nlohmann::json(cur.data[cur.selected].id)
                         : nlohmann::json(nullptr)},
        {"invalid_selected", Invalid(original, t, row.at("top_k").get<int64_t>(),
                                     Bits32(row, "top_p_bits"), Bits32(row, "min_p_bits")) &&
                                     cur.selected >= 0
                                 ? 1
                                 : 0},
        {"quotient_rounding", quotient_rounding}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama_row_probe: %s: %s\n", argv[1], e.what());
    return 2;
  }
}
