// The host side of the ABI: one C++ handle for any sampler behind a function table, whether
// built in or loaded from a plug-in. The runner and the properties see only this.
#ifndef SAMPCERT_ADAPTERS_SAMPLER_H_
#define SAMPCERT_ADAPTERS_SAMPLER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "adapters/declarations.h"  // SamplerInfo, CapabilityNames
#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

// Rows sharing dtype and vocabulary size. The RowViews' buffers are the caller's.
struct Batch {
  DType dtype = DType::kF32;
  std::size_t vocab = 0;
  std::vector<RowView> rows;
};

// The packed words (SPEC section 19, sampcert/packed_mask.h) of each row whose mask_layout is
// kMaskPacked and that has a mask; empty for every other row. The host gives these to the
// sampler in place of the row's mask bytes, their padding bits set.
std::vector<std::vector<uint32_t>> PackedMasks(const Batch& batch);

// One speculative-decoding chain (SPEC section 15): k drafted tokens against k + 1 target rows.
// A view: every buffer (the target rows, their logits and masks, the draft probabilities, the
// drafted tokens) is the caller's, and chains may share them.
// The drafts are either k x vocab probabilities (draft_probs) or, ABI MINOR 3, k draft rows of
// logits with their own parameters (draft_rows, of the batch's draft_dtype); in a batch, every
// chain gives them the same way.
struct Chain {
  const RowView* targets = nullptr;     // k + 1, the batch's dtype and vocab
  std::size_t num_drafts = 0;           // k
  const double* draft_probs = nullptr;  // k x vocab, row-major; nullptr with draft_rows
  const int64_t* drafts = nullptr;      // k
  uint64_t row_id = 0;
  uint64_t draw = 0;
  const RowView* draft_rows = nullptr;  // k, the batch's draft_dtype and vocab; or nullptr
};
struct ChainBatch {
  DType dtype = DType::kF32;
  std::size_t vocab = 0;
  std::vector<Chain> chains;
  DType draft_dtype = DType::kF32;  // of the chains' draft_rows
};
// What verify() returned: per chain c the accepted count n and its emitted tokens
// tokens[c * stride .. c * stride + n] (stride = the batch's largest k, plus 1); with
// SAMPCERT_CAP_VERIFY_ACCEPTANCE, the acceptance probabilities of the positions it decided,
// acceptance[c * (stride - 1) + j] for j = 0 .. min(n, k - 1) (empty otherwise).
struct Verified {
  std::vector<int64_t> accepted;
  std::vector<int64_t> tokens;
  std::size_t stride = 0;
  std::vector<double> acceptance;
  std::span<const int64_t> Emitted(std::size_t c) const {
    return {tokens.data() + c * stride, static_cast<std::size_t>(accepted[c] + 1)};
  }
};

// What sample() returned with log-probabilities (ABI MINOR 8, SPEC section 20): the tokens, row
// r's draw j at [r * draws + j], each one's log-probability beside it, and row r's top-n tokens
// and their log-probabilities at [r * n .. r * n + n). A value the sampler did not write is NaN
// (a top token: -1).
struct SampledLogprobs {
  std::vector<int64_t> tokens;
  std::vector<double> logprobs;
  std::vector<int64_t> top_tokens;
  std::vector<double> top_logprobs;
};

