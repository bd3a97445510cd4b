#include "adapters/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "adapters/abi_conversions.h"
#include "adapters/row_fields.h"
#include "sampcert/packed_mask.h"

namespace sampcert::adapters {
namespace {

CallTrace* g_trace = nullptr;

// One call's trace: sets the call's name on entry and clears it on every way out.
class Traced {
 public:
  explicit Traced(const char* name) { EnterCall(name); }
  ~Traced() { LeaveCall(); }
  Traced(const Traced&) = delete;
  Traced& operator=(const Traced&) = delete;
};

// A copy of a caller's buffer (or a fresh output buffer) between canary words, 64-byte aligned
// like the allocations samplers are used to. Canaries catch writes just past either end (the
// usual off-by-one or a row stride too long); a write far outside faults on its own.
constexpr std::size_t kGuard = 64;
constexpr unsigned char kCanary = 0xA5;

class Guarded {
 public:
  // `output`: a fresh (zeroed) buffer; else a copy of `source`, and a missing buffer stays
  // missing (INV-7 tests a null logits pointer).
  Guarded(const void* source, std::size_t bytes, bool output = false) : bytes_(bytes) {
    if (source == nullptr && !output) return;
    raw_ = static_cast<unsigned char*>(
        std::aligned_alloc(kGuard, bytes_ + 2 * kGuard + kGuard - (bytes_ % kGuard)));
    if (raw_ == nullptr) throw std::bad_alloc();
    std::memset(raw_, kCanary, kGuard);
    std::memset(raw_ + kGuard + bytes_, kCanary, kGuard);
    if (source != nullptr) {
      std::memcpy(raw_ + kGuard, source, bytes_);
    } else {
      std::memset(raw_ + kGuard, 0, bytes_);
    }
  }
  ~Guarded() { std::free(raw_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  Guarded(Guarded&& o) noexcept : raw_(o.raw_), bytes_(o.bytes_) { o.raw_ = nullptr; }

  void* data() const { return raw_ != nullptr ? raw_ + kGuard : nullptr; }
  bool After() const { return raw_ == nullptr || Intact(raw_ + kGuard + bytes_); }
  bool BeforeIntact() const { return raw_ == nullptr || Intact(raw_); }
  bool SameAs(const void* source) const {
    return raw_ == nullptr || std::memcmp(raw_ + kGuard, source, bytes_) == 0;
  }

 private:
  static bool Intact(const unsigned char* p) {
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (p[i] != kCanary) return false;
    }
    return true;
  }
  unsigned char* raw_ = nullptr;
  std::size_t bytes_ = 0;
};

// Row structs at the layout of the plug-in's MINOR (ABI MINOR 4): each `stride` bytes long with
// struct_size = stride, so a plug-in of MINOR 0..3 gets its own 56-byte rows (without the
// history, which it cannot declare) and indexes them by its own sizeof.
class AbiRowArray {
 public:
  explicit AbiRowArray(std::size_t stride) : stride_(stride) {}
  void reserve(std::size_t rows) { bytes_.reserve(rows * stride_); }
  // Reserve first: pointers from at() stay valid only while no push_back reallocates.
  void push_back(sampcert_row row) {
    row.struct_size = stride_;
    const std::size_t end = bytes_.size();
    bytes_.resize(end + stride_);
    std::memcpy(bytes_.data() + end, &row, stride_);
  }
  // operator new's alignment (16) covers sampcert_row's (8); every stride is a multiple of 8.
  const sampcert_row* at(std::size_t i) const {
    return reinterpret_cast<const sampcert_row*>(bytes_.data() + i * stride_);
  }
  const sampcert_row* data() const { return at(0); }
  std::size_t size() const { return bytes_.size() / stride_; }
  bool operator==(const AbiRowArray& o) const = default;

