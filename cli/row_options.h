// The command-line options of a row's parameters, one per field of adapters/row_fields.h's
// table (its `flag` and `help`), shared by `reference` and `sample`.
#ifndef SAMPCERT_CLI_ROW_OPTIONS_H_
#define SAMPCERT_CLI_ROW_OPTIONS_H_

#include <string>
#include <vector>

#include "sampcert/row.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace sampcert::cli {

// One option per row field, bound to its member of `*params` and showing its default; each
// excludes `row_file` (the option that gives the whole row from a file) when it is not null.
// Returns the options in the table's order.
std::vector<CLI::Option*> AddRowParamOptions(CLI::App* cmd, RowParams* params,
                                             CLI::Option* row_file);

// The fields' flags in words, for the help of --row: "-t, --top-k, --top-p, --min-p, --row-id".
std::string RowParamFlagList();

// --seed, --row-id and every u64 field: decimal digits only, in [0, 2^64-1], checked on the
// text ("" when valid, else why). CLI11's own conversion of a uint64 takes "-1", 2^64 and
// 2^64+1 alike as 2^64-1 without a word.
std::string CheckUint64(const std::string& text);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_ROW_OPTIONS_H_
