/* The sampcert sampler ABI: the one boundary every sampler crosses, built-in or third-party.
 *
 * Pure C (C99 and later, C++ too). A plug-in is a shared library that exports
 * sampcert_get_sampler_api(); it returns a table of function pointers after a version check.
 *
 * VERSIONING (the PJRT / OpenXR rules)
 * - SAMPCERT_ABI_VERSION_MAJOR changes when anything existing changes meaning, type, size or
 *   position. A host refuses a plug-in of another MAJOR, and a plug-in refuses a host of another
 *   MAJOR (sampcert_get_sampler_api returns SAMPCERT_STATUS_VERSION_MISMATCH).
 * - SAMPCERT_ABI_VERSION_MINOR changes when fields are appended to the end of a struct, or
 *   constants are added. Never reordered, never removed, never resized.
 * - Every struct starts with `size_t struct_size`, set by whoever fills the struct to the size
 *   it was compiled with (SAMPCERT_<NAME>_STRUCT_SIZE). A reader must check that struct_size
 *   covers a field before reading a field appended after MINOR 0, and treat fields past
 *   struct_size as absent (zero).
 * - Structs hold only fixed-width integers, float, double, size_t and pointers: no C enums,
 *   no bool, no long double. Their layout is pinned by static assertions at the end of this
 *   header, so a reorder fails the build.
 *
 * ERRORS are values: every call returns a status (0 = OK) and fills a caller-owned
 * sampcert_error with the code and a NUL-terminated message. Nothing throws across this
 * boundary; a C++ plug-in must catch everything before returning.
 *
 * OWNERSHIP: every pointer's owner and lifetime is documented where it is declared. In short,
 * the caller owns every input and output buffer, for the duration of the call only; the plug-in
 * owns its info strings (for as long as the library is loaded) and its handles (until
 * destroy). Error messages live inside the caller's sampcert_error: no allocation, no lifetime.
 *
 * SEMANTICS are those of SPEC.md (section numbers are cited below).
 */
#ifndef SAMPCERT_SAMPLER_ABI_H_
#define SAMPCERT_SAMPLER_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SAMPCERT_ABI_VERSION_MAJOR 1u
/* MINOR 1 appended to sampcert_sampler_info: per-step tie rules (top_k_tie_rule, top_p_tie_rule),
 * draw_mode (sequential-only samplers) and draw_cost_ns_per_token; added SAMPCERT_GREEDY_ANY. */
/* MINOR 2 appended sampcert_sampler_api.verify (speculative-decoding verification, SPEC section
 * 15) with SAMPCERT_CAP_VERIFY, the structs sampcert_chain and sampcert_chain_batch, and
 * SAMPCERT_STATUS_INVALID_DRAFT. */
/* MINOR 3 appended to sampcert_chain_batch: draft rows given as logits with their own sampling
 * parameters and dtype (draft_dtype, draft_rows; SAMPCERT_CAP_VERIFY_DRAFT_LOGITS) and the
 * acceptance probabilities as an output (out_acceptance; SAMPCERT_CAP_VERIFY_ACCEPTANCE); and to
 * sampcert_sampler_info: a lossy acceptance scheme, declared with its parameters (verify_scheme,
 * verify_threshold, verify_alpha; SAMPCERT_VERIFY_*, SPEC VER-DEV-1). */
/* MINOR 4 appended to sampcert_row: the token history and its penalties (prompt_tokens,
 * output_tokens, repetition_penalty, presence_penalty, frequency_penalty; SPEC section 16) with
 * SAMPCERT_CAP_PENALTIES and SAMPCERT_STATUS_INVALID_PENALTY; and to sampcert_sampler_info: the
 * history each penalty rule sees (repetition_history, additive_history; SAMPCERT_HISTORY_*).
 * sampcert_batch.rows is an array, so a row's size is its stride: a host passes a plug-in of
 * MINOR 0..3 its rows at the MINOR 3 layout (struct_size 56, the array's stride), which is what
 * such a plug-in indexes them by, and a row with a penalty on to such a plug-in is
 * SAMPCERT_STATUS_UNSUPPORTED at the host. A MINOR 4 plug-in refuses rows whose struct_size is
 * smaller than its own (an older host's) with SAMPCERT_STATUS_INVALID_ARGUMENT. */
/* MINOR 5 appended to sampcert_row: a per-request seed (seed, seed_mode; SPEC section 17) with
 * SAMPCERT_CAP_SEEDS and SAMPCERT_SEED_*. seed_mode 0 (SAMPCERT_SEED_CALL, and what a row of an
 * older layout reads as) keys the row's draws by the call's seed, as before; 1
 * (SAMPCERT_SEED_OWN) by the row's own `seed`; 2 (SAMPCERT_SEED_UNSEEDED) by the engine's own
 * generator. A host passes a MINOR 4 plug-in its rows at the MINOR 4 layout (104 bytes), and a
 * row with seed_mode != 0 to a plug-in of MINOR < 5 or without SAMPCERT_CAP_SEEDS is
 * SAMPCERT_STATUS_UNSUPPORTED at the host. */
