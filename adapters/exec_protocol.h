// The sampcert process protocol's bytes (adapters/python/PROTOCOL.md, "Messages"): requests
// encoded from the ABI's structs and replies parsed incrementally under the limits the host
// sets. Pure functions over bytes, no I/O: adapters/exec_sampler.cc moves the bytes to and from
// the child process, and exec_protocol_test.cc checks them against PROTOCOL.md's examples.
#ifndef SAMPCERT_ADAPTERS_EXEC_PROTOCOL_H_
#define SAMPCERT_ADAPTERS_EXEC_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "adapters/row_fields.h"
#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

// The protocol version this host speaks (PROTOCOL.md, "Versions").
inline constexpr uint32_t kExecProtocolMajor = 1;
// MINOR 2: VERIFY; 3: draft logits, acceptance; 4: INFO's penalty history policies; 5: the
// row's penalties, seed and token history (an 80-byte row header, its size in the batch header);
// 6: the row's logit bias and minimum length (a 104-byte row header, the bias after the history);
// 7: SAMPLE_LOGPROBS, the draws' log-probabilities (ABI MINOR 8); 8: packed masks (a row flag,
// the mask as ceil(V / 32) little-endian u32 words; ABI MINOR 7's mask_layout).
inline constexpr uint32_t kExecProtocolMinor = 8;

