// The host side of the ABI: one C++ handle for any sampler behind a function table, whether
// built in or loaded from a plug-in. The runner and the properties see only this.
#ifndef SAMPCERT_ADAPTERS_SAMPLER_H_
#define SAMPCERT_ADAPTERS_SAMPLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

// What a sampler declared, copied out of the plug-in (so it outlives nothing).
struct SamplerInfo {
  std::string name;
  std::string version;
  uint32_t capabilities = 0;
  Policies policies;
  bool thread_safe = false;
  bool Has(uint32_t capability) const { return (capabilities & capability) != 0; }
};

// The capability bits' names, in SPEC.md's vocabulary: "f32", "mask", "top-k", ...
std::vector<std::string> CapabilityNames(uint32_t capabilities);

// Rows sharing dtype and vocabulary size. The RowViews' buffers are the caller's.
struct Batch {
  DType dtype = DType::kF32;
  std::size_t vocab = 0;
  std::vector<RowView> rows;
};

class Sampler {
 public:
  // `keep_alive` holds whatever owns the table (a loaded library), released after destroy.
  static Expected<std::unique_ptr<Sampler>> Open(const sampcert_sampler_api* api,
                                                 std::shared_ptr<void> keep_alive,
                                                 const char* config = nullptr);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  const SamplerInfo& info() const { return info_; }

  // Row-major num_rows x vocab probabilities; kUnsupported without the capability.
  Expected<std::vector<double>> Probabilities(const Batch& batch);
  // Row-major num_rows x draws_per_row tokens for draws first_draw, first_draw + 1, ...
  Expected<std::vector<int64_t>> Sample(const Batch& batch, uint64_t seed, uint64_t first_draw,
                                        uint64_t draws_per_row);

 private:
  Sampler(const sampcert_sampler_api* api, std::shared_ptr<void> keep_alive)
      : api_(api), keep_alive_(std::move(keep_alive)) {}
  std::vector<sampcert_row> AbiRows(const Batch& batch) const;

  const sampcert_sampler_api* api_;
  std::shared_ptr<void> keep_alive_;
  sampcert_sampler* handle_ = nullptr;
  SamplerInfo info_;
};

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_SAMPLER_H_
