// The coverage model (SPEC.md section 10, "Coverage model"): the axes of the input space, each
// with its value classes, in one table; and the covering design derived from it for a
// declaration: design rows such that every pair of value classes of two designed axes is in some
// row, and every triple of the truncation axes (temperature, top_k, top_p, min_p). The generated
// rows item of each dtype (generated_rows.cc) runs every deterministic property on the design's
// rows and pools their draws into DIST-3 (results family "design").
//
// SPEC.md's table is this table's rendering (CoverageModelMarkdown): coverage_test fails when the
// two differ. Adding a class touches this file's .cc (its row, with how it is realized) and
// SPEC.md (paste the rendering coverage_test prints).
#ifndef SAMPCERT_PROPERTIES_COVERAGE_H_
#define SAMPCERT_PROPERTIES_COVERAGE_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/case_check.h"
#include "properties/row_case.h"
#include "results/test_result.h"

namespace sampcert::properties {

struct Profile;

// What a class needs from a declaration to be in its design.
enum class ClassNeed : uint8_t {
  kNone,
  kCapability,       // the capability bit `capability`
  kInvalid,          // never: invalid input (SPEC section 5) is INV-ERR-1's, on generated rows
  kGreedyThreshold,  // a declared greedy threshold (POL-5)
  kNanMasked,        // nan_policy masked (POL-4); under `error` the row is invalid input
};

// What realizing a class sees: the row built so far (the axes before it, in table order).
struct RealizeInput {
  DType dtype = DType::kF32;
  const Policies* policies = nullptr;
  uint64_t seed = 0;  // the row's own seed (its logits' stream)
};

struct CoverageClass {
  std::string_view name;
  std::string_view realized;  // how a design row realizes it, or what covers it (SPEC's table)
  ClassNeed need = ClassNeed::kNone;
  uint32_t capability = 0;  // kCapability: SAMPCERT_CAP_*
  // Designed axes: sets the class on the row (in table order: vocabulary first).
  void (*apply)(const RealizeInput& in, RowCase* row) = nullptr;
  // Vocabulary classes: the class's V; other axes: 0.
  std::size_t vocab = 0;
  // The class needs V >= 2 (a V = 1 row would have no support or no meaning for it).
  bool needs_two_tokens = false;
  // Batch and identity classes: the property whose reached check on a row exercises the class.
  std::string_view property = {};
  // A class its property exercises on the generated rows only, not on design rows: the report
  // lists it as excluded from the design, with that reason.
  bool generated_rows_only = false;
};

struct CoverageAxis {
  std::string_view name;
  // Designed axes are realized in design rows; the others are covered as `covered_by` says.
  bool designed;
  // A truncation axis: every triple of truncation axes' classes is in some design row.
  bool truncation;
  std::string_view covered_by;
  std::span<const CoverageClass> classes;
};

// The model: dtype, vocabulary, row shape, special logit, temperature, top_k, top_p, min_p
// (designed or, for dtype, one design per declared dtype), then batch and identity (covered by
// BATCH-1/BATCH-2, DET-1..3 and INDEP-1).
std::span<const CoverageAxis> CoverageModel();
// The model as SPEC.md's Markdown table (one line per axis).
std::string CoverageModelMarkdown();

// A class left out of a declaration's design, with the declaration's reason.
struct ExcludedClass {
  std::string axis;
  std::string cls;
  std::string reason;
};

// The design of one dtype for a declaration.
struct Design {
  // The designed axes, as indices into CoverageModel(), in realization order.
  std::vector<std::size_t> axes;
  // Each row: one class index (into that axis's classes) per designed axis, in `axes` order.
  std::vector<std::vector<uint8_t>> rows;
  // Classes the declaration (or the profile's vocabulary bound) excludes, every axis.
  std::vector<ExcludedClass> excluded;
  // Pairs (and truncation triples) no valid row can hold (a class needing V >= 2 with V = 1).
  std::size_t infeasible = 0;
  std::size_t pairs = 0, triples = 0;  // the interactions covered
  // The design's canonical text (axis=class per row): the plan's digest hashes it.
  std::string Canonical() const;
};

// The options a profile fixes.
struct DesignOptions {
  std::size_t max_vocab = 262144;  // vocabulary classes above it are excluded
  bool truncation_triples = true;  // cover the triples of the truncation axes too
  uint64_t draws_per_row = 1024;   // the pooled draws of a valid design row (DIST-3)
};

// What a design row may cost by a declared draw cost (draw_cost_ns_per_token): its pooled draws
// and its checks' draws (about 16 calls of kDrawsPerCase) times V times the cost. A vocabulary
// class above that is excluded for such a declaration, as V above the profile's bound is for
// every one.
inline constexpr double kDesignRowDrawSeconds = 1.0;
inline constexpr uint64_t kDesignRowCheckDraws = 16 * kDrawsPerCase;

// The covering design: a deterministic greedy construction (AETG-style, one candidate per row,
// ties broken by a rotation fixed by the row's index), the same rows on any machine.
Design MakeDesign(DType dtype, const adapters::SamplerInfo& info, const DesignOptions& options);
DesignOptions DesignOptionsOf(const Profile& profile);

// Row j of a design, realized for a declaration (family "design"); `seed` fixes its logits.
RowCase RealizeDesignRow(const Design& design, std::size_t j, DType dtype,
                         const adapters::SamplerInfo& info, uint64_t seed);
// The coverage tags of design row j ("class:AXIS=CLASS", one per designed axis, and the dtype's).
std::vector<std::string> DesignRowTags(const Design& design, std::size_t j, DType dtype);
// The tags that record the design's excluded classes ("excluded:AXIS=CLASS (REASON)").
std::vector<std::string> ExcludedTags(const Design& design);
// The batch and identity classes a reached property covers on a row ("class:batch=...").
std::vector<std::string> PropertyClassTags(std::string_view property);

inline constexpr std::string_view kDesignFamily = "design";
inline constexpr std::string_view kClassTagPrefix = results::kCoverageClassTag;
inline constexpr std::string_view kExcludedTagPrefix = results::kCoverageExcludedTag;

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_COVERAGE_H_
