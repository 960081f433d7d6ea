// Session load benchmark: how long loading a saved session takes, by size. A file of N entries
// (a realistic mix: user prompts, assistant answers with thinking and tool calls, tool results
// with their display, mode and name entries) is written once, then loaded R times; each stage is
// timed on its own, in CPU time of the process (medians of the runs):
//   floor   reading the file's bytes (the one file reader), nothing else
//   json    decoding every line with jsoncpp (ParseJson) and nothing else: the library's share
//   parse   ReadSessionFile: bytes -> header + entries (JSON decode of every line)
//   session Session::Create with the entries as seed (index, branch, restored state)
//   replay  acp::ForEachReplayUpdate over the branch (what session/load sends before answering),
//           each update written as the JSON-RPC line the door writes (serialisation, no I/O),
//           one at a time as the door does
// Usage: lousho_session_load_bench [runs=7] [sizes=1000,10000,100000,300000] [scale=1]
// `scale` multiplies the text sizes (1: about 1 KiB per entry; 0.25: short chat turns; 0.02:
// a few words per message, about 0.3 KiB per entry, as the probe's 300k-entry file).
// "ready" is parse + session: the file read until the session can take a prompt (the store's
// load); "with replay" adds what ACP's session/load sends the editor first.
// "(wall)" columns are the same stretches in wall time. "peak" is the process's peak resident
// memory during one load (VmHWM, reset before it through /proc/self/clear_refs) less what it
// held before, and "÷ file" that over the file's size: ready, then with the replay. The load is
// measured before the floor, so that with runs = 1 (a fresh process, as the figures in
// docs/performance.md are taken) nothing read earlier is still in the heap.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "acp/codec.h"
#include "agent/session.h"
#include "agent/session_store.h"
#include "support/files.h"
#include "support/json_util.h"

namespace {
namespace fs = std::filesystem;
using namespace lousho;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// CPU time of the process in ms (every thread the load might use): on a shared machine wall time
// says more about the neighbours than about lousho, so every stage is measured in CPU time; wall
// times are shown beside.
struct CpuPoint {
  double ms;
};
CpuPoint CpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return {ts.tv_sec * 1e3 + ts.tv_nsec / 1e6};
}
double Ms(CpuPoint a, CpuPoint b) { return b.ms - a.ms; }

double g_scale = 1.0;

std::string Filler(size_t n, int seed) {
  n = static_cast<size_t>(static_cast<double>(n) * g_scale);
  static const char* kWords[] = {"the",  "session", "file",   "reads", "back",
                                 "fast", "and",     "linear", "tool",  "result",
                                 "with", "a",       "diff",   "of",    "notes"};
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) {
    s += kWords[(i * 7 + seed) % 15];
    s += (i % 12 == 11) ? "\n" : " ";
  }
  return s;
}

