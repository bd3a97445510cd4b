#include "cli/sampler_commands.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "adapters/sampler.h"
#include "cli/run_command.h"
#include "properties/conformance.h"
#include "registry/builtin_samplers.h"
#include "registry/open_sampler.h"
#include "results/text.h"
#include "runner/runner.h"

namespace sampcert::cli {
namespace {

std::string Capabilities(uint32_t caps) {
  std::string s;
  for (const std::string& name : adapters::CapabilityNames(caps)) {
    s += s.empty() ? name : ", " + name;
  }
  return s.empty() ? "(none)" : s;
}

const char* Step(TruncationStep s) {
  return s == TruncationStep::kTopK ? "top-k" : s == TruncationStep::kTopP ? "top-p" : "min-p";
}

// A sampler's name, version and messages are its bytes: escaped for the terminal.
std::string S(const std::string& s) { return results::EscapeForTerminal(s); }

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
std::optional<adapters::SamplerInfo> Declaration(const runner::SamplerOpener& open,
                                                 const runner::RunOptions& o, std::ostream& err) {
  auto info = runner::Describe(open, o);
  if (!info.ok()) {
    fmt::print(err, "error: {}\n", S(info.error().message));
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
  const std::optional<adapters::SamplerInfo> described =
      Declaration(Opener(sampler, config), WorkerOptions(item_timeout_s, err), err);
  if (!described) return 2;
  const adapters::SamplerInfo& i = *described;
  const Policies& p = i.policies;
  fmt::print(out, "name:          {}\nversion:       {}\ncapabilities:  {}\n", S(i.name),
             S(i.version), Capabilities(i.capabilities));
  auto ties = [](TieRule r) {
    return r == TieRule::kKeepAll            ? "keep all"
           : r == TieRule::kExactLowestIndex ? "exact, lowest index"
                                             : "exact, any";
  };
  fmt::print(out, "greedy ties:   {}\n",
             p.greedy_tie_break == GreedyTieBreak::kUniform       ? "uniform"
             : p.greedy_tie_break == GreedyTieBreak::kLowestIndex ? "lowest index"
                                                                  : "any winner");
  fmt::print(out, "cut ties:      {}\n", ties(p.tie_rule));
  if (p.top_k_tie_rule) fmt::print(out, "top-k ties:    {}\n", ties(*p.top_k_tie_rule));
  if (p.top_p_tie_rule) fmt::print(out, "top-p ties:    {}\n", ties(*p.top_p_tie_rule));
  fmt::print(out, "draws:         {}\n", p.sequential_draws ? "sequential only" : "random access");
  if (p.draw_cost_ns_per_token > 0) {
    fmt::print(out, "draw cost:     {} ns per vocabulary token\n", p.draw_cost_ns_per_token);
  }
  fmt::print(out, "order:         {} ({}, {}, {})\n",
             p.order == PipelineOrder::kTemperatureFirst ? "temperature first" : "truncation first",
             Step(p.truncation_order[0]), Step(p.truncation_order[1]), Step(p.truncation_order[2]));
  fmt::print(out, "NaN logits:    {}\n", p.nan_policy == NanPolicy::kError ? "error" : "masked");
  fmt::print(out, "greedy below:  {}\n", p.greedy_threshold);
  fmt::print(out, "determinism:   {}\n",
             p.determinism == Determinism::kNone       ? "none"
             : p.determinism == Determinism::kSameSeed ? "same seed"
                                                       : "cross device");
  fmt::print(out, "accuracy:      {}\nthread safe:   {}\n",
             p.accuracy == AccuracyClass::kF32    ? "fp32"
             : p.accuracy == AccuracyClass::kBF16 ? "bf16"
                                                  : "fp16",
             i.thread_safe ? "yes" : "no");
  return 0;
}

int RunSample(const std::string& sampler, const ReferenceRequest& req, std::ostream& out,
              std::ostream& err, const std::optional<std::string>& config, double item_timeout_s) {
  ParsedRow parsed;
  if (!ParseRow(req, &parsed, err)) return 2;
  const runner::SamplerOpener open = Opener(sampler, config);
  const runner::RunOptions o = WorkerOptions(item_timeout_s, err);
  const std::optional<adapters::SamplerInfo> info = Declaration(open, o, err);
  if (!info) return 2;
  const adapters::Batch batch{parsed.view.dtype, parsed.view.vocab, {parsed.view}};
  const uint64_t draws = req.draws > 0 ? static_cast<uint64_t>(req.draws) : 1;
  auto drawn = runner::SampleInWorker(open, *info, batch, req.seed, draws, o);
  if (!drawn.ok()) {
    fmt::print(err, "error: {}\n", S(drawn.error().message));
    return 2;
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
  fmt::print(out, "{} draws (seed {}, row id {}):", S(info->name), req.seed, parsed.view.row_id);
  for (int64_t t : drawn->tokens) fmt::print(out, " {}", t);
  fmt::print(out, "\n");
  return 0;
}

}  // namespace sampcert::cli
