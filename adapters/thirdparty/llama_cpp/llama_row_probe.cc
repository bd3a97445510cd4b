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
// removed them all, "selected": the token}.
// Exit 0, or 2 on a malformed row file.
#include <ggml.h>
#include <llama.h>

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
                         : nlohmann::json(nullptr)}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama_row_probe: %s: %s\n", argv[1], e.what());
    return 2;
  }
}
