/* A plug-in that misbehaves on purpose, for the runner's isolation ctests (tests/hostile_test.sh).
 * It is the skeleton's correct f32 sampler, plus one misbehavior chosen by the environment
 * variable SAMPCERT_HOSTILE, which the workers inherit:
 *
 *   ctor_segv, ctor_exit0        library constructor segfaults / calls exit(0)
 *   get_info_segv, get_info_exit0, create_segv, create_exit0
 *   thread_crash                 create starts a thread that segfaults once sample() is called
 *   chdir                        create changes the working directory
 *   fork_child                   sample() forks a child that sleeps for ten minutes
 *   forge                        sample() writes "[]" to every file descriptor, then _exit(0)
 *   exit_in_sample               sample() calls exit(3)
 *   write_past_out               sample() writes one token past the end of `out`
 *   write_logits                 sample() writes into the (const) logits
 *   spin                         sample() spins forever (the parent-kill tests)
 *   info_flip                    get_info declares version 2.0 in every process but the first
 *                                (marker file: SAMPCERT_HOSTILE_MARKER)
 *   name_bad_utf8                the name is not UTF-8
 *   unterminated_error           errors fill the message buffer without a NUL
 *   setpgid_child, setsid_child  sample() forks (once per process) a child that leaves the
 *                                worker's process group (setpgid) or session (setsid), sleeps
 *   orphan_child                 sample() double-forks (once): the grandchild calls setsid and
 *                                sleeps, its parent exits (the grandchild is an orphan)
 *   fake_verdict                 get_info writes a screen clear and a green fake verdict to
 *                                stdout, stderr and /dev/tty
 *   sigstop_tool, sigkill_tool   sample() sends SIGSTOP / SIGKILL to every "sampcert" ancestor
 *                                and to its process group, then spins
 *   ptrace_tool                  sample() ptrace-attaches to every "sampcert" ancestor, spins
 *   sabotage_out                 sample() (once: marker file) replaces the folder named by
 *                                SAMPCERT_HOSTILE_OUT with a regular file
 *   write_batch                  sample() writes into the (const) batch struct
 *   no_caps                      get_info declares no capability at all
 *   flood_output                 sample() writes to stdout without end
 *   kill_own_group               sample() sends SIGKILL to its own process group (allowed)
 *   traceme                      sample() calls ptrace(PTRACE_TRACEME), then raises SIGUSR1
 *   speed_crash, speed_spin      sample() segfaults / spins forever on the speed phase's calls
 *                                only (seed kSpeedSeed, runner/speed.h): correct in the run;
 *                                speed_spin creates the marker file first
 *
 * Anything else (or unset): a correct sampler. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define PLUGIN_NAME "hostile"
#define PLUGIN_INFO hostile_info
#define PLUGIN_CREATE hostile_create
#define PLUGIN_ON_ERROR hostile_error
#include "plugin_skeleton.h"

/* The seed of the speed phase's calls after a run (runner/speed.h: kSpeedSeed, "SPEED"). */
static const uint64_t kSpeedSeed = 0x5350454544u;

static int mode(const char* m) {
  const char* e = getenv("SAMPCERT_HOSTILE");
  return e != NULL && strcmp(e, m) == 0;
}

static void segv(void) {
  volatile int* null_pointer = NULL;
  *null_pointer = 1;
}

__attribute__((constructor)) static void hostile_constructor(void) {
  if (mode("ctor_segv")) segv();
  if (mode("ctor_exit0")) exit(0);
}

static void hostile_error(sampcert_error* error) {
  if (mode("unterminated_error")) {
    memset(error->message, 'x', sizeof error->message); /* no NUL, no row */
  }
}

