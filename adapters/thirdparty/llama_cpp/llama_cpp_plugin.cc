// A sampcert plug-in that runs llama.cpp's own sampler chain (issue 13): the chain llama.cpp's
// common/sampling.cpp and llama-cpp-python build by default for these parameters,
//
//   llama_sampler_chain_init -> top_k(k) -> top_p(p, 1) -> min_p(m, 1) -> temp(T) -> dist(seed)
//
// applied to a llama_token_data_array built from the row, exactly as llama_sampler_sample does
// with a context's logits. The point is to certify llama.cpp, so this adapter validates nothing
// that llama.cpp does not validate itself: NaN logits, T < 0, T = inf, top_p outside (0, 1],
// min_p outside [0, 1), top_k < 0 and an empty support all reach llama.cpp unchanged, and what
// it does with them is what the report shows. The only inputs refused here are those that
// would certainly crash the process or that llama.cpp's types cannot represent (README):
// - V = 0: top-p's softmax GGML_ASSERTs (aborts) on an empty array, and dist selects -1, on
//   which llama_sampler_sample GGML_ASSERTs: EMPTY_VOCAB.
// - V > INT32_MAX: llama_token is int32_t: INVALID_ARGUMENT.
// - a chain that selects no token (cur_p.selected outside [0, size)): llama_sampler_sample
//   would abort on its GGML_ASSERT; reported as INTERNAL, naming the row.
//
// Conversions, as llama.cpp would do them: masked tokens get logit -inf (what llama.cpp's
// grammar and logit-bias samplers write for a disallowed token); f16 logits go through
// ggml_fp16_to_fp32 and bf16 through ggml_bf16_to_fp32 (both exact); top_k saturates to
// int32_t (llama_sampler_init_top_k's type: any k >= V keeps everything, any k <= 0 is off).
//
// Randomness: dist keeps a std::mt19937 and draws sequentially, so the plug-in declares
// SAMPCERT_DRAWS_SEQUENTIAL and keeps one dist sampler per (seed, row_id) stream per handle,
// seeded from (seed, row_id). A request that does not continue its stream (an earlier draw,
// a gap, an evicted stream) is still answered correctly: the stream is reseeded and replayed,
// or the gap drawn and discarded, so draw j of a stream is always the chain's j-th draw.
//
// Built a second time with SAMPCERT_LLAMA_PENALTIES=1 (libsampcert_llama_cpp_penalties.so, README
// "The penalties variant"): llama_sampler_init_penalties at the head of the chain, as
// common/sampling.cpp puts it, fed the row's history the way llama-server and llama-completion
// do (llama_sampler_accept of each prompt token, then of each output token, in order), with
// penalty_last_n = the history's length so that its window is the whole history. It declares
// SAMPCERT_CAP_PENALTIES and the history llama.cpp really uses: prompt and output, for all three
// penalties. The ABI's repetition penalty 0 ("off", PEN-IN-2) is passed as llama.cpp's off, 1;
// every other penalty reaches llama.cpp as given. Refused: a null history list of nonzero
// length (it would be read), and a history id or length that llama_token / int32_t cannot hold.
//
// Everything thrown inside (std::bad_alloc from llama.cpp's vectors) is caught before it
// crosses the C boundary.
#include <ggml.h>
#include <llama.h>
#include <sampcert/sampler_abi.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#ifndef SAMPCERT_LLAMA_PENALTIES
#define SAMPCERT_LLAMA_PENALTIES 0
#endif

