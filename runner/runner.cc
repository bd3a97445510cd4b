#include "runner/runner.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "results/result_json.h"

namespace sampcert::runner {

using results::Failure;
namespace {

using Clock = std::chrono::steady_clock;

TestResult Broken(const PlanItem& item, Status status, const std::string& why) {
  TestResult r;
  r.property = item.kind == "deterministic" ? "ALL" : item.kind;
  r.dtype = item.dtype;
  r.family = item.name.empty() ? item.kind : item.name;
  r.status = status;
  r.note = why;
  r.failure = Failure{why, item.kind + " " + item.dtype + " " + item.name, "", ""};
  return r;
}

std::string Serialize(const std::vector<TestResult>& results) {
  nlohmann::json a = nlohmann::json::array();
  for (const TestResult& r : results) a.push_back(results::ToJson(r));
  return a.dump();
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  PlanItem item;
  std::string output;
  Clock::time_point started;
};

}  // namespace

std::vector<PlanItem> ShardItems(const Plan& plan, const RunOptions& o) {
  std::vector<PlanItem> out;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const PlanItem& it = plan.items[i];
    if (static_cast<int>(i % static_cast<std::size_t>(o.shard_count)) != o.shard_index) continue;
    if (!o.only_dtype.empty() && it.dtype != o.only_dtype) continue;
    if (!o.only_item.empty() && o.only_item != it.dtype + "/" + it.name) continue;
    if (o.only_case >= 0 && it.kind != "deterministic") continue;
    out.push_back(it);
  }
  return out;
}

std::vector<TestResult> RunPlan(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const RunOptions& o) {
  const std::vector<PlanItem> items = ShardItems(plan, o);
  std::vector<TestResult> results;
  std::size_t done = 0;
  auto finish = [&](const PlanItem& item, std::vector<TestResult> r) {
    results.insert(results.end(), std::make_move_iterator(r.begin()),
                   std::make_move_iterator(r.end()));
    ++done;
    if (o.progress) o.progress(done, items.size(), item);
  };
  if (!o.isolate) {
    for (const PlanItem& item : items) {
      finish(item, properties::RunItem(sampler, sampler_arg, plan, item, o.only_case));
    }
    return results;
  }
  std::vector<Worker> running;
  std::size_t next = 0;
  std::fflush(stdout);
  std::fflush(stderr);
  while (next < items.size() || !running.empty()) {
    while (next < items.size() && static_cast<int>(running.size()) < std::max(1, o.jobs)) {
      const PlanItem& item = items[next++];
      int fds[2];
      if (pipe(fds) != 0) {
        finish(item, {Broken(item, Status::kCrash, std::string("pipe: ") + std::strerror(errno))});
        continue;
      }
      const pid_t pid = fork();
      if (pid == 0) {  // the worker
        close(fds[0]);
        std::string out;
        try {
          out = Serialize(properties::RunItem(sampler, sampler_arg, plan, item, o.only_case));
        } catch (const std::exception& e) {
          out = Serialize({Broken(item, Status::kCrash, std::string("exception: ") + e.what())});
        }
        const char* p = out.data();
        std::size_t left = out.size();
        while (left > 0) {
          const ssize_t w = write(fds[1], p, left);
          if (w <= 0) _exit(3);
          p += w;
          left -= static_cast<std::size_t>(w);
        }
        _exit(0);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        finish(item, {Broken(item, Status::kCrash, std::string("fork: ") + std::strerror(errno))});
        continue;
      }
      running.push_back(Worker{pid, fds[0], item, {}, Clock::now()});
    }
    std::vector<pollfd> pfds;
    for (const Worker& w : running) pfds.push_back({w.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 200);
    for (std::size_t k = running.size(); k-- > 0;) {
      Worker& w = running[k];
      bool eof = false;
      if (pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[65536];
        const ssize_t n = read(w.fd, buf, sizeof buf);
        if (n > 0) {
          w.output.append(buf, static_cast<std::size_t>(n));
        } else {
          eof = true;
        }
      }
      const double age = std::chrono::duration<double>(Clock::now() - w.started).count();
      if (!eof && age > o.item_timeout_s) {
        kill(w.pid, SIGKILL);
        waitpid(w.pid, nullptr, 0);
        close(w.fd);
        finish(w.item, {Broken(w.item, Status::kTimeout,
                               fmt::format("the sampler did not finish this item within {} s; "
                                           "the worker was killed",
                                           o.item_timeout_s))});
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      if (!eof) continue;
      int status = 0;
      waitpid(w.pid, &status, 0);
      close(w.fd);
      std::vector<TestResult> r;
      if (WIFSIGNALED(status)) {
        r.push_back(Broken(w.item, Status::kCrash,
                           fmt::format("the sampler's worker died of signal {} ({})",
                                       WTERMSIG(status), strsignal(WTERMSIG(status)))));
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        r.push_back(Broken(w.item, Status::kCrash,
                           fmt::format("the sampler's worker exited with status {}",
                                       WIFEXITED(status) ? WEXITSTATUS(status) : -1)));
      } else {
        try {
          for (const auto& j : nlohmann::json::parse(w.output)) {
            r.push_back(results::ResultFromJson(j));
          }
        } catch (const std::exception& e) {
          r.push_back(
              Broken(w.item, Status::kCrash, std::string("unreadable worker output: ") + e.what()));
        }
      }
      finish(w.item, std::move(r));
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  return results;
}

}  // namespace sampcert::runner