/* MINOR 6 appended to sampcert_row: a logit bias per token (bias_tokens, bias_values, num_bias;
 * SPEC section 18) with SAMPCERT_CAP_LOGIT_BIAS, a minimum length that bans one id (min_tokens,
 * eos_token_id) with SAMPCERT_CAP_MIN_TOKENS, and SAMPCERT_STATUS_INVALID_LOGIT_BIAS. A host
 * passes a MINOR 5 plug-in its rows at the MINOR 5 layout (120 bytes), and a row with a bias or
 * a minimum length to a plug-in of MINOR < 6 or without the capability is
 * SAMPCERT_STATUS_UNSUPPORTED at the host. */
/* MINOR 7 appended to sampcert_row: the mask as packed words (packed_mask, mask_layout; SPEC
 * section 19) with SAMPCERT_CAP_PACKED_MASK and SAMPCERT_MASK_*: ceil(V / 32) uint32_t words, bit
 * i of word j (value 1u << i) is token 32 j + i, the layout of xgrammar's and llguidance's token
 * bitmasks. A host passes a MINOR 6 plug-in its rows at the MINOR 6 layout (160 bytes), and a
 * row whose mask_layout is SAMPCERT_MASK_PACKED to a plug-in of MINOR < 7 or without the
 * capability is SAMPCERT_STATUS_UNSUPPORTED at the host. */
/* MINOR 8 appended to sampcert_batch: log-probabilities of the drawn tokens (logprob_mode,
 * top_logprobs and three output buffers; SPEC section 20) with SAMPCERT_CAP_LOGPROBS_RAW, _SCALED
 * and _PROCESSED (one per mode the sampler can return) and SAMPCERT_LOGPROBS_*. A host asks a
 * plug-in of MINOR < 8, or one without the mode's capability, for no log-probabilities (the
 * request is SAMPCERT_STATUS_UNSUPPORTED at the host). */
#define SAMPCERT_ABI_VERSION_MINOR 8u

#if defined(_WIN32)
#define SAMPCERT_EXPORT __declspec(dllexport)
#else
#define SAMPCERT_EXPORT __attribute__((visibility("default")))
#endif

/* ---- Status codes (int32_t). 1..9 are SPEC.md section 5's invalid-input codes. ---- */
#define SAMPCERT_STATUS_OK 0
#define SAMPCERT_STATUS_INVALID_TEMPERATURE 1 /* INV-1 */
#define SAMPCERT_STATUS_INVALID_TOP_K 2       /* INV-2 */
#define SAMPCERT_STATUS_INVALID_TOP_P 3       /* INV-3 */
#define SAMPCERT_STATUS_INVALID_MIN_P 4       /* INV-4 */
#define SAMPCERT_STATUS_NAN_LOGIT 5           /* INV-5 */
#define SAMPCERT_STATUS_EMPTY_SUPPORT 6       /* INV-6 */
#define SAMPCERT_STATUS_EMPTY_VOCAB 7         /* INV-7 */
#define SAMPCERT_STATUS_INVALID_ARGUMENT 8    /* INV-0: malformed call */
#define SAMPCERT_STATUS_INTERNAL 9            /* a bug in the sampler */
#define SAMPCERT_STATUS_NUMERICAL_FAILURE 10  /* valid input the sampler could not handle */
#define SAMPCERT_STATUS_UNSUPPORTED 11        /* a capability the sampler did not declare */
#define SAMPCERT_STATUS_VERSION_MISMATCH 12   /* host and plug-in MAJOR differ */
#define SAMPCERT_STATUS_OUT_OF_MEMORY 13
#define SAMPCERT_STATUS_INVALID_DRAFT 14   /* MINOR 2, VER-INV-1: a draft that is no distribution */
#define SAMPCERT_STATUS_INVALID_PENALTY 15 /* MINOR 4, INV-8: a penalty or history id */
/* MINOR 6, INV-9: a bias (NaN, an id out of range or repeated) or a minimum length's id */
#define SAMPCERT_STATUS_INVALID_LOGIT_BIAS 16

/* ---- Dtypes (SPEC IN-1). Logits are bit patterns: uint32_t for F32, uint16_t otherwise. ---- */
#define SAMPCERT_DTYPE_F32 0
#define SAMPCERT_DTYPE_F16 1
#define SAMPCERT_DTYPE_BF16 2