namespace {

// The variant: penalties at the head of the chain, with the row's history.
constexpr bool kPenalties = SAMPCERT_LLAMA_PENALTIES != 0;
constexpr const char* kName = kPenalties ? "llama.cpp_penalties" : "llama.cpp";
// The pinned source: PyPI's llama-cpp-python source distribution, which vendors llama.cpp.
constexpr const char* kVersion =
    kPenalties ? "llama-cpp-python 0.3.36 (vendored llama.cpp, sampler chain with penalties)"
               : "llama-cpp-python 0.3.36 (vendored llama.cpp, sampler chain)";
// Streams kept per handle before the least recently used is dropped (about 5 KB each: dist's
// two mt19937). A dropped stream that is asked for again is replayed from its seed.
constexpr size_t kMaxStreams = 4096;

int32_t Fail(sampcert_error* error, int32_t code, int64_t row, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

int32_t Fail(sampcert_error* error, int32_t code, int64_t row, const char* format, ...) {
  if (error != nullptr && error->struct_size >= sizeof(sampcert_error)) {
    error->code = code;
    error->row = row;
    // "row N: " first, then the message into what is left (truncated to fit).
    int used = row >= 0 ? std::snprintf(error->message, sizeof error->message,
                                        "row %lld: ", static_cast<long long>(row))
                        : 0;
    used = std::clamp(used, 0, static_cast<int>(sizeof error->message) - 1);
    va_list args;
    va_start(args, format);
    std::vsnprintf(error->message + used, sizeof error->message - static_cast<size_t>(used), format,
                   args);
    va_end(args);
  }
  return code;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// dist takes a uint32_t seed; LLAMA_DEFAULT_SEED (0xFFFFFFFF) means "seed from the clock", so
// that one value is mapped away to keep same-seed determinism.
uint32_t DistSeed(uint64_t seed, uint64_t row_id) {
  auto s = static_cast<uint32_t>(SplitMix64(seed ^ SplitMix64(row_id)) >> 32);
  return s == LLAMA_DEFAULT_SEED ? 0x5eedu : s;
}

struct Stream {
  llama_sampler* dist = nullptr;  // owned
  uint64_t next_draw = 0;         // the draw index its next application produces
  uint64_t last_use = 0;
};

// The penalties sampler for a row (the variant only). penalty_last_n is the history's length
// (at least 1): the window covers the whole history. llama.cpp's -1 ("the context size") is
// common's, not the library's: llama_sampler_init_penalties clamps it to 0, which disables the
// sampler. The ABI's repetition penalty 0 means off (PEN-IN-2); llama.cpp's off is 1.
llama_sampler* InitPenalties(const sampcert_row& row, uint64_t vocab) {
  const uint64_t n = row.num_prompt_tokens + row.num_output_tokens;
  const float repeat = row.repetition_penalty == 0.0f ? 1.0f : row.repetition_penalty;
  return llama_sampler_init_penalties(static_cast<int32_t>(vocab),
                                      static_cast<int32_t>(std::max<uint64_t>(n, 1)), repeat,
                                      row.frequency_penalty, row.presence_penalty);
}

// A chain for one row's parameters around a stream's dist sampler; the dist sampler is taken
// back out (llama_sampler_chain_remove does not free) before the chain is freed.
class Chain {
 public:
  Chain(const sampcert_row& row, uint64_t vocab, llama_sampler* dist) {
    llama_sampler_chain_params params = llama_sampler_chain_default_params();
    params.no_perf = true;
    chain_ = llama_sampler_chain_init(params);
    // common_params_sampling's default order starts with penalties (common/common.h).
    if (kPenalties) llama_sampler_chain_add(chain_, InitPenalties(row, vocab));
    const int64_t k = std::clamp<int64_t>(row.top_k, std::numeric_limits<int32_t>::min(),
                                          std::numeric_limits<int32_t>::max());
    // min_keep 1: what llama-cpp-python passes (max(1, n_probs)); common's default 0 behaves
    // the same here, since both steps always keep the first token anyway.
    llama_sampler_chain_add(chain_, llama_sampler_init_top_k(static_cast<int32_t>(k)));
    llama_sampler_chain_add(chain_, llama_sampler_init_top_p(row.top_p, 1));
    llama_sampler_chain_add(chain_, llama_sampler_init_min_p(row.min_p, 1));
    llama_sampler_chain_add(chain_, llama_sampler_init_temp(row.temperature));
    llama_sampler_chain_add(chain_, dist);
    // The history, as llama-server's init_sampler and llama-completion feed the prompt
    // (common_sampler_accept(..., false) per prompt token) and each generated token after it:
    // llama_sampler_accept on the chain, which passes it to every sampler (dist's accept does
    // nothing outside backend sampling).
    if (kPenalties) {
      for (uint64_t i = 0; i < row.num_prompt_tokens; ++i) {
        llama_sampler_accept(chain_, static_cast<llama_token>(row.prompt_tokens[i]));
      }
      for (uint64_t i = 0; i < row.num_output_tokens; ++i) {
        llama_sampler_accept(chain_, static_cast<llama_token>(row.output_tokens[i]));
      }
    }
  }
  ~Chain() {
    llama_sampler_chain_remove(chain_, llama_sampler_chain_n(chain_) - 1);  // the stream's dist
    llama_sampler_free(chain_);
  }
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;
  llama_sampler* get() const { return chain_; }

 private:
  llama_sampler* chain_ = nullptr;
};

}  // namespace

struct sampcert_sampler {
  std::map<std::pair<uint64_t, uint64_t>, Stream> streams;
  uint64_t clock = 0;
  std::vector<llama_token_data> base;  // the row as llama.cpp's candidates
  std::vector<llama_token_data> work;  // a fresh copy per application, as per generated token

  ~sampcert_sampler() {
    for (auto& [key, stream] : streams) llama_sampler_free(stream.dist);
  }

  Stream& GetStream(uint64_t seed, uint64_t row_id) {
    const auto key = std::make_pair(seed, row_id);
    auto it = streams.find(key);
    if (it == streams.end()) {
      if (streams.size() >= kMaxStreams) {
        auto oldest = std::min_element(streams.begin(), streams.end(), [](auto& a, auto& b) {
          return a.second.last_use < b.second.last_use;
        });
        llama_sampler_free(oldest->second.dist);
        streams.erase(oldest);
      }
      Stream fresh;
      fresh.dist = llama_sampler_init_dist(DistSeed(seed, row_id));
      it = streams.emplace(key, fresh).first;
    }
    it->second.last_use = ++clock;
    return it->second;
  }
};

namespace {

// Fills s->base with the row as llama_token_data {id, logit, 0}; masked tokens get -inf.
int32_t BuildCandidates(sampcert_sampler* s, const sampcert_batch* b, uint64_t r,
                        sampcert_error* error) {
  const sampcert_row& row = b->rows[r];
  const auto ri = static_cast<int64_t>(r);
  if (row.logits == nullptr) {
    return Fail(error, SAMPCERT_STATUS_EMPTY_VOCAB, ri, "no logits buffer");
  }
  const uint64_t v = b->vocab;
  s->base.resize(v);
  for (uint64_t i = 0; i < v; ++i) {
    float x = 0;
    switch (b->dtype) {
      case SAMPCERT_DTYPE_F32:
        std::memcpy(&x, static_cast<const uint32_t*>(row.logits) + i, 4);
        break;
      case SAMPCERT_DTYPE_F16:
        x = ggml_fp16_to_fp32(static_cast<const ggml_fp16_t*>(row.logits)[i]);
        break;
      case SAMPCERT_DTYPE_BF16: {
        ggml_bf16_t h;
        h.bits = static_cast<const uint16_t*>(row.logits)[i];
        x = ggml_bf16_to_fp32(h);
        break;
      }
      default: break;
    }
    if (row.mask != nullptr && row.mask[i] == 0) x = -INFINITY;
    s->base[i] = llama_token_data{static_cast<llama_token>(i), x, 0.0f};
  }
  return SAMPCERT_STATUS_OK;
}

// One application of the chain to a fresh copy of the candidates: one generated token.
// Returns the selected candidate's index into cur (or -1), leaving cur as llama.cpp left it.
int64_t ApplyOnce(sampcert_sampler* s, llama_sampler* chain, llama_token_data_array* cur) {
  s->work = s->base;
  *cur = llama_token_data_array{s->work.data(), s->work.size(), -1, false};
  llama_sampler_apply(chain, cur);
  return cur->selected;
}

// What the penalties variant cannot pass to llama.cpp at all: a list it would have to read
// through a null pointer, and ids or a history length that its int32_t types cannot hold. Ids
// outside [0, V) that fit llama_token reach llama.cpp as given (it counts them; no candidate
// matches them).
int32_t CheckHistory(const sampcert_row& row, uint64_t r, sampcert_error* error) {
  const auto ri = static_cast<int64_t>(r);
  const std::pair<const int64_t*, uint64_t> lists[] = {{row.prompt_tokens, row.num_prompt_tokens},
                                                       {row.output_tokens, row.num_output_tokens}};
  const char* names[] = {"prompt_tokens", "output_tokens"};
  for (int l = 0; l < 2; ++l) {
    const auto [tokens, n] = lists[l];
    if (n > 0 && tokens == nullptr) {
      return Fail(error, SAMPCERT_STATUS_INVALID_PENALTY, ri, "%s is null with %llu tokens",
                  names[l], static_cast<unsigned long long>(n));
    }
    for (uint64_t i = 0; i < n; ++i) {
      if (tokens[i] < std::numeric_limits<llama_token>::min() ||
          tokens[i] > std::numeric_limits<llama_token>::max()) {
        return Fail(error, SAMPCERT_STATUS_INVALID_PENALTY, ri,
                    "%s[%llu] is %lld, which llama_token (int32_t) cannot hold", names[l],
                    static_cast<unsigned long long>(i), static_cast<long long>(tokens[i]));
      }
    }
  }
  if (row.num_prompt_tokens + row.num_output_tokens >
      static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Fail(error, SAMPCERT_STATUS_INVALID_PENALTY, ri,
                "a history of %llu tokens does not fit penalty_last_n (int32_t)",
                static_cast<unsigned long long>(row.num_prompt_tokens + row.num_output_tokens));
  }
  return SAMPCERT_STATUS_OK;
}

int32_t CheckBatch(const sampcert_batch* b, sampcert_error* error) {
  if (b == nullptr || b->struct_size < sizeof(sampcert_batch) || b->rows == nullptr) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "malformed batch");
  }
  if (b->dtype != SAMPCERT_DTYPE_F32 && b->dtype != SAMPCERT_DTYPE_F16 &&
      b->dtype != SAMPCERT_DTYPE_BF16) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "unknown dtype %d", b->dtype);
  }
  if (b->vocab == 0) {
    // llama.cpp cannot take this: top-p's softmax GGML_ASSERTs on an empty array and dist
    // selects -1, which llama_sampler_sample GGML_ASSERTs on. Both abort the process.
    return Fail(error, SAMPCERT_STATUS_EMPTY_VOCAB, 0,
                "vocabulary size 0 (llama.cpp would abort: GGML_ASSERT in llama-sampler.cpp)");
  }
  if (b->vocab > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "vocabulary size %llu does not fit llama_token (int32_t)",
                static_cast<unsigned long long>(b->vocab));
  }
  for (uint64_t r = 0; r < b->num_rows; ++r) {
    if (b->rows[r].struct_size < sizeof(sampcert_row)) {
      return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, static_cast<int64_t>(r),
                  "row struct_size %zu too small", b->rows[r].struct_size);
    }
    if (kPenalties) {
      if (int32_t status = CheckHistory(b->rows[r], r, error); status != SAMPCERT_STATUS_OK) {
        return status;
      }
    }
  }
  return SAMPCERT_STATUS_OK;
}

