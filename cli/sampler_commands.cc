#include "cli/sampler_commands.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>

#include "adapters/declarations.h"
#include "adapters/sampler.h"
#include "properties/conformance.h"
#include "registry/builtin_samplers.h"
#include "registry/open_sampler.h"
#include "results/text.h"

namespace sampcert::cli {
namespace {

// A sampler's name, version and messages are its bytes: escaped for the terminal.
std::string S(const std::string& s) { return results::EscapeForTerminal(s); }

}  // namespace

int RunList(std::ostream& out) {
  fmt::print(out, "built-in samplers:\n");
  for (const registry::BuiltinSampler& s : registry::BuiltinSamplers()) {
    fmt::print(out, "  {:<12} {}\n", s.name, s.description);
  }
  fmt::print(out, "plug-ins: give a path to a .so exporting sampcert_get_sampler_api\n");
  fmt::print(out, "\nproperties (SPEC.md section 10):\n");
  for (const auto& [id, what] : properties::PropertyCatalog()) {
    fmt::print(out, "  {:<10} {}\n", id, what);
  }
  return 0;
}

int RunInfo(const std::string& sampler, std::ostream& out, std::ostream& err,
            const std::optional<std::string>& config) {
  auto s = registry::OpenSampler(sampler, config);
  if (!s.ok()) {
    fmt::print(err, "error: {}\n", S(s.error().message));
    return 2;
  }
  const adapters::SamplerInfo& i = (*s)->info();
  // The rest in the declaration tables' labels.
  fmt::print(out, "name:          {}\nversion:       {}\n{}", S(i.name), S(i.version),
             adapters::DeclarationText(i));
  return 0;
}

int RunDeclarations(std::ostream& out) {
  fmt::print(out, "{}\n", adapters::DeclarationsDump().dump(2));
  return 0;
}

int RunSample(const std::string& sampler, const ReferenceRequest& req, std::ostream& out,
              std::ostream& err, const std::optional<std::string>& config) {
  ParsedRow parsed;
  if (!ParseRow(req, &parsed, err)) return 2;
  auto s = registry::OpenSampler(sampler, config);
  if (!s.ok()) {
    fmt::print(err, "error: {}\n", S(s.error().message));
    return 2;
  }
  const adapters::Batch batch{parsed.view.dtype, parsed.view.vocab, {parsed.view}};
  const uint64_t draws = req.draws > 0 ? static_cast<uint64_t>(req.draws) : 1;
  auto tokens = (*s)->Sample(batch, req.seed, 0, draws);
  if (!tokens.ok()) {
    fmt::print(err, "sampler error ({}): {}\n", ErrorCodeName(tokens.error().code),
               S(tokens.error().message));
    return 1;
  }
  fmt::print(out, "{} draws (seed {}, row id {}):", S((*s)->info().name), req.seed,
             parsed.view.row_id);
  for (int64_t t : *tokens) fmt::print(out, " {}", t);
  fmt::print(out, "\n");
  return 0;
}

}  // namespace sampcert::cli
