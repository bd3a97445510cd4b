/* A plug-in that misbehaves on purpose, for the runner's isolation ctests (tests/hostile_test.sh).
 * It is the correct sampler plus one misbehavior chosen by the environment variable
 * SAMPCERT_HOSTILE, which the workers inherit:
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
 *
 * Anything else (or unset): the correct sampler. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define PLUGIN_NAME "hostile"
#define PLUGIN_INFO hostile_info
#define PLUGIN_CREATE hostile_create
#define PLUGIN_ON_ERROR hostile_error
#include "plugin_skeleton.h"

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
  if (mode("unterminated_error")) memset(error->message, 'x', sizeof error->message); /* no NUL */
}

static int32_t hostile_info(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  if (mode("get_info_segv")) segv();
  if (mode("get_info_exit0")) exit(0);
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
  return SAMPCERT_STATUS_OK;
}

/* thread_crash: the thread create starts segfaults when the first sample() call releases it,
 * and that call waits for it. Tied to the work, not to a delay: a worker that samples always
 * dies, however fast its item would have been. */
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
  if (mode("spin")) {
    for (volatile unsigned long spin = 0;; ++spin) {
    }
  }
  if (mode("write_logits")) ((float*)row->in->logits)[0] += 1.0f;
  double sum = 0;
  const int32_t status = row_weights(s, row, error, &sum);
  if (status != SAMPCERT_STATUS_OK) return status;
  if (mode("write_past_out")) row->out[row->draws] = 0;
  draw_by_prefix_sums(s, row, sum);
  return SAMPCERT_STATUS_OK;
}