static int32_t hostile_info(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  if (mode("get_info_segv")) segv();
  if (mode("get_info_exit0")) exit(0);
  if (mode("fake_verdict")) {
    static const char kFake[] = "\033[2J\033[H\033[32mverdict: CONFORMANT FAKE-VERDICT\033[0m\n";
    (void)!write(1, kFake, sizeof kFake - 1);
    (void)!write(2, kFake, sizeof kFake - 1);
    const int tty = open("/dev/tty", O_WRONLY | O_NOCTTY);
    if (tty >= 0) {
      (void)!write(tty, kFake, sizeof kFake - 1);
      close(tty);
    }
  }
  if (mode("name_bad_utf8")) info->name = "hostile\xff\xfe\xc3(";
  if (mode("info_flip")) { /* the first process to ask (the describe step) sees 1.0 */
    const char* marker = getenv("SAMPCERT_HOSTILE_MARKER");
    const int fd = marker != NULL ? open(marker, O_CREAT | O_EXCL | O_WRONLY, 0600) : -1;
    if (fd >= 0) {
      close(fd);
    } else {
      info->version = "2.0";
    }
  }
  if (mode("no_caps")) info->capabilities = 0;
  return SAMPCERT_STATUS_OK;
}

/* thread_crash: the thread create starts segfaults when the first sample() call releases it,
 * and that call waits for it. Tied to the work, not to a delay: a worker that samples always
 * dies, however fast its item would have been (a 300 ms timer let fast items finish first). */
static pthread_mutex_t g_crash_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_crash_cv = PTHREAD_COND_INITIALIZER;
static int g_crash_go = 0;

static void* crash_later(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_crash_mu);
  while (!g_crash_go) pthread_cond_wait(&g_crash_cv, &g_crash_mu);
  pthread_mutex_unlock(&g_crash_mu);
  segv();
  return NULL;
}

static int32_t hostile_create(const char* config, sampcert_sampler* s, sampcert_error* error) {
  (void)config;
  (void)s;
  (void)error;
  if (mode("create_segv")) segv();
  if (mode("create_exit0")) exit(0);
  if (mode("thread_crash")) {
    pthread_t t;
    pthread_create(&t, NULL, crash_later, NULL);
    pthread_detach(t);
  }
  if (mode("chdir") && chdir("/") != 0) return SAMPCERT_STATUS_INTERNAL;
  return SAMPCERT_STATUS_OK;
}

/* The parent of `pid` (from /proc/PID/stat), or -1. */
static pid_t parent_of(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* close_paren = strrchr(buf, ')');
  int ppid = -1;
  if (close_paren == NULL || sscanf(close_paren + 2, "%*c %d", &ppid) != 1) return -1;
  return (pid_t)ppid;
}

static int is_sampcert(pid_t pid) {
  char path[64], comm[64] = {0};
  snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  (void)!read(fd, comm, sizeof comm - 1);
  close(fd);
  return strncmp(comm, "sampcert", 8) == 0;
}

/* Every ancestor that is the tool (or a process forked from it): what a plug-in that wants to
 * stall the run would aim at. */
static void attack_ancestors(void (*attack)(pid_t)) {
  for (pid_t p = getppid(); p > 1; p = parent_of(p)) {
    if (is_sampcert(p)) attack(p);
  }
}
static void stop_it(pid_t p) {
  const pid_t group = getpgid(p);
  kill(p, SIGSTOP);
  if (group > 1) kill(-group, SIGSTOP);
}
static void kill_it(pid_t p) {
  const pid_t group = getpgid(p);
  kill(p, SIGKILL);
  if (group > 1) kill(-group, SIGKILL);
}
static void trace_it(pid_t p) { ptrace(PTRACE_ATTACH, p, NULL, NULL); }

static void spin_forever(void) {
  for (volatile unsigned long spin = 0;; ++spin) {
  }
}

/* Once per process: a child that escapes the worker's group or session and sleeps. */
static void leave_a_child(void) {
  static int done = 0;
  if (done) return;
  done = 1;
  const pid_t child = fork();
  if (child != 0) {
    if (child > 0 && mode("orphan_child")) waitpid(child, NULL, 0);
    return;
  }
  if (mode("setpgid_child")) setpgid(0, 0);
  if (mode("setsid_child")) setsid();
  if (mode("orphan_child")) {
    if (fork() != 0) _exit(0); /* the grandchild is orphaned at once */
    setsid();
  }
  sleep(600);
  _exit(0);
}