 private:
  std::size_t stride_;
  std::vector<unsigned char> bytes_;
};

// Every input and output of one call, guarded, and the check after it.
struct GuardedCall {
  std::vector<Guarded> logits, masks;
  // MINOR 8: the log-probability outputs (empty buffers when none are asked for).
  std::optional<Guarded> out_logprobs, out_top_tokens, out_top_logprobs;
  // The packed masks (SPEC section 19) of the rows whose mask_layout asks for them: the source
  // the guarded copies in `masks` are compared with (empty for a row given bytes).
  std::vector<std::vector<uint32_t>> words;
  std::vector<sampcert_row> rows;
  AbiRowArray packed, packed_copy;
  Guarded out;
  // The batch struct itself is a const input too: the sampler gets a guarded copy of `header`.
  sampcert_batch header{};
  std::optional<Guarded> header_copy;
  GuardedCall(const Batch& batch, std::vector<sampcert_row> abi_rows, std::size_t row_stride,
              std::size_t out_bytes)
      : words(PackedMasks(batch)),
        rows(std::move(abi_rows)),
        packed(row_stride),
        packed_copy(row_stride),
        out(nullptr, out_bytes, /*output=*/true) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      logits.emplace_back(batch.rows[r].logits, batch.vocab * DTypeBytes(batch.dtype));
      rows[r].logits = logits.back().data();
      if (!words[r].empty()) {
        masks.emplace_back(words[r].data(), words[r].size() * sizeof(uint32_t));
        rows[r].mask = nullptr;
        rows[r].packed_mask = static_cast<const uint32_t*>(masks.back().data());
      } else {
        masks.emplace_back(batch.rows[r].mask, batch.rows[r].mask ? batch.vocab : 0);
        rows[r].mask = static_cast<const uint8_t*>(masks.back().data());
      }
    }
    packed.reserve(rows.size());
    for (const sampcert_row& r : rows) packed.push_back(r);
    packed_copy = packed;
    header = AbiBatch(static_cast<int32_t>(batch.dtype), batch.vocab, rows.size(), packed.data());
    header_copy.emplace(&header, sizeof header);
  }
  // Asks for log-probabilities (MINOR 8): fresh outputs, NaN (top tokens -1) until written, and
  // the batch struct's MINOR 8 fields pointing at them.
  void AskLogprobs(int32_t mode, std::size_t draws, uint64_t top_n) {
    const std::size_t n_rows = rows.size();
    out_logprobs.emplace(nullptr, n_rows * draws * sizeof(double), /*output=*/true);
    out_top_tokens.emplace(nullptr, n_rows * top_n * sizeof(int64_t), /*output=*/true);
    out_top_logprobs.emplace(nullptr, n_rows * top_n * sizeof(double), /*output=*/true);
    std::fill_n(static_cast<double*>(out_logprobs->data()), n_rows * draws,
                std::numeric_limits<double>::quiet_NaN());
    std::fill_n(static_cast<int64_t*>(out_top_tokens->data()), n_rows * top_n, int64_t{-1});
    std::fill_n(static_cast<double*>(out_top_logprobs->data()), n_rows * top_n,
                std::numeric_limits<double>::quiet_NaN());
    header.logprob_mode = mode;
    header.top_logprobs = top_n;
    header.out_logprobs = static_cast<double*>(out_logprobs->data());
    header.out_top_tokens = top_n > 0 ? static_cast<int64_t*>(out_top_tokens->data()) : nullptr;
    header.out_top_logprobs = top_n > 0 ? static_cast<double*>(out_top_logprobs->data()) : nullptr;
    header_copy.emplace(&header, sizeof header);
  }
  const sampcert_batch* Header() const {
    return static_cast<const sampcert_batch*>(header_copy->data());
  }
  // What the call did to its buffers, in words; empty when it kept to the header.
  std::vector<std::string> Check(const Batch& batch, const char* call) const {
    std::vector<std::string> v;
    auto add = [&](const std::string& what) { v.push_back(fmt::format("{} {}", call, what)); };
    if (!out.BeforeIntact()) add("wrote before the start of its output buffer");
    if (!out.After()) add("wrote past the end of its output buffer");
    for (const auto* o : {&out_logprobs, &out_top_tokens, &out_top_logprobs}) {
      if (o->has_value() && (!(*o)->BeforeIntact() || !(*o)->After())) {
        add("wrote outside a log-probability output buffer");
      }
    }
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (!logits[r].BeforeIntact() || !logits[r].After()) {
        add(fmt::format("wrote next to row {}'s logits (outside the buffer)", r));
      }
      if (batch.rows[r].logits != nullptr && !logits[r].SameAs(batch.rows[r].logits)) {
        add(fmt::format("wrote into row {}'s logits (a const input)", r));
      }
      if (!masks[r].BeforeIntact() || !masks[r].After()) {
        add(fmt::format("wrote next to row {}'s mask (outside the buffer)", r));
      }
      const void* mask_source =
          words[r].empty() ? static_cast<const void*>(batch.rows[r].mask) : words[r].data();
      if (mask_source != nullptr && !masks[r].SameAs(mask_source)) {
        add(fmt::format("wrote into row {}'s mask (a const input)", r));
      }
    }
    if (!(packed == packed_copy)) {
      add("wrote into the batch's row structs (const inputs)");
    }
    if (!header_copy->SameAs(&header)) add("wrote into the batch struct (a const input)");
    if (!header_copy->BeforeIntact() || !header_copy->After()) {
      add("wrote next to the batch struct (outside it)");
    }
    return v;
  }
};

}  // namespace

