// The processes below one process, read from /proc: what a worker's supervisor kills before it
// exits, so that nothing a sampler started outlives its item in any process group or session.
// Complete only for a root that is a child subreaper (PR_SET_CHILD_SUBREAPER): then every
// descendant stays below it, whatever it does with setsid, setpgid or double forks.
#ifndef SAMPCERT_RUNNER_PROCESS_TREE_H_
#define SAMPCERT_RUNNER_PROCESS_TREE_H_

#include <sys/types.h>

#include <vector>

namespace sampcert::runner {

// Every live or zombie process whose parent chain leads to `root` (root itself excluded).
std::vector<pid_t> Descendants(pid_t root);

// SIGKILLs every descendant of `root` (one pass); returns how many were signalled.
std::size_t KillDescendants(pid_t root);

// For a subreaper: kills every descendant of this process and reaps them, pass after pass,
// until it has no child left or `max_seconds` have passed (a process stuck in the kernel).
// Returns true when none is left.
bool EndAllDescendants(double max_seconds);

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_PROCESS_TREE_H_