int32_t NoToken(sampcert_error* error, uint64_t r, int64_t selected, size_t size) {
  return Fail(error, SAMPCERT_STATUS_INTERNAL, static_cast<int64_t>(r),
              "llama.cpp's chain selected candidate %lld of %zu (llama_sampler_sample would "
              "abort on its GGML_ASSERT)",
              static_cast<long long>(selected), size);
}

int32_t SampleRows(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed, uint64_t first_draw,
                   uint64_t draws_per_row, int64_t* out, sampcert_error* error) {
  if (int32_t status = CheckBatch(b, error); status != SAMPCERT_STATUS_OK) return status;
  if (out == nullptr && draws_per_row > 0) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "no output buffer");
  }
  for (uint64_t r = 0; r < b->num_rows; ++r) {
    if (int32_t status = BuildCandidates(s, b, r, error); status != SAMPCERT_STATUS_OK) {
      return status;
    }
    Stream& stream = s->GetStream(seed, b->rows[r].row_id);
    if (first_draw < stream.next_draw) {  // an earlier draw: replay the stream from its seed
      llama_sampler_reset(stream.dist);
      stream.next_draw = 0;
    }
    Chain chain(b->rows[r], b->vocab, stream.dist);
    llama_token_data_array cur{};
    for (; stream.next_draw < first_draw; ++stream.next_draw) {  // a gap: draw and discard
      ApplyOnce(s, chain.get(), &cur);
    }
    for (uint64_t j = 0; j < draws_per_row; ++j) {
      const int64_t selected = ApplyOnce(s, chain.get(), &cur);
      ++stream.next_draw;
      if (selected < 0 || static_cast<uint64_t>(selected) >= cur.size) {
        return NoToken(error, r, selected, cur.size);
      }
      out[r * draws_per_row + j] = cur.data[selected].id;
    }
  }
  return SAMPCERT_STATUS_OK;
}

