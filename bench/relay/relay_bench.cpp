// Relay benchmark: how fast streamed model output crosses the provider layer (HTTP read, SSE
// parsing, JSON decoding, delta callback), and how much delay that adds per chunk; then the
// whole path end to end: the mock server's chunk write -> the real `lousho acp` child process
// (provider, session engine, ACP codec) -> its `agent_message_chunk` line read from its stdout;
// with --door=rpc the same through `lousho --mode rpc` and its `message_update` frames.
//
// Usage: lousho_relay_bench [--api=openai|anthropic|responses|gemini|both|all]
//        [--door=acp|rpc|both]
//        [chunks=20000] [paced_chunks=2000]
//        [pace_us=500] [lousho_binary]
// The binary defaults to $LOUSHO_BIN, else the `lousho` beside this executable.
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/providers/anthropic_messages.h"
#include "agent/providers/factory.h"
#include "agent/providers/gemini.h"
#include "agent/providers/openai_chat.h"
#include "agent/providers/openai_responses.h"
#include "config/model_catalog.h"
#include "support/http/sse_parser.h"
#include "support/json_util.h"
#include "support/log.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using lousho::agent::DeltaKind;
using lousho::agent::StreamDelta;

long long NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// One OpenAI chunk carrying `text` (as real servers send it, with the usual envelope fields).
std::string OpenAiChunk(const std::string& text) {
  return "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":"
         "1796045376,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" +
         text + "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
}
const char kOpenAiEnd[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\n"
    "data: [DONE]\n\n";

std::string AnthropicChunk(const std::string& text) {
  return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
         "\"delta\":{\"type\":\"text_delta\",\"text\":\"" +
         text + "\"}}\n\n";
}
const char kAnthropicStart[] =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_"
    "tokens\":1,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_"
    "block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
const char kAnthropicEnd[] =
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_"
    "turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

// One Responses text delta (the event name line, then the data as the API sends it), and the
// events around the message item.
std::string ResponsesChunk(const std::string& text) {
  return "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
         "\"sequence_number\":4,\"item_id\":\"msg_bench\",\"output_index\":0,\"content_"
         "index\":0,\"delta\":\"" +
         text + "\",\"logprobs\":[]}\n\n";
}
const char kResponsesStart[] =
    "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,"
    "\"response\":{\"id\":\"resp_bench\",\"object\":\"response\",\"status\":\"in_progress\"}}"
    "\n\n"
    "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\","
    "\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_bench\",\"type\":"
    "\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n"
    "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\","
    "\"sequence_number\":2,\"item_id\":\"msg_bench\",\"output_index\":0,\"content_index\":0,"
    "\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}}\n\n";
const char kResponsesEnd[] =
    "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\","
    "\"sequence_number\":5,\"output_index\":0,\"item\":{\"id\":\"msg_bench\",\"type\":"
    "\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[]}}\n\n"
    "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":6,"
    "\"response\":{\"id\":\"resp_bench\",\"object\":\"response\",\"status\":\"completed\","
    "\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2}}}\n\n";

// One chunk of Gemini's streamGenerateContent (?alt=sse) as the API sends it: a whole
// GenerateContentResponse per event (candidate, usage so far, model version, response id), each
// event ended by a blank line in CRLF.
std::string GeminiChunk(const std::string& text) {
  return "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"" + text +
         "\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": "
         "9,\"candidatesTokenCount\": 1,\"totalTokenCount\": 10},\"modelVersion\": "
         "\"gemini-2.5-flash\",\"responseId\": \"bench-gemini\"}\r\n\r\n";
}
// The last event: an empty text part with finishReason and the final usage (the stream has no
// end marker of its own).
const char kGeminiEnd[] =
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": "
    "\"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": "
    "{\"promptTokenCount\": 9,\"candidatesTokenCount\": 5,\"totalTokenCount\": 14,"
    "\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 9}]},\"modelVersion\": "
    "\"gemini-2.5-flash\",\"responseId\": \"bench-gemini\"}\r\n\r\n";

// The four wire formats benched, and what each needs.
enum class Api { kOpenAi, kAnthropic, kResponses, kGemini };
const char* ApiName(Api api) {
  switch (api) {
    case Api::kOpenAi:
      return "openai";
    case Api::kAnthropic:
      return "anthropic";
    case Api::kResponses:
      return "responses";
    case Api::kGemini:
      return "gemini";
  }
  return "";
}
// The catalogue's provider and model: gpt-5-codex is one the openai provider asks through the
// Responses API.
const char* ProviderOf(Api api) {
  if (api == Api::kGemini) return "gemini";
  return api == Api::kAnthropic ? "anthropic" : "openai";
}
const char* ModelOf(Api api) {
  switch (api) {
    case Api::kOpenAi:
      return "gpt-4o-mini";
    case Api::kAnthropic:
      return "claude-haiku-4-5";
    case Api::kResponses:
      return "gpt-5-codex";
    case Api::kGemini:
      return "gemini-2.5-flash";
  }
  return "";
}
const char* PathOf(Api api) {
  switch (api) {
    case Api::kOpenAi:
      return "/v1/chat/completions";
    case Api::kAnthropic:
      return "/v1/messages";
    case Api::kResponses:
      return "/v1/responses";
    case Api::kGemini:
      return "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
  }
  return "";
}
std::string ChunkOf(Api api, const std::string& text) {
  switch (api) {
    case Api::kOpenAi:
      return OpenAiChunk(text);
    case Api::kAnthropic:
      return AnthropicChunk(text);
    case Api::kResponses:
      return ResponsesChunk(text);
    case Api::kGemini:
      return GeminiChunk(text);
  }
  return {};
}
std::string_view StartOf(Api api) {
  if (api == Api::kAnthropic) return kAnthropicStart;
  if (api == Api::kResponses) return kResponsesStart;
  return {};
}
std::string_view EndOf(Api api) {
  if (api == Api::kAnthropic) return kAnthropicEnd;
  if (api == Api::kResponses) return kResponsesEnd;
  if (api == Api::kGemini) return kGeminiEnd;
  return kOpenAiEnd;
}
std::unique_ptr<lousho::agent::StreamDecoder> DecoderOf(Api api) {
  if (api == Api::kAnthropic) return std::make_unique<lousho::agent::AnthropicDecoder>();
  if (api == Api::kResponses) return std::make_unique<lousho::agent::OpenAiResponsesDecoder>();
  if (api == Api::kGemini) return std::make_unique<lousho::agent::GeminiDecoder>();
  return std::make_unique<lousho::agent::OpenAiChatDecoder>();
}

// The text of end-to-end chunk `i`: 4 characters, a 3-digit base-62 number and a space, so that
// every chunk is as long as the "20,000 chunks of 4 characters" and the reader can tell
// the chunks apart even when the agent merged several into one line.
constexpr char kDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr int kMaxTokens = 62 * 62 * 62;
std::string Token(int i) {
  std::string t(4, ' ');
  t[0] = kDigits[i / (62 * 62) % 62];
  t[1] = kDigits[i / 62 % 62];
  t[2] = kDigits[i % 62];
  return t;
}
int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  if (c >= 'a' && c <= 'z') return c - 'a' + 36;
  return -1;
}

