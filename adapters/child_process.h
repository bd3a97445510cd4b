// One child process of the tool, owned like a descriptor: started with an explicit map of its
// descriptors (nothing else of the parent's stays open in it), optionally in a process group
// of its own, ended by Terminate (or the destructor), which kills it and reaps it exactly once.
// Spawn runs a program (the exec: samplers); Fork runs a function of this program (the
// runner's isolated workers). All descriptors are held in UniqueFd / FdPair.
#ifndef SAMPCERT_ADAPTERS_CHILD_PROCESS_H_
#define SAMPCERT_ADAPTERS_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "adapters/unique_fd.h"
#include "sampcert/error.h"

namespace sampcert {

// Descriptor `child_fd` of the child is a copy of the parent's `parent_fd` (which the caller
// keeps owning, and may close once Spawn / Fork returns).
struct FdMapping {
  int child_fd;
  int parent_fd;
};

struct ChildOptions {
  // The child's descriptors. Those of 0, 1, 2 not named here (or in `captured`) are inherited;
  // every other descriptor of the parent is closed in the child. Under Spawn the mapped ones
  // stay open across exec; under Fork they are close-on-exec (they are the function's, not a
  // program's it may run).
  std::vector<FdMapping> fds;
  // Child descriptors that all write to one pipe the parent reads (stdout and stderr): the
  // last `capture_kept` bytes are kept (OutputTail). Empty: nothing captured.
  std::vector<int> captured;
  std::size_t capture_kept = std::size_t{64} * 1024;
  // setpgid: the child leads a process group of its own, and Terminate kills the whole group
  // (whatever the child forked, too).
  bool own_process_group = false;
  // PR_SET_PDEATHSIG: the signal the child gets when the thread that started it dies.
  int death_signal = SIGKILL;
  // Fork only: installed for death_signal before the signal is armed (e.g. a handler that
  // takes the child's process group down with it). Must be async-signal-safe.
  void (*death_handler)(int) = nullptr;
};

// Fork's child-side setup: null `failed_step`, or the step that failed ("dup") and its errno.
// The function runs either way and decides (a worker reports it as a host failure).
struct ForkSetup {
  const char* failed_step = nullptr;
  int error = 0;
};

struct ExitStatus {
  bool reaped = false;  // false: waiting failed (e.g. SIGCHLD ignored), status means nothing
  int status = 0;       // as wait4 reports it (WIFEXITED, WTERMSIG, ...)
  bool killed = false;  // Terminate sent SIGKILL because the child had not exited by itself
  double cpu_s = 0;     // the child's user + system time
};

class ChildProcess {
 public:
  // fork, then execvpe(argv[0] looked up on PATH, argv, env) with `options`; the signal mask
  // is emptied and SIGPIPE reset for the program. Errors: kInternal "cannot create pipes: ..."
  // or "fork: ...", kInvalidArgument "cannot run 'argv[0]': ..." (the exec failed; the child
  // is reaped).
  static Expected<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                      const std::vector<std::string>& env,
                                      const ChildOptions& options);
  // fork without exec: the child sets up `options`, then runs body(setup) and _exits with its
  // return value (no atexit handlers, no static destructors: they belong to the parent).
  // stdout and stderr are flushed before the fork. Errors: kInternal "fork: ...".
  static Expected<ChildProcess> Fork(const ChildOptions& options,
                                     const std::function<int(const ForkSetup&)>& body);

  ChildProcess() = default;  // no process
  ChildProcess(ChildProcess&& o) noexcept;
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Terminate(0) if the process is still running and was started by this process.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Started and not reaped yet.
  bool running() const { return pid_ > 0; }
  // Started by this process: false in a fork of the parent, whose copy must not kill it.
  bool owned_here() const;
  // Has it exited (or been killed)? It is not reaped: its pid (and group) stay reserved.
  bool Exited() const;
  // Waits up to `grace` for the child to exit by itself, then SIGKILLs it (its group, when it
  // has one: always, so nothing it forked outlives it), reaps it and reads what is left of its
  // captured output. Nothing to do (an empty status) when it is not running.
  ExitStatus Terminate(std::chrono::milliseconds grace);
  // Forgets the child without touching it (in a fork of the parent: the parent still owns it).
  void Abandon();

  // The captured output's read end (non-blocking) to poll, or -1 (none, or the child closed
  // it); DrainOutput reads what is there now.
  int output_fd() const { return output_.get(); }
  void DrainOutput();
  std::string OutputTail() const;

 private:
  ChildProcess(pid_t pid, bool own_group, UniqueFd output, std::size_t kept);
  static Expected<ChildProcess> Start(const ChildOptions& options, bool exec,
                                      const std::function<void(const ForkSetup&)>& in_child);

  pid_t pid_ = -1;
  pid_t owner_ = -1;
  bool own_group_ = false;
  UniqueFd output_;
  std::size_t kept_ = 0;
  std::string output_text_;
};

}  // namespace sampcert

#endif  // SAMPCERT_ADAPTERS_CHILD_PROCESS_H_