// The distribution dist samples from: the p it writes for each remaining candidate
// (normalized in float), 0 for every token the chain removed. A throwaway dist sampler, so no
// stream moves.
int32_t ProbabilityRows(sampcert_sampler* s, const sampcert_batch* b, double* out,
                        sampcert_error* error) {
  if (int32_t status = CheckBatch(b, error); status != SAMPCERT_STATUS_OK) return status;
  if (out == nullptr) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "no output buffer");
  }
  const uint64_t v = b->vocab;
  for (uint64_t r = 0; r < b->num_rows; ++r) {
    if (int32_t status = BuildCandidates(s, b, r, error); status != SAMPCERT_STATUS_OK) {
      return status;
    }
    // Declared before the chain, so destroyed after it: the chain's destructor takes the
    // throwaway dist sampler back out, then it is freed here.
    std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> dist(llama_sampler_init_dist(0),
                                                                       &llama_sampler_free);
    Chain chain(b->rows[r], b->vocab, dist.get());
    llama_token_data_array cur{};
    const int64_t selected = ApplyOnce(s, chain.get(), &cur);
    if (selected < 0 || static_cast<uint64_t>(selected) >= cur.size) {
      return NoToken(error, r, selected, cur.size);
    }
    double* row_out = out + r * v;
    std::fill(row_out, row_out + v, 0.0);
    for (size_t i = 0; i < cur.size; ++i) row_out[cur.data[i].id] = cur.data[i].p;
  }
  return SAMPCERT_STATUS_OK;
}