struct Plan {
  Api api = Api::kOpenAi;
  int chunks = 0;
  int pace_us = 0;  // 0: as fast as the socket takes it
  // End-to-end runs: chunk i carries the text Token(i) and its write time stays here, in
  // sent_ns[i]; the bench's reader matches the ACP line by that number. Null: the text carries
  // the write timestamp itself.
  std::atomic<long long>* sent_ns = nullptr;
  std::atomic<int>* requests = nullptr;          // counts the HTTP requests served for this plan
  std::atomic<long long>* request_ns = nullptr;  // when the handler got the last request
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

struct RunResult {
  double seconds = 0;
  long long deltas = 0;
  long long chunks = 0;  // chunks carried by the deltas
  long long bytes = 0;
  std::vector<double> latency_us;  // server write -> delta callback
  double first_delta_us = 0;       // Stream() call -> first delta (request + response head)
};

RunResult RunOnce(const Plan& plan, std::atomic<const Plan*>* current, int port) {
  current->store(&plan);
  lousho::config::ProviderSettings s = *lousho::config::FindBuiltinProvider(ProviderOf(plan.api));
  const char* prefix = plan.api == Api::kAnthropic ? ""
                       : plan.api == Api::kGemini  ? "/v1beta"
                                                   : "/v1";
  s.base_url = "http://127.0.0.1:" + std::to_string(port) + prefix;
  s.max_retries = 0;
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name.ends_with("_API_KEY")) return "bench-key";
    return std::nullopt;
  };
  auto provider = lousho::agent::MakeHttpProvider(s, ModelOf(plan.api), env);
  if (!provider.ok()) {
    std::fprintf(stderr, "%s\n", provider.error().ToString().c_str());
    std::exit(1);
  }
  lousho::agent::ModelRequest req;
  req.model = ModelOf(plan.api);
  lousho::agent::Message u;
  u.content = {lousho::agent::ContentBlock::Text("go")};
  const std::vector<lousho::agent::Message> history = {u};
  req.messages = history;
  RunResult r;
  r.latency_us.reserve(plan.chunks);
  auto start = Clock::now();
  long long start_ns = NowNs();
  auto res = (*provider)->Stream(
      req,
      [&](const StreamDelta& d) {
        if (d.kind != DeltaKind::kText) return true;
        long long now = NowNs();
        if (r.deltas == 0) r.first_delta_us = static_cast<double>(now - start_ns) / 1000.0;
        ++r.deltas;
        r.bytes += static_cast<long long>(d.text.size());
        // Each chunk is "<server write timestamp> tok" (same process, same clock); a delta holds
        // several when the provider merged chunks that were already read.
        for (size_t at = 0; at < d.text.size();) {
          size_t end = d.text.find(" tok", at);
          if (end == std::string::npos) break;
          long long sent = std::atoll(d.text.c_str() + at);
          ++r.chunks;
          if (plan.pace_us > 0) r.latency_us.push_back(static_cast<double>(now - sent) / 1000.0);
          at = end + 4;
        }
        return true;
      },
      lousho::CancelToken{}, lousho::agent::RetryHooks{});
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!res.ok()) {
    std::fprintf(stderr, "stream failed: %s\n", res.error().ToString().c_str());
    std::exit(1);
  }
  return r;
}

// Pure CPU cost: SSE parsing + decoding of a prebuilt stream fed in 1400-byte pieces.
void OfflineDecode(Api api, int chunks) {
  std::string stream(StartOf(api));
  for (int i = 0; i < chunks; ++i) {
    std::string text = "tok" + std::to_string(i) + " ";
    stream += ChunkOf(api, text);
  }
  stream += EndOf(api);
  const int kRounds = 5;
  auto start = Clock::now();
  long long deltas = 0;
  for (int round = 0; round < kRounds; ++round) {
    lousho::agent::SseParser parser;
    std::unique_ptr<lousho::agent::StreamDecoder> dec = DecoderOf(api);
    lousho::agent::DeltaCallback emit = [&](const StreamDelta&) {
      ++deltas;
      return true;
    };
    std::vector<lousho::agent::SseEvent> events;
    for (size_t off = 0; off < stream.size(); off += 1400) {
      events.clear();
      // The recorded stream is well formed and the decode is what is timed, like Consume below.
      (void)parser.Feed(std::string_view(stream).substr(off, 1400), &events);
      for (const auto& ev : events) (void)dec->Consume(ev, emit);
    }
    (void)dec->TakeMessage(false);
  }
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%-10s offline parse+decode: %9.0f chunks/s  %6.2f us/chunk  %6.1f MB/s\n",
              ApiName(api), static_cast<double>(deltas) / secs,
              secs * 1e6 / static_cast<double>(deltas),
              static_cast<double>(stream.size()) * kRounds / secs / 1e6);
}

// ---- End to end: mock server -> `lousho acp` child process -> ACP line on its stdout ----

