// Exposes a C++ sampler class through the C ABI's function table, so that built-in samplers
// and third-party plug-ins share one code path. Every entry point catches everything before
// it crosses extern "C" (fmt's fmt-c.cc pattern).
//
// An Impl provides:
//   static constexpr uint32_t kCapabilities;        // SAMPCERT_CAP_* bits
//   static void Describe(sampcert_sampler_info*);  // name, version, policies
//   Error Probabilities(const sampcert_batch&, double* out);            // if CAP_PROBABILITIES
//   Error Sample(const sampcert_batch&, uint64_t seed, uint64_t first_draw,
//                uint64_t draws_per_row, int64_t* out);
// and is default-constructible (one instance per handle). Optionally
//   static Error CheckAvailable();  // create fails with its error (e.g. no device)
//   Error Verify(const sampcert_chain_batch&, uint64_t seed, int64_t* accepted,
//                int64_t* tokens);  // with SAMPCERT_CAP_VERIFY (ABI MINOR 2)
#ifndef SAMPCERT_ADAPTERS_BUILTIN_ADAPTER_H_
#define SAMPCERT_ADAPTERS_BUILTIN_ADAPTER_H_

#include <concepts>
#include <exception>
#include <new>
#include <string>

#include "adapters/abi_conversions.h"
#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

template <typename Fn>
int32_t Guarded(sampcert_error* error, Fn&& fn) noexcept {
  try {
    const Error e = fn();
    if (e.code == ErrorCode::kOk) return SAMPCERT_STATUS_OK;
    return FillAbiError(e, error);
  } catch (const std::bad_alloc&) {
    return FillAbiError(Error{ErrorCode::kOutOfMemory, "out of memory"}, error);
  } catch (const std::exception& ex) {
    return FillAbiError(Error{ErrorCode::kInternal, std::string("exception: ") + ex.what()}, error);
  } catch (...) {
    return FillAbiError(Error{ErrorCode::kInternal, "unknown exception"}, error);
  }
}

template <typename Impl>
struct BuiltinApi {
  static int32_t GetInfo(sampcert_sampler_info* info, sampcert_error* error) {
    return Guarded(error, [&] {
      if (info == nullptr || info->struct_size < SAMPCERT_SAMPLER_INFO_STRUCT_SIZE) {
        return Error{ErrorCode::kInvalidArgument, "info is null or its struct_size too small"};
      }
      const std::size_t size = info->struct_size;
      *info = sampcert_sampler_info{};
      info->struct_size = size;
      info->capabilities = Impl::kCapabilities;
      Impl::Describe(info);
      return Error{};
    });
  }
  static int32_t Create(const char* /*config*/, sampcert_sampler** out, sampcert_error* error) {
    return Guarded(error, [&] {
      if (out == nullptr) return Error{ErrorCode::kInvalidArgument, "out is null"};
      if constexpr (requires { Impl::CheckAvailable(); }) {
        if (Error e = Impl::CheckAvailable(); e.code != ErrorCode::kOk) return e;
      }
      *out = reinterpret_cast<sampcert_sampler*>(new Impl());
      return Error{};
    });
  }
  static void Destroy(sampcert_sampler* sampler) noexcept {
    delete reinterpret_cast<Impl*>(sampler);
  }
  static int32_t Probabilities(sampcert_sampler* sampler, const sampcert_batch* batch, double* out,
                               sampcert_error* error) {
    return Guarded(error, [&] {
      if (Error e = CheckBatchShape(batch, Impl::kCapabilities); e.code != ErrorCode::kOk) {
        return e;
      }
      if (sampler == nullptr || out == nullptr) {
        return Error{ErrorCode::kInvalidArgument, "sampler or output buffer is null"};
      }
      if (BatchLogprobMode(*batch) != SAMPCERT_LOGPROBS_NONE) {
        return Error{ErrorCode::kInvalidArgument, "log-probabilities are asked of sample() only"};
      }
      return reinterpret_cast<Impl*>(sampler)->Probabilities(*batch, out);
    });
  }
  static int32_t Sample(sampcert_sampler* sampler, const sampcert_batch* batch, uint64_t seed,
                        uint64_t first_draw, uint64_t draws_per_row, int64_t* out,
                        sampcert_error* error) {
    return Guarded(error, [&] {
      if (Error e = CheckBatchShape(batch, Impl::kCapabilities); e.code != ErrorCode::kOk) {
        return e;
      }
      if (sampler == nullptr || (out == nullptr && draws_per_row > 0)) {
        return Error{ErrorCode::kInvalidArgument, "sampler or output buffer is null"};
      }
      return reinterpret_cast<Impl*>(sampler)->Sample(*batch, seed, first_draw, draws_per_row, out);
    });
  }

  static int32_t Verify(sampcert_sampler* sampler, const sampcert_chain_batch* batch, uint64_t seed,
                        int64_t* accepted, int64_t* tokens, sampcert_error* error) {
    return Guarded(error, [&] {
      if (Error e = CheckChainBatch(batch, Impl::kCapabilities); e.code != ErrorCode::kOk) {
        return e;
      }
      if (sampler == nullptr || accepted == nullptr || tokens == nullptr) {
        return Error{ErrorCode::kInvalidArgument, "sampler or output buffer is null"};
      }
      return reinterpret_cast<Impl*>(sampler)->Verify(*batch, seed, accepted, tokens);
    });
  }

  // The table's verify entry: Verify for an Impl that declares the capability (which must
  // then implement it: checked at compile time), NULL otherwise (Verify is never instantiated).
  static constexpr auto VerifyEntry() {
    using Entry = decltype(sampcert_sampler_api::verify);
    if constexpr ((Impl::kCapabilities & SAMPCERT_CAP_VERIFY) != 0) {
      static_assert(
          requires(Impl & s, const sampcert_chain_batch& b, int64_t* out) {
            { s.Verify(b, uint64_t{0}, out, out) } -> std::same_as<Error>;
          },
          "an Impl declaring SAMPCERT_CAP_VERIFY must implement Verify");
      return Entry{&Verify};
    } else {
      return Entry{nullptr};
    }
  }

  static const sampcert_sampler_api* Table() {
    static const sampcert_sampler_api api = {
        SAMPCERT_SAMPLER_API_STRUCT_SIZE,
        SAMPCERT_ABI_VERSION_MAJOR,
        SAMPCERT_ABI_VERSION_MINOR,
        &GetInfo,
        &Create,
        &Destroy,
        (Impl::kCapabilities & SAMPCERT_CAP_PROBABILITIES) ? &Probabilities : nullptr,
        &Sample,
        VerifyEntry(),
    };
    return &api;
  }
};

// The body of a C++ plug-in's sampcert_get_sampler_api: `table` for a host of this MAJOR (any
// MINOR: fields are only ever appended), else the status that says why, *out null.
inline int32_t HandOutTable(uint32_t host_major, const sampcert_sampler_api* table,
                            const sampcert_sampler_api** out) {
  if (out == nullptr) return SAMPCERT_STATUS_INVALID_ARGUMENT;
  *out = nullptr;
  if (host_major != SAMPCERT_ABI_VERSION_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = table;
  return SAMPCERT_STATUS_OK;
}

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_BUILTIN_ADAPTER_H_
