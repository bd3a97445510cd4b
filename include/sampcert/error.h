// Errors as values. The reference never lets an exception escape and never crashes on bad
// input: every invalid row comes back as an Error that names the row and the cause.
#ifndef SAMPCERT_ERROR_H_
#define SAMPCERT_ERROR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sampcert {

// Stable numeric values: they appear in reports and, from the ABI issue on, cross the C ABI.
enum class ErrorCode : int32_t {
  kOk = 0,
  kInvalidTemperature = 1,  // NaN, negative or infinite temperature (SPEC INV-1)
  kInvalidTopK = 2,         // top_k < 0 (SPEC INV-2)
  kInvalidTopP = 3,         // top_p NaN or outside (0, 1] (SPEC INV-3)
  kInvalidMinP = 4,         // min_p NaN or outside [0, 1) (SPEC INV-4)
  kNanLogit = 5,            // NaN logit in the support under the strict NaN policy (SPEC INV-5)
  kEmptySupport = 6,        // every token masked, -inf, or NaN-as-masked (SPEC INV-6)
  kEmptyVocab = 7,          // vocab size 0 or a missing logits buffer (SPEC INV-7)
  kInvalidArgument = 8,     // anything else malformed (unknown dtype, bad policy value)
  kInternal = 9,            // a bug (in sampcert, or in a sampler)
  // Not invalid input: a sampler's own failures, as they come back through the ABI.
  kNumericalFailure = 10,  // valid input the sampler could not handle (NaN probabilities, ...)
  kUnsupported = 11,       // a capability the sampler did not declare
  kVersionMismatch = 12,   // plug-in built for another ABI MAJOR
  kOutOfMemory = 13,
  kInvalidDraft = 14,      // a verify call's draft is no distribution (SPEC VER-INV-1)
  kInvalidPenalty = 15,    // a penalty parameter or history id out of range (SPEC INV-8)
  kInvalidLogitBias = 16,  // a NaN bias, a bias id out of range or repeated (SPEC INV-9)
};

std::string_view ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kOk;
  std::string message;  // names the row and the cause, e.g. "row 7: temperature is NaN"
  int64_t row = -1;     // the offending row's index, -1 when not row-specific
};

// A minimal expected-or-error (std::expected is C++23).
template <typename T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace sampcert

#endif  // SAMPCERT_ERROR_H_
