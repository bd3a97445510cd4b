// stable_cuda's shared __host__ __device__ math (impls/stable_cuda/row_math.h) run on the CPU in
// the kernels' order by its host model (impls/stable_cuda/host_model.h), exposed as a plug-in
// so that the suite certifies it: the target of tools/tool_mutants.py's "stable_cuda_math"
// profile, where universalmutator mutates those two headers and this file is compiled against
// each mutant. It declares stable_cuda's policies (SPEC's exact semantics), computes each row
// with HostModelRow and draws token j of a row at the canonical uniform (seed, row id,
// first_draw + j), as stable_cuda's draw kernel does. Not a shipped sampler: a test fixture.
#include <cstdint>
#include <cstring>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "impls/stable_cuda/host_model.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/policies.h"
#include "sampcert/row_validation.h"

namespace {

using sampcert::Error;
using sampcert::ErrorCode;
using sampcert::Policies;
using sampcert::RowView;
using sampcert::impls::cuda_math::HostModelRow;
using sampcert::impls::cuda_math::HostRowInput;
using sampcert::impls::cuda_math::RowStatus;

Policies Declared() {
  Policies p;
  p.tie_rule = sampcert::TieRule::kKeepAll;
  p.greedy_tie_break = sampcert::GreedyTieBreak::kUniform;
  p.order = sampcert::PipelineOrder::kTemperatureFirst;
  p.nan_policy = sampcert::NanPolicy::kError;
  p.determinism = sampcert::Determinism::kSameSeed;
  p.accuracy = sampcert::AccuracyClass::kF32;
  return p;
}

class HostModelSampler {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_MIN_P | SAMPCERT_CAP_TEMPERATURE_ZERO |
      SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH;

  static void Describe(sampcert_sampler_info* info) {
    info->name = "stable_cuda_host_model";
    info->version = "1";
    sampcert::adapters::PoliciesToInfo(Declared(), info);
    info->thread_safe = 1;
  }

  Error Probabilities(const sampcert_batch& batch, double* out) {
    const std::size_t v = static_cast<std::size_t>(batch.vocab);
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      const HostModelRow m = Row(batch, r);
      if (Error e = Check(batch, r, m); e.code != ErrorCode::kOk) return e;
      for (std::size_t i = 0; i < v; ++i) out[r * v + i] = m.Probability(static_cast<int64_t>(i));
    }
    return Error{};
  }

  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out) {
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      const HostModelRow m = Row(batch, r);
      if (Error e = Check(batch, r, m); e.code != ErrorCode::kOk) return e;
      const uint64_t row_id = batch.rows[r].row_id;
      for (uint64_t j = 0; j < draws_per_row; ++j) {
        out[r * draws_per_row + j] =
            m.Draw(sampcert::CanonicalUniform(seed, row_id, first_draw + j));
      }
    }
    return Error{};
  }

 private:
  static HostModelRow Row(const sampcert_batch& batch, std::size_t r) {
    const RowView v = sampcert::adapters::ToRowView(batch, r);
    return HostModelRow(HostRowInput{v.logits, static_cast<uint32_t>(v.dtype), v.mask,
                                     static_cast<int64_t>(v.vocab), v.temperature, v.top_k, v.top_p,
                                     v.min_p});
  }
  // As stable_cuda's Prepare: every row's parameters first (ValidateRowParameters), then the
  // logits only where the model flags the row (a NaN in the support, an empty support), with the
  // shared validator's exact message; a row the model flags but the validator accepts is the
  // model's own error. A row the model does not flag is not checked again: the model's own
  // detection is what is under test.
  static Error Check(const sampcert_batch& batch, std::size_t r, const HostModelRow& m) {
    const RowView v = sampcert::adapters::ToRowView(batch, r);
    if (Error e = sampcert::ValidateRowParameters(v, Declared(), r); e.code != ErrorCode::kOk) {
      return e;
    }
    if (m.status() != RowStatus::kOk) {
      if (Error e = sampcert::ValidateRow(v, Declared(), r); e.code != ErrorCode::kOk) return e;
      return Error{ErrorCode::kInternal, "host model flagged a row the validator accepts",
                   static_cast<int64_t>(r)};
    }
    return Error{};
  }
};

using Api = sampcert::adapters::BuiltinApi<HostModelSampler>;

}  // namespace

extern "C" SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major,
                                                            uint32_t /*host_minor*/,
                                                            const sampcert_sampler_api** out) {
  return sampcert::adapters::HandOutTable(host_major, Api::Table(), out);
}
