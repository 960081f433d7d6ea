// History scale benchmark: a session continued from N stored entries (SessionOptions::seed),
// then prompted; reports the seeding time, the engine's model request build (prompt -> the
// provider's Stream() call), the Anthropic and OpenAI request bodies (build + serialise), and the
// process's resident memory before, after seeding and at its peak. The bodies are made either
// the way the providers make them (written straight into the string by the JsonWriter:
// WriteAnthropicBody, WriteOpenAiChatBody). Each size runs in a forked child, so one size's heap
// does not colour the next.
//
// "engine request build" is the engine's own work for one request: from Prompt() (the turn
// decides to ask the model: the prompt joins the history, the compaction check, the request is
// made) to the moment the provider's Stream() is entered with it; p50 and max of 15 prompts, in
// wall time and in the process's CPU time (the caller only waits meanwhile, so the CPU figure is
// the engine's work, free of the scheduler's delays on a loaded machine).
//
// Usage: lousho_history_bench [N...]   (default 1000 10000 100000)
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "agent/providers/anthropic_messages.h"
#include "agent/providers/openai_chat.h"
#include "agent/session.h"
#include "support/log.h"

namespace {

using Clock = std::chrono::steady_clock;
using lousho::agent::ContentBlock;
using lousho::agent::Entry;
using lousho::agent::Role;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of the calling thread (ms): steadier than wall time on a shared machine.
double ThreadCpuMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

long ProcKib(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string k;
  long v = -1;
  while (f >> k) {
    if (k == key) {
      f >> v;
      break;
    }
    f.ignore(1 << 20, '\n');
  }
  return v;
}

// CPU time of the whole process (ms). Between Prompt() and Stream() the calling thread only
// waits, so this is the engine's own CPU for the request, whatever the scheduler does.
double ProcessCpuMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Times what the engine hands it and builds the real Anthropic body from it.
class TimingProvider : public lousho::agent::Provider {
 public:
  Clock::time_point prompted;
  double prompted_cpu = 0;
  std::vector<double> engine_ms;      // Prompt() -> Stream()
  std::vector<double> engine_cpu_ms;  // the same, the process's CPU time
  std::vector<double> body_ms;        // the Anthropic body, as one string
  std::vector<double> openai_ms;      // the OpenAI body, as one string
  std::vector<double> body_cpu_ms;    // the same two, the thread's CPU time
  std::vector<double> openai_cpu_ms;
  size_t body_bytes = 0;
  size_t messages = 0;