std::string DefaultLoushoBinary() {
  if (const char* env = std::getenv("LOUSHO_BIN"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "lousho";
  return (self.parent_path() / "lousho").string();
}

// Which door of the agent the end-to-end runs drive.
enum class Door { kAcp, kRpc };
const char* DoorName(Door d) {
  switch (d) {
    case Door::kAcp:
      return "acp";
    case Door::kRpc:
      return "rpc";
  }
  return "?";
}

// What the reader thread gathers during one prompt.
struct E2eRun {
  explicit E2eRun(int n)
      : chunks(n), sent_ns(new std::atomic<long long>[n > 0 ? n : 1]), recv_ns(n, -1) {
    for (int i = 0; i < n; ++i) sent_ns[i].store(-1);
  }
  int chunks;
  std::unique_ptr<std::atomic<long long>[]> sent_ns;  // server thread: just before sink.write
  std::vector<long long> recv_ns;                     // reader thread: read() of the ACP line
  long long lines = 0;  // agent_message_chunk lines (RPC: message_update text_delta frames)
  long long chars = 0;  // their text, in bytes
  long long bytes = 0;  // every line read while the run was set, newlines included
  long long first_line_ns = 0;
  long long last_line_ns = 0;
  long long bad = 0;  // chunk numbers out of range, seen twice, or lines without text
};

// `lousho acp <spec>` (or `lousho --mode rpc --agent <spec>`) with pipes on stdin/stdout and
// stderr to a file.
class AgentChild {
 public:
  explicit AgentChild(Door door = Door::kAcp) : door_(door) {}
  ~AgentChild() { Stop(); }

  bool Start(const std::string& bin, const std::string& spec, const std::string& stderr_path,
             int port) {
    // Session files are written per message, never per chunk: the relay measures without them
    // and leaves the user's ~/.lousho alone.
    if (door_ == Door::kRpc)
      return StartArgs({bin, "--mode", "rpc", "--agent", spec, "--no-session"}, stderr_path, port);
    return StartArgs({bin, "acp", spec, "--no-session"}, stderr_path, port);
  }

  // Any program (the /bin/cat floor) with the same pipes.
  bool StartArgs(std::vector<std::string> args, const std::string& stderr_path, int port) {
    // Everything the child needs is built before fork (other threads are running).
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view v(*e);
      if (v.starts_with("OPENAI_") || v.starts_with("ANTHROPIC_")) continue;
      env.emplace_back(v);
    }
    std::string base = "http://127.0.0.1:" + std::to_string(port);
    env.push_back("OPENAI_BASE_URL=" + base + "/v1");
    env.push_back("OPENAI_API_KEY=bench");
    env.push_back("ANTHROPIC_BASE_URL=" + base);
    env.push_back("ANTHROPIC_API_KEY=bench");
    env.push_back("GEMINI_BASE_URL=" + base + "/v1beta");
    env.push_back("GEMINI_API_KEY=bench");
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in[2];
    int out[2];
    if (err_fd < 0 || ::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      std::perror("pipe");
      return false;
    }
    pid_ = ::fork();
    if (pid_ < 0) {
      std::perror("fork");
      return false;
    }
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err_fd, 2);
      ::execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err_fd);
    in_fd_ = in[1];
    out_fd_ = out[0];
    reader_ = std::thread([this] { ReadLoop(); });
    return true;
  }

  void Send(const std::string& line) {
    std::string l = line + "\n";
    const char* p = l.data();
    size_t left = l.size();
    while (left > 0) {
      ssize_t n = ::write(in_fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

  // The response with this id; nullopt on timeout or when the child's stdout closed.
  std::optional<Json::Value> Wait(int id, long timeout_ms) {
    return WaitFor(
        [id](const Json::Value& v) {
          return v["id"].isInt() && v["id"].asInt() == id &&
                 lousho::StringOr(v, "type", "response") == "response";
        },
        timeout_ms);
  }
  // RPC: the next frame of this type kept for the driver (agent_end, agent_settled).
  std::optional<Json::Value> WaitFrame(const std::string& type, long timeout_ms) {
    return WaitFor([&](const Json::Value& v) { return lousho::StringOr(v, "type") == type; },
                   timeout_ms);
  }
  template <typename Pred>
  std::optional<Json::Value> WaitFor(Pred match, long timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      for (auto it = responses_.begin(); it != responses_.end(); ++it) {
        if (match(*it)) {
          Json::Value v = *it;
          responses_.erase(it);
          return v;
        }
      }
      if (eof_) return std::nullopt;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) return std::nullopt;
    }
  }

  void SetRun(E2eRun* run) { run_.store(run); }
  // Keeps every line read while a run is set (RPC: replayed through /bin/cat as the floor).
  void Capture(std::vector<std::string>* lines) { capture_.store(lines); }
  Door door() const { return door_; }
  // Blocks until the child's stdout closes.
  void WaitEof() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return eof_; });
  }
  pid_t Pid() const { return pid_; }

  // Lines the bench did not expect (requests from the agent, parse failures, stray chunks).
  std::vector<std::string> Odd() {
    std::lock_guard<std::mutex> lock(mu_);
    return odd_;
  }

  // Closes stdin, gives the child 5 s to exit, then SIGKILL. Returns a description.
  std::string Stop() {
    if (pid_ <= 0) return "";
    if (in_fd_ >= 0) ::close(in_fd_);
    in_fd_ = -1;
    int status = 0;
    std::string how;
    auto deadline = Clock::now() + std::chrono::seconds(5);
    for (;;) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        how = WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status))
                                : "signal " + std::to_string(WTERMSIG(status));
        break;
      }
      if (Clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        how = "did not exit within 5 s of stdin closing; killed";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    ::close(out_fd_);
    return how;
  }

 private:
  void ReadLoop() {
    std::string buf;
    std::vector<char> chunk(1 << 18);
    for (;;) {
      ssize_t n = ::read(out_fd_, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      long long now = NowNs();
      buf.append(chunk.data(), static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
        OnLine(std::string_view(buf).substr(start, nl - start), now);
      buf.erase(0, start);
    }
    std::lock_guard<std::mutex> lock(mu_);
    eof_ = true;
    cv_.notify_all();
  }

  // Every line is parsed as JSON, as an editor would; chunk lines are matched to the mock's
  // chunks by the tokens in their text.
  void OnLine(std::string_view line, long long now) {
    if (E2eRun* run = run_.load()) run->bytes += static_cast<long long>(line.size()) + 1;
    if (std::vector<std::string>* keep = capture_.load(); keep != nullptr && run_.load())
      keep->emplace_back(line);
    auto v = lousho::ParseJson(line);
    if (door_ == Door::kRpc) return OnRpcFrame(line, v, now);
    if (v.ok() && v->isObject() && lousho::StringOr(*v, "method") == "session/update") {
      const Json::Value& update =
          lousho::MemberOrNull(lousho::MemberOrNull(*v, "params"), "update");
      const std::string kind = lousho::StringOr(update, "sessionUpdate");
      if (kind == "agent_message_chunk") {
        OnChunkText(lousho::StringOr(lousho::MemberOrNull(update, "content"), "text"), now);
        return;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!v.ok() || !v->isObject()) {
      odd_.emplace_back(line);
    } else if (v->isMember("id") && !v->isMember("method")) {
      responses_.push_back(*v);
      cv_.notify_all();
    } else if ((*v)["method"].asString() != "session/update") {
      odd_.emplace_back(line);  // a request or notification the bench does not expect
    }
  }

  // An RPC frame: text deltas are the chunk lines; responses and the ends of a prompt go to the
  // driver; the other frames of a turn are read and dropped, as a host that only shows text.
  void OnRpcFrame(std::string_view line, const lousho::Result<Json::Value>& v, long long now) {
    const std::string type = v.ok() ? lousho::StringOr(*v, "type") : "";
    if (type == "message_update") {
      const Json::Value& ev = lousho::MemberOrNull(*v, "assistantMessageEvent");
      if (lousho::StringOr(ev, "type") == "text_delta")
        OnChunkText(lousho::StringOr(ev, "delta"), now);
      return;
    }
    static const char* const kDropped[] = {"ready",         "agent_start", "turn_start",
                                           "message_start", "message_end", "turn_end"};
    for (const char* d : kDropped)
      if (type == d) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (type == "response" || type == "agent_end" || type == "agent_settled") {
      responses_.push_back(*v);
      cv_.notify_all();
    } else {
      odd_.emplace_back(line);
    }
  }

  void OnChunkText(const std::string& text, long long now) {
    E2eRun* run = run_.load();
    if (run == nullptr) {
      loose_chunks_.fetch_add(1);
      return;
    }
    ++run->lines;
    run->chars += static_cast<long long>(text.size());
    if (run->first_line_ns == 0) run->first_line_ns = now;
    run->last_line_ns = now;
    // Token(i), or several of them if the agent merged chunks into one update.
    if (text.size() % 4 != 0) ++run->bad;
    for (size_t i = 0; i + 4 <= text.size(); i += 4) {
      int a = DigitValue(text[i]);
      int b = DigitValue(text[i + 1]);
      int c = DigitValue(text[i + 2]);
      long long n = (a < 0 || b < 0 || c < 0 || text[i + 3] != ' ') ? -1 : (a * 62 + b) * 62 + c;
      if (n >= 0 && n < run->chunks && run->recv_ns[n] < 0) {
        run->recv_ns[n] = now;
      } else {
        ++run->bad;
      }
    }
  }

 public:
  // agent_message_chunk lines that arrived while no run was set (the many-sessions mode).
  long long LooseChunks() const { return loose_chunks_.load(); }
  // Responses received and not yet taken by Wait().
  size_t PendingResponses() {
    std::lock_guard<std::mutex> lock(mu_);
    return responses_.size();
  }

 private:
  std::atomic<long long> loose_chunks_{0};
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  std::thread reader_;
  Door door_;
  std::atomic<E2eRun*> run_{nullptr};
  std::atomic<std::vector<std::string>*> capture_{nullptr};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Json::Value> responses_;
  std::vector<std::string> odd_;
  bool eof_ = false;
};

struct PromptResult {
  long long prompt_sent_ns = 0;
  long long reply_ns = 0;
  long long request_ns = 0;  // the mock's handler got the HTTP request
  int requests = 0;
  std::string stop_reason;
};

class E2eDriver {
 public:
  E2eDriver(AgentChild* child, std::atomic<const Plan*>* current, std::string cwd, Api api)
      : child_(child), current_(current), cwd_(std::move(cwd)), api_(api) {}

  bool Initialize() {
    if (child_->door() == Door::kRpc) return RpcCall("get_state", 20000).has_value();
    Json::Value caps(Json::objectValue);
    Json::Value params(Json::objectValue);
    params["protocolVersion"] = 1;
    params["clientCapabilities"] = caps;
    return Call("initialize", params, 20000).has_value();
  }

  // A session id, or "" on failure.
  std::string NewSession() {
    // The RPC door has one current session; new_session replaces it.
    if (child_->door() == Door::kRpc) return RpcCall("new_session", 20000) ? "current" : "";
    Json::Value sp(Json::objectValue);
    sp["cwd"] = cwd_;
    sp["mcpServers"] = Json::Value(Json::arrayValue);
    auto s = Call("session/new", sp, 20000);
    return s ? (*s)["sessionId"].asString() : "";
  }

  // One prompt answered by `run->chunks` text chunks from the mock, in a fresh session unless
  // `session` is given.
  std::optional<PromptResult> Prompt(E2eRun* run, int pace_us, std::string session = "") {
    if (session.empty()) session = NewSession();
    if (session.empty()) return std::nullopt;
    std::atomic<int> requests{0};
    std::atomic<long long> request_ns{0};
    Plan plan{api_, run->chunks, pace_us, run->sent_ns.get(), &requests, &request_ns};
    current_->store(&plan);
    child_->SetRun(run);
    if (child_->door() == Door::kRpc) return RpcPrompt(run, pace_us, &requests, &request_ns);
    Json::Value pp(Json::objectValue);
    pp["sessionId"] = session;
    Json::Value block(Json::objectValue);
    block["type"] = "text";
    block["text"] = "go";
    pp["prompt"].append(block);
    PromptResult r;
    r.prompt_sent_ns = NowNs();
    long timeout_ms = 120000 + static_cast<long>(run->chunks) * pace_us / 1000;
    auto res = Call("session/prompt", pp, timeout_ms);
    r.reply_ns = NowNs();
    child_->SetRun(nullptr);
    if (!res) return std::nullopt;
    r.requests = requests.load();
    r.request_ns = request_ns.load();
    r.stop_reason = (*res)["stopReason"].asString();
    return r;
  }

 private:
  // RPC: `prompt` is acknowledged at once; the turn's end is its agent_end frame (the reply
  // time), then agent_settled says the door takes the next command.
  std::optional<PromptResult> RpcPrompt(E2eRun* run, int pace_us, std::atomic<int>* requests,
                                        std::atomic<long long>* request_ns) {
    PromptResult r;
    r.prompt_sent_ns = NowNs();
    long timeout_ms = 120000 + static_cast<long>(run->chunks) * pace_us / 1000;
    Json::Value extra(Json::objectValue);
    extra["message"] = "go";
    bool acked = RpcCall("prompt", timeout_ms, extra).has_value();
    auto end = acked ? child_->WaitFrame("agent_end", timeout_ms) : std::nullopt;
    r.reply_ns = NowNs();
    child_->SetRun(nullptr);
    auto settled = end ? child_->WaitFrame("agent_settled", timeout_ms) : std::nullopt;
    if (!settled) {
      std::fprintf(stderr,
                   "e2e: prompt: no agent_end/agent_settled (timeout or the agent exited)\n");
      return std::nullopt;
    }
    r.requests = requests->load();
    r.request_ns = request_ns->load();
    const Json::Value& messages = lousho::MemberOrNull(*end, "messages");
    const Json::Value& last =
        lousho::ElementOrNull(messages, messages.size() > 0 ? messages.size() - 1 : 0);
    // The dialect's "stop" is ACP's end_turn.
    r.stop_reason = lousho::StringOr(last, "stopReason");
    if (r.stop_reason == "stop") r.stop_reason = "end_turn";
    return r;
  }

  // An RPC command and its response frame; nullopt on timeout, exit or success:false.
  std::optional<Json::Value> RpcCall(const std::string& type, long timeout_ms,
                                     Json::Value cmd = Json::Value(Json::objectValue)) {
    int id = ++next_id_;
    cmd["type"] = type;
    cmd["id"] = id;
    child_->Send(lousho::WriteJson(cmd));
    auto v = child_->Wait(id, timeout_ms);
    if (!v) {
      std::fprintf(stderr, "e2e: no reply to %s (timeout or the agent exited)\n", type.c_str());
      return std::nullopt;
    }
    if (!lousho::BoolOr(*v, "success", false)) {
      std::fprintf(stderr, "e2e: %s failed: %s\n", type.c_str(), lousho::WriteJson(*v).c_str());
      return std::nullopt;
    }
    return v;
  }

  std::optional<Json::Value> Call(const std::string& method, const Json::Value& params,
                                  long timeout_ms) {
    int id = ++next_id_;
    Json::Value m(Json::objectValue);
    m["jsonrpc"] = "2.0";
    m["id"] = id;
    m["method"] = method;
    m["params"] = params;
    child_->Send(lousho::WriteJson(m));
    auto v = child_->Wait(id, timeout_ms);
    if (!v) {
      std::fprintf(stderr, "e2e: no reply to %s (timeout or the agent exited)\n", method.c_str());
      return std::nullopt;
    }
    if (v->isMember("error")) {
      std::fprintf(stderr, "e2e: %s failed: %s\n", method.c_str(), lousho::WriteJson(*v).c_str());
      return std::nullopt;
    }
    return (*v)["result"];
  }

  AgentChild* child_;
  std::atomic<const Plan*>* current_;
  std::string cwd_;
  Api api_;
  int next_id_ = 0;
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Chunks whose ACP line never arrived, plus numbering problems; printed when not zero.
void ReportLoss(const char* api, const char* what, const E2eRun& run, const PromptResult& p) {
  long long missing = 0;
  for (long long t : run.recv_ns) missing += t < 0 ? 1 : 0;
  if (missing != 0 || run.bad != 0 || p.requests != 1 || p.stop_reason != "end_turn")
    std::printf(
        "%-10s e2e %s: NOTE %lld chunks without an ACP line, %lld bad numbers, %d HTTP "
        "requests, stopReason '%s'\n",
        api, what, missing, run.bad, p.requests, p.stop_reason.c_str());
}

// CPU time (ns) used so far by every thread of a process, from /proc/<pid>/task/*/schedstat.
long long ProcessCpuNs(pid_t pid) {
  long long total = 0;
  std::error_code ec;
  for (const auto& t :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream f(t.path() / "schedstat");
    long long ns = 0;
    if (f >> ns) total += ns;
  }
  return total;
}

// User and kernel CPU time (ns) of a process or of the calling thread.
struct UserKernelNs {
  long long user = 0;
  long long kernel = 0;
  UserKernelNs operator-(const UserKernelNs& o) const { return {user - o.user, kernel - o.kernel}; }
  long long total() const { return user + kernel; }
};

// The calling thread's CPU time (getrusage: the total is the scheduler's exact figure, split in
// proportion to the ticks spent in each mode).
UserKernelNs ThreadCpu() {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  auto ns = [](const timeval& t) {
    return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_usec * 1000LL;
  };
  return {ns(ru.ru_utime), ns(ru.ru_stime)};
}

// What the mock alone measures: its own send time, and the CPU and reads of the bare reader
// that drains the socket (the floor of reading the same bytes as they arrive, on this machine).
struct MockAlone {
  double seconds = 0;
  UserKernelNs reader;
  long long reads = 0;
};

// The mock's own time to send a burst: the same handler, read by an in-process client that
// only drains the socket. Seconds from its first chunk write to its last.
MockAlone MockSendSeconds(Api api, int chunks, std::atomic<const Plan*>* current, int port) {
  std::unique_ptr<std::atomic<long long>[]> sent(new std::atomic<long long>[chunks]);
  for (int i = 0; i < chunks; ++i) sent[i].store(-1);
  Plan plan{api, chunks, 0, sent.get()};
  current->store(&plan);
  // A raw socket read in 256 KiB pieces: nothing on the reading side parses, so the mock's
  // writes are what is timed.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("mock alone: connect");
    if (fd >= 0) ::close(fd);
    return {1, {}, 0};
  }
  const std::string req = std::string("POST ") + PathOf(api) +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                          "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) std::perror("write");
  std::vector<char> buf(1 << 18);
  MockAlone out;
  const UserKernelNs before = ThreadCpu();
  while (::read(fd, buf.data(), buf.size()) > 0) ++out.reads;
  out.reader = ThreadCpu() - before;
  ::close(fd);
  out.seconds = static_cast<double>(sent[chunks - 1].load() - sent[0].load()) / 1e9;
  return out;
}

// The client's floor: /bin/cat writes `chunks` ACP chunk lines (one chunk each, as the agent
// would without merging) into the same reader, which parses every line. Lines per second from
// the first line read to the last.
double CatFloorLinesPerSecond(int chunks, const std::filesystem::path& tmp) {
  const std::string path = (tmp / "cat-floor.jsonl").string();
  {
    std::ofstream f(path);
    for (int i = 0; i < chunks; ++i) {
      Json::Value text(Json::objectValue);
      text["type"] = "text";
      text["text"] = Token(i);
      Json::Value update(Json::objectValue);
      update["sessionUpdate"] = "agent_message_chunk";
      update["content"] = text;
      Json::Value params(Json::objectValue);
      params["sessionId"] = "0123456789abcdef";
      params["update"] = update;
      Json::Value msg(Json::objectValue);
      msg["jsonrpc"] = "2.0";
      msg["method"] = "session/update";
      msg["params"] = params;
      f << lousho::WriteJson(msg) << "\n";
    }
  }
  AgentChild cat;
  E2eRun run(chunks);
  cat.SetRun(&run);
  if (!cat.StartArgs({"/bin/cat", path}, (tmp / "cat.stderr").string(), 0)) return 0;
  cat.WaitEof();
  cat.Stop();
  if (run.lines < 2) return 0;
  return static_cast<double>(run.lines - 1) /
         (static_cast<double>(run.last_line_ns - run.first_line_ns) / 1e9);
}

// The client's floor for lines an agent wrote: /bin/cat writes them into the same reader.
// Milliseconds from the first line read to the last; `run` gathers what the reader saw.
double CatReplayMs(const std::vector<std::string>& lines, const std::filesystem::path& tmp,
                   Door door, E2eRun* run) {
  const std::string path = (tmp / "cat-replay.jsonl").string();
  {
    std::ofstream f(path);
    for (const auto& l : lines) f << l << "\n";
  }
  AgentChild cat(door);
  cat.SetRun(run);
  if (!cat.StartArgs({"/bin/cat", path}, (tmp / "cat.stderr").string(), 0)) return 0;
  cat.WaitEof();
  cat.Stop();
  std::filesystem::remove(path);
  return static_cast<double>(run->last_line_ns - run->first_line_ns) / 1e6;
}

// CPU time of a whole process from /proc/<pid>/stat (utime and stime, threads that ended
// included), at clock-tick resolution: the cross-check of ProcessCpuNs, split into user and
// kernel time.
UserKernelNs ProcessCpuTicksNs(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t close = all.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(all.substr(close + 2));
  std::string field;
  long long utime = 0;
  long long stime = 0;
  for (int i = 3; rest >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) {
      stime = std::atoll(field.c_str());
      break;
    }
  }
  const long long tick = 1000000000LL / ::sysconf(_SC_CLK_TCK);
  return {utime * tick, stime * tick};
}

// What one end-to-end run (one door, one API) works with.
struct E2eContext {
  Door door = Door::kAcp;
  Api api_kind = Api::kOpenAi;
  int chunks = 0;
  int rounds = 0;
  int paced = 0;
  int pace_us = 0;
  std::filesystem::path tmp;
  std::atomic<const Plan*>* current = nullptr;
  int port = 0;
  std::string label;  // "openai", "rpc/anthropic", ...
  const char* api = "";
  const char* line_kind = "";
};

// Time to first chunk: 20 one-chunk prompts in one session, then 20 in a new session each
// (sent right after the session/new reply, so the session's new worker thread is involved).
bool FirstChunkTimes(const E2eContext& x, E2eDriver& driver) {
  const char* kFirstKinds[] = {"same session:", "new session each:"};
  for (int kind = 0; kind < 2; ++kind) {
    std::vector<double> first;
    std::vector<double> to_request;  // prompt line written -> the mock's handler runs
    std::string session = kind == 0 ? driver.NewSession() : "";
    for (int i = 0; i < 20; ++i) {
      E2eRun one(1);
      auto p = driver.Prompt(&one, 0, session);
      if (!p.has_value() || one.recv_ns[0] <= 0) return false;
      first.push_back(static_cast<double>(one.recv_ns[0] - p->prompt_sent_ns) / 1000.0);
      to_request.push_back(static_cast<double>(p->request_ns - p->prompt_sent_ns) / 1000.0);
    }
    std::printf(
        "%-10s e2e prompt line->first %s chunk line, %-16s p50 %5.0f us  max %5.0f us"
        "  (prompt line->HTTP request at the mock: p50 %.0f us)\n",
        x.api, x.line_kind, kFirstKinds[kind], Percentile(first, 0.5), Percentile(first, 1.0),
        Percentile(to_request, 0.5));
  }
  return true;
}

// The figures of the burst rounds, one per round.
struct BurstFigures {
  std::vector<double> e2e_ms, mock_ms, ratio, lines_s, chars_s, cpu_us, cat_lines_s, line_count;
  std::vector<double> floor_cpu_us;        // the bare socket reader's CPU per chunk, same rounds
  std::vector<double> user_us, kernel_us;  // the agent's, from clock ticks, per chunk
  std::vector<double> over_floor_us;       // the agent's CPU per chunk less the bare reader's
  std::vector<std::string> captured;       // RPC, round 1: the agent's lines, replayed as the floor
  std::string replay_note;
};

// The same lines from /bin/cat into the same reader: what this client needs to read them.
std::string CatReplayNote(const E2eContext& x, std::vector<std::string>* captured) {
  E2eRun replay(x.chunks);
  double ms = CatReplayMs(*captured, x.tmp, x.door, &replay);
  char note[256];
  std::snprintf(note, sizeof note,
                "the same reader takes round 1's %lld text lines (%zu lines, %.1f MB) from "
                "/bin/cat in %.1f ms",
                replay.lines, captured->size(), static_cast<double>(replay.bytes) / 1e6, ms);
  *captured = {};
  return note;
}

// One burst round: the mock alone first (its own send time), then the agent end to end.
bool BurstRound(const E2eContext& x, AgentChild& child, E2eDriver& driver, int round,
                BurstFigures& f) {
  const MockAlone alone = MockSendSeconds(x.api_kind, x.chunks, x.current, x.port);
  f.mock_ms.push_back(alone.seconds * 1e3);
  f.floor_cpu_us.push_back(static_cast<double>(alone.reader.total()) / 1000.0 / x.chunks);
  if (round == 0 && x.door == Door::kAcp)
    f.cat_lines_s.push_back(CatFloorLinesPerSecond(x.chunks, x.tmp));
  E2eRun burst(x.chunks);
  if (round == 0 && x.door == Door::kRpc) child.Capture(&f.captured);
  const pid_t pid = child.Pid();
  long long cpu_before = pid > 0 ? ProcessCpuNs(pid) : 0;
  UserKernelNs ticks_before = pid > 0 ? ProcessCpuTicksNs(pid) : UserKernelNs{};
  std::optional<PromptResult> b = driver.Prompt(&burst, 0);
  long long cpu_ns = pid > 0 ? ProcessCpuNs(pid) - cpu_before : 0;
  UserKernelNs ticks = pid > 0 ? ProcessCpuTicksNs(pid) - ticks_before : UserKernelNs{};
  child.Capture(nullptr);
  if (!b.has_value() || burst.lines <= 0) return false;
  if (round == 0 && x.door == Door::kRpc) f.replay_note = CatReplayNote(x, &f.captured);
  long long first_write = burst.sent_ns[0].load();
  double span = static_cast<double>(burst.last_line_ns - first_write) / 1e9;
  f.e2e_ms.push_back(span * 1e3);
  f.ratio.push_back(span * 1e3 / f.mock_ms.back());
  f.lines_s.push_back(static_cast<double>(burst.lines) / span);
  f.chars_s.push_back(static_cast<double>(burst.chars) / span);
  f.cpu_us.push_back(static_cast<double>(cpu_ns) / 1000.0 / x.chunks);
  f.line_count.push_back(static_cast<double>(burst.lines));
  f.user_us.push_back(static_cast<double>(ticks.user) / 1000.0 / x.chunks);
  f.over_floor_us.push_back(f.cpu_us.back() - f.floor_cpu_us.back());
  f.kernel_us.push_back(static_cast<double>(ticks.kernel) / 1000.0 / x.chunks);
  std::printf(
      "%-10s e2e burst round %d: first write->last line %.1f ms, mock alone %.1f ms (x%.2f); "
      "%lld lines (%.1f MB), %.0f lines/s, %.2f M chars/s; agent CPU %.2f us/chunk (process "
      "ticks: %.1f ms user + %.1f ms kernel; a bare socket reader of the mock alone: %.2f "
      "us/chunk, %.2f of it in the kernel, in %lld reads); "
      "prompt->reply %.1f ms\n",
      x.api, round + 1, f.e2e_ms.back(), f.mock_ms.back(), f.ratio.back(), burst.lines,
      static_cast<double>(burst.bytes) / 1e6, f.lines_s.back(), f.chars_s.back() / 1e6,
      f.cpu_us.back(), static_cast<double>(ticks.user) / 1e6,
      static_cast<double>(ticks.kernel) / 1e6, f.floor_cpu_us.back(),
      static_cast<double>(alone.reader.kernel) / 1000.0 / x.chunks, alone.reads,
      static_cast<double>(b->reply_ns - b->prompt_sent_ns) / 1e6);
  ReportLoss(x.api, "burst", burst, *b);
  return true;
}

// The burst, `rounds` times, each right after the mock alone sends the same reply to a reader
// that only drains the socket (its own send time, the floor of this row) and after /bin/cat
// feeds this bench the same ACP lines (the client's floor).
bool BurstRounds(const E2eContext& x, AgentChild& child, E2eDriver& driver) {
  BurstFigures f;
  for (int round = 0; round < x.rounds; ++round)
    if (!BurstRound(x, child, driver, round, f)) return false;
  std::printf(
      "%-10s e2e BURST %d x %d-char chunks, median of %d: end to end %.1f ms = x%.2f the mock's "
      "own %.1f ms; %.0f %s lines/s (%.0f lines); %.2f M chars/s; agent CPU %.2f us/chunk "
      "(user %.2f + kernel %.2f from clock ticks; the bare socket reader: %.2f us/chunk; "
      "over it: %.2f us/chunk)\n",
      x.api, x.chunks, 4, x.rounds, Percentile(f.e2e_ms, 0.5), Percentile(f.ratio, 0.5),
      Percentile(f.mock_ms, 0.5), Percentile(f.lines_s, 0.5), x.line_kind,
      Percentile(f.line_count, 0.5), Percentile(f.chars_s, 0.5) / 1e6, Percentile(f.cpu_us, 0.5),
      Percentile(f.user_us, 0.5), Percentile(f.kernel_us, 0.5), Percentile(f.floor_cpu_us, 0.5),
      Percentile(f.over_floor_us, 0.5));
  if (x.door == Door::kAcp) {
    std::printf(
        "%-10s   client floor: the same reader parses %d one-chunk lines from /bin/cat at %.0f "
        "lines/s\n",
        x.api, x.chunks, Percentile(f.cat_lines_s, 0.5));
  } else {
    std::printf("%-10s   client floor: %s\n", x.api, f.replay_note.c_str());
  }
  return true;
}

// Paced: three rounds, each an in-process run (write->callback) followed by an end-to-end run
// (write->ACP line), so that both see the same machine state; the added delay is the median
// over rounds of (e2e p50 - callback p50).
bool PacedRounds(const E2eContext& x, E2eDriver& driver) {
  const int kRounds = 3;
  std::vector<double> lat;
  std::vector<double> callback_lat;
  std::vector<double> added;
  long long lines = 0;
  for (int round = 0; round < kRounds; ++round) {
    Plan in_process{x.api_kind, x.paced, x.pace_us};
    RunResult cb = RunOnce(in_process, x.current, x.port);
    E2eRun run(x.paced);
    auto p = driver.Prompt(&run, x.pace_us);
    if (!p.has_value()) return false;
    std::vector<double> round_lat;
    for (int i = 0; i < x.paced; ++i) {
      long long s = run.sent_ns[i].load();
      if (s > 0 && run.recv_ns[i] > 0)
        round_lat.push_back(static_cast<double>(run.recv_ns[i] - s) / 1000.0);
    }
    added.push_back(Percentile(round_lat, 0.5) - Percentile(cb.latency_us, 0.5));
    lat.insert(lat.end(), round_lat.begin(), round_lat.end());
    callback_lat.insert(callback_lat.end(), cb.latency_us.begin(), cb.latency_us.end());
    lines += run.lines;
    ReportLoss(x.api, "paced", run, *p);
  }
  std::printf(
      "%-10s e2e write->%s line latency: p50 %.1f us  p90 %.1f us  p99 %.1f us  max "
      "%.1f us  (%lld lines, %d rounds)\n",
      x.api, x.line_kind, Percentile(lat, 0.5), Percentile(lat, 0.9), Percentile(lat, 0.99),
      Percentile(lat, 1.0), lines, kRounds);
  std::printf(
      "%-10s   same rounds, write->callback in process: p50 %.1f us  p90 %.1f us  p99 "
      "%.1f us  max %.1f us\n",
      x.api, Percentile(callback_lat, 0.5), Percentile(callback_lat, 0.9),
      Percentile(callback_lat, 0.99), Percentile(callback_lat, 1.0));
  std::printf(
      "%-10s added by engine + %s (p50 e2e - p50 callback, median of %d rounds): "
      "%.1f us  (rounds:",
      x.api, x.line_kind, kRounds, Percentile(added, 0.5));
  for (double a : added) std::printf(" %.1f", a);
  std::printf(")\n");
  return true;
}

// Returns false if the agent could not be driven.
bool RunE2e(Door door, Api api, int chunks, int rounds, int paced, int pace_us,
            const std::string& bin, const std::filesystem::path& tmp,
            std::atomic<const Plan*>* current, int port) {
  const char* line_kind = door == Door::kRpc ? "RPC" : "ACP";
  std::string label = std::string(door == Door::kRpc ? "rpc/" : "") + ApiName(api);
  E2eContext x{door, api,     chunks, rounds,           paced, pace_us,
               tmp,  current, port,   std::move(label), "",    line_kind};
  x.api = x.label.c_str();
  std::string spec = (tmp / (std::string(ApiName(api)) + ".yaml")).string();
  {
    std::ofstream f(spec);
    f << "model: " << ProviderOf(api) << "/"
      << (api == Api::kAnthropic ? "claude-sonnet-4-5" : ModelOf(api)) << "\ntools: []\n";
  }
  std::string err_path =
      (tmp / (std::string(DoorName(door)) + "-" + ApiName(api) + ".stderr")).string();
  AgentChild child(door);
  bool ok = child.Start(bin, spec, err_path, port);
  E2eDriver driver(&child, current, (tmp / "cwd").string(), api);
  ok = ok && driver.Initialize();
  // Warm-up: the first prompt loads the HTTP module.
  E2eRun warm(200);
  ok = ok && driver.Prompt(&warm, 0).has_value();
  ok = ok && FirstChunkTimes(x, driver);
  ok = ok && BurstRounds(x, child, driver);
  ok = ok && PacedRounds(x, driver);
  for (const auto& line : child.Odd())
    std::printf("%-10s e2e NOTE unexpected line: %.300s\n", x.api, line.c_str());
  std::string how = child.Stop();
  if (how != "exited 0") std::printf("%-10s e2e NOTE agent %s\n", x.api, how.c_str());
  std::string err = Slurp(err_path);
  if (!err.empty()) std::printf("%-10s e2e NOTE agent stderr:\n%.2000s\n", x.api, err.c_str());
  return ok;
}

// VmRSS and VmHWM (KiB) and the thread count of a process.
struct ProcMem {
  long rss_kib = 0;
  long hwm_kib = 0;
  long threads = 0;
};
ProcMem ReadProcMem(pid_t pid) {
  ProcMem m;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (f >> key) {
    if (key == "VmRSS:") f >> m.rss_kib;
    if (key == "VmHWM:") f >> m.hwm_kib;
    if (key == "Threads:") f >> m.threads;
    f.ignore(1 << 20, '\n');
  }
  return m;
}

// Many sessions streaming at once in one agent: `sessions` sessions, every one prompted at the
// same moment and answered by `chunks` chunks every `pace_us`; the agent's VmRSS is sampled
// every 10 ms while they stream.
int RunManySessions(int sessions, int chunks, int pace_us, const std::string& bin,
                    std::atomic<const Plan*>* current, int port) {
  char tmpl[] = "/tmp/lousho-relay-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  std::filesystem::path tmp(tmpl);
  std::filesystem::create_directory(tmp / "cwd");
  const std::string spec = (tmp / "anthropic.yaml").string();
  {
    std::ofstream f(spec);
    f << "model: anthropic/claude-sonnet-4-5\ntools: []\n";
  }
  AgentChild child;
  const std::string err_path = (tmp / "many.stderr").string();
  bool ok = child.Start(bin, spec, err_path, port);
  E2eDriver driver(&child, current, (tmp / "cwd").string(), Api::kAnthropic);
  ok = ok && driver.Initialize();
  ProcMem at_init = ok ? ReadProcMem(child.Pid()) : ProcMem{};
  // Warm-up prompt: loads the HTTP module, as any agent that has talked to its model has.
  E2eRun warm(20);
  ok = ok && driver.Prompt(&warm, 0).has_value();
  std::vector<std::string> ids;
  for (int i = 0; ok && i < sessions; ++i) {
    ids.push_back(driver.NewSession());
    ok = !ids.back().empty();
  }
  ProcMem idle = ok ? ReadProcMem(child.Pid()) : ProcMem{};
  Plan plan{Api::kAnthropic, chunks, pace_us};
  current->store(&plan);
  child.SetRun(nullptr);
  long long before = child.LooseChunks();
  const int first_id = 100000;
  for (int i = 0; ok && i < sessions; ++i) {
    Json::Value pp(Json::objectValue);
    pp["sessionId"] = ids[static_cast<size_t>(i)];
    Json::Value block(Json::objectValue);
    block["type"] = "text";
    block["text"] = "go";
    pp["prompt"].append(block);
    Json::Value m(Json::objectValue);
    m["jsonrpc"] = "2.0";
    m["id"] = first_id + i;
    m["method"] = "session/prompt";
    m["params"] = pp;
    child.Send(lousho::WriteJson(m));
  }
  // Sample while the replies stream; the prompts' answers are collected afterwards.
  ProcMem peak;
  std::vector<double> rss_samples;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (ok && child.PendingResponses() < static_cast<size_t>(sessions) &&
         Clock::now() < deadline) {
    ProcMem m = ReadProcMem(child.Pid());
    peak.rss_kib = std::max(peak.rss_kib, m.rss_kib);
    peak.threads = std::max(peak.threads, m.threads);
    rss_samples.push_back(static_cast<double>(m.rss_kib));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int answered = 0;
  for (int i = 0; ok && i < sessions; ++i) {
    auto r = child.Wait(first_id + i, 60000);
    if (r && lousho::StringOr(lousho::MemberOrNull(*r, "result"), "stopReason") == "end_turn")
      ++answered;
  }
  ProcMem after = ReadProcMem(child.Pid());
  std::printf(
      "many sessions: %d sessions x %d chunks every %d us (anthropic); %lld chunk lines, "
      "%d of %d prompts answered end_turn\n",
      sessions, chunks, pace_us, child.LooseChunks() - before, answered, sessions);
  std::printf(
      "many sessions: VmRSS after initialize %.2f MiB; %d idle sessions %.2f MiB; while streaming "
      "p50 %.2f MiB, peak %.2f MiB (VmHWM %.2f MiB), peak threads %ld; after %.2f MiB\n",
      at_init.rss_kib / 1024.0, sessions, idle.rss_kib / 1024.0,
      Percentile(rss_samples, 0.5) / 1024.0, peak.rss_kib / 1024.0, after.hwm_kib / 1024.0,
      peak.threads, after.rss_kib / 1024.0);
  for (const auto& line : child.Odd())
    std::printf("many sessions NOTE unexpected line: %.300s\n", line.c_str());
  std::string how = child.Stop();
  if (how != "exited 0") std::printf("many sessions NOTE agent %s\n", how.c_str());
  std::string err = Slurp(err_path);
  if (!err.empty()) std::printf("many sessions NOTE agent stderr:\n%.2000s\n", err.c_str());
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return ok && answered == sessions ? 0 : 1;
}

// The command line: see the usage message in main.
struct RelayOptions {
  int rounds = 5;
  int sessions = 0;
  bool e2e_only = false;
  std::string apis = "both";
  std::string doors = "acp";
  int chunks = 20000;
  int paced = 2000;
  int pace_us = 500;
  std::string bin;
};

// False when an argument is out of range.
bool ParseRelayOptions(int argc, char** argv, RelayOptions* o) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--rounds=")) {
      o->rounds = std::atoi(argv[i] + 9);
    } else if (a.starts_with("--sessions=")) {
      o->sessions = std::atoi(argv[i] + 11);
    } else if (a.starts_with("--api=")) {
      o->apis = std::string(a.substr(6));
    } else if (a.starts_with("--door=")) {
      o->doors = std::string(a.substr(7));
    } else if (a == "--e2e-only") {
      o->e2e_only = true;
    } else {
      pos.emplace_back(a);
    }
  }
  if (pos.size() > 0) o->chunks = std::atoi(pos[0].c_str());
  if (pos.size() > 1) o->paced = std::atoi(pos[1].c_str());
  if (pos.size() > 2) o->pace_us = std::atoi(pos[2].c_str());
  o->bin = pos.size() > 3 ? pos[3] : DefaultLoushoBinary();
  return o->chunks >= 2 && o->chunks <= kMaxTokens && o->paced >= 1 && o->pace_us >= 0 &&
         o->rounds >= 1 && o->sessions >= 0 &&
         (o->apis == "all" || o->apis == "both" || o->apis == "openai" || o->apis == "anthropic" ||
          o->apis == "responses" || o->apis == "gemini") &&
         (o->doors == "both" || o->doors == "acp" || o->doors == "rpc");
}

