// What a worker sends back for a plan item, and the tool's check of it: the envelope, the
// item's nonce, the declaration and exactly the result keys the plan requires. Anything else is
// a Crash naming what was received.
#ifndef SAMPCERT_RUNNER_WORKER_MESSAGE_H_
#define SAMPCERT_RUNNER_WORKER_MESSAGE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "properties/conformance.h"

namespace sampcert::runner {

// The sorted (property, family) keys RunItem returns for an item, whatever the sampler does
// (properties::ExpectedResultKeys). The runner adds its own ABI-1 key to them.
using ResultKeys = std::vector<std::pair<std::string, std::string>>;

// The family an item's results carry: its name, or its kind for the unnamed generated-row item.
std::string ItemFamily(const properties::PlanItem& item);

// A message as the channel carries it. Plug-ins may hand us any bytes as names and messages:
// invalid UTF-8 is replaced instead of throwing (nlohmann's type_error 316).
std::string DumpMessage(const nlohmann::json& j);

// The first bytes of a received message, printable, with its size: what a Crash note quotes.
std::string Snippet(const std::string& s);

// Checks a worker's message for an item: the envelope, the nonce, the declaration and, with
// `expected` (ABI-1 included), exactly those result keys. Returns the results, or a reason the
// item is a Crash (naming what was received). Exposed for tests with fake key sets.
Expected<std::vector<results::TestResult>> CheckWorkerMessage(const std::string& message,
                                                              const std::string& nonce,
                                                              const nlohmann::json& declared_info,
                                                              const properties::PlanItem& item,
                                                              const ResultKeys* expected);

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_WORKER_MESSAGE_H_
