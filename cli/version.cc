#include "cli/version.h"

#ifndef SAMPCERT_GIT_REVISION
#define SAMPCERT_GIT_REVISION "unknown"
#endif
#ifndef SAMPCERT_VERSION
#define SAMPCERT_VERSION "0.0.0"
#endif

namespace sampcert::cli {

std::string VersionLine() {
  return std::string("sampcert ") + SAMPCERT_VERSION + " (git " + SAMPCERT_GIT_REVISION + ")";
}

}  // namespace sampcert::cli