namespace exec_protocol {

inline constexpr uint32_t kMagic = 0x31504353u;  // the bytes 'S' 'C' 'P' '1'
inline constexpr std::size_t kHeaderBytes = 16;  // u32 magic, u32 kind, u64 payload length
using adapters::kRowHeaderBytes;                 // the row header: adapters/row_fields.h
inline constexpr uint32_t kRowHasLogits = 1u, kRowHasMask = 2u;
// 1.8: with kRowHasMask, the row's mask is packed words (SPEC section 19), not bytes.
inline constexpr uint32_t kRowMaskPacked = 4u;
// Bounded so that a garbage length cannot make the host allocate gigabytes.
inline constexpr uint64_t kMaxInfoReply = 1u << 20;
inline constexpr uint64_t kMaxErrorReply = 1u << 16;

enum class RequestKind : uint32_t {
  kInfo = 1,
  kCreate = 2,
  kSample = 3,
  kProbabilities = 4,
  kDestroy = 5,
  kVerify = 6,             // protocol MINOR 2 (ABI MINOR 2)
  kVerifyDraftLogits = 7,  // protocol MINOR 3 (ABI MINOR 3): VERIFY with draft rows of logits
  kSampleLogprobs = 8,     // protocol MINOR 7 (ABI MINOR 8): SAMPLE with the log-probabilities
};
enum class ReplyKind : uint32_t { kOk = 0, kError = 1 };

// Appends little-endian values (the hosts sampcert supports, x86-64 and aarch64 Linux, are).
class Writer {
 public:
  template <typename T>
  void Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  void Str(const std::string& s) {
    Put<uint32_t>(static_cast<uint32_t>(s.size()));
    out += s;
  }
  std::string out;
};

// Reads little-endian values from a payload; false once it runs out (nothing is read then).
class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  template <typename T>
  bool Get(T* v) {
    if (s_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, s_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Str(std::string* v) {
    uint32_t n = 0;
    if (!Get(&n) || s_.size() - pos_ < n) return false;
    v->assign(s_, pos_, n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  std::size_t pos_ = 0;
};

// Bytes as text for a message: printable ASCII, tab and newline kept, anything else '?'.
std::string Printable(std::string_view s);

// Whole request messages, header included (PROTOCOL.md, "Messages" and "Batch"). The batch
// encoders write the batch as a child of protocol 1.`minor` reads it (the row header's size:
// RowHeaderBytes); they refuse an unknown dtype, rows without a row array and a list's count
// without its list (kInvalidArgument), and a row carrying what that child cannot read
// (kUnsupported: penalties, a seed or a history before 1.5, a bias or a minimum length before
// 1.6).
std::string EncodeInfoRequest();  // this host's version: kExecProtocolMajor.kExecProtocolMinor
std::string EncodeCreateRequest(const std::optional<std::string>& config);  // nullopt: NULL
Expected<std::string> EncodeSampleRequest(const sampcert_batch& batch, uint64_t seed,
                                          uint64_t first_draw, uint64_t draws_per_row,
                                          uint32_t minor);
// SAMPLE_LOGPROBS (protocol MINOR 7): SAMPLE's fields, the batch's logprob_mode and top_logprobs,
// then the batch; kUnsupported for a child of an older minor.
Expected<std::string> EncodeSampleLogprobsRequest(const sampcert_batch& batch, uint64_t seed,
                                                  uint64_t first_draw, uint64_t draws_per_row,
                                                  uint32_t minor);
Expected<std::string> EncodeProbabilitiesRequest(const sampcert_batch& batch, uint32_t minor);
// VERIFY (PROTOCOL.md, "VERIFY"): the chains with their distinct target rows and draft rows sent
// once each (trials share them), chains referring to them by index. A batch with draft rows of
// logits (ABI MINOR 3) is a VERIFY_DRAFT_LOGITS request (protocol MINOR 3).
Expected<std::string> EncodeVerifyRequest(const sampcert_chain_batch& batch, uint64_t seed,
                                          uint32_t minor);
std::string EncodeDestroyRequest();

// The OK payload length a call accepts: exactly the bytes the host asked for (sample,
// probabilities, create), or at most a bound (info, which a newer MINOR may extend).
struct OkLength {
  static OkLength Exactly(uint64_t n) { return {n, n}; }
  static OkLength AtMost(uint64_t n) { return {std::nullopt, n}; }
  std::optional<uint64_t> exact;
  uint64_t at_most = 0;
};

// An ERROR reply's payload: a SAMPCERT_STATUS_* code in 1..15, the row (or -1), the message.
struct ErrorReply {
  int32_t code = 0;
  int64_t row = -1;
  std::string message;
};

// One reply, fed as it arrives. The header is checked as soon as its 16 bytes are in, before
// any payload is allocated; Space() never asks for more than the reply's own bytes, so the
// bytes after it stay unread. Errors are "protocol error: ..." messages (error()).
class ReplyParser {
 public:
  enum class Stage { kHeader, kPayload, kDone, kFailed };
  explicit ReplyParser(OkLength ok) : ok_(ok) {}

  // Where the next bytes go, as many as the reply still needs (empty once done or failed).
  std::span<char> Space();
  // Records that the first n bytes of Space() were filled.
  void Advance(std::size_t n);
  // Copies what the reply still needs from `bytes`; returns how many it took.
  std::size_t Feed(std::string_view bytes);

  Stage stage() const { return stage_; }
  // Bytes received so far in the current stage (header or payload).
  std::size_t stage_bytes() const { return stage_ == Stage::kHeader ? header_got_ : payload_got_; }
  ReplyKind kind() const { return kind_; }                        // from Stage::kPayload on
  std::string TakePayload() { return std::move(payload_); }       // an OK reply, once done
  const ErrorReply& error_reply() const { return error_reply_; }  // an ERROR reply, once done
  const std::string& error() const { return error_; }             // once failed

 private:
  void CheckHeader();
  void Complete();
  void Fail(std::string message);

  OkLength ok_;
  Stage stage_ = Stage::kHeader;
  char header_[kHeaderBytes] = {};
  std::size_t header_got_ = 0;
  ReplyKind kind_ = ReplyKind::kOk;
  std::string payload_;
  std::size_t payload_got_ = 0;
  ErrorReply error_reply_;
  std::string error_;
};

}  // namespace exec_protocol
}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_EXEC_PROTOCOL_H_