std::vector<std::vector<uint32_t>> PackedMasks(const Batch& batch) {
  std::vector<std::vector<uint32_t>> words(batch.rows.size());
  for (std::size_t r = 0; r < words.size(); ++r) {
    const RowView& v = batch.rows[r];
    if (v.mask_layout == kMaskPacked && v.mask != nullptr) words[r] = PackMask(v.mask, v.vocab);
  }
  return words;
}

namespace {

bool IsRowLevel(int32_t code) {
  return (code >= SAMPCERT_STATUS_INVALID_TEMPERATURE && code <= SAMPCERT_STATUS_EMPTY_SUPPORT) ||
         code == SAMPCERT_STATUS_INVALID_PENALTY || code == SAMPCERT_STATUS_INVALID_LOGIT_BIAS;
}

// What SPEC section 5 and the header ask of an error report itself (INV-ERR-1), beyond its
// code: a message NUL-terminated within its buffer, error.code equal to the returned status,
// and a row-level error naming a row of the batch. Empty when the report is well formed.
std::string ErrorReportProblem(int32_t status, const sampcert_error& err, std::size_t num_rows) {
  std::string out;
  std::vector<std::string> problems;
  if (std::memchr(err.message, '\0', sizeof err.message) == nullptr) {
    problems.push_back(
        fmt::format("the error message is not NUL-terminated within its {}-byte "
                    "buffer",
                    sizeof err.message));
  }
  if (err.code != status) {
    problems.push_back(
        fmt::format("error.code is {} but the call returned status {}", err.code, status));
  }
  if (num_rows > 0 && IsRowLevel(status) &&
      (err.row < 0 || static_cast<std::size_t>(err.row) >= num_rows)) {
    problems.push_back(
        fmt::format("a row-level error ({}) names row {}, not a row of the "
                    "{}-row batch",
                    ErrorCodeName(static_cast<ErrorCode>(status)), err.row, num_rows));
  }
  for (const std::string& p : problems) out += (out.empty() ? "" : "; ") + p;
  return out;
}

sampcert_error FreshError() {
  sampcert_error e{};
  e.struct_size = SAMPCERT_ERROR_STRUCT_SIZE;
  e.row = -1;
  return e;
}

}  // namespace

Expected<std::unique_ptr<Sampler>> Sampler::Open(const sampcert_sampler_api* api,
                                                 std::shared_ptr<void> keep_alive,
                                                 const char* config) {
  std::unique_ptr<Sampler> s(new Sampler(api, std::move(keep_alive)));
  sampcert_sampler_info info{};
  info.struct_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;
  sampcert_error err = FreshError();
  int32_t st;
  {
    Traced t("get_info()");
    st = api->get_info(&info, &err);
  }
  if (st != SAMPCERT_STATUS_OK) return FromAbiError(st, err);
  auto declared = SamplerInfoFromAbi(info);
  if (!declared.ok()) {
    // The name itself may be what is invalid (over kMaxSamplerText bytes): 40 at most here.
    const std::string_view name =
        info.name != nullptr ? std::string_view(info.name, ::strnlen(info.name, 40)) : "";
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("sampler '{}' declares an invalid info field: {}", name,
                             declared.error().message)};
  }
  s->info_ = std::move(declared).value();
  if (std::string why = ValidatePolicies(s->info_.policies); !why.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("sampler '{}' declares invalid policies: {}", s->info_.name, why)};
  }
  // ABI MINOR 2: a verify capability needs the verify entry (a MINOR 0 or 1 table ends before it).
  if (s->info_.Has(SAMPCERT_CAP_VERIFY) &&
      (api->abi_minor < 2 || api->struct_size < SAMPCERT_SAMPLER_API_STRUCT_SIZE ||
       api->verify == nullptr)) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("sampler '{}' declares verify, but its function table (ABI {}.{}, "
                             "{} bytes) has no verify entry",
                             s->info_.name, api->abi_major, api->abi_minor, api->struct_size)};
  }
  // ABI MINOR 3: draft logits and the acceptance output are verify's, read from fields a
  // MINOR 2 plug-in's chain batch does not have.
  if (s->info_.capabilities & (SAMPCERT_CAP_VERIFY_DRAFT_LOGITS | SAMPCERT_CAP_VERIFY_ACCEPTANCE)) {
    if (!s->info_.Has(SAMPCERT_CAP_VERIFY) || api->abi_minor < 3) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("sampler '{}' declares verify-draft-logits or verify-acceptance, "
                               "which need verify and ABI MINOR 3 (it is {}.{}{})",
                               s->info_.name, api->abi_major, api->abi_minor,
                               s->info_.Has(SAMPCERT_CAP_VERIFY) ? "" : ", without verify")};
    }
  }
  // A lossy acceptance scheme (VER-DEV-1) is a declaration about verify.
  if (s->info_.policies.verify_scheme != VerifyScheme::kExact &&
      !s->info_.Has(SAMPCERT_CAP_VERIFY)) {
    return Error{
        ErrorCode::kInvalidArgument,
        fmt::format("sampler '{}' declares a lossy verify scheme but not verify", s->info_.name)};
  }
  err = FreshError();
  {
    Traced t("create()");
    st = api->create(config, &s->handle_, &err);
  }
  if (st != SAMPCERT_STATUS_OK) {
    s->handle_ = nullptr;
    return FromAbiError(st, err);
  }
  return s;
}

