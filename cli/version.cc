#include "cli/version.h"

#include "certify/certify.h"

namespace sampcert::cli {

std::string VersionLine() {
  return "sampcert " + std::string(certify::ToolVersion()) + " (git " +
         std::string(certify::GitRevision()) + ")";
}

}  // namespace sampcert::cli