/* ---- Capabilities (SPEC CAP-1), bits of sampcert_sampler_info.capabilities. ---- */
#define SAMPCERT_CAP_F32 (1u << 0)
#define SAMPCERT_CAP_F16 (1u << 1)
#define SAMPCERT_CAP_BF16 (1u << 2)
#define SAMPCERT_CAP_MASK (1u << 3)
#define SAMPCERT_CAP_TOP_K (1u << 4)
#define SAMPCERT_CAP_TOP_P (1u << 5)
#define SAMPCERT_CAP_MIN_P (1u << 6)
#define SAMPCERT_CAP_TEMPERATURE_ZERO (1u << 7)
#define SAMPCERT_CAP_PROBABILITIES (1u << 8) /* the probabilities call is implemented */
#define SAMPCERT_CAP_BATCH (1u << 9)         /* accepts num_rows > 1 */
#define SAMPCERT_CAP_VERIFY (1u << 10)       /* MINOR 2: the verify call is implemented */
/* MINOR 3: verify also takes draft rows as logits (sampcert_chain_batch.draft_rows). */
#define SAMPCERT_CAP_VERIFY_DRAFT_LOGITS (1u << 11)
/* MINOR 3: verify writes the acceptance probabilities (sampcert_chain_batch.out_acceptance). */
#define SAMPCERT_CAP_VERIFY_ACCEPTANCE (1u << 12)
/* MINOR 4: the sampler reads the rows' history and applies the three penalties (PEN-CAP-1). */
#define SAMPCERT_CAP_PENALTIES (1u << 13)
/* MINOR 5: the sampler reads the rows' seed_mode and seed (SEED-CAP-1). */
#define SAMPCERT_CAP_SEEDS (1u << 14)
/* MINOR 6: the sampler reads the rows' bias_tokens and bias_values (BIAS-CAP-1). */
#define SAMPCERT_CAP_LOGIT_BIAS (1u << 15)
/* MINOR 6: the sampler reads min_tokens and eos_token_id (MINLEN-CAP-1). */
#define SAMPCERT_CAP_MIN_TOKENS (1u << 16)
/* MINOR 7: the sampler reads masks given as packed words (packed_mask; PMASK-CAP-1). */
#define SAMPCERT_CAP_PACKED_MASK (1u << 17)
/* MINOR 8: sample() writes the drawn tokens' log-probabilities in a mode (LOGP-CAP-1): the raw
 * logits' log-softmax, after temperature, or of the distribution drawn from. */
#define SAMPCERT_CAP_LOGPROBS_RAW (1u << 18)
#define SAMPCERT_CAP_LOGPROBS_SCALED (1u << 19)
#define SAMPCERT_CAP_LOGPROBS_PROCESSED (1u << 20)

/* MINOR 7: how a row's mask is given (sampcert_row.mask_layout; SPEC section 19). */
#define SAMPCERT_MASK_BYTES 0  /* `mask`: vocab bytes, nonzero = allowed (packed_mask NULL) */
#define SAMPCERT_MASK_PACKED 1 /* `packed_mask`: ceil(vocab / 32) words (`mask` NULL) */

/* MINOR 8: the log-probabilities a sample() call asks for (sampcert_batch.logprob_mode; SPEC
 * section 20). */
#define SAMPCERT_LOGPROBS_NONE 0      /* no log-probabilities (the buffers are NULL) */
#define SAMPCERT_LOGPROBS_RAW 1       /* log-softmax of the logits as given, over all V tokens */
#define SAMPCERT_LOGPROBS_SCALED 2    /* log p after the mask, bias, penalties and temperature */
#define SAMPCERT_LOGPROBS_PROCESSED 3 /* log p of the distribution drawn from (truncated) */

/* ---- Policies (SPEC section 4); values equal the C++ enums of sampcert/policies.h. ---- */
#define SAMPCERT_GREEDY_UNIFORM 0
#define SAMPCERT_GREEDY_LOWEST_INDEX 1
#define SAMPCERT_GREEDY_ANY 2 /* MINOR 1: some tied maximum, not necessarily uniform or lowest */
#define SAMPCERT_TIES_KEEP_ALL 0
#define SAMPCERT_TIES_EXACT_LOWEST_INDEX 1
#define SAMPCERT_TIES_EXACT_ANY 2
#define SAMPCERT_ORDER_TEMPERATURE_FIRST 0
#define SAMPCERT_ORDER_TRUNCATION_FIRST 1
#define SAMPCERT_STEP_TOP_K 0
#define SAMPCERT_STEP_TOP_P 1
#define SAMPCERT_STEP_MIN_P 2
#define SAMPCERT_NAN_ERROR 0
#define SAMPCERT_NAN_MASKED 1
#define SAMPCERT_DETERMINISM_NONE 0
#define SAMPCERT_DETERMINISM_SAME_SEED 1
#define SAMPCERT_DETERMINISM_CROSS_DEVICE 2
#define SAMPCERT_ACCURACY_F32 0
#define SAMPCERT_ACCURACY_BF16 1
#define SAMPCERT_ACCURACY_F16 2
/* MINOR 1: the tie rule of one truncation step (top_k_tie_rule, top_p_tie_rule). 0 keeps the
 * value of tie_rule, so a MINOR 0 plug-in (whose struct ends before these fields) reads as 0. */