Sampler::~Sampler() {
  if (handle_ != nullptr) {
    Traced t("destroy()");
    api_->destroy(handle_);
  }
}

void SetCallTrace(CallTrace* trace) { g_trace = trace; }

void EnterCall(const char* name) {
  if (g_trace == nullptr) return;
  std::snprintf(g_trace->call, sizeof g_trace->call, "%s", name);
  ++g_trace->calls;
}

void LeaveCall() {
  if (g_trace != nullptr) g_trace->call[0] = '\0';
}

void Sampler::Violation(std::string what) {
  // The first few, by call; a sampler that breaks every call should not fill the memory.
  if (abi_violations_.size() < 16) abi_violations_.push_back(std::move(what));
  ++abi_violation_count_;
}

std::vector<sampcert_row> Sampler::AbiRows(const Batch& batch) const {
  std::vector<sampcert_row> rows(batch.rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const RowView& v = batch.rows[r];
    sampcert_row& a = rows[r];
    a.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
    a.logits = v.logits;
    // A packed row's words are the caller's (PackedMasks; GuardedCall copies them).
    a.mask = v.mask_layout == kMaskPacked ? nullptr : v.mask;
    a.packed_mask = nullptr;
    RowParamsToAbi(v, &a);
    a.prompt_tokens = v.prompt_tokens;
    a.output_tokens = v.output_tokens;
    a.num_prompt_tokens = v.num_prompt_tokens;
    a.num_output_tokens = v.num_output_tokens;
    a.bias_tokens = v.bias_tokens;
    a.bias_values = v.bias_values;
    a.num_bias = v.num_bias;
  }
  return rows;
}

std::size_t Sampler::RowStride() const {
  return api_->abi_minor >= 7   ? SAMPCERT_ROW_STRUCT_SIZE
         : api_->abi_minor == 6 ? SAMPCERT_ROW_MINOR6_STRUCT_SIZE
         : api_->abi_minor == 5 ? SAMPCERT_ROW_MINOR5_STRUCT_SIZE
         : api_->abi_minor == 4 ? SAMPCERT_ROW_MINOR4_STRUCT_SIZE
                                : SAMPCERT_ROW_MINOR3_STRUCT_SIZE;
}

Error Sampler::CheckPenalties(const Batch& batch) const {
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    if (!batch.rows[r].HasPenalties()) continue;
    if (!info_.Has(SAMPCERT_CAP_PENALTIES) || api_->abi_minor < 4) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("row {}: sampler '{}' does not declare penalties", r, info_.name),
                   static_cast<int64_t>(r)};
    }
  }
  // MINOR 5 (SEED-ABI-1): a seeded or unseeded row only to a sampler that reads seed_mode.
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    if (batch.rows[r].seed_mode == kSeedCall) continue;
    if (!info_.Has(SAMPCERT_CAP_SEEDS) || api_->abi_minor < 5) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("row {}: sampler '{}' does not declare seeds", r, info_.name),
                   static_cast<int64_t>(r)};
    }
  }
  // MINOR 6 (BIAS-CAP-1, MINLEN-CAP-1): a bias or a minimum length only to a sampler that reads
  // them.
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    const RowView& v = batch.rows[r];
    for (const auto& [asked, bit, name] :
         {std::tuple{v.HasBias(), SAMPCERT_CAP_LOGIT_BIAS, "logit-bias"},
          std::tuple{v.min_tokens != 0, SAMPCERT_CAP_MIN_TOKENS, "min-tokens"}}) {
      if (asked && (!info_.Has(bit) || api_->abi_minor < 6)) {
        return Error{ErrorCode::kUnsupported,
                     fmt::format("row {}: sampler '{}' does not declare {}", r, info_.name, name),
                     static_cast<int64_t>(r)};
      }
    }
  }
  // MINOR 7 (PMASK-CAP-1): a packed mask only to a sampler that reads packed words.
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    if (batch.rows[r].mask_layout == kMaskBytes) continue;
    if (!info_.Has(SAMPCERT_CAP_PACKED_MASK) || api_->abi_minor < 7) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("row {}: sampler '{}' does not declare packed-mask", r, info_.name),
                   static_cast<int64_t>(r)};
    }
  }
  return Error{};
}