int32_t GetInfo(sampcert_sampler_info* info, sampcert_error* error) {
  // A host of MINOR 0 passes the smaller struct: the fields appended since are then absent.
  if (info == nullptr || info->struct_size < SAMPCERT_SAMPLER_INFO_MINOR1_OFFSET) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "info struct too small");
  }
  const size_t size = info->struct_size;
  std::memset(static_cast<void*>(info), 0, size);
  info->struct_size = size;
  info->name = kName;
  info->version = kVersion;
  info->capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
                       SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_MIN_P |
                       SAMPCERT_CAP_TEMPERATURE_ZERO | SAMPCERT_CAP_PROBABILITIES |
                       SAMPCERT_CAP_BATCH | (kPenalties ? SAMPCERT_CAP_PENALTIES : 0u);
  // Greedy (llama-sampler.cpp, llama_sampler_temp_impl, T <= 0): the first maximum in the
  // candidates' current order survives (strict '>'), the rest become -inf. That order is token
  // order when no truncation step ran, and the order of an unstable sort (std::partial_sort /
  // std::sort in llama_token_data_array_partial_sort*) after top-k or top-p: some tied maximum.
  info->greedy_tie_break = SAMPCERT_GREEDY_ANY;
  // Ties at a cut: top-k keeps exactly k (llama_sampler_top_k_impl: partial sort, then
  // cur_p->size = k); top-p keeps exactly the sorted prefix up to the first cumulative
  // probability >= p (llama_sampler_top_p_apply: last_idx = i + 1; break). Both orders come
  // from unstable sorts, so which tied tokens survive is unspecified: exact, any.
  info->tie_rule = SAMPCERT_TIES_EXACT_ANY;
  // common_params_sampling's default order (common/common.h): ... top_k, typical_p, top_p,
  // min_p, xtc, temperature; then dist. Truncation sees the T = 1 logits.
  info->pipeline_order = SAMPCERT_ORDER_TRUNCATION_FIRST;
  info->truncation_order[0] = SAMPCERT_STEP_TOP_K;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  // llama.cpp has no NaN policy; it is declared to the strict default and the report shows
  // what llama.cpp does instead (it returns a token).
  info->nan_policy = SAMPCERT_NAN_ERROR;
  info->greedy_threshold = 0.0f;
  // std::mt19937 is specified bit for bit, but std::uniform_real_distribution is not: one
  // build and platform only.
  info->determinism = SAMPCERT_DETERMINISM_SAME_SEED;
  info->accuracy = SAMPCERT_ACCURACY_F32;       // float expf and sums (double in dist)
  info->thread_safe = 1;                        // no shared mutable state between handles
  if (size >= sizeof(sampcert_sampler_info)) {  // MINOR 1
    info->top_k_tie_rule = SAMPCERT_STEP_TIES_EXACT_ANY;
    info->top_p_tie_rule = SAMPCERT_STEP_TIES_EXACT_ANY;
    info->draw_mode = SAMPCERT_DRAWS_SEQUENTIAL;
    // Measured (README): one draw, the whole chain on a fresh copy of V = 50,001 candidates,
    // about 12 ns per token.
    info->draw_cost_ns_per_token = 12.0f;
    // The variant (README "The penalties variant"): one penalties sampler, one window, for all
    // three penalties, and llama-server (tools/server/server-context.cpp, init_sampler) and
    // llama-completion accept every prompt token into it before the first generated one.
    if (kPenalties) {
      info->repetition_history = SAMPCERT_HISTORY_PROMPT_AND_OUTPUT;
      info->additive_history = SAMPCERT_HISTORY_PROMPT_AND_OUTPUT;
    }
  }
  return SAMPCERT_STATUS_OK;
}