// The mock's streaming body for `plan`, from chunk *next on (paced when the plan says so).
bool WritePlanChunks(const Plan* plan, int* next, httplib::DataSink& sink) {
  if (*next < 0) {
    const std::string_view start = StartOf(plan->api);
    if (!start.empty()) sink.write(start.data(), start.size());
    *next = 0;
  }
  auto pace_until = Clock::now();
  while (*next < plan->chunks) {
    if (plan->pace_us > 0) {
      pace_until += std::chrono::microseconds(plan->pace_us);
      std::this_thread::sleep_until(pace_until);
    }
    // Timestamp first, then padding to a typical token-ish chunk size (unless the plan records
    // send times itself).
    std::string text = plan->sent_ns != nullptr ? Token(*next) : std::to_string(NowNs()) + " tok";
    std::string c = ChunkOf(plan->api, text);
    if (plan->sent_ns != nullptr) plan->sent_ns[*next].store(NowNs());
    if (!sink.write(c.data(), c.size())) return false;
    ++*next;
  }
  const std::string_view end = EndOf(plan->api);
  sink.write(end.data(), end.size());
  sink.done();
  return true;
}

// The in-process figures of each API: time to first delta, burst and paced latency, offline
// decoding.
void InProcessFigures(const RelayOptions& o, const std::vector<Api>& api_list,
                      std::atomic<const Plan*>* current, int port) {
  for (Api api : api_list) {
    const char* name = ApiName(api);
    Plan warm{api, 200, 0};
    RunOnce(warm, current, port);
    std::vector<double> ttfb;
    for (int i = 0; i < 20; ++i) {
      Plan one{api, 1, 0};
      ttfb.push_back(RunOnce(one, current, port).first_delta_us);
    }
    std::printf("%-10s request->first delta (new connection each): p50 %.0f us  max %.0f us\n",
                name, Percentile(ttfb, 0.5), Percentile(ttfb, 1.0));
    Plan burst{api, o.chunks, 0};
    RunResult b = RunOnce(burst, current, port);
    std::printf(
        "%-10s burst over loopback:  %9.0f chunks/s  (%lld chunks in %lld deltas in %.3f s)\n",
        name, static_cast<double>(b.chunks) / b.seconds, b.chunks, b.deltas, b.seconds);
    Plan pacedp{api, o.paced, o.pace_us};
    RunResult p = RunOnce(pacedp, current, port);
    std::printf(
        "%-10s write->callback latency: p50 %.1f us  p90 %.1f us  p99 %.1f us  max %.1f us\n", name,
        Percentile(p.latency_us, 0.5), Percentile(p.latency_us, 0.9),
        Percentile(p.latency_us, 0.99), Percentile(p.latency_us, 1.0));
    OfflineDecode(api, o.chunks);
  }
}

