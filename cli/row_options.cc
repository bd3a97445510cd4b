#include "cli/row_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <type_traits>

#include "adapters/row_fields.h"
#include "results/text.h"

namespace sampcert::cli {

std::string CheckUint64(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return "must be a whole number in [0, 18446744073709551615] in decimal, not '" +
           results::EscapeForTerminal(text) + "'";
  }
  return {};
}

std::vector<CLI::Option*> AddRowParamOptions(CLI::App* cmd, RowParams* params,
                                             CLI::Option* row_file) {
  std::vector<CLI::Option*> out;
  for (const adapters::RowField& f : adapters::RowFields()) {
    CLI::Option* o = adapters::VisitRowField(f, *params, [&](auto& member) {
      return cmd->add_option(std::string(f.flag), member, std::string(f.help));
    });
    o->capture_default_str();
    if (f.member.index() == 2) o->check(CheckUint64);  // a u64 field
    if (row_file != nullptr) o->excludes(row_file);
    out.push_back(o);
  }
  return out;
}

std::string RowParamFlagList() {
  std::string out;
  const auto fields = adapters::RowFields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    // The shortest of the field's names: "-t" of "--temperature,-t".
    std::string_view names = fields[i].flag, best;
    while (!names.empty()) {
      const std::size_t comma = names.find(',');
      const std::string_view name = names.substr(0, comma);
      if (best.empty() || name.size() < best.size()) best = name;
      names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    }
    out += std::string(i == 0 ? "" : i + 1 == fields.size() ? " and " : ", ") + std::string(best);
  }
  return out;
}

}  // namespace sampcert::cli