#define SAMPCERT_STEP_TIES_AS_DECLARED 0
#define SAMPCERT_STEP_TIES_KEEP_ALL 1
#define SAMPCERT_STEP_TIES_EXACT_LOWEST_INDEX 2
#define SAMPCERT_STEP_TIES_EXACT_ANY 3
/* MINOR 1: how the sampler can be asked for draws (draw_mode). */
#define SAMPCERT_DRAWS_RANDOM_ACCESS 0 /* any first_draw, any order (DRAW-1) */
#define SAMPCERT_DRAWS_SEQUENTIAL 1    /* a stateful stream per (seed, row_id) per handle */
/* MINOR 3: the verifier's acceptance scheme (verify_scheme; SPEC VER-SEM-1 and VER-DEV-1). */
#define SAMPCERT_VERIFY_EXACT 0 /* min(1, p / q), the residual on rejection: exact */
/* Typical acceptance (Medusa, Cai et al. 2024; vLLM's TypicalAcceptanceSampler): d_j accepted
 * iff p_j(d_j) > min(verify_threshold, verify_alpha * exp(-H(p_j))), H in nats. Lossy. */
#define SAMPCERT_VERIFY_TYPICAL 1
/* Lenient acceptance (Leviathan et al. 2023, appendix A.5): d_j accepted with probability
 * min(1, p_j(d_j) / (verify_threshold * q_j(d_j))), lenience verify_threshold in (0, 1) (1 is
 * exact). Lossy. */
#define SAMPCERT_VERIFY_LENIENT 2
/* MINOR 4: the history a penalty rule sees (repetition_history, additive_history; PEN-POL-1). */
#define SAMPCERT_HISTORY_PROMPT_AND_OUTPUT 0
#define SAMPCERT_HISTORY_OUTPUT_ONLY 1
/* The sampler has no such rule (Hugging Face's transformers has no presence or frequency
 * penalty): a row asking for it is NotSupported, never sent (PEN-POL-1). New with MINOR 8's
 * header; an older host refuses the value as unknown. */
#define SAMPCERT_HISTORY_NONE 2
/* MINOR 5: what keys a row's draws (sampcert_row.seed_mode; SPEC section 17). */
#define SAMPCERT_SEED_CALL 0     /* the call's seed, with row_id and the draw index (DRAW-1) */
#define SAMPCERT_SEED_OWN 1      /* the row's own seed, with row_id and the draw index (SEED-1) */
#define SAMPCERT_SEED_UNSEEDED 2 /* the engine's own generator: any correct draw (SEED-3) */

#define SAMPCERT_ERROR_MESSAGE_CAPACITY 1024

/* An error, filled by the sampler. Owned by the caller, who sets struct_size before the call;
 * the sampler writes code, row and a NUL-terminated message (truncated to fit). */
typedef struct sampcert_error {
  size_t struct_size;
  int32_t code; /* SAMPCERT_STATUS_*; equal to the call's return value */
  int32_t reserved0;
  int64_t row; /* the offending row's index in the batch, or -1 if not row-specific */
  char message[SAMPCERT_ERROR_MESSAGE_CAPACITY]; /* e.g. "row 3: top_p is 1.5 (...)" */
} sampcert_error;

/* What a sampler is and declares. Filled by the plug-in into a caller-owned struct. */
typedef struct sampcert_sampler_info {
  size_t struct_size;
  /* NUL-terminated, owned by the plug-in, valid while the library stays loaded; at most 256
   * bytes each (SPEC TEXT-1: a longer one is refused when the sampler is opened). */
  const char* name;
  const char* version;
  uint32_t capabilities;       /* SAMPCERT_CAP_* bits */
  int32_t greedy_tie_break;    /* SAMPCERT_GREEDY_* (POL-1) */
  int32_t tie_rule;            /* SAMPCERT_TIES_* (POL-2) */
  int32_t pipeline_order;      /* SAMPCERT_ORDER_* (POL-3) */
  int32_t truncation_order[3]; /* a permutation of SAMPCERT_STEP_* (POL-3) */
  int32_t nan_policy;          /* SAMPCERT_NAN_* (POL-4) */
  float greedy_threshold;      /* POL-5; 0 = none */
  int32_t determinism;         /* SAMPCERT_DETERMINISM_* (POL-6) */
  int32_t accuracy;            /* SAMPCERT_ACCURACY_* (ACC-1) */
  int32_t thread_safe;         /* 1: calls on different handles may run concurrently */
  int32_t reserved0;
  /* ---- MINOR 1 (read only where struct_size covers them; absent reads as 0). ---- */
  int32_t top_k_tie_rule; /* SAMPCERT_STEP_TIES_*: POL-2 at the top-k cut */
  int32_t top_p_tie_rule; /* SAMPCERT_STEP_TIES_*: POL-2 at the top-p cut */
  /* SAMPCERT_DRAWS_*. SEQUENTIAL: one row per call, and for each (seed, row_id) the host's
   * first_draw is either 0, which starts the stream afresh (seeded from seed and row_id), or
   * exactly the stream's position on this handle, which continues it (POL-7). */
  uint32_t draw_mode;
  /* The declared cost of one draw divided by the vocabulary size, in nanoseconds (0 = not
   * declared, cheap). The plan caps a slow sampler's draws from it (SPEC STAT-6). */
  float draw_cost_ns_per_token;
  /* The tail padding of a MINOR 1 or 2 struct (its sizeof is 96): never read. */
  int32_t reserved2;
  /* ---- MINOR 3 (read only where struct_size covers them; absent reads as 0, exact). ---- */
  /* SAMPCERT_VERIFY_*: the acceptance scheme of verify (with SAMPCERT_CAP_VERIFY). A lossy
   * scheme is a declared deviation: the family reports its distance from p_j as a Warning. */
  int32_t verify_scheme;
  float verify_threshold; /* typical: the posterior threshold epsilon; lenient: the lenience */
  float verify_alpha;     /* typical: the posterior alpha delta; otherwise 0 */
  int32_t reserved1;
  /* ---- MINOR 4 (read only where struct_size covers them; absent reads as 0). ---- */
  int32_t repetition_history; /* SAMPCERT_HISTORY_*: what the repetition rule sees (PEN-POL-1) */
  int32_t additive_history;   /* SAMPCERT_HISTORY_*: what presence and frequency see */
} sampcert_sampler_info;

