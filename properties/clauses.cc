#include "properties/clauses.h"

#include <array>
#include <stdexcept>

namespace sampcert::properties {
namespace {

// One row per promise, in SPEC's order. Evidence: the planned inputs where a violation is
// decisive; the mutant catalogue (tests/mutants/) holds a defect caught on most of them.
constexpr Clause kClauses[] = {
    // --- 2. Inputs ---
    {.id = "IN-1.bits",
     .promise = "logits reach the sampler as bit patterns: +-0, subnormals, the dtype's extremes, "
                "+-inf, NaN",
     .evidence = "design:logit.pos_zero design:logit.neg_zero design:logit.min_subnormal "
                 "design:logit.max_normal design:logit.neg_max_normal design:logit.pos_inf "
                 "design:logit.neg_inf design:logit.nan_masked"},
    {.id = "IN-1.dtype",
     .promise =
         "f16 and bf16 logits are exact values: a half row and an f32 row of the same values "
         "have one distribution",
     .evidence = "design:dtype.f16 design:dtype.bf16 row:near_ties_V16 row:overflow_shape "
                 "row:rounding_probe_V2"},
    {.id = "IN-2.neg_zero",
     .promise = "T = -0.0 is T = 0 (the greedy limit)",
     .evidence = "design:temperature.neg_zero"},
    {.id = "IN-2.range",
     .promise = "every T >= 0 is valid, from the smallest subnormal to FLT_MAX",
     .evidence = "design:temperature.min_subnormal design:temperature.min_normal "
                 "design:temperature.tiny design:temperature.huge design:temperature.max_normal"},
    {.id = "IN-3.nonzero",
     .promise = "a mask byte is allowed when nonzero, whatever its value (not only 1)",
     .evidence = "row:masked_V300"},
    {.id = "IN-3.absent",
     .promise = "no mask: every token allowed",
     .evidence = "row:llm_like_V1000 row:wide_V32768"},
    {.id = "IN-4.off",
     .promise = "top_k 0, top_p 1 and min_p 0 (and min_p -0) turn their step off",
     .evidence = "design:top_k.off design:top_p.off design:min_p.off design:min_p.neg_zero"},
    {.id = "IN-5",
     .promise = "the row id, not the batch position, keys the row",
     .evidence = "property:BATCH-1 property:BATCH-2 design:batch.permuted"},
    {.id = "IN-6",
     .promise = "the seed keys the call's streams",
     .evidence = "property:DET-2 design:identity.seed"},
    // --- 3. Exact semantics ---
    {.id = "SEM-1.mask",
     .promise = "a masked token is outside the support, never drawn",
     .evidence = "row:masked_V300 design:shape.mask_narrower"},
    {.id = "SEM-1.neg_inf",
     .promise = "a -inf logit is outside the support",
     .evidence = "design:logit.neg_inf"},
    {.id = "SEM-1.nan",
     .promise = "a NaN logit is outside the support (masked, or under nan_policy masked)",
     .evidence = "design:logit.nan_masked design:logit.nan_allowed"},
    {.id = "SEM-2",
     .promise = "finite regime: p_i = exp((x_i - M) / T) / Z over the support",
     .evidence = "row:llm_like_V1000 row:flat_V64 row:near_ties_V16 row:wide_V32768 "
                 "row:overflow_shape design:shape.huge_range"},
    {.id = "SEM-2.tail",
     .promise = "tokens far below the maximum keep their tiny mass (no truncated tail)",
     .evidence = "row:dominant_tail_V50001 row:deep_tail_V180001"},
    {.id = "SEM-3",
     .promise = "T = 0: the arg-max set gets everything",
     .evidence = "row:greedy_ties design:temperature.zero"},
    {.id = "SEM-4",
     .promise = "+inf logits in the support win, uniformly (at T = 0 too)",
     .evidence = "row:pos_inf_ties design:logit.pos_inf"},
    {.id = "SEM-5",
     .promise = "in a limit, support tokens outside the winning set are never drawn",
     .evidence = "row:greedy_ties row:pos_inf_ties"},
    {.id = "SEM-6.top_k",
     .promise = "top-k keeps the k most probable tokens",
     .evidence = "row:top_k_V200 row:top_k_near_tie_V200 design:top_k.one"},
    {.id = "SEM-6.top_k_large",
     .promise = "top-k above 1024 keeps all k, with real mass past rank 1024 (no cap)",
     .evidence = "row:top_k_2000_V4096 design:top_k.above_1024"},
    {.id = "SEM-6.top_k_ge_v",
     .promise = "k >= |C| keeps everything (never an error)",
     .evidence = "design:top_k.v design:top_k.above_v"},
    {.id = "SEM-6.top_p",
     .promise = "top-p keeps the smallest prefix whose mass reaches p (no off-by-one)",
     .evidence = "row:top_p_V200 row:top_p_on_cumsum_V8 design:top_p.cut_below "
                 "design:top_p.cut_above"},
    {.id = "SEM-6.top_p_param",
     .promise = "the cut is at the binary32 top_p given, not at a narrower type's rounding of it",
     .evidence = "row:top_p_rounding_V8"},
    {.id = "SEM-6.top_p_extremes",
     .promise = "top_p one ulp above 0 keeps the top token, one ulp below 1 keeps nearly all",
     .evidence = "design:top_p.min_subnormal design:top_p.min_normal design:top_p.below_one"},
    {.id = "SEM-6.min_p",
     .promise = "min-p keeps i iff q_i >= m max q",
     .evidence = "row:min_p_V200 design:min_p.ratio_below design:min_p.ratio_above "
                 "design:min_p.half"},
    {.id = "SEM-6.min_p_tiny",
     .promise = "min_p in (0, 1e-5] still cuts (no skip below an epsilon)",
     .evidence = "row:min_p_tiny_V4096 design:min_p.min_subnormal"},
    {.id = "SEM-6.min_p_param",
     .promise = "the min-p threshold is the binary32 min_p given, not a narrower rounding",
     .evidence = "row:min_p_rounding_V8"},
    {.id = "SEM-6.renormalize",
     .promise = "each step sees the previous step's distribution renormalized",
     .evidence = "row:top_k_top_p_V64"},
    {.id = "SEM-6.signed_zero",
     .promise = "+0 and -0 tie in truncation's order (a tie at the k-th value)",
     .evidence = "row:signed_zero_tie_V8 design:logit.neg_zero"},
    {.id = "SEM-7",
     .promise = "the final distribution is the base weights renormalized over the kept set",
     .evidence = "row:top_k_top_p_V64 row:top_k_V200 row:min_p_V200"},
    // --- 4. Policies and capabilities ---
    {.id = "POL-1.uniform",
     .promise = "greedy tie-break uniform: tied winners drawn uniformly",
     .evidence = "row:greedy_ties"},
    {.id = "POL-1.lowest_index",
     .promise = "greedy tie-break lowest-index: always the lowest tied winner",
     .evidence = "row:greedy_ties design:shape.ties"},
    {.id = "POL-1.any",
     .promise = "greedy tie-break any: every draw on the arg-max set",
     .evidence = "row:greedy_ties"},
    {.id = "POL-2.keep_all",
     .promise = "ties at a cut: every tied token kept",
     .evidence = "row:signed_zero_tie_V8 row:top_k_near_tie_V200 design:shape.ties"},
    {.id = "POL-2.exact",
     .promise = "ties at a cut: exactly as many as the cut needs (lowest index, or any)",
     .evidence = "row:signed_zero_tie_V8 design:shape.ties"},
    {.id = "POL-3.order",
     .promise = "temperature-first or truncation-first, as declared",
     .evidence = "row:top_p_V200 row:min_p_V200 design:temperature.tiny"},
    {.id = "POL-3.steps",
     .promise = "the truncation steps run in the declared permutation",
     .evidence = "row:top_k_top_p_V64 design:top_p.half design:min_p.half"},
    {.id = "POL-4.masked",
     .promise = "nan_policy masked: an allowed NaN is outside the support",
     .evidence = "design:logit.nan_allowed"},
    {.id = "POL-5",
     .promise = "a declared greedy threshold applies below it, not above, and is a Warning",
     .evidence = "design:temperature.threshold_below design:temperature.threshold_above "
                 "property:DEV-1"},
    {.id = "POL-6.same_seed",
     .promise = "same-seed determinism: the same seed and row id give the same tokens",
     .evidence = "property:DET-1 design:identity.same_seed"},
    {.id = "POL-6.cross_device",
     .promise = "cross-device determinism: the canonical draw's tokens on every device",
     .not_exercised = "one certification runs on one device; DRAW-4's agreement is checked between "
                      "stable_cuda and the reference sampler by tools/gpu_check, outside the plan"},
    {.id = "POL-7",
     .promise = "a sequential sampler's stream continues at its position and restarts at draw 0",
     .evidence = "row:independence_V4"},
    {.id = "POL-8",
     .promise = "the declared verify scheme is the one applied (lossy ones are Warnings)",
     .evidence = "chain:near_V64_k4 chain:far_V256_k4"},
    {.id = "ACC-1",
     .promise = "probabilities and draws within the declared accuracy class",
     .evidence = "property:PROB-1 row:rounding_probe_V2 row:near_ties_V16"},
    // --- 5. Invalid input ---
    {.id = "INV-0",
     .promise = "a malformed call (unknown dtype, invalid policy) is InvalidArgument",
     .not_exercised = "the host builds every call from the plan: it never sends an unknown dtype "
                      "or a malformed struct to the sampler it certifies (the adapters' own tests "
                      "send them to the shipped samplers)"},
    {.id = "INV-7",
     .promise = "V = 0 or no logits buffer is EmptyVocab",
     .not_exercised = "every planned and generated row has V >= 1: the runner never sends an "
                      "empty vocabulary (the adapters' own tests do)"},
    {.id = "INV-1",
     .promise = "T NaN, negative or +inf is InvalidTemperature",
     .evidence = "property:INV-ERR-1"},
    {.id = "INV-2", .promise = "top_k < 0 is InvalidTopK", .evidence = "property:INV-ERR-1"},
    {.id = "INV-3",
     .promise = "top_p NaN or outside (0, 1] is InvalidTopP",
     .evidence = "property:INV-ERR-1"},
    {.id = "INV-4",
     .promise = "min_p NaN or outside [0, 1) is InvalidMinP",
     .evidence = "property:INV-ERR-1"},
    {.id = "INV-5",
     .promise = "an allowed NaN under nan_policy error is NanLogit",
     .evidence = "property:INV-ERR-1"},
    {.id = "INV-6",
     .promise = "an empty support is EmptySupport, never a token",
     .evidence = "property:INV-ERR-1"},
    // --- 9. The canonical draw ---
    {.id = "DRAW-1.row_only",
     .promise = "a row's stream depends only on (seed, row id): not on the batch or its slot",
     .evidence = "property:BATCH-1 property:BATCH-2 design:batch.duplicated"},
    {.id = "DRAW-1.key",
     .promise = "distinct (seed, row id) pairs key distinct streams: (s + 1, r) is not (s, r + 1)",
     .evidence = "row:independence_V4 property:DET-2 property:DET-3"},
    {.id = "DRAW-1.overlap",
     .promise = "neighbouring row ids' streams do not overlap (no lag of one draw)",
     .evidence = "row:independence_V4"},
    {.id = "DRAW-1.counter",
     .promise = "the draw index is 64 bits: draw 2^32 is not draw 0 (random-access samplers)",
     .evidence = "row:independence_V4"},
    {.id = "DRAW-1.advance",
     .promise = "a later call continues the stream (the offset advances between calls)",
     .evidence = "row:independence_V4 design:identity.call_order"},
    {.id = "DRAW-2",
     .promise = "the uniform lies in (0, 1): never 0, never 1",
     .not_exercised =
         "a sampler's own uniform is not an input: an endpoint is decisive only on the "
         "draw that hits it (2^-25 of draws for a float uniform), which RANGE-1 and "
         "SUPP-1 check on every draw; no plan can force it"},
    {.id = "DRAW-3",
     .promise = "the inverse CDF never runs past the last kept token",
     .evidence = "property:RANGE-1 row:dominant_tail_V50001"},
    {.id = "DRAW-4",
     .promise = "cross-device: the reference sampler's token outside rounding bands",
     .not_exercised = "as POL-6.cross_device: one run sees one device"},
    // --- 10. Properties ---
    {.id = "FIN-1",
     .promise = "returned probabilities finite and in [0, 1]",
     .evidence = "property:FIN-1 design:logit.max_normal design:temperature.min_subnormal"},
    {.id = "NORM-1",
     .promise = "returned probabilities sum to 1 within the bound",
     .evidence = "property:NORM-1 design:vocab.262144"},
    {.id = "RANGE-1",
     .promise = "every token id in [0, V)",
     .evidence = "property:RANGE-1 design:vocab.1 design:vocab.1025"},
    {.id = "SUPP-1",
     .promise = "no draw and no mass outside the support",
     .evidence = "property:SUPP-1 row:masked_V300"},
    {.id = "SUPP-2",
     .promise = "no must-drop token drawn; no must-keep token at probability 0",
     .evidence = "property:SUPP-2 row:min_p_tiny_V4096 row:top_p_rounding_V8 "
                 "row:min_p_rounding_V8"},
    {.id = "LIM-1",
     .promise = "T = 0 draws the arg-max set per POL-1",
     .evidence = "row:greedy_ties property:LIM-1"},
    {.id = "LIM-2",
     .promise = "+inf logits win, uniformly",
     .evidence = "row:pos_inf_ties property:LIM-2"},
    {.id = "INV-ERR-1",
     .promise = "invalid input returns the right code, a well-formed error and no token",
     .evidence = "property:INV-ERR-1"},
    {.id = "VALID-1",
     .promise = "valid input returns tokens, never an error",
     .evidence = "property:VALID-1 design:temperature.min_subnormal design:logit.max_normal"},
    {.id = "SHIFT-1",
     .promise = "a constant added to the logits changes no probability",
     .evidence = "property:SHIFT-1"},
    {.id = "PERM-1",
     .promise = "permuting the tokens permutes the probabilities",
     .evidence = "property:PERM-1"},
    {.id = "BATCH-1",
     .promise = "a row's results are the same alone and in a batch",
     .evidence = "property:BATCH-1 design:batch.alone_and_batched"},
    {.id = "BATCH-2",
     .promise = "nor change with batchmates' parameters, duplicates, order or batch size",
     .evidence = "property:BATCH-2 design:batch.heterogeneous design:batch.duplicated "
                 "design:batch.permuted design:batch.sizes_9_33_129_257"},
    {.id = "DET-1",
     .promise = "same seed and row id, same tokens",
     .evidence = "property:DET-1 design:identity.same_seed"},
    {.id = "DET-2",
     .promise = "different seeds, different streams",
     .evidence = "property:DET-2 design:identity.seed"},
    {.id = "DET-3",
     .promise = "different row ids, different streams",
     .evidence = "property:DET-3 design:identity.row_id"},
    {.id = "PROB-1",
     .promise = "returned probabilities within the tolerance table of the reference",
     .evidence = "property:PROB-1"},
    {.id = "DIST-1",
     .promise = "draws on a planned row follow the reference",
     .evidence = "row:llm_like_V1000 row:flat_V64 row:near_ties_V16 row:wide_V32768 "
                 "row:masked_V300"},
    {.id = "DIST-2",
     .promise = "draws at a truncation boundary follow the reference given the kept set",
     .evidence = "row:top_k_near_tie_V200 row:top_p_on_cumsum_V8 row:signed_zero_tie_V8"},
    {.id = "DIST-3",
     .promise = "every valid generated and design row's draws, pooled, follow their references",
     .evidence = "property:DIST-3"},
    {.id = "INDEP-1",
     .promise = "pairs of draws independent within a stream, across calls, row ids and seeds",
     .evidence = "row:independence_V4"},
    {.id = "TAIL-1",
     .promise = "each nested tail set's drawn count matches its reference mass",
     .evidence = "row:dominant_tail_V50001 row:deep_tail_V180001"},
    {.id = "DEV-1",
     .promise = "a declared greedy threshold is reported with its size, as a Warning",
     .evidence = "property:DEV-1"},
    {.id = "ABI-1",
     .promise = "no write into const inputs or outside the output buffer",
     .evidence = "property:ABI-1"},
    // --- 15. Speculative-decoding verification ---
    {.id = "VER-IN-1",
     .promise = "chains of k drafts, k + 1 target rows and k drafts (probabilities or logits)",
     .evidence = "chain:near_V64_k4 chain:long_V32_k8 chain:draft_logits_V64_k3 "
                 "chain:draft_f16_V128_k2 chain:draft_bf16_V96_k2"},
    {.id = "VER-OUT-1",
     .promise = "reported acceptance probabilities are min(1, p / q)",
     .evidence = "property:VER-6 chain:near_V64_k4"},
    {.id = "VER-SEM-1.top_k",
     .promise = "the target is p_j after the target row's own top-k",
     .evidence = "chain:extra_mass_V100_k3 chain:disjoint_V64_k2"},
    {.id = "VER-SEM-1.top_p",
     .promise = "the target is p_j after the target row's own top-p",
     .evidence = "chain:target_top_p_V64_k3"},
    {.id = "VER-SEM-1.min_p",
     .promise = "the target is p_j after the target row's own min-p",
     .evidence = "chain:target_min_p_V64_k3"},
    {.id = "VER-SEM-1.mask",
     .promise = "the target is p_j under the target row's mask",
     .evidence = "chain:masked_V64_k3"},
    {.id = "VER-SEM-1.position_mask",
     .promise = "each position's p_j under its own row's mask (one grammar mask per draft "
                "position): a draft its position forbids is never accepted",
     .evidence = "chain:position_masks_V64_k3"},
    {.id = "VER-SEM-1.limits",
     .promise = "+inf logits, ties and half dtypes change p_j, not the rule",
     .evidence = "chain:inf_V64_k2 chain:ties_V40_k3 chain:tile_V4099_k2"},
    {.id = "VER-SEM-2.accept",
     .promise = "a reached draft is accepted with probability min(1, p / q)",
     .evidence = "chain:near_V64_k4 chain:confident_V64_k3 chain:far_V256_k4"},
    {.id = "VER-SEM-2.residual",
     .promise = "on a rejection the token is drawn from the residual (p - q)+",
     .evidence = "chain:far_V256_k4 chain:missing_mass_V128_k3 chain:confident_V64_k3"},
    {.id = "VER-SEM-2.bonus",
     .promise = "all k accepted: a bonus token from p_{k+1}",
     .evidence = "chain:equal_V48_k4 chain:long_V32_k8"},
    {.id = "VER-LAW-1",
     .promise = "every emitted token follows p_j",
     .evidence = "chain:near_V64_k4 chain:far_V256_k4 chain:confident_V64_k3"},
    {.id = "VER-LAW-2",
     .promise = "the accepted count follows the product of beta_j",
     .evidence = "chain:long_V32_k8 chain:near_V64_k4"},
    {.id = "VER-LAW-3",
     .promise = "after a rejection the token follows the residual",
     .evidence = "chain:missing_mass_V128_k3 chain:far_V256_k4"},
    {.id = "VER-LIM-1.equal",
     .promise = "p = q: every draft accepted",
     .evidence = "chain:equal_V48_k4"},
    {.id = "VER-LIM-1.disjoint",
     .promise = "disjoint supports: rejected at the first position, emitted from p_1",
     .evidence = "chain:disjoint_V64_k2"},
    {.id = "VER-LIM-1.outside",
     .promise = "a drafted token the target masks, truncates or gives 0 is never accepted",
     .evidence = "chain:masked_V64_k3 chain:extra_mass_V100_k3 chain:target_top_p_V64_k3 "
                 "chain:target_min_p_V64_k3"},
    {.id = "VER-LIM-1.greedy",
     .promise = "target T = 0 without ties: accepted exactly when the draft is the arg-max",
     .evidence = "chain:greedy_V64_k3"},
    {.id = "VER-LIM-1.greedy_ties",
     .promise = "target T = 0 with m tied winners: the greedy p_j of POL-1",
     .evidence = "chain:greedy_ties_V64_k3"},
    {.id = "VER-INV-1",
     .promise = "invalid chains (q = 0 drafted, bad sums, NaN, id V, k = 0, bad target) fail "
                "the call, naming the chain",
     .evidence = "property:VER-INV-1"},
    {.id = "VER-DET-1.batch",
     .promise = "the same chain gives the same output alone, batched, reordered, duplicated, twice",
     .evidence = "property:VER-5"},
    {.id = "VER-DET-1.row_id",
     .promise = "chains keyed by (seed, row id, draw): two row ids at one draw differ",
     .evidence = "property:VER-7"},
    {.id = "VER-DEV-1",
     .promise = "a lossy scheme is declared and reported as Warnings with its distance",
     .evidence = "chain:near_V64_k4 property:VER-2 property:VER-3"},
    {.id = "VER-1",
     .promise = "every emitted token in its target's support, the accepted ones the drafts",
     .evidence = "chain:masked_V64_k3 chain:extra_mass_V100_k3 chain:inf_V64_k2"},
    {.id = "VER-2",
     .promise = "the token emitted at each reached position follows p_j",
     .evidence = "chain:near_V64_k4 chain:far_V256_k4 chain:confident_V64_k3"},
    {.id = "VER-3",
     .promise = "the accepted count follows the product law",
     .evidence = "chain:long_V32_k8 chain:equal_V48_k4"},
    {.id = "VER-4",
     .promise = "the token after a rejection follows the residual",
     .evidence = "chain:missing_mass_V128_k3 chain:far_V256_k4"},
    {.id = "VER-5",
     .promise = "a chain's output alone, batched, reordered, duplicated and twice is the same",
     .evidence = "property:VER-5"},
    {.id = "VER-6",
     .promise = "reported acceptance probabilities within their tolerance",
     .evidence = "property:VER-6 chain:near_V64_k4"},
    {.id = "VER-7",
     .promise = "one chain under pairs of row ids at one seed and draw: outputs rarely the same",
     .evidence = "property:VER-7"},
    // --- 16. Token history and penalties ---
    {.id = "PEN-IN-1",
     .promise = "the prompt and output histories are token ids in [0, V)",
     .evidence = "row:pen_prompt_only_V8 row:pen_identity_V8"},
    {.id = "PEN-IN-2",
     .promise = "the penalty parameters are finite, the repetition penalty > 0 (0 read as off)",
     .evidence = "row:pen_zero_repetition_V8 row:pen_counts_V8"},
    {.id = "PEN-1",
     .promise = "penalties rewrite the logits before every other step",
     .evidence = "row:pen_before_top_k_V8"},
    {.id = "PEN-2",
     .promise = "repetition divides positive logits and multiplies negative ones, once per token",
     .evidence = "row:pen_sign_rule_V8"},
    {.id = "PEN-3",
     .promise = "presence and frequency subtract alpha * count + beta * [count > 0]",
     .evidence = "row:pen_counts_V8"},
    {.id = "PEN-4",
     .promise = "penalties off change nothing, bit for bit; -inf stays -inf; a penalty never "
                "makes a finite logit infinite",
     .evidence = "row:pen_identity_V8 row:pen_zero_repetition_V8 row:pen_counts_V8 "
                 "row:pen_overflow_V8"},
    {.id = "PEN-5",
     .promise = "penalized logits within the accuracy class of the reference's (PROB-1 on the "
                "history, where probabilities are declared)",
     .evidence = "row:pen_sign_rule_V8 row:pen_counts_V8 row:pen_prompt_only_V8"},
    {.id = "PEN-POL-1",
     .promise = "each rule sees the history its declaration names",
     .evidence = "row:pen_prompt_only_V8 row:pen_prompt_only_repetition_V8"},
    {.id = "PEN-CAP-1",
     .promise = "a sampler declaring penalties reads the history and parameters",
     .evidence = "row:pen_sign_rule_V8 row:pen_counts_V8 row:pen_prompt_only_V8"},
    {.id = "PEN-ABI-1",
     .promise = "MINOR 4 rows carry the history; older plug-ins get the MINOR 3 layout",
     .not_exercised =
         "the host's packing, not a sampler's output: abi_minor4_test checks it with fake "
         "plug-ins of MINOR 3 and 4; exec_protocol_test and exec_sampler_test check the exec: "
         "protocol's (1.5 carries the history; a 1.4 child declaring penalties is refused)"},
    {.id = "PEN-SEQ-1",
     .promise = "each step of a sequence draws from the reference for its history",
     .not_exercised =
         "the plan sends single rows with a fixed history, not sequences of calls; "
         "penalty_sequence_test checks sequences (stable_cpu and five mutants) outside the "
         "certification; a history one step stale shows row by row on pen_sign_rule_V8"},
    {.id = "INV-8",
     .promise = "an invalid penalty or history id is InvalidPenalty",
     .evidence = "row:pen_invalid_nan_V8 row:pen_invalid_history_V8"},
    // --- 17. Per-request seeds ---
    {.id = "IN-7",
     .promise = "a row's seed_mode and seed key its draws (section 17)",
     .evidence = "property:SEED-1"},
    {.id = "SEED-IN-1",
     .promise = "seed_mode 0 keys a row by the call's seed, as before MINOR 5",
     .evidence = "property:DET-1 property:DET-2 property:BATCH-2"},
    {.id = "SEED-1",
     .promise = "a seeded row's draws depend on its seed, row id and inputs alone",
     .evidence = "property:SEED-1"},
    {.id = "SEED-2",
     .promise = "two rows of one seed and one row id in a batch draw the same tokens",
     .evidence = "property:SEED-2"},
    {.id = "SEED-3",
     .promise = "an unseeded row is a correct draw: its tokens inside its support",
     .evidence = "property:SEED-3"},
    {.id = "SEED-CAP-1",
     .promise = "a sampler declaring seeds reads seed_mode and seed",
     .evidence = "property:SEED-1 property:SEED-3"},
    {.id = "SEED-ABI-1",
     .promise = "MINOR 5 rows carry the seed; a MINOR 4 plug-in gets the MINOR 4 layout",
     .not_exercised =
         "the host's packing, not a sampler's output: abi_minor4_test checks it with fake "
         "plug-ins of MINOR 3, 4 and 5; exec_protocol_test and exec_sampler_test check the "
         "exec: protocol's (1.5 carries the seed; a 1.4 child declaring seeds is refused)"},
    // --- 18. Logit bias and a minimum length ---
    {.id = "BIAS-IN-1",
     .promise = "a row's bias list: distinct ids in [0, V), any binary32 but NaN",
     .evidence = "row:bias_before_temperature_V8 row:bias_inf_V8 row:bias_identity_V8"},
    {.id = "BIAS-1",
     .promise = "the bias is added before the penalties, temperature and truncation",
     .evidence = "row:bias_before_temperature_V8 row:bias_before_top_k_V8 "
                 "row:bias_before_penalty_V8"},
    {.id = "BIAS-2.ban",
     .promise = "a -inf bias bans a token (outside the support), a +inf logit's included",
     .evidence = "row:bias_ban_V8 row:bias_inf_V8"},
    {.id = "BIAS-2.pos_inf",
     .promise = "a +inf bias makes a support token +inf (SEM-4); a -inf logit stays out",
     .evidence = "row:bias_inf_V8"},
    {.id = "BIAS-3",
     .promise = "logit plus bias is the exact sum, never an overflow",
     .evidence = "row:bias_overflow_V8"},
    {.id = "BIAS-4",
     .promise = "biases of +0 and -0 change nothing, bit for bit",
     .evidence = "row:bias_identity_V8"},
    {.id = "MINLEN-1",
     .promise = "eos_token_id is banned while fewer than min_tokens tokens are output, not after",
     .evidence = "row:min_tokens_ban_V8 row:min_tokens_reached_V8"},
    {.id = "BIAS-CAP-1",
     .promise = "a sampler declaring logit-bias reads the bias",
     .evidence = "row:bias_before_temperature_V8 row:bias_ban_V8"},
    {.id = "MINLEN-CAP-1",
     .promise = "a sampler declaring min-tokens reads min_tokens and eos_token_id",
     .evidence = "row:min_tokens_ban_V8"},
    {.id = "BIAS-ABI-1",
     .promise = "MINOR 6 rows carry the bias; a MINOR 5 plug-in gets the MINOR 5 layout",
     .not_exercised =
         "the host's packing, not a sampler's output: abi_minor4_test checks it with fake "
         "plug-ins of MINOR 5 and 6; exec_protocol_test and exec_sampler_test check the exec: "
         "protocol's (1.6 carries the bias and the minimum length; a 1.5 child declaring "
         "logit-bias or min-tokens is refused)"},
    {.id = "INV-9",
     .promise = "an invalid bias or minimum-length id is InvalidLogitBias",
     .evidence = "row:bias_invalid_nan_V8 row:bias_invalid_id_V8 row:bias_invalid_repeated_V8 "
                 "row:min_tokens_invalid_eos_V8"},
    // Section 19: packed masks.
    {.id = "PMASK-IN-1",
     .promise = "a packed mask: ceil(V / 32) words, bit t % 32 of word t / 32 is token t",
     .evidence = "row:packed_bit_order_V40 row:packed_last_word_V33 row:packed_identity_V1000"},
    {.id = "PMASK-1",
     .promise = "the words allow exactly the tokens their bits name, in that order",
     .evidence = "row:packed_bit_order_V40 row:packed_last_word_V33"},
    {.id = "PMASK-2",
     .promise = "the last word's bits past V are padding, never tokens",
     .evidence = "row:packed_padding_empty_V40 row:packed_bit_order_V40"},
    {.id = "PMASK-3",
     .promise = "a mask given packed changes nothing: bit for bit the row given as bytes",
     .evidence = "row:packed_identity_V1000"},
    {.id = "PMASK-CAP-1",
     .promise = "a sampler declaring packed-mask reads packed masks",
     .evidence = "row:packed_bit_order_V40 row:packed_identity_V1000"},
    {.id = "PMASK-ABI-1",
     .promise = "MINOR 7 rows carry packed_mask and mask_layout; a MINOR 6 plug-in gets the "
                "MINOR 6 layout and no packed row",
     .not_exercised =
         "the host's packing, not a sampler's output: abi_minor4_test checks it with fake "
         "plug-ins of MINOR 6 and 7; row_round_trip_test, python.protocol_helper and "
         "exec_sampler_test the exec: protocol's (1.8 carries the words under a row flag; a "
         "1.7 child declaring packed-mask is refused, a packed row to one is UNSUPPORTED)"},
    // Section 20: log-probabilities.
    {.id = "LOGP-IN-1",
     .promise = "raw, scaled and processed log-probabilities: the logits as given, after the "
                "temperature, of the distribution drawn from",
     .evidence = "row:logp_temperature_V64 row:logp_truncated_V128 row:logp_masked_V48"},
    {.id = "LOGP-1",
     .promise = "each draw's log-probability is its own token's, from the distribution drawn from",
     .evidence = "row:logp_temperature_V64 row:logp_truncated_V128 row:logp_wide_V4099"},
    {.id = "LOGP-2",
     .promise = "within -log(1 - eps) nats of the reference, eps TOL-3's bound; below the floor, "
                "at most log(floor + abs)",
     .evidence = "row:logp_wide_V4099 row:logp_temperature_V64"},
    {.id = "LOGP-3",
     .promise = "exactly -inf outside the mode's support (masked, banned, truncated), never for "
                "a drawn token",
     .evidence = "row:logp_truncated_V128 row:logp_masked_V48"},
    {.id = "LOGP-4",
     .promise = "the top n: distinct, most probable first, nothing more probable left out",
     .evidence = "row:logp_masked_V48 row:logp_truncated_V128"},
    {.id = "LOGP-CAP-1",
     .promise = "a sampler declaring a logprob mode returns log-probabilities in it",
     .evidence = "row:logp_temperature_V64"},
    {.id = "LOGP-ABI-1",
     .promise = "MINOR 8 batches carry the logprob request and its outputs; older plug-ins are "
                "asked for none",
     .not_exercised =
         "the host's request, not a sampler's output: logprob_plan_test's LogprobHost checks "
         "the gate and a 40-byte batch; exec_protocol_test and exec_sampler_test the exec: "
         "protocol's SAMPLE_LOGPROBS (1.7; a 1.6 child declaring a mode is refused)"},
};

constexpr std::string_view kSuiteOwn[] = {
    "REF-1",      "REF-2",   "REF-3",    "REF-4",    "BAND-1",   "BAND-2",    "BAND-3",
    "BAND-4",     "BAND-5",  "BAND-6",   "TOL-1",    "TOL-2",    "TOL-3",     "TOL-4",
    "TOL-5",      "TOL-6",   "TOL-7",    "STAT-1",   "STAT-2",   "STAT-3",    "STAT-4",
    "STAT-4a",    "STAT-4b", "STAT-5",   "STAT-6",   "STAT-7",   "STAT-8",    "STAT-8a",
    "STAT-8b",    "STAT-8c", "STAT-9",   "STAT-9a",  "STAT-8d",  "STAT-10",   "STAT-10a",
    "REPRO-1",    "COV-1",   "REPORT-1", "REPORT-2", "REPORT-3", "VERDICT-1", "VER-PLAN-1",
    "VER-STAT-1", "TRACE-1", "CAP-1",    "FILE-1",   "OPT-1",    "TEXT-1",    "TEXT-2",
    "LIFE-1",     "PROTO-1",
};

}  // namespace

std::span<const Clause> Clauses() { return kClauses; }

std::span<const std::string_view> SuiteOwnIds() { return kSuiteOwn; }

std::vector<Evidence> EvidenceOf(const Clause& clause) {
  std::vector<Evidence> out;
  std::string_view rest = clause.evidence;
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    const std::string_view word = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    if (word.empty()) continue;
    const std::size_t colon = word.find(':');
    const std::string_view kind = word.substr(0, colon);
    if (colon == std::string_view::npos) {
      throw std::invalid_argument(std::string(clause.id) + ": evidence '" + std::string(word) +
                                  "' has no kind");
    }
    const std::string name(word.substr(colon + 1));
    if (kind == "row") {
      out.push_back({EvidenceKind::kRow, name});
    } else if (kind == "chain") {
      out.push_back({EvidenceKind::kChain, name});
    } else if (kind == "design") {
      out.push_back({EvidenceKind::kDesign, name});
    } else if (kind == "property") {
      out.push_back({EvidenceKind::kProperty, name});
    } else {
      throw std::invalid_argument(std::string(clause.id) + ": unknown evidence kind '" +
                                  std::string(kind) + "'");
    }
  }
  return out;
}

std::string ClausesMarkdown() {
  std::string out = "| ID | promise | decisive planned inputs |\n|---|---|---|\n";
  for (const Clause& c : kClauses) {
    std::string evidence;
    EvidenceOf(c);  // the words are valid
    std::string_view rest = c.evidence;
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      const std::string_view word = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
      if (word.empty()) continue;
      if (!evidence.empty()) evidence += ", ";
      evidence += "`" + std::string(word) + "`";
    }
    if (evidence.empty()) evidence = "*not exercised*: " + std::string(c.not_exercised);
    out += "| " + std::string(c.id) + " | " + std::string(c.promise) + " | " + evidence + " |\n";
  }
  return out;
}

}  // namespace sampcert::properties
