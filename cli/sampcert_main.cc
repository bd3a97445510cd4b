// The sampcert command-line tool.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "adapters/declarations.h"
#include "certify/certify.h"
#include "cli/option_checks.h"
#include "cli/reference_command.h"
#include "cli/report_commands.h"
#include "cli/row_options.h"
#include "cli/run_command.h"
#include "cli/sampler_commands.h"
#include "cli/version.h"
#include "properties/reproduction.h"
#include "reports/verdict.h"
#include "results/shell_quote.h"
#include "results/text.h"

namespace {

using sampcert::cli::NotEmpty;
using sampcert::cli::Seconds;
using sampcert::cli::WholeNumber;

// The words that run this tool from a shell, for the reproduction lines: $SAMPCERT_TOOL_COMMAND
// where the Python package sets it; `sampcert` where that name on PATH is this executable;
// else this executable's absolute path (a prefix install's bin/ is often not on PATH).
std::string ToolCommandHere() {
  if (const char* given = std::getenv("SAMPCERT_TOOL_COMMAND"); given != nullptr && *given) {
    return given;
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::canonical("/proc/self/exe", ec);
  if (ec) return "sampcert";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    std::error_code found;
    const std::filesystem::path candidate =
        std::filesystem::canonical(std::filesystem::path(dir) / "sampcert", found);
    if (!found) {
      if (candidate == self) return "sampcert";
      break;  // the first `sampcert` on PATH is another one
    }
  }
  return sampcert::results::ShellQuote(self.string());
}

// --seed and --row-id: decimal digits only, in [0, 2^64-1], checked on the text. CLI11's own
// conversion of a uint64 takes "-1", 2^64 and 2^64+1 alike as 2^64-1 without a word.
const sampcert::cli::OptionCheck CheckUint64 = WholeNumber(0, UINT64_MAX);

// The options that describe one row, shared by `reference` and `sample`.
void AddRowOptions(CLI::App* cmd, sampcert::cli::ReferenceRequest* req) {
  CLI::Option* row = cmd->add_option(
      "--row", req->row_file,
      "A row file (a report's row.*.json): the whole row, bit-exact, instead of --logits, "
      "--dtype, --mask, " +
          sampcert::cli::RowParamFlagList());
  // The row file gives every field of the row: one given twice is refused, not silently picked.
  auto from_row = [&](CLI::Option* o) { o->excludes(row); };
  from_row(cmd->add_option("--dtype", req->dtype, "Logit dtype: f32, f16 or bf16")
               ->capture_default_str());
  // No CLI11 delimiter: ParseRow splits the fields itself so that an empty one is an error.
  from_row(
      cmd->add_option("--logits", req->logits, "Comma-separated logits (inf, -inf, nan allowed)"));
  from_row(
      cmd->add_option("--mask", req->mask, "Comma-separated 0/1 allowed-mask")->delimiter(','));
  sampcert::cli::AddRowParamOptions(cmd, &req->params, row);
  cmd->add_option("--seed", req->seed, "Seed of the draw")
      ->capture_default_str()
      ->check(CheckUint64);
  cmd->add_option("--draws", req->draws, "Tokens to draw")
      ->capture_default_str()
      ->check(WholeNumber(0, static_cast<uint64_t>(sampcert::cli::kMaxDraws), "draws"));
}

// A policy flag's accepted spellings: the declaration table's names and aliases.
template <typename E>
std::map<std::string, E> CliNames() {
  std::map<std::string, E> out;
  for (const auto& row : sampcert::adapters::VocabularyOf(E{}).values) {
    out.emplace(row.name, row.value);
    if (!row.alias.empty()) out.emplace(row.alias, row.value);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sampcert: numerical conformance suite for LLM token samplers"};
  app.require_subcommand(1);

  sampcert::cli::ReferenceRequest req;
  CLI::App* ref = app.add_subcommand(
      "reference", "Print the exact reference distribution of one row (SPEC.md) and draws");
  AddRowOptions(ref, &req);
  ref->add_option("--ties", req.policies.tie_rule, "Tie rule at truncation cuts")
      ->transform(CLI::CheckedTransformer(CliNames<sampcert::TieRule>(), CLI::ignore_case));
  ref->add_option("--order", req.policies.order, "Pipeline order")
      ->transform(CLI::CheckedTransformer(CliNames<sampcert::PipelineOrder>(), CLI::ignore_case));
  ref->add_option("--nan", req.policies.nan_policy, "NaN policy")
      ->transform(CLI::CheckedTransformer(CliNames<sampcert::NanPolicy>(), CLI::ignore_case));
  ref->add_option("--greedy-threshold", req.policies.greedy_threshold,
                  "Declared greedy threshold (0 = none)");

  CLI::App* list = app.add_subcommand("list", "List the built-in samplers");
  CLI::App* declarations = app.add_subcommand(
      "declarations",
      "Print every capability, policy value and declaration field with its ABI value, report "
      "name and label (JSON)");

  std::string sampler;
  // --sampler-config: passed to the sampler's create() (NULL when absent), recorded in reports.
  std::string sampler_config;
  const char* kSamplerHelp =
      "Built-in name, path to a plug-in .so, or exec:'COMMAND' (a process-protocol sampler)";
  const char* kConfigHelp = "String passed to the sampler's create() (absent: NULL)";
  CLI::App* info = app.add_subcommand("info", "Print what a sampler declares");
  info->add_option("--sampler", sampler, kSamplerHelp)->required();
  CLI::Option* info_config = info->add_option("--sampler-config", sampler_config, kConfigHelp);
  // info and sample open the sampler in a worker with run's limits (docs/isolation.md).
  double worker_timeout_s = 300;
  const char* kWorkerTimeoutHelp =
      "CPU seconds the sampler's worker may use (as run's --item-timeout); past it, or past a "
      "wall-clock backstop of 4x this + 30 s, the command fails with a timeout";
  const sampcert::cli::OptionCheck positive_seconds =
      Seconds(0, true, sampcert::certify::kMaxSeconds);
  info->add_option("--item-timeout", worker_timeout_s, kWorkerTimeoutHelp)
      ->check(positive_seconds)
      ->capture_default_str();

  sampcert::cli::ReferenceRequest sample_req;
  CLI::App* sample = app.add_subcommand("sample", "Draw tokens for one row with a sampler");
  sample->add_option("--sampler", sampler, kSamplerHelp)->required();
  CLI::Option* sample_config = sample->add_option("--sampler-config", sampler_config, kConfigHelp);
  AddRowOptions(sample, &sample_req);
  sample->add_option("--item-timeout", worker_timeout_s, kWorkerTimeoutHelp)
      ->check(positive_seconds)
      ->capture_default_str();

  sampcert::cli::RunRequest run_req;
  CLI::App* run = app.add_subcommand("run",
                                     "Certify a sampler: run a profile's plan, write "
                                     "DIR/report.json");
  run->add_option("--sampler", run_req.sampler, kSamplerHelp)->required();
  CLI::Option* run_config = run->add_option("--sampler-config", sampler_config, kConfigHelp);
  run->add_option("--profile", run_req.profile, "quick, standard or full")->capture_default_str();
  run->add_option("--seed", run_req.seed, "Seed of the generated cases and draws")
      ->capture_default_str()
      ->check(CheckUint64);
  run->add_option("--jobs,-j", run_req.jobs, "Worker processes at once")
      ->capture_default_str()
      ->check(WholeNumber(1, static_cast<uint64_t>(sampcert::certify::kMaxJobs)));
  run->add_option("--shard", run_req.shard, "I/N: run the plan items with index mod N == I")
      ->capture_default_str();
  run->add_option("--time-budget", run_req.time_budget_s,
                  "Wall-clock seconds for the whole run (0: none). When reached, the run stops "
                  "and its report is marked incomplete (exit 5); it never changes what is "
                  "tested or any status")
      ->check(Seconds(0, false, sampcert::certify::kMaxSeconds));
  run->add_option("--out", run_req.out_dir, "Report folder")
      ->capture_default_str()
      ->check(NotEmpty());
  const char* kExpectHelp =
      "Expectations file: the failures it pins are KnownFailure (still NOT CONFORMANT); exit 0 "
      "when the run matches it, 1 on any difference (a new failure, a changed one, a known "
      "failure that now passes)";
  CLI::Option* expect =
      run->add_option("--expect", run_req.expect_file, kExpectHelp)->check(NotEmpty());
  run->add_flag("--expect-non-strict", run_req.expect_non_strict,
                "With --expect: a known failure that now passes is reported, not a failure of "
                "the expectation check")
      ->needs(expect);
  run->add_option("--item-timeout", run_req.item_timeout_s,
                  "CPU seconds (the worker's, all threads) a plan item may use; past it the "
                  "item is a Timeout with the draws it made. A worker that blocks instead is "
                  "stopped by a wall-clock backstop of 4x this + 30 s")
      ->capture_default_str()
      ->check(positive_seconds);
  run->add_flag("--no-isolation", run_req.no_isolation,
                "Run the sampler in this process: no protection at all from a crash, hang, "
                "exit() or stray write (docs/isolation.md)");
  run->add_flag("--no-speed", run_req.no_speed,
                "Do not time the sampler after the run (the report's speed line, which is "
                "informational and never part of the verdict)");
  run->add_option("--dtype", run_req.only_dtype, "Only the items of this dtype")->check(NotEmpty());
  run->add_option("--item", run_req.only_item, "Only this statistical item (dtype/name)")
      ->check(NotEmpty());
  run->add_option("--case", run_req.only_case, "Only this generated case (reproduction)")
      ->check(WholeNumber(0, static_cast<uint64_t>(INT64_MAX)));
  const char* kMaxDrawsHelp =
      "Draws per statistical test (its first run; a re-run after a rejection draws 4x). Part of "
      "the plan: a test that cannot reach its required power with them is Inconclusive";
  // Checked on the text (CLI11's numeric checks print a 300-digit range and let 2^64 wrap).
  const sampcert::cli::OptionCheck draws_check = WholeNumber(1, uint64_t{1} << 40, "draws");
  run->add_option("--max-draws", run_req.max_draws, kMaxDrawsHelp)->check(draws_check);
  const char* kDrawTimeHelp =
      "Seconds of declared draw time per statistical test (default: the profile's, 20), for a "
      "sampler that declares a draw cost: its tests' draws are capped at this over (cost x V). "
      "Part of the plan: more time lets a slow sampler's big-row tests (TAIL-1, DIST-1 on "
      "wide rows) reach their power or fail, instead of ending Inconclusive (SPEC STAT-4b)";
  // At most 1e6 s: the cap is a whole number of draws, and a week per test is past any use.
  const sampcert::cli::OptionCheck draw_time_check = Seconds(0, true, 1e6);
  run->add_option("--draw-time", run_req.draw_time_s, kDrawTimeHelp)->check(draw_time_check);

  sampcert::cli::RunRequest plan_req;
  CLI::App* plan = app.add_subcommand(
      "plan", "Print the plan `run` would run: each statistical test's draws, looks and levels");
  plan->add_option("--sampler", plan_req.sampler, kSamplerHelp)->required();
  CLI::Option* plan_config = plan->add_option("--sampler-config", sampler_config, kConfigHelp);
  plan->add_option("--profile", plan_req.profile, "quick, standard or full")->capture_default_str();
  plan->add_option("--seed", plan_req.seed, "Seed of the generated cases and draws")
      ->capture_default_str()
      ->check(CheckUint64);
  plan->add_option("--max-draws", plan_req.max_draws, kMaxDrawsHelp)->check(draws_check);
  plan->add_option("--draw-time", plan_req.draw_time_s, kDrawTimeHelp)->check(draw_time_check);

  CLI::App* report = app.add_subcommand("report", "Merge, diff and render report.json files");
  report->require_subcommand(1);
  std::vector<std::string> merge_inputs;
  std::string merge_out = "sampcert-report";
  CLI::App* merge = report->add_subcommand("merge", "Join shard reports into one");
  merge->add_option("reports", merge_inputs, "Shard report.json files")->required();
  merge->add_option("--out", merge_out, "Folder for the merged report")
      ->capture_default_str()
      ->check(NotEmpty());
  std::string diff_old, diff_new;
  CLI::App* diff = report->add_subcommand("diff", "FIX / REGRESSION / DIFFERENCE between runs");
  diff->add_option("old", diff_old, "The earlier report.json")->required();
  diff->add_option("new", diff_new, "The later report.json")->required();
  std::string render_in, render_out;
  CLI::App* html = report->add_subcommand("html", "Re-render a report.json as HTML");
  html->add_option("report", render_in, "report.json")->required();
  html->add_option("-o,--output", render_out, "Output file (default: report.html beside it)");
  CLI::App* junit = report->add_subcommand("junit", "Re-render a report.json as JUnit XML");
  junit->add_option("report", render_in, "report.json")->required();
  junit->add_option("-o,--output", render_out, "Output file (default: report.junit.xml beside it)");
  std::string reasons_in;
  CLI::App* expectations = report->add_subcommand(
      "expectations",
      "Write the expectations file that pins every failure of a complete report.json");
  expectations->add_option("report", render_in, "report.json of a complete, unfiltered run")
      ->required();
  expectations->add_option("--reasons", reasons_in,
                           "An earlier expectations file (either format): its reasons are kept");
  expectations->add_option("-o,--output", render_out, "Output file (default: standard output)");

  sampcert::properties::SetToolCommand(ToolCommandHere());
  app.set_version_flag("--version", sampcert::cli::VersionLine());
  // CLI11's own exit codes (104-109 and more) are usage errors like any other: exit 2, the
  // documented code for them. --help and --version (exit 0) stay 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // The config is recorded in report.json, which holds UTF-8 only: bytes that are not would be
  // stored as U+FFFD, and the recorded run could not be reproduced. Refused before any work.
  if (!sampler_config.empty() &&
      sampcert::results::SanitizeUtf8(sampler_config) != sampler_config) {
    std::cerr << "error: --sampler-config is not valid UTF-8: "
              << sampcert::results::ShellQuote(sampler_config) << "\n";
    return 2;
  }
  auto config_of = [&](const CLI::Option* o) {
    return o->count() > 0 ? std::optional<std::string>(sampler_config) : std::nullopt;
  };
  run_req.sampler_config = config_of(run_config);
  plan_req.sampler_config = config_of(plan_config);
  if (plan->parsed()) return sampcert::cli::RunPlanDump(plan_req, std::cout, std::cerr);
  if (merge->parsed()) {
    return sampcert::cli::RunReportMerge(merge_inputs, merge_out, std::cout, std::cerr);
  }
  if (diff->parsed()) return sampcert::cli::RunReportDiff(diff_old, diff_new, std::cout, std::cerr);
  if (expectations->parsed()) {
    return sampcert::cli::RunReportExpectations(render_in, reasons_in, render_out, std::cout,
                                                std::cerr);
  }
  if (html->parsed() || junit->parsed()) {
    const std::string format = html->parsed() ? "html" : "junit";
    if (render_out.empty()) {
      render_out = (std::filesystem::path(render_in).parent_path() /
                    (format == "html" ? "report.html" : "report.junit.xml"))
                       .string();
    }
    return sampcert::cli::RunReportRender(format, render_in, render_out, std::cerr);
  }
  if (run->parsed()) return sampcert::cli::RunRun(run_req, std::cout, std::cerr);
  if (ref->parsed()) return sampcert::cli::RunReference(req, std::cout, std::cerr);
  if (list->parsed()) return sampcert::cli::RunList(std::cout);
  if (declarations->parsed()) return sampcert::cli::RunDeclarations(std::cout);
  if (info->parsed())
    return sampcert::cli::RunInfo(sampler, std::cout, std::cerr, config_of(info_config),
                                  worker_timeout_s);
  if (sample->parsed()) {
    return sampcert::cli::RunSample(sampler, sample_req, std::cout, std::cerr,
                                    config_of(sample_config), worker_timeout_s);
  }
  return sampcert::reports::Code(sampcert::reports::ExitCode::kUsage);
}