/* One row (SPEC section 2). Filled by the caller. */
typedef struct sampcert_row {
  size_t struct_size;
  /* vocab logits of the batch's dtype. Owned by the caller, valid during the call. */
  const void* logits;
  /* NULL (all allowed) or vocab bytes, nonzero = allowed. Owned by the caller, valid during
   * the call. */
  const uint8_t* mask;
  float temperature; /* >= 0; 0 is the greedy limit */
  float top_p;       /* (0, 1]; 1 = off */
  float min_p;       /* [0, 1); 0 = off */
  int32_t reserved0;
  int64_t top_k;   /* >= 0; 0 = off */
  uint64_t row_id; /* keys the row's random stream (DRAW-1); independent of batch position */
  /* ---- MINOR 4 (SPEC section 16; read only where struct_size covers them, absent: no
   * history, no penalty). Only to a sampler declaring SAMPCERT_CAP_PENALTIES. ---- */
  /* num_prompt_tokens ids in [0, vocab) (NULL when 0): the prompt's tokens. Owned by the
   * caller, valid during the call. */
  const int64_t* prompt_tokens;
  /* num_output_tokens ids in [0, vocab) (NULL when 0): the tokens generated so far, in order.
   * Owned by the caller, valid during the call. */
  const int64_t* output_tokens;
  uint64_t num_prompt_tokens;
  uint64_t num_output_tokens;
  float repetition_penalty; /* PEN-2: finite, > 0; 1 = off, and 0 reads as 1 (off) */
  float presence_penalty;   /* PEN-3 beta: finite; 0 = off */
  float frequency_penalty;  /* PEN-3 alpha: finite; 0 = off */
  int32_t reserved1;
  /* ---- MINOR 5 (SPEC section 17; read only where struct_size covers them, absent: 0, the
   * call's seed). seed_mode != 0 only to a sampler declaring SAMPCERT_CAP_SEEDS. ---- */
  uint64_t seed;     /* the row's own seed; read only when seed_mode is SAMPCERT_SEED_OWN */
  int64_t seed_mode; /* SAMPCERT_SEED_*: 0 the call's seed, 1 `seed`, 2 unseeded */
  /* ---- MINOR 6 (SPEC section 18; read only where struct_size covers them, absent: no bias,
   * no minimum length). A bias only to a sampler declaring SAMPCERT_CAP_LOGIT_BIAS, a minimum
   * length only to one declaring SAMPCERT_CAP_MIN_TOKENS. ---- */
  /* num_bias distinct ids in [0, vocab) (NULL when 0), and their biases (not NaN; -inf bans the
   * token), added to the logits before the penalties (BIAS-1). Owned by the caller, valid during
   * the call. */
  const int64_t* bias_tokens;
  const float* bias_values;
  uint64_t num_bias;
  /* MINLEN-1: while num_output_tokens < min_tokens, eos_token_id is banned. min_tokens >= 0
   * (0 = off); eos_token_id in [0, vocab), read only when min_tokens > 0. */
  int64_t min_tokens;
  int64_t eos_token_id;
  /* ---- MINOR 7 (SPEC section 19; read only where struct_size covers them, absent: the bytes
   * of `mask`). SAMPCERT_MASK_PACKED only to a sampler declaring SAMPCERT_CAP_PACKED_MASK. ---- */
  /* With mask_layout SAMPCERT_MASK_PACKED: NULL (all allowed) or ceil(vocab / 32) words, token
   * t allowed iff (packed_mask[t / 32] >> (t % 32)) & 1; the last word's bits past vocab are
   * padding, of any value, and never tokens (PMASK-2). `mask` is then NULL. Owned by the caller,
   * valid during the call. */
  const uint32_t* packed_mask;
  int64_t mask_layout; /* SAMPCERT_MASK_*: 0 bytes (`mask`), 1 packed words (`packed_mask`) */
} sampcert_row;

