// The traceability table (SPEC.md TRACE-1): every normative promise a sampler can violate, with a
// stable ID at the grain of one promise, and the planned inputs on which a violation is decisive
// (exact, or detectable at the profile's power), or why none is planned.
//
// How to add a row: give the promise an ID (SPEC's own, or SPEC's ID plus ".what" for one promise
// of a statement that makes several), a one-line promise, and either `evidence` (space-separated
// "kind:name" words, below) or `not_exercised` (why no planned input decides it). Then paste
// ClausesMarkdown() into SPEC's TRACE-1 section: clauses_test fails until SPEC and the table
// agree, when an evidence word names nothing the plan has, and when a clause has neither.
//
// Evidence words (clauses_test resolves each against the plan of a sampler declaring everything):
//   row:NAME      a planned row (distribution, tail, precision probe, independence families)
//   chain:NAME    a planned verify chain (SPEC VER-PLAN-1)
//   design:AXIS.CLASS  a class of the coverage model (COV-1), on design rows or as its table says
//   property:ID   a property checked on every generated row, or an item of its own (ABI-1 on
//                 every call)
#ifndef SAMPCERT_PROPERTIES_CLAUSES_H_
#define SAMPCERT_PROPERTIES_CLAUSES_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sampcert::properties {

struct Clause {
  std::string_view id;       // stable; the report's coverage section and SPEC cite it
  std::string_view promise;  // one line
  // Space-separated evidence words (see above); read by clauses_test and the report.
  std::string_view evidence = {};
  // Why no planned input decides the promise; non-empty exactly when `evidence` is empty.
  std::string_view not_exercised = {};
};

enum class EvidenceKind : unsigned char { kRow, kChain, kDesign, kProperty };

struct Evidence {
  EvidenceKind kind;
  std::string name;  // after the "kind:" prefix
};

std::span<const Clause> Clauses();
// The words of a clause's evidence, parsed; an unknown kind is an error by name (thrown as
// std::invalid_argument: the table is code, and clauses_test runs every row).
std::vector<Evidence> EvidenceOf(const Clause& clause);
// SPEC's TRACE-1 table, rendered from Clauses().
std::string ClausesMarkdown();
// SPEC IDs that are the suite's own promises (the reference, bands, tolerances, statistics,
// plan and report), not a sampler's: each is verified by the suite's unit tests, not by a
// planned input. clauses_test requires every other ID SPEC defines to have a clause.
std::span<const std::string_view> SuiteOwnIds();

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_CLAUSES_H_