/* Once per run (marker file): the report folder becomes a regular file. */
static void sabotage_out(void) {
  const char* out = getenv("SAMPCERT_HOSTILE_OUT");
  const char* marker = getenv("SAMPCERT_HOSTILE_MARKER");
  if (out == NULL || marker == NULL) return;
  const int fd = open(marker, O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) return;
  close(fd);
  char moved[4096];
  snprintf(moved, sizeof moved, "%s.moved-away", out);
  if (rename(out, moved) == 0) {
    const int f = open(out, O_CREAT | O_WRONLY, 0600);
    if (f >= 0) close(f);
  }
}

/* A linear scan of the weights: it differs from draw_by_prefix_sums only for a target that
 * rounds up to the total, where it takes the last positive weight even if too small to move it. */
static void draw_by_scan(const sampcert_sampler* s, const plugin_row* row, double sum) {
  for (uint64_t j = 0; j < row->draws; ++j) {
    const double target = draw_target(row, j, sum);
    double c = 0;
    int64_t token = -1;
    for (uint64_t i = 0; i < row->vocab; ++i) {
      if (s->weights[i] > 0) token = (int64_t)i; /* never a zero-weight token */
      c += s->weights[i];
      if (target < c && s->weights[i] > 0) break;
    }
    row->out[j] = token;
  }
}

/* The hostile actions in sample(), in their order; the one-row batch is checked already. */
static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  if (mode("thread_crash")) {
    pthread_mutex_lock(&g_crash_mu);
    g_crash_go = 1;
    pthread_cond_broadcast(&g_crash_cv);
    pthread_mutex_unlock(&g_crash_mu);
    sleep(60); /* the other thread's segfault ends the process first */
  }
  if (mode("fork_child") && fork() == 0) {
    sleep(600);
    _exit(0);
  }
  if (mode("forge")) {
    for (int fd = 0; fd < 4096; ++fd) (void)!write(fd, "[]", 2);
    _exit(0);
  }
  if (mode("exit_in_sample")) exit(3);
  if (mode("kill_own_group")) kill(0, SIGKILL);
  if (mode("traceme")) {
    (void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    raise(SIGUSR1); /* a traced process stops at it: its parent sees a stop, not an end */
    sleep(60);
  }
  if (mode("spin")) spin_forever();
  if (row->seed == kSpeedSeed && mode("speed_crash")) segv();
  if (row->seed == kSpeedSeed && mode("speed_spin")) {
    const char* marker = getenv("SAMPCERT_HOSTILE_MARKER"); /* tells the test the phase began */
    if (marker != NULL) close(open(marker, O_CREAT | O_WRONLY, 0600));
    spin_forever();
  }
  if (mode("setpgid_child") || mode("setsid_child") || mode("orphan_child")) leave_a_child();
  if (mode("sigstop_tool") || mode("sigkill_tool") || mode("ptrace_tool")) {
    attack_ancestors(mode("sigstop_tool") ? stop_it : mode("sigkill_tool") ? kill_it : trace_it);
    spin_forever();
  }
  if (mode("sabotage_out")) sabotage_out();
  if (mode("write_batch")) ((sampcert_batch*)row->batch)->reserved0 = 7;
  if (mode("flood_output")) {
    static const char kLine[] = "flooding the tool's stdout, if it were ours\n";
    for (;;) (void)!write(1, kLine, sizeof kLine - 1);
  }
  if (mode("write_logits")) ((float*)row->logits)[0] += 1.0f;
  double sum = 0;
  const int32_t status = row_weights(s, row, error, &sum);
  if (status != SAMPCERT_STATUS_OK) return status;
  if (mode("write_past_out")) row->out[row->draws] = 0;
  draw_by_scan(s, row, sum);
  return SAMPCERT_STATUS_OK;
}