Expected<std::vector<double>> Sampler::Probabilities(const Batch& batch) {
  if (api_->probabilities == nullptr || !info_.Has(SAMPCERT_CAP_PROBABILITIES)) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("sampler '{}' does not declare probabilities", info_.name)};
  }
  const std::size_t n = batch.rows.size() * batch.vocab;
  if (Error e = CheckPenalties(batch); e.code != ErrorCode::kOk) return e;
  GuardedCall call(batch, AbiRows(batch), RowStride(), n * sizeof(double));
  sampcert_error err = FreshError();
  int32_t st;
  {
    Traced t("probabilities()");
    st = api_->probabilities(handle_, call.Header(), static_cast<double*>(call.out.data()), &err);
  }
  ++abi_checked_calls_;
  for (std::string& v : call.Check(batch, "probabilities()")) Violation(std::move(v));
  last_error_problem_.clear();
  if (st != SAMPCERT_STATUS_OK) {
    last_error_problem_ = ErrorReportProblem(st, err, batch.rows.size());
    return FromAbiError(st, err);
  }
  std::vector<double> out(n);
  if (n > 0) std::memcpy(out.data(), call.out.data(), n * sizeof(double));
  return out;
}

Expected<std::vector<int64_t>> Sampler::Sample(const Batch& batch, uint64_t seed,
                                               uint64_t first_draw, uint64_t draws_per_row) {
  if (!info_.policies.sequential_draws) return SampleCall(batch, seed, first_draw, draws_per_row);
  // POL-7: a sequential sampler is asked for each (seed, row id) stream's draws in order: a
  // request either starts the stream (first_draw 0) or continues it exactly where it stands.
  // Each row is served alone (two rows of one batch may share a stream); a request ahead of a
  // stream draws the gap first, one behind it starts the stream again from 0 and replays.
  std::vector<int64_t> out(batch.rows.size() * draws_per_row);
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    Batch one{batch.dtype, batch.vocab, {batch.rows[r]}};
    const std::pair<uint64_t, uint64_t> key{seed, batch.rows[r].row_id};
    auto it = stream_next_.find(key);
    uint64_t next = it == stream_next_.end() ? 0 : it->second;
    if (next > first_draw) {
      next = 0;  // the next call starts the stream again
      if (first_draw > 0) ++stream_replays_;
    }
    // The gap (or the replay), in bounded chunks, discarded.
    while (next < first_draw) {
      const uint64_t chunk = std::min<uint64_t>(first_draw - next, uint64_t{1} << 20);
      auto skipped = SampleCall(one, seed, next, chunk);
      if (!skipped.ok()) return skipped.error();
      next += chunk;
      stream_next_[key] = next;
    }
    auto drawn = SampleCall(one, seed, first_draw, draws_per_row);
    if (!drawn.ok()) return drawn.error();
    stream_next_[key] = first_draw + draws_per_row;
    std::copy(drawn->begin(), drawn->end(),
              out.begin() + static_cast<std::ptrdiff_t>(r * draws_per_row));
  }
  return out;
}

Expected<std::vector<int64_t>> Sampler::SampleCall(const Batch& batch, uint64_t seed,
                                                   uint64_t first_draw, uint64_t draws_per_row,
                                                   int32_t logprob_mode, uint64_t top_n,
                                                   SampledLogprobs* logprobs) {
  const std::size_t n = batch.rows.size() * draws_per_row;
  if (Error e = CheckPenalties(batch); e.code != ErrorCode::kOk) return e;
  GuardedCall call(batch, AbiRows(batch), RowStride(), n * sizeof(int64_t));
  if (logprobs != nullptr) call.AskLogprobs(logprob_mode, draws_per_row, top_n);
  sampcert_error err = FreshError();
  int32_t st;
  {
    Traced t("sample()");
    st = api_->sample(handle_, call.Header(), seed, first_draw, draws_per_row,
                      static_cast<int64_t*>(call.out.data()), &err);
  }
  ++abi_checked_calls_;
  for (std::string& v : call.Check(batch, "sample()")) Violation(std::move(v));
  last_error_problem_.clear();
  if (st != SAMPCERT_STATUS_OK) {
    last_error_problem_ = ErrorReportProblem(st, err, batch.rows.size());
    return FromAbiError(st, err);
  }
  if (g_trace != nullptr) g_trace->draws += n;
  auto copy = [](const Guarded& from, auto* to, std::size_t count) {
    to->resize(count);
    if (count > 0) std::memcpy(to->data(), from.data(), count * sizeof((*to)[0]));
  };
  std::vector<int64_t> out;
  copy(call.out, &out, n);
  if (logprobs != nullptr) {
    const std::size_t n_top = batch.rows.size() * top_n;
    copy(*call.out_logprobs, &logprobs->logprobs, n);
    copy(*call.out_top_tokens, &logprobs->top_tokens, n_top);
    copy(*call.out_top_logprobs, &logprobs->top_logprobs, n_top);
  }
  return out;
}

