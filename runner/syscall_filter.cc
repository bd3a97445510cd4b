#include "runner/syscall_filter.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/capability.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(SAMPCERT_HAVE_SECCOMP)
#include <seccomp.h>
#endif

namespace sampcert::runner {

std::string DropPtraceCapability() {
  if (::geteuid() != 0) return {};
  // The bounding set first: an exec would otherwise hand root the capability back.
  if (::prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0 && errno != EINVAL) {
    return fmt::format("prctl(PR_CAPBSET_DROP): {}", std::strerror(errno));
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) {
    return fmt::format("capget: {}", std::strerror(errno));
  }
  const uint32_t bit = 1u << (CAP_SYS_PTRACE % 32);
  auto& word = data[CAP_SYS_PTRACE / 32];
  word.effective &= ~bit;
  word.permitted &= ~bit;
  word.inheritable &= ~bit;
  if (::syscall(SYS_capset, &header, data) != 0) {
    return fmt::format("capset: {}", std::strerror(errno));
  }
  return {};
}

#if defined(SAMPCERT_HAVE_SECCOMP)
namespace {

// Arguments are compared on their low 32 bits (pid_t and int commands: the upper half of the
// register is not defined by the ABI).
constexpr uint64_t kLow32 = 0xffffffffu;

class Filter {
 public:
  Filter() : ctx_(seccomp_init(SCMP_ACT_ALLOW)) {}
  ~Filter() {
    if (ctx_ != nullptr) seccomp_release(ctx_);
  }
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;
  bool ok() const { return ctx_ != nullptr && error_.empty(); }
  const std::string& error() const { return error_; }
  scmp_filter_ctx get() const { return ctx_; }

  // Refuses `name` outright.
  void Deny(const char* name, int err) { Add(name, err, {}); }
  // Refuses `name` when argument `arg` equals `value`, and (with `cmd_arg` >= 0) argument
  // `cmd_arg` equals `cmd` too.
  void DenyIf(const char* name, unsigned arg, uint32_t value, int cmd_arg = -1, uint32_t cmd = 0) {
    std::vector<scmp_arg_cmp> c{SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, kLow32, value)};
    if (cmd_arg >= 0) {
      c.push_back(SCMP_CMP(static_cast<unsigned>(cmd_arg), SCMP_CMP_MASKED_EQ, kLow32, cmd));
    }
    Add(name, EPERM, c);
  }
  // Refuses `name` when argument `arg` is negative (a process group, or -1: every process)
  // other than -own_group. "x != v" among negatives is "x differs from v in some bit i below
  // the sign bit": one masked comparison per bit, exact, with no range comparison needed.
  void DenyOtherGroups(const char* name, unsigned arg, pid_t own_group, int cmd_arg = -1,
                       uint32_t cmd = 0) {
    const uint32_t own = static_cast<uint32_t>(-own_group);
    for (unsigned i = 0; i < 31; ++i) {
      const uint32_t bit = 1u << i;
      std::vector<scmp_arg_cmp> c{
          SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, 0x80000000u | bit, 0x80000000u | (~own & bit))};
      if (cmd_arg >= 0) {
        c.push_back(SCMP_CMP(static_cast<unsigned>(cmd_arg), SCMP_CMP_MASKED_EQ, kLow32, cmd));
      }
      Add(name, EPERM, c);
    }
  }

 private:
  void Add(const char* name, int err, const std::vector<scmp_arg_cmp>& c) {
    if (!error_.empty()) return;
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return;  // not a system call of this architecture
    const int rc =
        seccomp_rule_add_array(ctx_, SCMP_ACT_ERRNO(static_cast<uint32_t>(err)), nr,
                               static_cast<unsigned>(c.size()), c.empty() ? nullptr : c.data());
    if (rc != 0) error_ = fmt::format("seccomp_rule_add({}): {}", name, std::strerror(-rc));
  }
  scmp_filter_ctx ctx_;
  std::string error_;
};

}  // namespace

std::string InstallSyscallFilter(pid_t tool, pid_t supervisor, pid_t own_group) {
  Filter f;
  if (f.get() == nullptr) return "seccomp_init failed";
  if (seccomp_attr_set(f.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) != 0) {
    return "seccomp_attr_set(BADARCH) failed";
  }
  for (const pid_t protected_pid : {tool, supervisor}) {
    const auto p = static_cast<uint32_t>(protected_pid);
    f.DenyIf("kill", 0, p);
    f.DenyIf("tgkill", 0, p);
    f.DenyIf("rt_sigqueueinfo", 0, p);
    f.DenyIf("rt_tgsigqueueinfo", 0, p);
    f.DenyIf("fcntl", 2, p, 1, F_SETOWN);
    f.DenyIf("ptrace", 1, p);
    f.DenyIf("process_vm_readv", 0, p);
    f.DenyIf("process_vm_writev", 0, p);
    f.DenyIf("pidfd_open", 0, p);
    f.DenyIf("prlimit64", 0, p);
  }
  f.DenyOtherGroups("kill", 0, own_group);
  f.DenyOtherGroups("fcntl", 2, own_group, 1, F_SETOWN);
  f.Deny("tkill", ENOSYS);
  f.Deny("pidfd_send_signal", ENOSYS);
  f.DenyIf("fcntl", 1, F_SETOWN_EX);
  f.DenyIf("ioctl", 1, FIOSETOWN);
  f.DenyIf("ioctl", 1, SIOCSPGRP);
  f.DenyIf("ioctl", 1, TIOCSTI);
  if (!f.ok()) return f.error();
  if (const int rc = seccomp_load(f.get()); rc != 0) {
    return fmt::format("seccomp_load: {}", std::strerror(-rc));
  }
  return {};
}
#else
std::string InstallSyscallFilter(pid_t, pid_t, pid_t) {
  return "sampcert was built without libseccomp";
}
#endif

}  // namespace sampcert::runner
