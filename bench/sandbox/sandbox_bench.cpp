// Sandbox benchmark: `bash -c true` round trips through RunSubprocess (the keeper, the fork, the
// exec, the reaping) unconfined, in workspace-write with the documented lists, and with the
// network off; and the preparation of one sandbox plan alone. Not a test; run on demand (see
// docs/performance.md, "The command sandbox").
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "support/sandbox.h"
#include "support/subprocess.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double median = 0;
  double p90 = 0;
};

Figures Summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10]};
}

// Interleaved, so a change in the machine's load hits every variant alike.
std::vector<std::vector<double>> RoundTrips(
    const std::vector<std::shared_ptr<const lousho::SandboxPolicy>>& variants, int runs) {
  std::vector<std::vector<double>> ms(variants.size());
  for (int i = 0; i < runs; ++i) {
    for (size_t v = 0; v < variants.size(); ++v) {
      lousho::SubprocessOptions o;
      o.argv = {"/bin/bash", "-c", "true"};
      o.sandbox = variants[v];
      auto t0 = Clock::now();
      auto r = lousho::RunSubprocess(o);
      double d = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (!r.ok() || r->exit_code != 0) {
        std::fprintf(stderr, "run failed: %s\n",
                     r.ok() ? r->output.c_str() : r.error().message.c_str());
        std::exit(1);
      }
      ms[v].push_back(d);
    }
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 300;
  if (!lousho::ProbeSandbox().usable()) {
    std::fprintf(stderr, "no Landlock here: %s\n", lousho::ProbeSandbox().missing.c_str());
    return 1;
  }
  const char* home_env = std::getenv("HOME");
  const std::string home = home_env ? home_env : "";
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return 1;
  auto ws = std::make_shared<lousho::SandboxPolicy>();
  ws->mode = lousho::SandboxMode::kWorkspaceWrite;
  ws->writable = {cwd, "/tmp"};
  for (const std::string& c : lousho::DefaultSandboxCaches(home)) ws->writable.push_back(c);
  ws->deny_read = lousho::DefaultSandboxDenyRead(home, home + "/.config/lousho/credentials.json");
  auto net_off = std::make_shared<lousho::SandboxPolicy>(*ws);
  net_off->network = false;

  std::vector<double> prep;
  size_t rules = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto plan = lousho::SandboxPlan::Prepare(*ws);
    prep.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!plan.ok()) return 1;
    rules = (*plan)->rule_count();
  }
  auto ms = RoundTrips({nullptr, ws, net_off}, runs);
  const char* names[] = {"off", "workspace-write", "workspace-write, network off"};
  std::printf("Landlock ABI %d, %d runs each (interleaved)\n", lousho::ProbeSandbox().landlock_abi,
              runs);
  Figures p = Summarise(prep);
  std::printf("%-30s median %7.3f ms  p90 %7.3f ms  (%zu rules)\n", "prepare the plan", p.median,
              p.p90, rules);
  for (size_t v = 0; v < ms.size(); ++v) {
    Figures f = Summarise(ms[v]);
    std::printf("%-30s median %7.3f ms  p90 %7.3f ms\n", names[v], f.median, f.p90);
  }
  return 0;
}