// Writes a session of about `n` entries and returns its path.
fs::path WriteSession(const fs::path& dir, size_t n) {
  agent::SessionHeader h;
  h.id = "bench" + std::to_string(n);
  h.timestamp_ms = agent::NowMs();
  h.cwd = "/work/project";
  h.agent = "bench";
  fs::path path = dir / (h.id + ".jsonl");
  auto writer = agent::SessionWriter::ForNew(path, h);
  agent::History history;
  size_t call = 0;
  auto add = [&](agent::Entry e) { writer->Record(history.Append(std::move(e))); };
  while (history.entries().size() < n) {
    const int k = static_cast<int>(history.entries().size());
    agent::Entry user;
    user.message.role = agent::Role::kUser;
    user.message.content.push_back(agent::ContentBlock::Text(Filler(200, k)));
    add(user);
    agent::Entry assistant;
    assistant.message.role = agent::Role::kAssistant;
    assistant.message.content.push_back(agent::ContentBlock::Thinking(Filler(300, k), "sig"));
    assistant.message.content.push_back(agent::ContentBlock::Text(Filler(400, k + 1)));
    Json::Value args(Json::objectValue);
    args["path"] = "src/file" + std::to_string(k) + ".cpp";
    const std::string id = "call_" + std::to_string(++call);
    assistant.message.content.push_back(agent::ContentBlock::ToolCall(id, "read", args));
    assistant.message.stop_reason = agent::StopReason::kToolUse;
    assistant.message.assistant.Edit().usage = agent::Usage{1200, 300, 800, 0, 0.004};
    assistant.message.assistant.Edit().provider = "openai";
    assistant.message.assistant.Edit().model = "gpt-4o";
    add(assistant);
    agent::Entry result;
    result.message.role = agent::Role::kToolResult;
    result.message.tool_call_id = id;
    result.message.tool_name = "read";
    result.message.content.push_back(agent::ContentBlock::Text(Filler(1500, k + 2)));
    result.message.tool.Edit().title = "Read " + args["path"].asString();
    result.message.tool.Edit().kind = agent::ToolKind::kRead;
    result.message.tool.Edit().args = args;
    result.message.tool.Edit().locations.push_back({"/work/project/" + args["path"].asString(), 1});
    result.message.tool.Edit().details["totalLines"] = 120;
    add(result);
    agent::Entry answer;
    answer.message.role = agent::Role::kAssistant;
    answer.message.content.push_back(agent::ContentBlock::Text(Filler(500, k + 3)));
    add(answer);
    if (k % 40 == 0) {
      agent::Entry mode;
      mode.kind = agent::EntryKind::kModeChange;
      mode.more.Edit().mode = k % 80 == 0 ? "accept-edits" : "default";
      add(mode);
    }
  }
  writer->Close();
  return path;
}

// The same in a child process, so that the history it builds leaves nothing in this process's
// heap for the load to reuse (its peak would look smaller than a fresh process's).
fs::path WriteSessionApart(const fs::path& dir, size_t n) {
  const pid_t child = fork();
  if (child == 0) {
    WriteSession(dir, n);
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || status != 0) std::exit(1);
  return dir / ("bench" + std::to_string(n) + ".jsonl");
}

// The process's peak resident set (VmHWM) and current one (VmRSS), in bytes.
struct Rss {
  uint64_t peak = 0, now = 0;
};
Rss ReadRss() {
  Rss r;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return r;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) r.peak = kb * 1024;
    if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1) r.now = kb * 1024;
  }
  std::fclose(f);
  return r;
}
// Starts a new peak (Linux: "5" to clear_refs sets VmHWM to the current VmRSS).
void ResetPeak() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return;
  std::fputs("5", f);
  std::fclose(f);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The measurements of one session size, one value per run.
struct LoadRuns {
  std::vector<double> floor, json, parse, session, replay, wall, ready_wall;
  std::vector<double> peak_ready, peak_replay;
  size_t updates = 0;
};

// The floor: the file read into memory, then each line decoded by jsoncpp (CPU ms). False (and
// a message) when it cannot be read.
bool MeasureFloor(const fs::path& path, LoadRuns& runs) {
  auto t0 = CpuNow();
  auto bytes = ReadDiskFile(path, agent::kMaxSessionFileBytes);
  auto t1 = CpuNow();
  if (!bytes.ok()) return std::fprintf(stderr, "%s\n", bytes.error().message.c_str()), false;
  runs.floor.push_back(Ms(t0, t1));
  std::string_view text = *bytes;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    if (!ParseJson(text.substr(pos, nl - pos)).ok()) return false;
    pos = nl + 1;
  }
  runs.json.push_back(Ms(t1, CpuNow()));
  return true;
}