/* A batch of rows sharing dtype and vocabulary size. Filled by the caller. */
typedef struct sampcert_batch {
  size_t struct_size;
  int32_t dtype; /* SAMPCERT_DTYPE_* */
  int32_t reserved0;
  uint64_t vocab;    /* V >= 1 */
  uint64_t num_rows; /* >= 1; > 1 only with SAMPCERT_CAP_BATCH */
  /* num_rows rows. Owned by the caller, valid during the call. */
  const sampcert_row* rows;
  /* ---- MINOR 8 (SPEC section 20; read only where struct_size covers them, absent: none).
   * Only in sample(), and a mode only to a sampler declaring its SAMPCERT_CAP_LOGPROBS_*. ---- */
  int32_t logprob_mode; /* SAMPCERT_LOGPROBS_*: 0 none (every field below 0 or NULL) */
  int32_t reserved1;
  uint64_t top_logprobs; /* n >= 0: also each row's n most probable tokens in the mode */
  /* num_rows x draws_per_row caller-owned doubles, the call's outputs: out_logprobs[r * draws +
   * j] is the log-probability, in the mode, of the token written to out[r * draws + j] (-inf for
   * a token outside the mode's support). */
  double* out_logprobs;
  /* num_rows x n each (NULL when n is 0): row r's n most probable tokens in the mode, most
   * probable first (ties in any order), and their log-probabilities; past the mode's support,
   * any remaining tokens with -inf. */
  int64_t* out_top_tokens;
  double* out_top_logprobs;
} sampcert_batch;

/* MINOR 2: one speculative-decoding chain to verify (SPEC section 15). Filled by the caller.
 * k = num_drafts drafted tokens d_1..d_k, each drawn from its draft distribution q_j, against the
 * target rows of positions 1..k+1. */
typedef struct sampcert_chain {
  size_t struct_size;
  uint64_t num_drafts; /* k >= 1 */
  /* k + 1 rows of the batch's dtype and vocab, each with its own sampling parameters (applied
   * exactly as sample() applies them); their row_id fields are not read. Owned by the caller. */
  const sampcert_row* target_rows;
  /* k x vocab probabilities, row-major: q_j(x) = draft_probs[(j - 1) * vocab + x], each row
   * finite, >= 0 and summing to 1 within 1e-9. Owned by the caller, valid during the call.
   * NULL when the batch gives the drafts as logits (draft_rows, MINOR 3). */
  const double* draft_probs;
  /* k token ids: d_j, with q_j(d_j) > 0. Owned by the caller, valid during the call. */
  const int64_t* draft_tokens;
  uint64_t row_id; /* with the call's seed and `draw`, keys the chain's randomness (VER-DET-1) */
  uint64_t draw;   /* the chain's draw number: same (seed, row_id, draw, inputs), same result */
} sampcert_chain;

/* MINOR 2: chains sharing dtype and vocabulary size. Filled by the caller. */
typedef struct sampcert_chain_batch {
  size_t struct_size;
  int32_t dtype; /* SAMPCERT_DTYPE_* */
  int32_t reserved0;
  uint64_t vocab;      /* V >= 1 */
  uint64_t num_chains; /* >= 1 (more than 1 needs no SAMPCERT_CAP_BATCH) */
  uint64_t max_drafts; /* >= every chain's num_drafts: the stride of out_tokens is max_drafts+1 */
  const sampcert_chain* chains;
  /* ---- MINOR 3 (read only where struct_size covers them; absent reads as NULL / 0) ---- */
  int32_t draft_dtype; /* SAMPCERT_DTYPE_* of the draft rows' logits; 0 when draft_rows is NULL */
  int32_t reserved1;
  /* NULL: every chain's drafts are its draft_probs. Otherwise (only to a sampler declaring
   * SAMPCERT_CAP_VERIFY_DRAFT_LOGITS) num_chains pointers: draft_rows[c] is chain c's k draft
   * rows, of draft_dtype and vocab, each with its own sampling parameters (their row_id fields
   * are not read), and chain c's draft_probs is NULL. q_j is then the distribution sample()
   * would draw from on draft row j (SPEC VER-IN-1). Owned by the caller, valid during the call. */
  const sampcert_row* const* draft_rows;
  /* NULL, or (only to a sampler declaring SAMPCERT_CAP_VERIFY_ACCEPTANCE) num_chains x
   * max_drafts caller-owned doubles, the call's one output in this struct: the verifier writes
   * out_acceptance[c * max_drafts + j - 1] = a_j, the probability with which it accepted d_j,
   * min(1, p_j(d_j) / q_j(d_j)), for every position j it decided (1..n + 1 when it rejected at
   * n + 1, 1..k when it accepted all k). Entries past those are not read. */
  double* out_acceptance;
} sampcert_chain_batch;

