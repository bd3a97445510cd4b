// The worker process (runner/worker.h): nothing it starts outlives it, in any process group or
// session; its output is captured and quoted when it dies; its system-call filter refuses
// signals and traces aimed at the tool or its supervisor, in the body and in what it execs.
#include "runner/worker.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace sampcert::runner {
namespace {

bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

TEST(Worker, DescendantsInAnyGroupOrSessionEndWithIt) {
  auto spawned = Worker::Spawn(WorkerLimits{}, [] {
    int fds[2];
    if (pipe(fds) != 0) return std::string("pipe");
    const pid_t own_session = fork();
    if (own_session == 0) {
      setsid();
      sleep(600);
      _exit(0);
    }
    const pid_t middle = fork();
    if (middle == 0) {  // a double fork: the grandchild is orphaned in its own group
      if (fork() == 0) {
        setpgid(0, 0);
        const pid_t me = getpid();
        (void)!write(fds[1], &me, sizeof me);
        sleep(600);
        _exit(0);
      }
      _exit(0);
    }
    pid_t orphan = -1;
    (void)!read(fds[0], &orphan, sizeof orphan);
    return fmt::format("{} {}", own_session, orphan);
  });
  ASSERT_TRUE(spawned.ok()) << spawned.error().message;
  Worker& w = spawned.value();
  w.RunToEnd(60);
  std::istringstream pids(w.message());
  pid_t a = -1, b = -1;
  pids >> a >> b;
  ASSERT_GT(a, 0) << w.message();
  ASSERT_GT(b, 0) << w.message();
  EXPECT_FALSE(Alive(a)) << "the setsid child outlived its worker";
  EXPECT_FALSE(Alive(b)) << "the orphaned grandchild outlived its worker";
}

TEST(Worker, OutputIsCapturedAndQuotedWhenTheBodyDies) {
  auto spawned = Worker::Spawn(WorkerLimits{}, [] {
    std::fprintf(stdout, "to stdout\n");
    std::fflush(stdout);
    std::fprintf(stderr, "assertion failed: \x1b[2Jx > 0\n");
    std::abort();
    return std::string();
  });
  ASSERT_TRUE(spawned.ok()) << spawned.error().message;
  Worker& w = spawned.value();
  const WorkerEnd e = w.RunToEnd(60);
  ASSERT_TRUE(WIFSIGNALED(e.status));
  const std::string death = w.Death(e, 0);
  EXPECT_NE(death.find("signal 6"), std::string::npos) << death;
  // Both streams, in order, with the escape made harmless.
  EXPECT_NE(death.find("its output ends: 'to stdout?assertion failed: ?[2Jx > 0'"),
            std::string::npos)
      << death;
}

TEST(Worker, TheFilterRefusesSignalsAndTracesAimedAtTheTool) {
#if !SAMPCERT_HAVE_SECCOMP
  GTEST_SKIP() << "built without libseccomp";
#endif
  const pid_t tool = getpid();
  // Signal 0 only checks permission, and PTRACE_SEIZE does not stop: nothing here can harm the
  // test process should the filter fail.
  auto spawned = Worker::Spawn(WorkerLimits{}, [tool] {
    std::string out;
    auto say = [&out](const char* what, long r) {
      out += fmt::format("{}{}:{}", out.empty() ? "" : " ", what,
                         r == -1 && (errno == EPERM || errno == EACCES) ? "refused" : "allowed");
    };
    // The ways around the filter through /proc: closed while the tool is non-dumpable.
    auto open_proc = [tool](const char* what, int flags) {
      const int fd = open(fmt::format("/proc/{}/{}", tool, what).c_str(), flags);
      if (fd >= 0) close(fd);
      return fd;
    };
    say("tool", kill(tool, 0));
    say("supervisor", kill(getppid(), 0));
    say("tool-group", kill(-getpgid(tool), 0));
    say("all", kill(-1, 0));
    say("ptrace", ptrace(PTRACE_SEIZE, tool, nullptr, nullptr));
    say("mem", open_proc("mem", O_RDWR));
    say("fd", open_proc("fd/1", O_WRONLY));
    say("own-group", kill(0, 0));
    say("self", kill(getpid(), 0));
    // Inherited across exec: a shell's kill is refused too.
    const int exec_kill = std::system(fmt::format("kill -0 {} 2>/dev/null", tool).c_str());
    errno = EPERM;
    say("exec", exec_kill != 0 ? -1 : 0);
    return out;
  });
  ASSERT_TRUE(spawned.ok()) << spawned.error().message;
  Worker& w = spawned.value();
  w.RunToEnd(60);
  EXPECT_EQ(w.FilterProblem(), "");
  EXPECT_EQ(w.message(),
            "tool:refused supervisor:refused tool-group:refused all:refused ptrace:refused "
            "mem:refused fd:refused own-group:allowed self:allowed exec:refused");
}

TEST(Worker, ATimedOutBodyIsKilledWithItsTree) {
  char path[] = "/tmp/sampcert_worker_test.XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string file = path;
  auto spawned = Worker::Spawn(WorkerLimits{}, [file] {
    if (fork() == 0) {
      setsid();
      std::FILE* f = std::fopen(file.c_str(), "w");
      std::fprintf(f, "%d\n", static_cast<int>(getpid()));
      std::fclose(f);
      for (;;) pause();
    }
    for (;;) pause();
    return std::string();
  });
  ASSERT_TRUE(spawned.ok()) << spawned.error().message;
  const WorkerEnd e = spawned.value().RunToEnd(1);  // the wall-clock backstop
  EXPECT_TRUE(e.killed_by_us);
  ASSERT_TRUE(WIFSIGNALED(e.status));
  EXPECT_EQ(WTERMSIG(e.status), SIGKILL);
  std::FILE* f = std::fopen(path, "r");
  int child = -1;
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fscanf(f, "%d", &child), 1);
  std::fclose(f);
  unlink(path);
  EXPECT_FALSE(Alive(child)) << "the blocked body's child outlived it";
}

}  // namespace
}  // namespace sampcert::runner