// End to end through the binary, each door with each API; false when one could not be driven.
bool EndToEnd(const RelayOptions& o, const std::vector<Api>& api_list,
              std::atomic<const Plan*>* current, int port) {
  if (::access(o.bin.c_str(), X_OK) != 0) {
    std::printf(
        "end to end: skipped, no executable lousho at %s (pass it as the 4th argument "
        "or in LOUSHO_BIN)\n",
        o.bin.c_str());
    return true;
  }
  std::printf(
      "end to end through %s (acp: server write -> agent_message_chunk line; rpc, --mode rpc: "
      "-> message_update text_delta frame), doors: %s\n",
      o.bin.c_str(), o.doors.c_str());
  char tmpl[] = "/tmp/lousho-relay-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return false;
  }
  std::filesystem::path tmp(tmpl);
  std::filesystem::create_directory(tmp / "cwd");
  std::vector<Door> door_list;
  if (o.doors != "rpc") door_list.push_back(Door::kAcp);
  if (o.doors != "acp") door_list.push_back(Door::kRpc);
  bool ok = true;
  for (Door door : door_list)
    for (Api api : api_list)
      ok = RunE2e(door, api, o.chunks, o.rounds, o.paced, o.pace_us, o.bin, tmp, current, port) &&
           ok;
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  lousho::log::Configure(lousho::log::Level::kError, "");
  RelayOptions o;
  if (!ParseRelayOptions(argc, argv, &o)) {
    std::fprintf(
        stderr,
        "usage: %s [--rounds=N] [--api=openai|anthropic|responses|gemini|both|all] "
        "[--door=acp|rpc|both] "
        "[--e2e-only] [--sessions=N] [chunks 2..%d] [paced_chunks>=1] [pace_us>=0] [lousho]\n",
        argv[0], kMaxTokens);
    return 2;
  }
  // "both": the two formats benched first (Chat Completions and Messages); "all" adds Responses
  // and Gemini.
  std::vector<Api> api_list;
  if (o.apis == "openai" || o.apis == "both" || o.apis == "all") api_list.push_back(Api::kOpenAi);
  if (o.apis == "anthropic" || o.apis == "both" || o.apis == "all")
    api_list.push_back(Api::kAnthropic);
  if (o.apis == "responses" || o.apis == "all") api_list.push_back(Api::kResponses);
  if (o.apis == "gemini" || o.apis == "all") api_list.push_back(Api::kGemini);

  std::atomic<const Plan*> current{nullptr};
  httplib::Server svr;
  auto handler = [&](const httplib::Request&, httplib::Response& res) {
    const Plan* plan = current.load();
    if (plan->requests != nullptr) ++*plan->requests;
    if (plan->request_ns != nullptr) plan->request_ns->store(NowNs());
    auto next = std::make_shared<int>(-1);
    res.set_chunked_content_provider("text/event-stream",
                                     [plan, next](size_t, httplib::DataSink& sink) {
                                       return WritePlanChunks(plan, next.get(), sink);
                                     });
  };
  svr.Post(".*", handler);
  // One thread per concurrent stream (the many-sessions mode streams to all sessions at once).
  const size_t server_threads = std::max<size_t>(16, static_cast<size_t>(o.sessions) + 8);
  svr.new_task_queue = [server_threads] { return new httplib::ThreadPool(server_threads); };
  // Real providers flush each event at once; without this the test server's Nagle delay
  // (waiting for the client's delayed ACK) would dominate the latency figures.
  svr.set_tcp_nodelay(true);
  int port = svr.bind_to_any_port("127.0.0.1");
  std::thread t([&] { svr.listen_after_bind(); });
  while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  if (o.sessions > 0) {
    int rc = RunManySessions(o.sessions, o.paced, o.pace_us, o.bin, &current, port);
    svr.stop();
    t.join();
    return rc;
  }

  std::printf("lousho relay benchmark: %d burst chunks x %d rounds, %d paced chunks every %d us\n",
              o.chunks, o.rounds, o.paced, o.pace_us);
  if (!o.e2e_only) InProcessFigures(o, api_list, &current, port);
  const bool e2e_ok = EndToEnd(o, api_list, &current, port);
  svr.stop();
  t.join();
  return e2e_ok ? 0 : 1;
}
