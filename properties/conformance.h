// The conformance run of one plan item against a sampler (SPEC.md section 10), and the catalog
// of properties. The plan is in plan.h; the properties are one file per family:
//   generated rows (generated_rows.cc, case_check.cc): case_validity.cc (INV-ERR-1, VALID-1),
//     case_support.cc (RANGE-1, SUPP-1, SUPP-2, LIM-1, LIM-2), case_probabilities.cc (FIN-1,
//     NORM-1, PROB-1, SHIFT-1, PERM-1), case_invariance.cc (DET-1, DET-2, DET-3, BATCH-1,
//     BATCH-2), case_seeds.cc (SEED-1, SEED-2, SEED-3);
//   planned rows: distribution.cc (DIST-1, DIST-2), tail.cc (TAIL-1), deviation.cc (DEV-1).
// Each item runs through the Sampler handle only and is designed to run in a worker process: its
// results are plain data (results/), and a crash or hang becomes the item's status (runner/).
#ifndef SAMPCERT_PROPERTIES_CONFORMANCE_H_
#define SAMPCERT_PROPERTIES_CONFORMANCE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/plan.h"
#include "properties/row_case.h"
#include "results/test_result.h"

namespace sampcert::properties {

// The result model lives below properties/ and reports/ (results/).
using results::Failure;
using results::Status;
using results::TestResult;

// Runs one item against the sampler. Everything it tests (rows, seeds, draw counts) follows
// from the plan alone (REPRO-1): no clock, no measured speed. `only_case` >= 0 re-runs a single
// generated case of a deterministic item (the reproduction command). `sampler_arg` is the
// sampler's words of a command line, already shell-quoted (with its --sampler-config).
std::vector<TestResult> RunItem(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const PlanItem& item, int64_t only_case = -1);

// The sorted (property, family) keys RunItem returns for the item, whatever the sampler does:
// from the plan and the declaration alone. The runner requires exactly these from a worker.
std::vector<std::pair<std::string, std::string>> ExpectedResultKeys(
    const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info,
    int64_t only_case = -1);

// The properties of SPEC.md section 10 the runner checks, with one line each.
const std::vector<std::pair<std::string, std::string>>& PropertyCatalog();

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_CONFORMANCE_H_
