// The packed mask (SPEC section 19, ABI MINOR 7): a row's mask as ceil(V / 32) 32-bit words,
// bit i of word j (value 1u << i) standing for token 32 j + i, the layout of xgrammar's and
// llguidance's token bitmasks. The bits of the last word past V are padding: never tokens
// (PMASK-2). Header-only, for hosts and plug-ins alike.
#ifndef SAMPCERT_PACKED_MASK_H_
#define SAMPCERT_PACKED_MASK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sampcert {

// The words a packed mask of `vocab` tokens has.
constexpr std::size_t PackedMaskWords(std::size_t vocab) { return (vocab + 31) / 32; }

// Whether a packed mask allows token i (i < vocab).
constexpr bool PackedAllowed(const uint32_t* words, std::size_t i) {
  return ((words[i / 32] >> (i % 32)) & 1u) != 0;
}

// `vocab` mask bytes (nonzero = allowed) as packed words. The padding bits past vocab are set
// (allowed), as xgrammar's and llguidance's allocators fill them: a sampler that reads them as
// tokens sees tokens that do not exist (PMASK-2's planned rows rely on it).
inline std::vector<uint32_t> PackMask(const uint8_t* bytes, std::size_t vocab) {
  std::vector<uint32_t> words(PackedMaskWords(vocab), 0);
  for (std::size_t i = 0; i < vocab; ++i) {
    if (bytes[i] != 0) words[i / 32] |= uint32_t{1} << (i % 32);
  }
  if (vocab % 32 != 0) words.back() |= ~uint32_t{0} << (vocab % 32);
  return words;
}

}  // namespace sampcert

#endif  // SAMPCERT_PACKED_MASK_H_