/* An instance of a sampler; opaque, owned by the plug-in from create until destroy. */
typedef struct sampcert_sampler sampcert_sampler;

typedef struct sampcert_sampler_api {
  size_t struct_size;
  uint32_t abi_major; /* SAMPCERT_ABI_VERSION_MAJOR the plug-in was built with */
  uint32_t abi_minor;

  /* Fills *info (caller-owned; caller sets info->struct_size). Returns a status. */
  int32_t (*get_info)(sampcert_sampler_info* info, sampcert_error* error);

  /* Creates an instance. `config` is a NUL-terminated plug-in-specific string or NULL, owned by
   * the caller and read during the call only. On success *out is a handle owned by the plug-in
   * until destroy. */
  int32_t (*create)(const char* config, sampcert_sampler** out, sampcert_error* error);

  /* Destroys an instance. NULL is a no-op. */
  void (*destroy)(sampcert_sampler* sampler);

  /* Optional (SAMPCERT_CAP_PROBABILITIES; NULL otherwise): writes, for each row r, the
   * distribution the sampler samples from into out[r * vocab .. r * vocab + vocab), in double
   * (exact for any fp32 or narrower value). `out` is caller-owned, num_rows * vocab doubles. */
  int32_t (*probabilities)(sampcert_sampler* sampler, const sampcert_batch* batch, double* out,
                           sampcert_error* error);

  /* Draws for every row: out[r * draws_per_row + j] is the token of row r's draw number
   * first_draw + j under `seed` (the canonical draw's j, DRAW-1). `out` is caller-owned,
   * num_rows * draws_per_row entries. On error nothing in `out` is meaningful, and no row
   * produced a token: invalid input anywhere in the batch fails the call, naming the row. */
  int32_t (*sample)(sampcert_sampler* sampler, const sampcert_batch* batch, uint64_t seed,
                    uint64_t first_draw, uint64_t draws_per_row, int64_t* out,
                    sampcert_error* error);

  /* ---- MINOR 2 (read only where struct_size covers it) ---- */
  /* Optional (SAMPCERT_CAP_VERIFY; NULL otherwise): verifies every chain c of the batch.
   * out_accepted[c] is the number of drafted tokens accepted, n in [0, k], and
   * out_tokens[c * (max_drafts + 1) + j] for j = 0..n the emitted tokens: d_1..d_n, then the
   * token of position n + 1 (drawn from the residual after a rejection, or the bonus token from
   * the last target row when all k were accepted). Entries past n are not read. Both buffers
   * are caller-owned. On error nothing in them is meaningful; invalid input anywhere fails the
   * call, naming the chain in error->row. */
  int32_t (*verify)(sampcert_sampler* sampler, const sampcert_chain_batch* batch, uint64_t seed,
                    int64_t* out_accepted, int64_t* out_tokens, sampcert_error* error);
} sampcert_sampler_api;

/* The one exported entry point of a plug-in: negotiates the version and returns the table.
 * The host passes the MAJOR/MINOR it was built with. On success *out points to a table owned by
 * the plug-in, valid while the library stays loaded. Returns SAMPCERT_STATUS_VERSION_MISMATCH
 * (and leaves *out NULL) when host_major differs from the plug-in's MAJOR. */
typedef int32_t (*sampcert_get_sampler_api_fn)(uint32_t host_major, uint32_t host_minor,
                                               const sampcert_sampler_api** out);
#define SAMPCERT_ENTRY_POINT "sampcert_get_sampler_api"

/* Struct sizes of this MINOR, for struct_size. */
#define SAMPCERT_ERROR_STRUCT_SIZE sizeof(sampcert_error)
#define SAMPCERT_SAMPLER_INFO_STRUCT_SIZE sizeof(sampcert_sampler_info)
/* Where the MINOR 1 fields of the info struct start. A MINOR 0 plug-in sets struct_size to 80
 * (its sizeof, tail padding included), which covers top_k_tie_rule's offset but not the pair of
 * tie rules: the host reads a MINOR 1 field only where struct_size covers it and its group
 * (both tie rules, 84 bytes; draw_mode, 88; draw_cost_ns_per_token, 92). */
#define SAMPCERT_SAMPLER_INFO_MINOR1_OFFSET offsetof(sampcert_sampler_info, top_k_tie_rule)
/* Where the MINOR 3 fields start: past a MINOR 1 or 2 struct's sizeof (96, reserved2 is its
 * tail padding), so that no older plug-in's struct_size covers them. */
#define SAMPCERT_SAMPLER_INFO_MINOR3_OFFSET offsetof(sampcert_sampler_info, verify_scheme)
#define SAMPCERT_ROW_STRUCT_SIZE sizeof(sampcert_row)
/* A MINOR 0..3 row ends before prompt_tokens (56 bytes): the layout and stride a host gives a
 * plug-in of those MINORs. */