int32_t Create(const char* config, sampcert_sampler** out, sampcert_error* error) {
  if (out == nullptr) {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "no output handle");
  }
  *out = nullptr;
  // The declaration (get_info) is per library, not per handle, so a configuration that changed
  // a policy (the pipeline order, say) would be certified against the wrong declaration.
  if (config != nullptr && config[0] != '\0') {
    return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "llama.cpp plug-in: unknown config '%.200s' (it takes none: llama.cpp's default "
                "chain %stop_k, top_p, min_p, temp, dist)",
                config, kPenalties ? "penalties, " : "");
  }
  try {
    *out = new sampcert_sampler();
    return SAMPCERT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    return Fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "out of memory");
  }
}

void Destroy(sampcert_sampler* s) { delete s; }

// Everything crossing the boundary is caught here.
template <typename F>
int32_t Guard(sampcert_error* error, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "out of memory");
  } catch (const std::exception& e) {
    return Fail(error, SAMPCERT_STATUS_INTERNAL, -1, "llama.cpp threw: %.900s", e.what());
  } catch (...) {
    return Fail(error, SAMPCERT_STATUS_INTERNAL, -1, "llama.cpp threw a non-standard exception");
  }
}

int32_t Sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out, sampcert_error* error) {
  if (s == nullptr) return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "no sampler");
  return Guard(error,
               [&] { return SampleRows(s, b, seed, first_draw, draws_per_row, out, error); });
}

int32_t Probabilities(sampcert_sampler* s, const sampcert_batch* b, double* out,
                      sampcert_error* error) {
  if (s == nullptr) return Fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "no sampler");
  return Guard(error, [&] { return ProbabilityRows(s, b, out, error); });
}

int32_t GetInfoGuarded(sampcert_sampler_info* info, sampcert_error* error) {
  return Guard(error, [&] { return GetInfo(info, error); });
}

int32_t CreateGuarded(const char* config, sampcert_sampler** out, sampcert_error* error) {
  return Guard(error, [&] { return Create(config, out, error); });
}

void DestroyGuarded(sampcert_sampler* s) {
  try {
    Destroy(s);
  } catch (...) {  // nothing can be reported from destroy; never let it cross the boundary
  }
}

const sampcert_sampler_api kApi = {
    sizeof(sampcert_sampler_api),
    SAMPCERT_ABI_VERSION_MAJOR,
    SAMPCERT_ABI_VERSION_MINOR,
    GetInfoGuarded,
    CreateGuarded,
    DestroyGuarded,
    Probabilities,
    Sample,
    nullptr /* no verify */,
};

}  // namespace

extern "C" SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major,
                                                            uint32_t host_minor,
                                                            const sampcert_sampler_api** out) {
  (void)host_minor;  // fields are only ever appended: any MINOR of our MAJOR works
  if (out == nullptr) return SAMPCERT_STATUS_INVALID_ARGUMENT;
  *out = nullptr;
  if (host_major != SAMPCERT_ABI_VERSION_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = &kApi;
  return SAMPCERT_STATUS_OK;
}
