#include "reports/root_causes.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "reports/report.h"

namespace sampcert::reports {

using results::Status;
using results::TestResult;

namespace {

bool Digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool WordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// The length of the number that starts `s` (an optional sign, then nan, inf, or digits and
// points with an optional exponent), 0 if none does.
std::size_t NumberLength(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (s.substr(i, 3) == "nan" || s.substr(i, 3) == "inf") return i + 3;
  const std::size_t first = i;
  while (i < s.size() && (Digit(s[i]) || s[i] == '.')) ++i;
  if (i == first || (i == first + 1 && s[first] == '.')) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t k = i + 1;
    if (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
    if (k < s.size() && Digit(s[k])) {
      while (k < s.size() && Digit(s[k])) ++k;
      i = k;
    }
  }
  return i;
}

bool Failing(const TestResult& r) {
  return !results::IsConformant(r.status) && r.status != Status::kKnownFailure;
}

// The note properties/generated_rows.cc gives a property it never reached on a case because an
// earlier check of the case failed: a consequence of that failure, not a cause.
bool Consequence(const TestResult& r) {
  constexpr std::string_view kNotReached = "not reached on ";
  return !r.failure && std::string_view(r.note).substr(0, kNotReached.size()) == kNotReached;
}

// Which result of a root cause leads (smaller first): one with a failure record before one
// without, one with its complete input (a row) before one without, then the smaller input.
std::tuple<bool, bool, std::size_t> LeadKey(const TestResult& r) {
  if (!r.failure) return {true, true, 0};
  return {false, r.failure->row.empty(), r.failure->row.size()};
}

}  // namespace

std::string MessageClass(std::string_view message) {
  constexpr std::string_view kChannel = "probabilities: ";
  if (message.substr(0, kChannel.size()) == kChannel) message.remove_prefix(kChannel.size());
  message = message.substr(0, message.find_first_of(":(;"));
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    if (i == 0 || !WordChar(message[i - 1])) {
      const std::size_t n = NumberLength(message.substr(i));
      if (n > 0 && (i + n == message.size() ||
                    std::isalnum(static_cast<unsigned char>(message[i + n])) == 0)) {
        out += '#';
        i += n;
        continue;
      }
    }
    if (std::isspace(static_cast<unsigned char>(message[i])) != 0) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += message[i];
    }
    ++i;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<RootCause> RootCauses(const std::vector<TestResult>& results) {
  std::map<std::tuple<std::string, Status, std::string>, RootCause> groups;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const TestResult& r = results[i];
    if (!Failing(r) || Consequence(r)) continue;
    const std::string cls = MessageClass(r.failure ? r.failure->message : r.note);
    RootCause& g = groups[{r.property, r.status, cls}];
    if (g.results.empty()) {
      g.property = r.property;
      g.status = r.status;
      g.message_class = cls;
      g.lead = i;
    } else if (LeadKey(r) < LeadKey(results[g.lead])) {
      g.lead = i;
    }
    g.results.push_back(i);
  }
  for (auto& [key, g] : groups) {
    const TestResult& r = results[g.lead];
    if (r.failure) {
      g.message = r.failure->message;
      g.input = r.failure->minimal_input.empty() ? r.failure->input : r.failure->minimal_input;
      g.reproduction = r.failure->reproduction;
      g.row_file = r.failure->row_file;
    } else {
      g.message = r.note;
    }
  }
  std::vector<RootCause> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) {
    std::set<std::string> families, dtypes;
    for (std::size_t i : g.results) {
      families.insert(results[i].family);
      dtypes.insert(results[i].dtype);
    }
    for (const char* d : {"f32", "f16", "bf16"}) {
      if (dtypes.erase(d) > 0) g.dtypes.emplace_back(d);
    }
    g.dtypes.insert(g.dtypes.end(), dtypes.begin(), dtypes.end());  // any other, sorted
    g.families.assign(families.begin(), families.end());
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const RootCause& a, const RootCause& b) {
    if (Severity(a.status) != Severity(b.status)) return Severity(a.status) > Severity(b.status);
    if (a.results.size() != b.results.size()) return a.results.size() > b.results.size();
    return std::tie(a.property, a.message_class) < std::tie(b.property, b.message_class);
  });
  return out;
}

std::size_t NotReached(const std::vector<TestResult>& results) {
  return static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(),
                    [](const TestResult& r) { return Failing(r) && Consequence(r); }));
}

}  // namespace sampcert::reports
