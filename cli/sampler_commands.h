// `sampcert list`, `sampcert info`, `sampcert declarations` and `sampcert sample`: what
// samplers exist, what one declares, the declaration vocabulary, and a sampler's draws for one
// row given on the command line.
#ifndef SAMPCERT_CLI_SAMPLER_COMMANDS_H_
#define SAMPCERT_CLI_SAMPLER_COMMANDS_H_

#include <optional>
#include <ostream>
#include <string>

#include "cli/reference_command.h"

namespace sampcert::cli {

int RunList(std::ostream& out);

// Both open the sampler in workers, as `run` does (a describe worker, then for `sample` a
// worker that draws), with the same limits: `item_timeout_s` CPU seconds per worker.

// Exit codes: 0 success, 3 when the sampler cannot be loaded (the reason is printed), 4 a host
// error.
int RunInfo(const std::string& sampler, std::ostream& out, std::ostream& err,
            const std::optional<std::string>& config = std::nullopt, double item_timeout_s = 300);

// Every capability, policy value and declaration field with its ABI value, report name and
// label, as JSON (adapters/declarations.h; tools/sync_declarations.py reads it).
int RunDeclarations(std::ostream& out);

// Draws with `sampler` for the row described in `request` (its sampling fields).
// Exit codes: 0 success; 1 when the sampler returns an error, crashes or runs out of time (the
// cause is printed); 2 usage errors; 3 when the sampler cannot be loaded; 4 a host error.
int RunSample(const std::string& sampler, const ReferenceRequest& request, std::ostream& out,
              std::ostream& err, const std::optional<std::string>& config = std::nullopt,
              double item_timeout_s = 300);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_SAMPLER_COMMANDS_H_
