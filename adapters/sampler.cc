#include "adapters/sampler.h"

#include <fmt/format.h>

#include "adapters/abi_conversions.h"

namespace sampcert::adapters {
namespace {

sampcert_error FreshError() {
  sampcert_error e{};
  e.struct_size = SAMPCERT_ERROR_STRUCT_SIZE;
  e.row = -1;
  return e;
}

}  // namespace

std::vector<std::string> CapabilityNames(uint32_t caps) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {SAMPCERT_CAP_F32, "f32"},
      {SAMPCERT_CAP_F16, "f16"},
      {SAMPCERT_CAP_BF16, "bf16"},
      {SAMPCERT_CAP_MASK, "mask"},
      {SAMPCERT_CAP_TOP_K, "top-k"},
      {SAMPCERT_CAP_TOP_P, "top-p"},
      {SAMPCERT_CAP_MIN_P, "min-p"},
      {SAMPCERT_CAP_TEMPERATURE_ZERO, "temperature-0"},
      {SAMPCERT_CAP_PROBABILITIES, "probabilities"},
      {SAMPCERT_CAP_BATCH, "batch"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames) {
    if (caps & bit) out.emplace_back(name);
  }
  return out;
}

Expected<std::unique_ptr<Sampler>> Sampler::Open(const sampcert_sampler_api* api,
                                                 std::shared_ptr<void> keep_alive,
                                                 const char* config) {
  std::unique_ptr<Sampler> s(new Sampler(api, std::move(keep_alive)));
  sampcert_sampler_info info{};
  info.struct_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;
  sampcert_error err = FreshError();
  if (int32_t st = api->get_info(&info, &err); st != SAMPCERT_STATUS_OK) {
    return FromAbiError(st, err);
  }
  s->info_.name = info.name != nullptr ? info.name : "";
  s->info_.version = info.version != nullptr ? info.version : "";
  s->info_.capabilities = info.capabilities;
  s->info_.policies = PoliciesFromInfo(info);
  s->info_.thread_safe = info.thread_safe != 0;
  if (std::string why = ValidatePolicies(s->info_.policies); !why.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("sampler '{}' declares invalid policies: {}", s->info_.name, why)};
  }
  err = FreshError();
  if (int32_t st = api->create(config, &s->handle_, &err); st != SAMPCERT_STATUS_OK) {
    return FromAbiError(st, err);
  }
  return s;
}

Sampler::~Sampler() {
  if (handle_ != nullptr) api_->destroy(handle_);
}

std::vector<sampcert_row> Sampler::AbiRows(const Batch& batch) const {
  std::vector<sampcert_row> rows(batch.rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const RowView& v = batch.rows[r];
    sampcert_row& a = rows[r];
    a.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
    a.logits = v.logits;
    a.mask = v.mask;
    a.temperature = v.temperature;
    a.top_p = v.top_p;
    a.min_p = v.min_p;
    a.top_k = v.top_k;
    a.row_id = v.row_id;
  }
  return rows;
}

Expected<std::vector<double>> Sampler::Probabilities(const Batch& batch) {
  if (api_->probabilities == nullptr || !info_.Has(SAMPCERT_CAP_PROBABILITIES)) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("sampler '{}' does not declare probabilities", info_.name)};
  }
  const std::vector<sampcert_row> rows = AbiRows(batch);
  const sampcert_batch b{SAMPCERT_BATCH_STRUCT_SIZE,
                         static_cast<int32_t>(batch.dtype),
                         0,
                         batch.vocab,
                         rows.size(),
                         rows.data()};
  std::vector<double> out(rows.size() * batch.vocab);
  sampcert_error err = FreshError();
  if (int32_t st = api_->probabilities(handle_, &b, out.data(), &err); st != SAMPCERT_STATUS_OK) {
    return FromAbiError(st, err);
  }
  return out;
}

Expected<std::vector<int64_t>> Sampler::Sample(const Batch& batch, uint64_t seed,
                                               uint64_t first_draw, uint64_t draws_per_row) {
  const std::vector<sampcert_row> rows = AbiRows(batch);
  const sampcert_batch b{SAMPCERT_BATCH_STRUCT_SIZE,
                         static_cast<int32_t>(batch.dtype),
                         0,
                         batch.vocab,
                         rows.size(),
                         rows.data()};
  std::vector<int64_t> out(rows.size() * draws_per_row);
  sampcert_error err = FreshError();
  if (int32_t st = api_->sample(handle_, &b, seed, first_draw, draws_per_row, out.data(), &err);
      st != SAMPCERT_STATUS_OK) {
    return FromAbiError(st, err);
  }
  return out;
}

}  // namespace sampcert::adapters