#define SAMPCERT_ROW_MINOR3_STRUCT_SIZE offsetof(sampcert_row, prompt_tokens)
/* A MINOR 4 row ends before seed (104 bytes): the layout and stride a host gives a MINOR 4
 * plug-in. */
#define SAMPCERT_ROW_MINOR4_STRUCT_SIZE offsetof(sampcert_row, seed)
/* A MINOR 5 row ends before bias_tokens (120 bytes): the layout and stride a host gives a
 * MINOR 5 plug-in. */
#define SAMPCERT_ROW_MINOR5_STRUCT_SIZE offsetof(sampcert_row, bias_tokens)
/* A MINOR 6 row ends before packed_mask (160 bytes): the layout and stride a host gives a
 * MINOR 6 plug-in. */
#define SAMPCERT_ROW_MINOR6_STRUCT_SIZE offsetof(sampcert_row, packed_mask)
/* Where the MINOR 4 fields of the info struct start. */
#define SAMPCERT_SAMPLER_INFO_MINOR4_OFFSET offsetof(sampcert_sampler_info, repetition_history)
#define SAMPCERT_BATCH_STRUCT_SIZE sizeof(sampcert_batch)
/* A MINOR 0..7 batch ends before logprob_mode (40 bytes). */
#define SAMPCERT_BATCH_MINOR7_STRUCT_SIZE offsetof(sampcert_batch, logprob_mode)
#define SAMPCERT_SAMPLER_API_STRUCT_SIZE sizeof(sampcert_sampler_api)
/* The table of a MINOR 0 or 1 plug-in ends before verify. */
#define SAMPCERT_SAMPLER_API_MINOR0_STRUCT_SIZE offsetof(sampcert_sampler_api, verify)
#define SAMPCERT_CHAIN_STRUCT_SIZE sizeof(sampcert_chain)
#define SAMPCERT_CHAIN_BATCH_STRUCT_SIZE sizeof(sampcert_chain_batch)
/* A MINOR 2 chain batch ends before draft_dtype. */
#define SAMPCERT_CHAIN_BATCH_MINOR2_STRUCT_SIZE offsetof(sampcert_chain_batch, draft_dtype)

/* ---- Layout pins (LP64: x86-64 and aarch64 Linux). A failure here means an ABI break. ---- */
#if defined(__cplusplus)
#define SAMPCERT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define SAMPCERT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#if UINTPTR_MAX == 0xffffffffffffffffu
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_error, code) == 8, "sampcert_error layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_error, row) == 16, "sampcert_error layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_error, message) == 24, "sampcert_error layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_error) == 1048, "sampcert_error size");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, name) == 8, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, capabilities) == 24, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, truncation_order) == 40, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, greedy_threshold) == 56, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, thread_safe) == 68, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, top_k_tie_rule) == 76, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, draw_mode) == 84, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, draw_cost_ns_per_token) == 88,
                       "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, verify_scheme) == 96, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, verify_alpha) == 104, "info layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_info, repetition_history) == 112, "info layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_sampler_info) == 120, "info size");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, logits) == 8, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, mask) == 16, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, temperature) == 24, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, top_k) == 40, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, row_id) == 48, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, prompt_tokens) == 56, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, num_prompt_tokens) == 72, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, repetition_penalty) == 88, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, seed) == 104, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, seed_mode) == 112, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, bias_tokens) == 120, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, num_bias) == 136, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, min_tokens) == 144, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, eos_token_id) == 152, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, packed_mask) == 160, "row layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_row, mask_layout) == 168, "row layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_row) == 176, "row size");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_batch, dtype) == 8, "batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_batch, vocab) == 16, "batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_batch, rows) == 32, "batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_batch, logprob_mode) == 40, "batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_batch, out_logprobs) == 56, "batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_batch, out_top_logprobs) == 72, "batch layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_batch) == 80, "batch size");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_api, abi_major) == 8, "api layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_api, get_info) == 16, "api layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_api, sample) == 48, "api layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_sampler_api, verify) == 56, "api layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_sampler_api) == 64, "api size");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain, target_rows) == 16, "chain layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain, row_id) == 40, "chain layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_chain) == 56, "chain size");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain_batch, vocab) == 16, "chain batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain_batch, chains) == 40, "chain batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain_batch, draft_dtype) == 48, "chain batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain_batch, draft_rows) == 56, "chain batch layout");
SAMPCERT_STATIC_ASSERT(offsetof(sampcert_chain_batch, out_acceptance) == 64, "chain batch layout");
SAMPCERT_STATIC_ASSERT(sizeof(sampcert_chain_batch) == 72, "chain batch size");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SAMPCERT_SAMPLER_ABI_H_ */