Expected<SampledLogprobs> Sampler::SampleLogprobs(const Batch& batch, uint64_t seed,
                                                  uint64_t first_draw, uint64_t draws_per_row,
                                                  int32_t mode, uint64_t top_n) {
  const uint32_t cap = LogprobCapability(mode);
  if (cap == 0) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("logprob mode {} is not 1 (raw), 2 (scaled) or 3 (processed)", mode)};
  }
  if (!info_.Has(cap) || api_->abi_minor < 8) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("sampler '{}' does not declare log-probabilities in mode {}",
                             info_.name, mode)};
  }
  if (info_.policies.sequential_draws) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("sampler '{}' draws sequentially (POL-7): log-probabilities are "
                             "asked of samplers with counter-based draws only",
                             info_.name)};
  }
  SampledLogprobs got;
  auto tokens = SampleCall(batch, seed, first_draw, draws_per_row, mode, top_n, &got);
  if (!tokens.ok()) return tokens.error();
  got.tokens = *std::move(tokens);
  return got;
}

Expected<std::vector<double>> Sampler::TimedSampleCalls(const Batch& batch, uint64_t seed,
                                                        uint64_t warmup, uint64_t calls) {
  if (Error e = CheckPenalties(batch); e.code != ErrorCode::kOk) return e;
  AbiRowArray packed(RowStride());
  packed.reserve(batch.rows.size());
  const std::vector<std::vector<uint32_t>> words = PackedMasks(batch);
  std::vector<sampcert_row> rows = AbiRows(batch);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!words[r].empty()) rows[r].packed_mask = words[r].data();
    packed.push_back(rows[r]);
  }
  const sampcert_batch header =
      AbiBatch(static_cast<int32_t>(batch.dtype), batch.vocab, packed.size(), packed.data());
  std::vector<int64_t> out(batch.rows.size());
  std::vector<double> ns;
  ns.reserve(calls);
  for (uint64_t i = 0; i < warmup + calls; ++i) {
    sampcert_error err = FreshError();
    const auto start = std::chrono::steady_clock::now();
    int32_t st;
    {
      Traced t("sample()");
      st = api_->sample(handle_, &header, seed, i, 1, out.data(), &err);
    }
    const auto end = std::chrono::steady_clock::now();
    if (st != SAMPCERT_STATUS_OK) return FromAbiError(st, err);
    if (g_trace != nullptr) g_trace->draws += out.size();
    if (i >= warmup) ns.push_back(std::chrono::duration<double, std::nano>(end - start).count());
  }
  return ns;
}

