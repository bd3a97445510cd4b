#include "reports/report_schema.h"

#include <cstdint>
#include <stdexcept>
#include <string>
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

// std::regex matches recursively, one frame per character: a 30,000-character string checked
// against a `pattern` overflowed the stack. So every pattern in the schema comes with a
// maxLength of at most this, and validation runs twice: first against the schema without its
// patterns (the lengths are checked, no regex runs), then, only if that passed, against the
// whole schema, whose patterns then see short strings only.
constexpr uint64_t kMaxPatternSubject = 4096;

// Removes every "pattern" keyword (a string-valued "pattern": a property named pattern would
// have a schema, an object, as its value), checking that each had a small maxLength beside it.
void StripPatterns(nlohmann::json* node, const std::string& where) {
  if (node->is_object()) {
    if (node->contains("pattern") && (*node)["pattern"].is_string()) {
      const nlohmann::json* max = node->contains("maxLength") ? &(*node)["maxLength"] : nullptr;
      if (max == nullptr || !max->is_number_unsigned() ||
          max->get<uint64_t>() > kMaxPatternSubject) {
        throw std::logic_error("report.schema.json: the pattern at " + where +
                               " needs a maxLength of at most " +
                               std::to_string(kMaxPatternSubject));
      }
      node->erase("pattern");
    }
    for (auto& [key, value] : node->items()) StripPatterns(&value, where + "/" + key);
  } else if (node->is_array()) {
    for (std::size_t i = 0; i < node->size(); ++i) {
      StripPatterns(&(*node)[i], where + "/" + std::to_string(i));
    }
  }
}

valijson::Schema* Load(bool with_patterns) {
  auto* s = new valijson::Schema;
  nlohmann::json doc = nlohmann::json::parse(kReportSchemaText);
  nlohmann::json stripped = doc;
  StripPatterns(&stripped, "");
  // Draft 7 keywords cover what the schema uses; $defs is reached through JSON-pointer $refs.
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter adapter(with_patterns ? doc : stripped);
  parser.populateSchema(adapter, *s);
  return s;
}

const valijson::Schema& Schema(bool with_patterns) {
  static const valijson::Schema* full = Load(true);
  static const valijson::Schema* lengths_only = Load(false);
  return with_patterns ? *full : *lengths_only;
}

// The first problems against one schema, each as "JSON-pointer: what", or empty.
std::string Problems(const valijson::Schema& schema, const nlohmann::json& report) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(report);
  if (validator.validate(schema, target, &results)) return {};
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

}  // namespace

std::string_view ReportSchemaText() { return kReportSchemaText; }

std::string ValidateReport(const nlohmann::json& report) {
  if (std::string why = Problems(Schema(false), report); !why.empty()) return why;
  return Problems(Schema(true), report);
}

}  // namespace sampcert::reports
