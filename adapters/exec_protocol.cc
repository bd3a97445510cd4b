#include "adapters/exec_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "adapters/abi_conversions.h"
#include "sampcert/packed_mask.h"

namespace sampcert::adapters::exec_protocol {
namespace {

// A message under construction: the header first, its length filled in by Finish.
Writer StartMessage(RequestKind kind) {
  Writer w;
  w.Put<uint32_t>(kMagic);
  w.Put<uint32_t>(static_cast<uint32_t>(kind));
  w.Put<uint64_t>(0);
  return w;
}

std::string Finish(Writer w) {
  const uint64_t length = w.out.size() - kHeaderBytes;
  std::memcpy(w.out.data() + 8, &length, sizeof length);
  return std::move(w.out);
}

std::size_t ElementBytes(int32_t dtype) { return dtype == SAMPCERT_DTYPE_F32 ? 4 : 2; }

// The row's lists (ToRowView reads them where the row's struct covers them: the history from ABI
// MINOR 4, the bias from MINOR 6); a count without its list is a malformed call.
struct RowLists {
  std::span<const int64_t> prompt, output, bias_tokens;
  std::span<const float> bias_values;
  std::size_t Bytes() const {
    return (prompt.size() + output.size() + bias_tokens.size()) * sizeof(int64_t) +
           bias_values.size_bytes();
  }
};
Expected<RowLists> ListsOf(const RowView& v, uint64_t r) {
  for (auto [is_null, n, name] :
       {std::tuple{v.prompt_tokens == nullptr, v.num_prompt_tokens, "num_prompt_tokens"},
        std::tuple{v.output_tokens == nullptr, v.num_output_tokens, "num_output_tokens"},
        std::tuple{v.bias_tokens == nullptr || v.bias_values == nullptr, v.num_bias, "num_bias"}}) {
    if (n > 0 && is_null) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("row {}: {} is {} but its list is null", r, name, n),
                   static_cast<int64_t>(r)};
    }
  }
  return RowLists{{v.prompt_tokens, v.num_prompt_tokens},
                  {v.output_tokens, v.num_output_tokens},
                  {v.bias_tokens, v.num_bias},
                  {v.bias_values, v.num_bias}};
}