namespace {

// ABI-1 for verify(): every distinct logits, mask and draft buffer is copied between canaries
// once (trials share them), the chain and row structs and the drafted tokens are copied, and
// the outputs are fresh guarded buffers; Check() compares them all after the call.
class GuardedVerify {
 public:
  GuardedVerify(const ChainBatch& batch, std::size_t max_drafts, bool acceptance,
                std::size_t row_stride)
      : accepted_(nullptr, batch.chains.size() * sizeof(int64_t), /*output=*/true),
        tokens_(nullptr, batch.chains.size() * (max_drafts + 1) * sizeof(int64_t),
                /*output=*/true),
        acceptance_(nullptr, acceptance ? batch.chains.size() * max_drafts * sizeof(double) : 0,
                    /*output=*/true),
        with_acceptance_(acceptance),
        rows_(row_stride),
        rows_copy_(row_stride) {
    if (acceptance) {  // NaN until written: a position the verifier leaves unwritten shows
      std::fill_n(static_cast<double*>(acceptance_.data()), batch.chains.size() * max_drafts,
                  std::numeric_limits<double>::quiet_NaN());
    }
    const std::size_t v = batch.vocab;
    std::size_t rows = 0, drafts = 0;
    // A buffer shared by chains is copied once, at the largest size any of them reads.
    const bool logits = !batch.chains.empty() && batch.chains.front().draft_rows != nullptr;
    for (const Chain& c : batch.chains) {
      rows += c.num_drafts + 1 + (logits ? c.num_drafts : 0);
      drafts += c.num_drafts;
      Need(c.draft_probs, c.num_drafts * v * sizeof(double));
      for (std::size_t j = 0; j <= c.num_drafts; ++j) {
        Need(c.targets[j].logits, v * DTypeBytes(batch.dtype));
        Need(c.targets[j].mask, v);
      }
      for (std::size_t j = 0; c.draft_rows != nullptr && j < c.num_drafts; ++j) {
        Need(c.draft_rows[j].logits, v * DTypeBytes(batch.draft_dtype));
        Need(c.draft_rows[j].mask, v);
      }
    }
    // Every row struct in one vector, reserved so that pointers into it stay valid.
    rows_.reserve(rows);
    drafts_.reserve(drafts);
    auto add_row = [&](const RowView& r) {
      sampcert_row a{};
      a.logits = Copy(r.logits);
      a.mask = static_cast<const uint8_t*>(Copy(r.mask));
      RowParamsToAbi(r, &a);
      rows_.push_back(a);
    };
    std::vector<std::size_t> chain_draft_rows;
    for (const Chain& c : batch.chains) {
      chain_rows_.push_back(rows_.size());
      chain_drafts_.push_back(drafts_.size());
      for (std::size_t j = 0; j <= c.num_drafts; ++j) add_row(c.targets[j]);
      chain_draft_rows.push_back(rows_.size());
      for (std::size_t j = 0; logits && j < c.num_drafts; ++j) {
        if (c.draft_rows == nullptr) break;  // a mixed batch: the sampler gets a null entry
        add_row(c.draft_rows[j]);
      }
      drafts_.insert(drafts_.end(), c.drafts, c.drafts + c.num_drafts);
    }
    for (std::size_t i = 0; logits && i < batch.chains.size(); ++i) {
      draft_row_ptrs_.push_back(
          batch.chains[i].draft_rows != nullptr ? rows_.at(chain_draft_rows[i]) : nullptr);
    }
    for (std::size_t i = 0; i < batch.chains.size(); ++i) {
      const Chain& c = batch.chains[i];
      sampcert_chain a{};
      a.struct_size = SAMPCERT_CHAIN_STRUCT_SIZE;
      a.num_drafts = c.num_drafts;
      a.target_rows = rows_.at(chain_rows_[i]);
      a.draft_probs = static_cast<const double*>(Copy(c.draft_probs));
      a.draft_tokens = drafts_.data() + chain_drafts_[i];
      a.row_id = c.row_id;
      a.draw = c.draw;
      chains_.push_back(a);
    }
    rows_copy_ = rows_;
    drafts_copy_ = drafts_;
    chains_copy_ = chains_;
    draft_row_ptrs_copy_ = draft_row_ptrs_;
    header_ = sampcert_chain_batch{SAMPCERT_CHAIN_BATCH_STRUCT_SIZE,
                                   static_cast<int32_t>(batch.dtype),
                                   0,
                                   batch.vocab,
                                   chains_.size(),
                                   max_drafts,
                                   chains_.data(),
                                   logits ? static_cast<int32_t>(batch.draft_dtype) : 0,
                                   0,
                                   logits ? draft_row_ptrs_.data() : nullptr,
                                   acceptance ? static_cast<double*>(acceptance_.data()) : nullptr};
    header_copy_.emplace(&header_, sizeof header_);
  }
  const sampcert_chain_batch* Header() const {
    return static_cast<const sampcert_chain_batch*>(header_copy_->data());
  }
  int64_t* accepted() const { return static_cast<int64_t*>(accepted_.data()); }
  int64_t* tokens() const { return static_cast<int64_t*>(tokens_.data()); }
  const double* acceptance() const { return static_cast<const double*>(acceptance_.data()); }

  std::vector<std::string> Check() const {
    std::vector<std::string> v;
    auto add = [&](const char* what) { v.push_back(fmt::format("verify() {}", what)); };
    if (!accepted_.BeforeIntact() || !accepted_.After() || !tokens_.BeforeIntact() ||
        !tokens_.After() ||
        (with_acceptance_ && (!acceptance_.BeforeIntact() || !acceptance_.After()))) {
      add("wrote outside its output buffers");
    }
    for (const auto& [source, copy] : copies_) {
      if (!copy->BeforeIntact() || !copy->After()) add("wrote next to an input buffer");
      if (!copy->SameAs(source)) add("wrote into a logits, mask or draft buffer (a const input)");
    }
    if (!(rows_ == rows_copy_)) {
      add("wrote into the target row structs (const inputs)");
    }
    if (drafts_ != drafts_copy_) add("wrote into the drafted tokens (a const input)");
    if (draft_row_ptrs_ != draft_row_ptrs_copy_) {
      add("wrote into the draft_rows pointers (const inputs)");
    }
    if (std::memcmp(chains_.data(), chains_copy_.data(), chains_.size() * sizeof(sampcert_chain)) !=
        0) {
      add("wrote into the chain structs (const inputs)");
    }
    if (!header_copy_->SameAs(&header_)) add("wrote into the chain batch struct (a const input)");
    return v;
  }

