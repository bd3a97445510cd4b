// Every file the tool creates is created through these (SPEC FILE-1): exclusively (O_EXCL, so an
// existing file or a symlink planted at the name fails with EEXIST, never truncated or written
// through), never following a link (O_NOFOLLOW), under a name nobody can predict where the name
// is the tool's own (a temporary, a probe), and put in place by rename(2), which replaces a
// symlink at the destination instead of writing through it.
#ifndef SAMPCERT_REPORTS_EXCLUSIVE_FILE_H_
#define SAMPCERT_REPORTS_EXCLUSIVE_FILE_H_

#include <string>

namespace sampcert::reports {

// Creates `path` (mode 0644), which must not exist in any form, writes `text` and fsyncs it.
// Returns "" or the error naming the call that failed and its errno.
std::string CreateExclusive(const std::string& path, const std::string& text);

// Creates a new, empty file in `dir` named `prefix` + 12 random hex digits (exclusively, a new
// name tried on a collision), sets *path to it and returns "" or the error. The caller removes
// it.
std::string CreateUniqueFile(const std::string& dir, const std::string& prefix, std::string* path);

// Writes `text` to `path` atomically: into a fresh, unpredictably named temporary beside it
// (".NAME.tmp." + 12 random hex digits, removed on every failure), then renamed over `path`. A
// symlink at `path` is replaced, never followed.
std::string ReplaceAtomically(const std::string& path, const std::string& text);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_EXCLUSIVE_FILE_H_
