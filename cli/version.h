// The tool's version line: CMake's project VERSION and the git revision it was built from.
#ifndef SAMPCERT_CLI_VERSION_H_
#define SAMPCERT_CLI_VERSION_H_

#include <string>

namespace sampcert::cli {

std::string VersionLine();  // "sampcert 0.1.0 (git 8ed9581)"

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_VERSION_H_