 private:
  void Need(const void* source, std::size_t bytes) {
    if (source == nullptr) return;
    std::size_t& n = sizes_[source];
    n = std::max(n, bytes);
  }
  // The guarded copy of `source`, made once at the size Need() recorded.
  const void* Copy(const void* source) {
    if (source == nullptr) return nullptr;
    auto it = index_.find(source);
    if (it != index_.end()) return copies_[it->second].second->data();
    index_.emplace(source, copies_.size());
    copies_.emplace_back(source, std::make_unique<Guarded>(source, sizes_.at(source)));
    return copies_.back().second->data();
  }
  Guarded accepted_, tokens_, acceptance_;
  bool with_acceptance_;
  std::vector<const sampcert_row*> draft_row_ptrs_, draft_row_ptrs_copy_;
  std::map<const void*, std::size_t> index_, sizes_;
  std::vector<std::pair<const void*, std::unique_ptr<Guarded>>> copies_;
  AbiRowArray rows_, rows_copy_;
  std::vector<int64_t> drafts_, drafts_copy_;
  std::vector<sampcert_chain> chains_, chains_copy_;
  std::vector<std::size_t> chain_rows_, chain_drafts_;
  sampcert_chain_batch header_{};
  std::optional<Guarded> header_copy_;
};

}  // namespace

Expected<Verified> Sampler::Verify(const ChainBatch& batch, uint64_t seed) {
  if (api_->struct_size < SAMPCERT_SAMPLER_API_STRUCT_SIZE || api_->verify == nullptr ||
      !info_.Has(SAMPCERT_CAP_VERIFY)) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("sampler '{}' does not declare verify", info_.name)};
  }
  const bool logits = !batch.chains.empty() && batch.chains.front().draft_rows != nullptr;
  if (logits && !info_.Has(SAMPCERT_CAP_VERIFY_DRAFT_LOGITS)) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("sampler '{}' does not declare verify-draft-logits", info_.name)};
  }
  // Packed masks (SPEC section 19) are given to sample() and probabilities(); verify()'s rows
  // carry their masks as bytes (no planned chain packs them), and the host says so rather than
  // unpack a row silently.
  for (const Chain& c : batch.chains) {
    for (std::size_t j = 0; j <= c.num_drafts; ++j) {
      if (c.targets[j].mask_layout != kMaskBytes || (c.draft_rows != nullptr && j < c.num_drafts &&
                                                     c.draft_rows[j].mask_layout != kMaskBytes)) {
        return Error{ErrorCode::kUnsupported,
                     "verify() rows with packed masks: the host gives verify() byte masks only"};
      }
    }
  }
  std::size_t max_drafts = 0;
  for (const Chain& c : batch.chains) max_drafts = std::max(max_drafts, c.num_drafts);
  const bool acceptance = info_.Has(SAMPCERT_CAP_VERIFY_ACCEPTANCE);
  GuardedVerify call(batch, max_drafts, acceptance, RowStride());
  sampcert_error err = FreshError();
  int32_t st;
  {
    Traced t("verify()");
    st = api_->verify(handle_, call.Header(), seed, call.accepted(), call.tokens(), &err);
  }
  ++abi_checked_calls_;
  for (std::string& v : call.Check()) Violation(std::move(v));
  last_error_problem_.clear();
  if (st != SAMPCERT_STATUS_OK) {
    last_error_problem_ = ErrorReportProblem(st, err, 0);
    return FromAbiError(st, err);
  }
  Verified out;
  out.stride = max_drafts + 1;
  const std::size_t chains = batch.chains.size();
  out.accepted.assign(call.accepted(), call.accepted() + chains);
  out.tokens.assign(call.tokens(), call.tokens() + chains * out.stride);
  if (acceptance) out.acceptance.assign(call.acceptance(), call.acceptance() + chains * max_drafts);
  for (std::size_t c = 0; c < chains; ++c) {
    const int64_t n = out.accepted[c];
    const auto k = static_cast<int64_t>(batch.chains[c].num_drafts);
    if (n < 0 || n > k) {
      return Error{
          ErrorCode::kInternal,
          fmt::format("verify() says chain {} accepted {} of its {} drafted tokens", c, n, k)};
    }
  }
  if (g_trace != nullptr) g_trace->draws += batch.chains.size();
  return out;
}

}  // namespace sampcert::adapters
