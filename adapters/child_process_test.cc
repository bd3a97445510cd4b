// ChildProcess: the descriptor map (exactly the mapped descriptors reach the child), the
// captured output's tail, exec failures, kill + reap (once, by Terminate or the destructor),
// the process group, and a copy of the handle in a fork of the parent.
#include "adapters/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sampcert {
namespace {

using std::chrono::milliseconds;

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  return out;
}

void WriteAll(int fd, const std::string& s) {
  for (std::size_t off = 0; off < s.size();) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

ChildProcess MustSpawn(const std::vector<std::string>& argv, const ChildOptions& o = {}) {
  auto c = ChildProcess::Spawn(argv, {"PATH=/usr/bin:/bin"}, o);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? std::move(c).value() : ChildProcess();
}

// True once `pid` has died: gone, or a zombie (an orphan waits for init, which in a container
// may never reap it).
bool GoneWithin(pid_t pid, milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    if (!(stat >> pid_field >> comm >> state) || state == "Z") return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
}

TEST(ChildProcess, ForkedChildSeesExactlyItsMappedDescriptors) {
  FdPair channel, stray;
  ASSERT_TRUE(MakePipe(&channel));
  ASSERT_TRUE(MakePipe(&stray, 0));  // not close-on-exec: a plain fork would leak it
  ChildOptions o;
  o.fds = {{9, channel[1].get()}};
  auto c = ChildProcess::Fork(o, [](const ForkSetup& setup) {
    if (setup.failed_step != nullptr) return 2;
    std::string open;
    for (int fd = 0; fd < 1024; ++fd) {
      const int flags = fcntl(fd, F_GETFD);
      if (flags >= 0) open += std::to_string(fd) + ((flags & FD_CLOEXEC) ? "c " : " ");
    }
    WriteAll(9, open);
    return 0;
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  channel[1].reset();
  // stdio inherited, the channel at 9 and close-on-exec (it is the function's), nothing else.
  EXPECT_EQ(ReadAll(channel[0].get()), "0 1 2 9c ");
  const ExitStatus e = c.value().Terminate(milliseconds(2000));
  EXPECT_TRUE(e.reaped && WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) << e.status;
  EXPECT_FALSE(e.killed);
}

TEST(ChildProcess, SourcesOnTargetNumbersAreNotOverwritten) {
  // Map a to 4 and b to 3 where b's descriptor may itself be 4 (or a's 3): a naive dup2 in
  // order would place one over the other.
  FdPair a, b;
  ASSERT_TRUE(MakePipe(&a));
  ASSERT_TRUE(MakePipe(&b));
  ChildOptions o;
  o.fds = {{b[1].get(), a[1].get()}, {a[1].get(), b[1].get()}};  // swapped numbers
  auto c = ChildProcess::Fork(o, [&](const ForkSetup&) {
    WriteAll(b[1].get(), "went to a");  // b's number now holds a's pipe
    WriteAll(a[1].get(), "went to b");
    return 0;
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  a[1].reset();
  b[1].reset();
  EXPECT_EQ(ReadAll(a[0].get()), "went to a");
  EXPECT_EQ(ReadAll(b[0].get()), "went to b");
}

TEST(ChildProcess, SpawnedProgramGetsItsDescriptorsAndItsOutputIsCaptured) {
  FdPair channel;
  ASSERT_TRUE(MakePipe(&channel));
  ChildOptions o;
  o.fds = {{3, channel[1].get()}};
  o.captured = {1, 2};
  o.capture_kept = 24;
  ChildProcess c = MustSpawn(
      {"sh", "-c", "printf '%s' on-fd-3 >&3; echo to-stdout; echo long-line-on-stderr >&2"}, o);
  channel[1].reset();
  EXPECT_EQ(ReadAll(channel[0].get()), "on-fd-3");  // mapped without close-on-exec
  const ExitStatus e = c.Terminate(milliseconds(5000));
  EXPECT_TRUE(e.reaped && WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) << e.status;
  EXPECT_EQ(c.OutputTail(), "out\nlong-line-on-stderr\n");  // both streams, the last 24 bytes
  EXPECT_EQ(c.output_fd(), -1);                             // closed by the child: no longer polled
}

TEST(ChildProcess, AProgramThatCannotRunIsAnErrorAndReaped) {
  auto c = ChildProcess::Spawn({"no-such-program-sampcert"}, {"PATH=/nonexistent"}, {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.error().message, "cannot run 'no-such-program-sampcert': No such file or directory");
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // no child left, not even a zombie
  EXPECT_EQ(errno, ECHILD);
}

TEST(ChildProcess, TerminateSaysHowItEnded) {
  ChildProcess exits = MustSpawn({"sh", "-c", "exit 3"});
  const ExitStatus e = exits.Terminate(milliseconds(5000));
  EXPECT_FALSE(e.killed);
  EXPECT_TRUE(e.reaped && WIFEXITED(e.status) && WEXITSTATUS(e.status) == 3) << e.status;
  EXPECT_FALSE(exits.running());
  EXPECT_FALSE(exits.Terminate(milliseconds(0)).reaped);  // once only

  ChildProcess sleeps = MustSpawn({"sleep", "30"});
  const auto t0 = std::chrono::steady_clock::now();
  const ExitStatus k = sleeps.Terminate(milliseconds(50));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(k.killed);
  EXPECT_TRUE(k.reaped && WIFSIGNALED(k.status) && WTERMSIG(k.status) == SIGKILL) << k.status;
}

TEST(ChildProcess, TheDestructorKillsAndReaps) {
  pid_t pid;
  {
    ChildProcess c = MustSpawn({"sleep", "30"});
    pid = c.pid();
    ASSERT_GT(pid, 0);
    EXPECT_FALSE(c.Exited());
  }
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped
  EXPECT_EQ(errno, ECHILD);
}

TEST(ChildProcess, TerminateTakesItsProcessGroupDown) {
  FdPair channel;
  ASSERT_TRUE(MakePipe(&channel));
  ChildOptions o;
  o.own_process_group = true;
  o.fds = {{5, channel[1].get()}};
  auto c = ChildProcess::Fork(o, [](const ForkSetup&) {
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      pause();
      _exit(0);
    }
    WriteAll(5, std::to_string(grandchild) + "\n");
    pause();
    return 0;
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  channel[1].reset();
  std::string line;
  for (char ch = 0; read(channel[0].get(), &ch, 1) == 1 && ch != '\n';) line += ch;
  ASSERT_FALSE(line.empty());
  const pid_t grandchild = std::stoi(line);
  EXPECT_EQ(getpgid(grandchild), c.value().pid());
  const ExitStatus e = c.value().Terminate(milliseconds(0));
  EXPECT_TRUE(e.killed);
  EXPECT_TRUE(GoneWithin(grandchild, milliseconds(5000))) << "the grandchild outlived the group";
}

void Handler(int) {}

TEST(ChildProcess, ForkInstallsTheDeathHandlerFirst) {
  ChildOptions o;
  o.death_signal = SIGTERM;
  o.death_handler = Handler;
  auto c = ChildProcess::Fork(o, [](const ForkSetup&) {
    struct sigaction sa {};
    sigaction(SIGTERM, nullptr, &sa);
    return sa.sa_handler == Handler ? 0 : 1;
  });
  ASSERT_TRUE(c.ok());
  const ExitStatus e = c.value().Terminate(milliseconds(5000));
  EXPECT_TRUE(e.reaped && WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) << e.status;
}

TEST(ChildProcess, ACopyInAForkOfTheParentLeavesTheChildAlone) {
  ChildProcess c = MustSpawn({"sleep", "30"});
  const pid_t forked = fork();
  if (forked == 0) {
    // The forked copy must not kill the parent's child, neither by Abandon nor by destruction.
    const bool mine = c.owned_here();
    c.~ChildProcess();
    _exit(mine ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(forked, &status, 0), forked);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(c.owned_here());
  EXPECT_FALSE(c.Exited());
  EXPECT_EQ(kill(c.pid(), 0), 0);
}

}  // namespace
}  // namespace sampcert