// The batch's encoding (PROTOCOL.md, "Batch") for a child of protocol 1.`minor`, appended to
// `*w`. A row that carries what that child's header cannot (penalties, a seed or a history for
// 1.4; a bias or a minimum length for 1.5) is refused as NotSupported: it is never sent with
// those fields silently dropped.
Error AppendBatch(const sampcert_batch& b, uint32_t minor, Writer* out) {
  if (b.dtype != SAMPCERT_DTYPE_F32 && b.dtype != SAMPCERT_DTYPE_F16 &&
      b.dtype != SAMPCERT_DTYPE_BF16) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("unknown dtype {} (0 = f32, 1 = f16, 2 = bf16)", b.dtype)};
  }
  if (b.num_rows > 0 && b.rows == nullptr) {
    return Error{ErrorCode::kInvalidArgument, "the batch has rows but no row array"};
  }
  const std::size_t header_bytes = RowHeaderBytes(minor);
  std::vector<RowView> views(b.num_rows);
  std::vector<RowLists> lists(b.num_rows);
  const std::size_t logit_bytes = b.vocab * ElementBytes(b.dtype);
  std::size_t total = 32 + b.num_rows * header_bytes;
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    const sampcert_row& row = b.rows[r];
    views[r] = ToRowView(row, b.dtype, b.vocab);
    auto row_lists = ListsOf(views[r], r);
    if (!row_lists.ok()) return row_lists.error();
    lists[r] = *row_lists;
    const bool has_history = !lists[r].prompt.empty() || !lists[r].output.empty();
    const bool has_bias = !lists[r].bias_tokens.empty();
    // mask_layout travels as the row flag kRowMaskPacked (1.8), not in the header.
    if (views[r].mask_layout != kMaskBytes && views[r].mask_layout != kMaskPacked) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("row {}: mask_layout is {} (must be 0, bytes, or 1, packed words)",
                               r, views[r].mask_layout),
                   static_cast<int64_t>(r)};
    }
    const bool packed = views[r].mask_layout == kMaskPacked;
    if (packed && minor < 8) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("row {}: the child speaks protocol {}.{}, which does not carry a "
                               "packed mask (mask_layout {}; 1.8 does)",
                               r, kExecProtocolMajor, minor, views[r].mask_layout),
                   static_cast<int64_t>(r)};
    }
    RowParams in_header = views[r];
    in_header.mask_layout = kMaskBytes;
    if ((header_bytes < kRowHeaderBytesMinor5 && has_history) ||
        (header_bytes < kRowHeaderBytes && has_bias) ||
        !RowHeaderCarries(in_header, header_bytes)) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("row {}: the child speaks protocol {}.{}, which does not carry "
                               "this row's {} (1.{} does)",
                               r, kExecProtocolMajor, minor,
                               minor < 5 ? "penalties, seed or token history"
                                         : "logit bias or minimum length",
                               minor < 5 ? 5 : 6),
                   static_cast<int64_t>(r)};
    }
    total +=
        (row.logits ? logit_bytes : 0) + lists[r].Bytes() +
        (packed ? (row.packed_mask ? PackedMaskWords(b.vocab) * 4 : 0) : (row.mask ? b.vocab : 0));
  }
  Writer& w = *out;
  w.Put<int32_t>(b.dtype);
  w.Put<uint32_t>(minor >= 5 ? static_cast<uint32_t>(header_bytes) : 0u);  // 1.4: reserved, 0
  w.Put<uint64_t>(b.vocab);
  w.Put<uint64_t>(b.num_rows);
  w.out.reserve(w.out.size() + total);
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    const sampcert_row& row = b.rows[r];
    char header[kRowHeaderBytes];
    const bool packed = views[r].mask_layout == kMaskPacked;
    const bool has_mask = packed ? row.packed_mask != nullptr : row.mask != nullptr;
    WriteRowHeader(WireParams(views[r]),
                   (row.logits ? kRowHasLogits : 0u) | (has_mask ? kRowHasMask : 0u) |
                       (has_mask && packed ? kRowMaskPacked : 0u),
                   header_bytes, header);
    const std::pair<std::size_t, uint64_t> counts[] = {
        {kRowPromptCountOffset, lists[r].prompt.size()},
        {kRowOutputCountOffset, lists[r].output.size()},
        {kRowBiasCountOffset, lists[r].bias_tokens.size()}};
    for (auto [offset, count] : counts) {
      if (offset + sizeof count <= header_bytes) std::memcpy(header + offset, &count, sizeof count);
    }
    w.out.append(header, header_bytes);
  }
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    if (b.rows[r].logits) w.out.append(static_cast<const char*>(b.rows[r].logits), logit_bytes);
  }
  for (uint64_t r = 0; r < b.num_rows; ++r) {  // bytes, or (1.8) packed little-endian words
    if (views[r].mask_layout != kMaskBytes) {
      if (b.rows[r].packed_mask) {
        w.out.append(reinterpret_cast<const char*>(b.rows[r].packed_mask),
                     PackedMaskWords(b.vocab) * 4);
      }
    } else if (b.rows[r].mask) {
      w.out.append(reinterpret_cast<const char*>(b.rows[r].mask), b.vocab);
    }
  }
  const auto append = [&](auto span) {
    if (!span.empty()) w.out.append(reinterpret_cast<const char*>(span.data()), span.size_bytes());
  };
  for (const RowLists& l : lists) {  // 1.5: each row's prompt ids, then its output ids
    append(l.prompt);
    append(l.output);
  }
  for (const RowLists& l : lists) {  // 1.6: each row's bias ids, then their values
    append(l.bias_tokens);
    append(l.bias_values);
  }
  return Error{};
}

// The message `w` with the batch appended, finished.
Expected<std::string> EncodeBatch(const sampcert_batch& b, uint32_t minor, Writer w) {
  if (Error e = AppendBatch(b, minor, &w); e.code != ErrorCode::kOk) return e;
  return Finish(std::move(w));
}

}  // namespace

std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += static_cast<char>(c);
    } else {
      out += '?';
    }
  }
  return out;
}

std::string EncodeInfoRequest() {
  Writer w = StartMessage(RequestKind::kInfo);
  w.Put<uint32_t>(kExecProtocolMajor);
  w.Put<uint32_t>(kExecProtocolMinor);
  return Finish(std::move(w));
}

std::string EncodeCreateRequest(const std::optional<std::string>& config) {
  Writer w = StartMessage(RequestKind::kCreate);
  w.Put<uint32_t>(config ? 1u : 0u);
  w.Str(config.value_or(""));
  return Finish(std::move(w));
}

Expected<std::string> EncodeSampleRequest(const sampcert_batch& batch, uint64_t seed,
                                          uint64_t first_draw, uint64_t draws_per_row,
                                          uint32_t minor) {
  Writer w = StartMessage(RequestKind::kSample);
  w.Put<uint64_t>(seed);
  w.Put<uint64_t>(first_draw);
  w.Put<uint64_t>(draws_per_row);
  return EncodeBatch(batch, minor, std::move(w));
}