// The session file parsed, the session made from it (ready), and its replay written as the door
// sends it: times and memory peaks. False (and a message) on a failure.
bool MeasureLoad(const fs::path& path, const std::shared_ptr<agent::AgentConfig>& agent_config,
                 LoadRuns& runs) {
  ResetPeak();
  const uint64_t before = ReadRss().now;
  const auto w0 = Clock::now();
  auto t2 = CpuNow();
  auto contents = agent::ReadSessionFile(path);
  auto t3 = CpuNow();
  if (!contents.ok()) return std::fprintf(stderr, "%s\n", contents.error().message.c_str()), false;
  std::fprintf(stderr, "decoded on %d thread(s)\n", contents->decode_threads);
  agent::SessionOptions o;
  o.id = "bench";
  o.cwd = "/work/project";
  o.seed = std::move(contents->entries);
  auto s = agent::Session::Create(agent_config, std::move(o));
  auto t4 = CpuNow();
  runs.ready_wall.push_back(Ms(w0, Clock::now()));
  if (!s.ok()) return std::fprintf(stderr, "%s\n", s.error().message.c_str()), false;
  runs.peak_ready.push_back(static_cast<double>(ReadRss().peak - before));
  ResetPeak();
  // As the door sends them: each update made, written as its line, and let go.
  size_t line_bytes = 0;
  runs.updates = 0;
  (*s)->transcript().VisitBranch([&](const std::vector<const agent::Entry*>& branch) {
    acp::ForEachReplayUpdate(branch, [&](const Json::Value& u) {
      std::string params = "{\"sessionId\":\"bench\",\"update\":" + WriteJson(u) + "}";
      line_bytes += params.size() + 48;
      ++runs.updates;
    });
  });
  auto t5 = CpuNow();
  if (line_bytes == 0) return false;
  runs.wall.push_back(Ms(w0, Clock::now()));  // wall, parse to write
  runs.peak_replay.push_back(static_cast<double>(ReadRss().peak - before));
  runs.parse.push_back(Ms(t2, t3));
  runs.session.push_back(Ms(t3, t4));
  runs.replay.push_back(Ms(t4, t5));
  return true;
}

void PrintRow(size_t n, const fs::path& path, const LoadRuns& runs) {
  const double ready = Median(runs.parse) + Median(runs.session);
  const double total = ready + Median(runs.replay);
  const double file_bytes = static_cast<double>(fs::file_size(path));
  std::printf(
      "| %zu | %.1f MiB | %.2f ms | %.2f ms | %.2f ms | %.2f ms | **%.2f ms** | %.2f ms | %.2f "
      "ms | %.2f ms | %.2f ms | %.2f µs | %.2f ms | %.0f MiB | %.2f | %.0f MiB | %.2f |\n",
      n, file_bytes / 1048576.0, Median(runs.floor), Median(runs.json), Median(runs.parse),
      Median(runs.session), ready, Median(runs.ready_wall), Median(runs.replay), total,
      Median(runs.wall), total * 1000.0 / static_cast<double>(n),
      Median(runs.json) + Median(runs.floor), Median(runs.peak_ready) / 1048576.0,
      Median(runs.peak_ready) / file_bytes, Median(runs.peak_replay) / 1048576.0,
      Median(runs.peak_replay) / file_bytes);
  std::fprintf(stderr, "%zu entries: %zu replay updates\n", n, runs.updates);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  std::vector<size_t> sizes = {1000, 10000, 100000, 300000};
  if (argc > 2) {
    sizes.clear();
    std::stringstream ss(argv[2]);
    for (std::string item; std::getline(ss, item, ',');) sizes.push_back(std::stoul(item));
  }
  if (argc > 3) g_scale = std::atof(argv[3]);
  const fs::path dir =
      fs::temp_directory_path() / ("lousho-session-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto agent_config = std::make_shared<agent::AgentConfig>();
  agent_config->name = "bench";

  std::fprintf(stderr, "sizeof: Entry %zu, Message %zu, ContentBlock %zu bytes\n",
               sizeof(agent::Entry), sizeof(agent::Message), sizeof(agent::ContentBlock));
  std::printf(
      "| entries | file | floor: read bytes | floor: jsoncpp decode | parse | + session | "
      "**ready** | ready (wall) | + replay | with replay | with replay (wall) | per entry | "
      "floor: read + jsoncpp | peak: ready | ÷ file | peak: with replay | ÷ file |\n");
  std::printf(
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t n : sizes) {
    const fs::path path = WriteSessionApart(dir, n);
    LoadRuns measured;
    for (int r = 0; r < runs; ++r)
      // The load first: in a fresh process (runs = 1) its peak is then measured from what the
      // process held before anything was read, not from a heap the floor's decode left behind.
      if (!MeasureLoad(path, agent_config, measured) || !MeasureFloor(path, measured)) return 1;
    PrintRow(n, path, measured);
  }
  if (!std::getenv("LOUSHO_BENCH_KEEP")) fs::remove_all(dir);
  return 0;
}
