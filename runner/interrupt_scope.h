// SIGINT and SIGTERM routed to a handler for a scope (a run, the speed phase); the handlers
// before it come back when it ends. The handler only records the signal (async-signal-safe).
#ifndef SAMPCERT_RUNNER_INTERRUPT_SCOPE_H_
#define SAMPCERT_RUNNER_INTERRUPT_SCOPE_H_

#include <csignal>

namespace sampcert::runner {

class InterruptScope {
 public:
  explicit InterruptScope(void (*handler)(int)) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_INTERRUPT_SCOPE_H_