Expected<std::string> EncodeSampleLogprobsRequest(const sampcert_batch& batch, uint64_t seed,
                                                  uint64_t first_draw, uint64_t draws_per_row,
                                                  uint32_t minor) {
  if (minor < 7) {
    return Error{ErrorCode::kUnsupported,
                 fmt::format("the child speaks protocol {}.{}, which carries no log-probabilities "
                             "(1.7 does)",
                             kExecProtocolMajor, minor)};
  }
  Writer w = StartMessage(RequestKind::kSampleLogprobs);
  w.Put<uint64_t>(seed);
  w.Put<uint64_t>(first_draw);
  w.Put<uint64_t>(draws_per_row);
  w.Put<int32_t>(BatchLogprobMode(batch));
  w.Put<uint32_t>(0);
  w.Put<uint64_t>(batch.top_logprobs);
  return EncodeBatch(batch, minor, std::move(w));
}

Expected<std::string> EncodeProbabilitiesRequest(const sampcert_batch& batch, uint32_t minor) {
  return EncodeBatch(batch, minor, StartMessage(RequestKind::kProbabilities));
}

Expected<std::string> EncodeVerifyRequest(const sampcert_chain_batch& batch, uint64_t seed,
                                          uint32_t minor) {
  if (batch.num_chains > 0 && batch.chains == nullptr) {
    return Error{ErrorCode::kInvalidArgument, "the batch has chains but no chain array"};
  }
  const std::size_t v = batch.vocab;
  const sampcert_row* const* draft_rows = ChainDraftRows(batch);
  // The distinct target rows (by their buffers and parameters), and the distinct draft rows:
  // probabilities by address, or rows of logits as the target rows.
  std::vector<sampcert_row> rows, draft_logits;
  std::vector<const double*> drafts;
  auto index_in = [&](std::vector<sampcert_row>& list, const sampcert_row& r) {
    // One row: the same buffers (logits, mask, history) and the same distribution fields (the
    // dtype is not compared: a list holds rows of one dtype).
    const RowView c = ToRowView(r, batch.dtype, v);
    for (std::size_t i = list.size(); i-- > 0;) {
      const RowView a = ToRowView(list[i], batch.dtype, v);
      if (a.logits == c.logits && a.mask == c.mask && a.prompt_tokens == c.prompt_tokens &&
          a.output_tokens == c.output_tokens && a.num_prompt_tokens == c.num_prompt_tokens &&
          a.num_output_tokens == c.num_output_tokens && SameDistributionParams(a, c)) {
        return static_cast<uint64_t>(i);
      }
    }
    list.push_back(r);
    list.back().row_id = 0;
    return static_cast<uint64_t>(list.size() - 1);
  };
  auto row_index = [&](const sampcert_row& r) { return index_in(rows, r); };
  auto draft_index = [&](const double* q) {
    for (std::size_t i = drafts.size(); i-- > 0;) {
      if (drafts[i] == q) return static_cast<uint64_t>(i);
    }
    drafts.push_back(q);
    return static_cast<uint64_t>(drafts.size() - 1);
  };
  Writer chains;
  for (uint64_t c = 0; c < batch.num_chains; ++c) {
    const sampcert_chain& ch = batch.chains[c];
    const sampcert_row* d_rows = draft_rows != nullptr ? draft_rows[c] : nullptr;
    if (ch.num_drafts > 0 &&
        (ch.target_rows == nullptr || ch.draft_tokens == nullptr ||
         (draft_rows == nullptr ? ch.draft_probs == nullptr : d_rows == nullptr))) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("chain {}: a null buffer", c)};
    }
    chains.Put<uint64_t>(ch.num_drafts);
    chains.Put<uint64_t>(ch.row_id);
    chains.Put<uint64_t>(ch.draw);
    for (uint64_t j = 0; ch.target_rows != nullptr && j <= ch.num_drafts; ++j) {
      chains.Put<uint64_t>(row_index(ch.target_rows[j]));
    }
    for (uint64_t j = 0; j < ch.num_drafts; ++j) {
      chains.Put<uint64_t>(d_rows != nullptr ? index_in(draft_logits, d_rows[j])
                                             : draft_index(ch.draft_probs + j * v));
    }
    for (uint64_t j = 0; j < ch.num_drafts; ++j) chains.Put<int64_t>(ch.draft_tokens[j]);
  }
  Writer w =
      StartMessage(draft_rows != nullptr ? RequestKind::kVerifyDraftLogits : RequestKind::kVerify);
  w.Put<uint64_t>(seed);
  w.Put<uint64_t>(v);
  w.Put<uint64_t>(draft_rows != nullptr ? draft_logits.size() : drafts.size());
  w.Put<uint64_t>(batch.num_chains);
  w.Put<uint64_t>(batch.max_drafts);
  w.out += chains.out;
  const sampcert_batch targets = AbiBatch(batch.dtype, batch.vocab, rows.size(), rows.data());
  if (draft_rows == nullptr) {
    for (const double* q : drafts) {
      w.out.append(reinterpret_cast<const char*>(q), v * sizeof(double));
    }
    return EncodeBatch(targets, minor, std::move(w));
  }
  // VERIFY_DRAFT_LOGITS: the target batch's length, the target batch, the draft batch.
  Writer target_bytes;
  if (Error e = AppendBatch(targets, minor, &target_bytes); e.code != ErrorCode::kOk) return e;
  w.Put<uint64_t>(target_bytes.out.size());
  w.out += target_bytes.out;
  const sampcert_batch draft_batch =
      AbiBatch(batch.draft_dtype, batch.vocab, draft_logits.size(), draft_logits.data());
  return EncodeBatch(draft_batch, minor, std::move(w));
}