  lousho::Result<lousho::agent::ModelResponse> Stream(const lousho::agent::ModelRequest& request,
                                                      const lousho::agent::DeltaCallback&,
                                                      const lousho::CancelToken&,
                                                      const lousho::agent::RetryHooks&) override {
    const auto entered = Clock::now();
    engine_cpu_ms.push_back(ProcessCpuMs() - prompted_cpu);
    const double cpu0 = ThreadCpuMs();
    engine_ms.push_back(Ms(entered - prompted));
    std::string body = lousho::agent::WriteAnthropicBody(request, {});
    const auto built = Clock::now();
    const double cpu1 = ThreadCpuMs();
    body_ms.push_back(Ms(built - entered));
    body_cpu_ms.push_back(cpu1 - cpu0);
    body_bytes = body.size();
    std::string().swap(body);  // one body at a time, as a provider holds it
    std::string openai = lousho::agent::WriteOpenAiChatBody(request, {});
    openai_ms.push_back(Ms(Clock::now() - built));
    openai_cpu_ms.push_back(ThreadCpuMs() - cpu1);
    messages = request.messages.size();
    lousho::agent::ModelResponse r;
    r.message.role = Role::kAssistant;
    r.message.content.push_back(ContentBlock::Text("ok"));
    return r;
  }
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// A conversation of n entries: user and assistant text by turns, about 200 bytes each, every
// tenth user entry a longer paste (2 KB), as a coding session has.
std::vector<Entry> Conversation(int n) {
  std::vector<Entry> out;
  out.reserve(static_cast<size_t>(n));
  char id[16];
  for (int i = 0; i < n; ++i) {
    Entry e;
    std::snprintf(id, sizeof id, "%08x", i + 1);
    e.id = id;
    if (i > 0) {
      std::snprintf(id, sizeof id, "%08x", i);
      e.parent_id = id;
    }
    e.timestamp_ms = 1796000000000LL + i;
    e.message.role = i % 2 == 0 ? Role::kUser : Role::kAssistant;
    std::string text = "Entry " + std::to_string(i) + ": ";
    const size_t want = (i % 20 == 0) ? 2000 : 200;
    while (text.size() < want) text += "the quick brown fox jumps over the lazy dog; ";
    e.message.content.push_back(ContentBlock::Text(text));
    out.push_back(std::move(e));
  }
  return out;
}

int RunSize(int n) {
  const long rss_start = ProcKib("VmRSS:");
  auto provider = std::make_shared<TimingProvider>();
  auto agent = std::make_shared<lousho::agent::AgentConfig>();
  agent->model.provider = provider;
  agent->model.provider_name = "bench";
  agent->model.model_id = "claude-haiku-4-5";
  std::vector<Entry> seed = Conversation(n);
  const long rss_built = ProcKib("VmRSS:");
  lousho::agent::SessionOptions o;
  o.id = "h";
  o.cwd = std::filesystem::temp_directory_path();
  o.seed = std::move(seed);
  const auto t0 = Clock::now();
  auto session = lousho::agent::Session::Create(agent, std::move(o));
  const double seed_ms = Ms(Clock::now() - t0);
  if (!session.ok()) {
    std::fprintf(stderr, "seed failed: %s\n", session.error().ToString().c_str());
    return 1;
  }
  const long rss_seeded = ProcKib("VmRSS:");
  const long hwm_seeded = ProcKib("VmHWM:");
  const int kPrompts = 15;
  for (int i = 0; i < kPrompts; ++i) {
    std::promise<void> done;
    provider->prompted = Clock::now();
    provider->prompted_cpu = ProcessCpuMs();
    auto st = (*session)->Prompt(
        {ContentBlock::Text("next")},
        [&](const lousho::Result<lousho::agent::TurnResult>&) { done.set_value(); });
    if (!st.ok()) return 1;
    done.get_future().wait();
  }
  std::printf(
      "history %7d entries (%s): seed %8.2f ms | engine request build p50 %8.3f ms (max %.3f; CPU "
      "p50 %.3f, max %.3f) | "
      "anthropic "
      "body p50 %8.2f ms (CPU %.2f ms; %zu messages, %.1f MB) | openai body p50 %8.2f ms (CPU %.2f "
      "ms) | VmRSS %.1f MiB -> "
      "entries built %.1f -> seeded %.1f (VmHWM %.1f MiB) -> after the prompts %.1f (VmHWM %.1f "
      "MiB)\n",
      n, "written", seed_ms, Median(provider->engine_ms), Max(provider->engine_ms),
      Median(provider->engine_cpu_ms), Max(provider->engine_cpu_ms), Median(provider->body_ms),
      Median(provider->body_cpu_ms), provider->messages,
      static_cast<double>(provider->body_bytes) / 1e6, Median(provider->openai_ms),
      Median(provider->openai_cpu_ms), rss_start / 1024.0, rss_built / 1024.0, rss_seeded / 1024.0,
      hwm_seeded / 1024.0, ProcKib("VmRSS:") / 1024.0, ProcKib("VmHWM:") / 1024.0);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  lousho::log::Configure(lousho::log::Level::kError, "");
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  int rc = 0;
  for (int n : sizes) {
    if (n < 1) {
      std::fprintf(stderr, "usage: %s [N>=1 ...]\n", argv[0]);
      return 2;
    }
    // Forked before any thread exists, so the child may do anything.
    pid_t pid = ::fork();
    if (pid == 0) _exit(RunSize(n));
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
  }
  return rc;
}