// Where a worker is, for the runner's post-mortem of a worker that died or ran out of time: the
// ABI call in progress ("" between calls) and the tokens sample() returned so far. The runner
// points it at memory it shares with the worker's parent; nullptr (the default): not traced.
struct CallTrace {
  char call[48];
  uint64_t draws;
  uint64_t calls;
};
void SetCallTrace(CallTrace* trace);
// Marks the start / end of a call into sampler code (the loader's dlopen and entry point too).
void EnterCall(const char* name);
void LeaveCall();

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
  // One sample() call that also asks for the log-probabilities in `mode` (SAMPCERT_LOGPROBS_*)
  // and each row's `top_n` most probable tokens: kUnsupported from a plug-in of MINOR < 8 or
  // without the mode's capability, and from a sequential sampler (POL-7: its streams are served
  // in order by Sample alone).
  Expected<SampledLogprobs> SampleLogprobs(const Batch& batch, uint64_t seed, uint64_t first_draw,
                                           uint64_t draws_per_row, int32_t mode, uint64_t top_n);

  // The speed of sample() (SPEC REPORT-3): `warmup` untimed calls, then `calls` timed ones, on
  // `batch` with one draw per row; call i draws number i (first_draw = i), so a sequential
  // sampler's streams continue (POL-7). The nanoseconds of each timed call, on the steady clock.
  // Unguarded: the rows go to the sampler as given, without ABI-1's copies and checks, whose copy
  // of every row would be timed too; the certification's calls are the guarded ones. An error is
  // the first one the sampler returned.
  Expected<std::vector<double>> TimedSampleCalls(const Batch& batch, uint64_t seed, uint64_t warmup,
                                                 uint64_t calls);

  // Verifies every chain (SPEC section 15); kUnsupported without the verify capability. The
  // output is checked for shape only (an accepted count in [0, k]); what it means is the
  // properties' business.
  Expected<Verified> Verify(const ChainBatch& batch, uint64_t seed);

  // ABI-1 (SPEC section 10): every call gets its own copies of the logits, masks and row
  // structs, and an output buffer, each between canary words; after the call the copies are
  // compared with the caller's inputs and the canaries checked. A violation does not change
  // the call's result: it is recorded here, naming the call, and the runner reports it.
  const std::vector<std::string>& abi_violations() const { return abi_violations_; }
  uint64_t abi_checked_calls() const { return abi_checked_calls_; }
  uint64_t abi_violation_count() const { return abi_violation_count_; }  // all, not the first 16

  // INV-ERR-1 beyond the code: what the last failed sample() / probabilities() call broke of
  // the error report's rules (SPEC section 5, the header): a message not NUL-terminated within
  // its buffer, error.code differing from the status, a row-level error naming no row of the
  // batch. Empty when the last call succeeded or reported its error well.
  const std::string& last_error_problem() const { return last_error_problem_; }

  // POL-7: how often a sequential sampler's stream was replayed from 0 to serve an earlier draw.
  uint64_t stream_replays() const { return stream_replays_; }

 private:
  Sampler(const sampcert_sampler_api* api, std::shared_ptr<void> keep_alive)
      : api_(api), keep_alive_(std::move(keep_alive)) {}
  std::vector<sampcert_row> AbiRows(const Batch& batch) const;
  // The stride and struct_size of the rows this plug-in reads: its own MINOR's sizeof (ABI
  // MINOR 4: a plug-in of MINOR 0..3 indexes rows by 56 bytes; MINOR 5: one of MINOR 4 by 104).
  std::size_t RowStride() const;
  // kUnsupported when a row carries a penalty (PEN-CAP-1) or a seed_mode (SEED-ABI-1) this
  // plug-in cannot read.
  Error CheckPenalties(const Batch& batch) const;
  // One sample() call into the sampler, as asked; with `logprobs`, asking for the
  // log-probabilities in `logprob_mode` and the top `top_n` too (ABI MINOR 8), written there.
  Expected<std::vector<int64_t>> SampleCall(const Batch& batch, uint64_t seed, uint64_t first_draw,
                                            uint64_t draws_per_row,
                                            int32_t logprob_mode = SAMPCERT_LOGPROBS_NONE,
                                            uint64_t top_n = 0,
                                            SampledLogprobs* logprobs = nullptr);
  void Violation(std::string what);

  const sampcert_sampler_api* api_;
  std::shared_ptr<void> keep_alive_;
  sampcert_sampler* handle_ = nullptr;
  SamplerInfo info_;
  std::vector<std::string> abi_violations_;
  uint64_t abi_checked_calls_ = 0;
  uint64_t abi_violation_count_ = 0;
  std::string last_error_problem_;
  // POL-7: the next draw of each (seed, row id) stream of a sequential sampler on this handle.
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> stream_next_;
  uint64_t stream_replays_ = 0;
};

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_SAMPLER_H_
