// The planned packed-mask rows (SPEC section 19, "Planned rows"): masked rows whose mask the host
// gives the sampler as packed 32-bit words (mask_layout kMaskPacked), sent only to samplers that
// declare `mask` and `packed-mask`. Each is chosen so that a misread of the layout is decisive:
// a forbidden token with most of the mass behind every bit a wrong reading would take for it.
// Each is checked as the penalty and bias rows are (rewritten_row.h): the probabilities against
// the reference, where declared; the probabilities and first draws bit for bit those of the
// same row given as bytes (PMASK-3); then the draws against the reference, as DIST-1. The row
// whose every token is masked is INV-6's: EmptySupport, whatever the padding bits say.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "properties/families.h"
#include "properties/plan.h"
#include "properties/rewritten_row.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

using results::TestResult;

// A row of `v` tokens allowing exactly `allowed`, given packed: the allowed tokens' logits
// cycle through `low`, every forbidden token's logit is `forbidden` (above them: a forbidden
// token let in takes most of the mass).
RowCase Packed(DType dtype, std::size_t v, const std::vector<std::size_t>& allowed,
               const std::vector<float>& low, float forbidden, float t, uint64_t row_id) {
  std::vector<float> x(v, forbidden);
  std::vector<uint8_t> mask(v, 0);
  for (std::size_t j = 0; j < allowed.size(); ++j) {
    x[allowed[j]] = low[j % low.size()];
    mask[allowed[j]] = 1;
  }
  RowCase r = MakeRow(dtype, x, t, row_id);
  r.mask = std::move(mask);
  r.mask_layout = kMaskPacked;
  return r;
}

// The same row with its mask given as bytes: what a packed row must equal bit for bit (PMASK-3).
RowCase AsBytes(const RowCase& row) {
  RowCase bytes = row;
  bytes.mask_layout = kMaskBytes;
  return bytes;
}

}  // namespace

std::vector<std::pair<std::string, RowCase>> PackedMaskRows(DType dtype, uint32_t caps) {
  std::vector<std::pair<std::string, RowCase>> rows;
  if ((caps & SAMPCERT_CAP_MASK) == 0 || (caps & SAMPCERT_CAP_PACKED_MASK) == 0) return rows;
  // PMASK-1, the bit order: V = 40, two words. Allowed: bits 0-3, 9 and 17 of word 0, bits 1 and
  // 3 of word 1 (tokens 33, 35); every other token has logit 3, above the allowed ones' 0..1. Read
  // from the high bit down (bit 31 - i), word 0 allows tokens 28-31, 22 and 14 instead, and word
  // 1's set padding bits allow 32-39; read byte-swapped (big-endian words), tokens 24-27. Each
  // draws a forbidden token with probability near 1.
  rows.emplace_back("packed_bit_order_V40", Packed(dtype, 40, {0, 1, 2, 3, 9, 17, 33, 35},
                                                   {0.6f, -0.4f, 1.0f, 0.1f}, 3.0f, 1.0f, 170));
  // PMASK-1, the last word: V = 33, so token 32 is bit 0 of a second word whose other 31 bits are
  // padding. Allowed: tokens 4, 12 and 32, token 32 the most probable (p about 0.73). A sampler
  // that sizes the mask as floor(V / 32) words never reads token 32's bit.
  rows.emplace_back("packed_last_word_V33",
                    Packed(dtype, 33, {4, 12, 32}, {0.0f, -0.5f, 1.5f}, -1.0f, 1.0f, 171));
  // PMASK-2 (INV-6, filed under INV-ERR-1): V = 40, every token masked, the 24 padding bits of
  // the second word set. The support is empty: EmptySupport, and no token. A sampler that
  // counts the allowed tokens over whole words (a popcount) sees 24 and samples.
  rows.emplace_back("packed_padding_empty_V40", Packed(dtype, 40, {}, {0.0f}, 0.5f, 1.0f, 172));
  // PMASK-3: an LLM-like row of V = 1000 (1000 = 31 * 32 + 8) at T = 0.8, two tokens in three
  // allowed in an irregular pattern, the top-k and top-p of the declaration on the rest: bit for
  // bit the row given as bytes.
  {
    const std::size_t v = 1000;
    RowCase r = MakeRow(dtype, LlmLike(v, 173), 0.8f, 173);
    r.mask.assign(v, 1);
    for (std::size_t i = 0; i < v; ++i) r.mask[i] = (i * 2654435761u) % 3 != 0 ? 1 : 0;
    r.mask_layout = kMaskPacked;
    if (caps & SAMPCERT_CAP_TOP_K) r.top_k = 50;
    if (caps & SAMPCERT_CAP_TOP_P) r.top_p = 0.9f;
    rows.emplace_back("packed_identity_V1000", std::move(r));
  }
  for (auto& [name, row] : rows) row.family = name;
  return rows;
}

// Each row is filed under the clause it decides, from its content alone.
std::string_view PackedMaskProperty(const RowCase& row) {
  if (InvalidRequest(row).code != ErrorCode::kOk) return "INV-ERR-1";  // PMASK-2's empty row
  return row.vocab() >= 1000 ? "PMASK-3" : "PMASK-1";
}

std::vector<TestResult> RunPackedMask(const ItemRun& ctx) {
  return RunRewrittenRow(
      ctx, Rewrite{.what = "packed mask",
                   .reference = "the reference reads the mask's bytes; the sampler got them as "
                                "packed words, bit t % 32 of word t / 32 for token t",
                   .bare = AsBytes(*ctx.row),
                   .identity_clause = "PMASK-3",
                   .identity_what = "the same mask given as bytes"});
}

}  // namespace sampcert::properties