std::string EncodeDestroyRequest() { return Finish(StartMessage(RequestKind::kDestroy)); }

std::span<char> ReplyParser::Space() {
  switch (stage_) {
    case Stage::kHeader: return {header_ + header_got_, kHeaderBytes - header_got_};
    case Stage::kPayload: return {payload_.data() + payload_got_, payload_.size() - payload_got_};
    case Stage::kDone:
    case Stage::kFailed: break;
  }
  return {};
}

void ReplyParser::Advance(std::size_t n) {
  if (stage_ == Stage::kHeader) {
    header_got_ += n;
    if (header_got_ == kHeaderBytes) CheckHeader();
  } else if (stage_ == Stage::kPayload) {
    payload_got_ += n;
    if (payload_got_ == payload_.size()) Complete();
  }
}

std::size_t ReplyParser::Feed(std::string_view bytes) {
  std::size_t taken = 0;
  for (std::span<char> space = Space(); !space.empty() && taken < bytes.size(); space = Space()) {
    const std::size_t n = std::min(space.size(), bytes.size() - taken);
    std::memcpy(space.data(), bytes.data() + taken, n);
    taken += n;
    Advance(n);
  }
  return taken;
}

void ReplyParser::CheckHeader() {
  uint32_t magic, kind;
  uint64_t len;
  std::memcpy(&magic, header_, 4);
  std::memcpy(&kind, header_ + 4, 4);
  std::memcpy(&len, header_ + 8, 8);
  if (magic != kMagic) {
    return Fail(
        fmt::format("protocol error: a reply must start with 'SCP1', got '{}' (did "
                    "something write to fd 4?)",
                    Printable(std::string_view(header_, kHeaderBytes))));
  }
  if (kind == static_cast<uint32_t>(ReplyKind::kOk)) {
    if ((ok_.exact && len != *ok_.exact) || (!ok_.exact && len > ok_.at_most)) {
      return Fail(fmt::format(
          "protocol error: the reply is {} bytes, expected {}", len,
          ok_.exact ? fmt::format("{}", *ok_.exact) : fmt::format("at most {}", ok_.at_most)));
    }
  } else if (kind != static_cast<uint32_t>(ReplyKind::kError) || len > kMaxErrorReply) {
    return Fail(
        fmt::format("protocol error: reply kind {} of {} bytes (0 = ok, 1 = error)", kind, len));
  }
  kind_ = static_cast<ReplyKind>(kind);
  stage_ = Stage::kPayload;
  payload_.resize(len);
  if (len == 0) Complete();
}

void ReplyParser::Complete() {
  stage_ = Stage::kDone;
  if (kind_ != ReplyKind::kError) return;
  Reader r(payload_);
  int32_t code = 0, reserved = 0;
  int64_t row = -1;
  std::string message;
  if (!r.Get(&code) || !r.Get(&reserved) || !r.Get(&row) || !r.Str(&message) || !r.AtEnd() ||
      code <= SAMPCERT_STATUS_OK || code > SAMPCERT_STATUS_INVALID_LOGIT_BIAS) {
    return Fail(fmt::format("protocol error: a malformed error reply (code {})", code));
  }
  error_reply_ = ErrorReply{code, row, std::move(message)};
}

void ReplyParser::Fail(std::string message) {
  stage_ = Stage::kFailed;
  error_ = std::move(message);
}

}  // namespace sampcert::adapters::exec_protocol
