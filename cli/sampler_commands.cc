#include "cli/sampler_commands.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>

#include "adapters/declarations.h"
#include "adapters/sampler.h"
#include "cli/run_command.h"
#include "cli/terminal_text.h"
#include "properties/conformance.h"
#include "registry/builtin_samplers.h"
#include "registry/open_sampler.h"
#include "reports/verdict.h"
#include "runner/runner.h"

namespace sampcert::cli {
namespace {

// `info` and `sample` open the sampler as `run` does: in a worker, with its limits (the same
// --item-timeout CPU seconds, address space, system-call filter), so that a hostile sampler gets
// the same status from every command.
runner::RunOptions WorkerOptions(double item_timeout_s, std::ostream& err) {
  runner::RunOptions o;
  o.item_timeout_s = item_timeout_s;
  o.memory_limit_bytes = DefaultMemoryLimit();
  o.warn = [&err](const std::string& w) { fmt::print(err, "warning: {}\n", S(w)); };
  return o;
}

runner::SamplerOpener Opener(const std::string& sampler, const std::optional<std::string>& config) {
  return [sampler, config] { return registry::OpenSampler(sampler, config); };
}

// The declaration from a describe worker; prints the error (exit 2) when there is none.
// The sampler's declaration, described in a worker; else the error is printed and `*exit_code`
// says whose failure it is (certify::DescribeFailure).
std::optional<adapters::SamplerInfo> Declaration(const runner::SamplerOpener& open,
                                                 const runner::RunOptions& o, std::ostream& err,
                                                 int* exit_code) {
  auto info = runner::Describe(open, o);
  if (!info.ok()) {
    fmt::print(err, "error: {}\n", S(info.error().message));
    *exit_code = ExitCodeOf(certify::DescribeFailure(info.error()));
    return std::nullopt;
  }
  return *info;
}

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
            const std::optional<std::string>& config, double item_timeout_s) {
  int code = 0;
  const std::optional<adapters::SamplerInfo> described =
      Declaration(Opener(sampler, config), WorkerOptions(item_timeout_s, err), err, &code);
  if (!described) return code;
  const adapters::SamplerInfo& i = *described;
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
              std::ostream& err, const std::optional<std::string>& config, double item_timeout_s) {
  ParsedRow parsed;
  if (!ParseRow(req, &parsed, err)) return 2;
  const runner::SamplerOpener open = Opener(sampler, config);
  const runner::RunOptions o = WorkerOptions(item_timeout_s, err);
  int code = 0;
  const std::optional<adapters::SamplerInfo> info = Declaration(open, o, err, &code);
  if (!info) return code;
  const adapters::Batch batch{parsed.view.dtype, parsed.view.vocab, {parsed.view}};
  const uint64_t draws = req.draws > 0 ? static_cast<uint64_t>(req.draws) : 1;
  auto drawn = runner::SampleInWorker(open, *info, batch, req.seed, draws, o);
  if (!drawn.ok()) {
    fmt::print(err, "error: {}\n", S(drawn.error().message));
    return reports::Code(reports::ExitCode::kHostError);
  }
  switch (drawn->status) {
    case results::Status::kPass: break;
    case results::Status::kFail:
      fmt::print(err, "sampler error ({}): {}\n", ErrorCodeName(drawn->code), S(drawn->message));
      return 1;
    case results::Status::kTimeout:
      fmt::print(err, "sampler timeout: {}\n", S(drawn->message));
      return 1;
    default: fmt::print(err, "sampler crash: {}\n", S(drawn->message)); return 1;
  }
  // SPEC section 17: a row with its own seed draws by it; an unseeded one by the engine's.
  const RowView& row = parsed.view;
  fmt::print(out, "{} draws (seed {}, row id {}):", S(info->name),
             row.seed_mode == kSeedOwn        ? fmt::format("{} (the row's)", row.seed)
             : row.seed_mode == kSeedUnseeded ? std::string("none: unseeded")
                                              : fmt::format("{}", req.seed),
             row.row_id);
  for (int64_t t : drawn->tokens) fmt::print(out, " {}", t);
  fmt::print(out, "\n");
  return 0;
}

}  // namespace sampcert::cli
