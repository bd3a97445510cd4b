// The system-call filter of a worker's body (SPEC.md section 14, "Deliberate interference"):
// a seccomp filter, inherited by every process the sampler starts (exec children included),
// that refuses the calls by which a sampler could stop, trace or rewrite the tool:
//
//   - signals (kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, and fcntl F_SETOWN, whose
//     SIGIO is a signal too) aimed at the tool or at the worker's supervisor, and signals to
//     any process group but the body's own (kill(-1), the tool's job, ...): EPERM;
//   - ptrace, process_vm_readv / process_vm_writev, pidfd_open and prlimit64 aimed at the tool
//     or the supervisor: EPERM;
//   - calls whose target the filter cannot see: tkill and pidfd_send_signal (ENOSYS; the
//     portable calls above remain), F_SETOWN_EX, the ioctls FIOSETOWN / SIOCSPGRP and TIOCSTI
//     (typing into a terminal): EPERM;
//   - system calls of another architecture's ABI (int 0x80 from x86-64 code): ENOSYS.
//
// Everything else is allowed: the filter is a deny list aimed at the tool, so interpreters
// (exec: samplers), CUDA and the sanitizers (LeakSanitizer ptraces its own threads) run as they
// would. Root's CAP_SYS_PTRACE is dropped in the body too, so that /proc/TOOL/mem and
// /proc/TOOL/fd stay closed to it while the tool is non-dumpable.
#ifndef SAMPCERT_RUNNER_SYSCALL_FILTER_H_
#define SAMPCERT_RUNNER_SYSCALL_FILTER_H_

#include <sys/types.h>

#include <string>

namespace sampcert::runner {

// Installs the filter in the calling (single-threaded) process. `tool` and `supervisor` are
// the processes it must leave alone, `own_group` the process group it may signal as a group.
// Returns "" when the filter is on, else why it is off (the body then runs without it).
std::string InstallSyscallFilter(pid_t tool, pid_t supervisor, pid_t own_group);

// Drops CAP_SYS_PTRACE from every capability set of the calling process (root only; a no-op
// for other users, who do not hold it). Returns "" or why it could not.
std::string DropPtraceCapability();

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_SYSCALL_FILTER_H_
