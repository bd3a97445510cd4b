#include "reports/report_schema.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "reports/report_schema_text.h"

namespace sampcert::reports {
namespace {

// valijson names a path element "[name]" or "[3]" under "<root>"; a JSON pointer reads better.
std::string Pointer(const std::vector<std::string>& context) {
  std::string out;
  for (const std::string& c : context) {
    if (c == "<root>") continue;
    std::string part =
        c.size() >= 2 && c.front() == '[' && c.back() == ']' ? c.substr(1, c.size() - 2) : c;
    if (part.size() >= 2 && part.front() == '"' && part.back() == '"') {
      part = part.substr(1, part.size() - 2);
    }
    out += "/" + part;
  }
  return out.empty() ? "/" : out;
}

const valijson::Schema& Schema() {
  static const valijson::Schema* schema = [] {
    auto* s = new valijson::Schema;
    const nlohmann::json doc = nlohmann::json::parse(kReportSchemaText);
    // Draft 7 keywords cover what the schema uses; $defs is reached through JSON-pointer $refs.
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    parser.populateSchema(adapter, *s);
    return s;
  }();
  return *schema;
}

}  // namespace

std::string_view ReportSchemaText() { return kReportSchemaText; }

std::string ValidateReport(const nlohmann::json& report) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(report);
  if (validator.validate(Schema(), target, &results)) return {};
  // valijson reports the failing node and then each enclosing one ("Failed to validate item #3
  // in array"); the deepest path is the one that helps, so keep the longest few.
  std::string out;
  std::size_t best = 0;
  std::vector<valijson::ValidationResults::Error> errors(results.begin(), results.end());
  for (const auto& e : errors) best = std::max(best, e.context.size());
  int shown = 0;
  for (const auto& e : errors) {
    if (e.context.size() != best || shown == 3) continue;
    const std::string pointer = Pointer(e.context);
    out += (out.empty() ? "" : "; ") + pointer + ": " + e.description;
    // The offending value, when it is short, says more than the rule it broke.
    try {
      const nlohmann::json& v =
          report.at(nlohmann::json::json_pointer(pointer == "/" ? "" : pointer));
      if (v.is_primitive()) {
        const std::string value = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (value.size() <= 80) out += " (found " + value + ")";
      }
    } catch (const std::exception&) {
      // valijson's path names a property that is absent ("required"): nothing to show.
    }
    ++shown;
  }
  return out;
}

}  // namespace sampcert::reports
