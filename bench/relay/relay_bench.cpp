// Relay benchmark: how fast streamed model output crosses the provider layer (HTTP read, SSE
// parsing, JSON decoding, delta callback), and how much delay that adds per chunk.
//
// Usage: lousho_relay_bench [chunks=20000] [paced_chunks=2000] [pace_us=500]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "agent/providers/anthropic_messages.h"
#include "agent/providers/factory.h"
#include "agent/providers/openai_chat.h"
#include "agent/providers/sse_parser.h"
#include "config/model_catalog.h"
#include "support/log.h"

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

struct Plan {
  bool anthropic = false;
  int chunks = 0;
  int pace_us = 0;  // 0: as fast as the socket takes it
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
  long long bytes = 0;
  std::vector<double> latency_us;  // server write -> delta callback
  double first_delta_us = 0;       // Stream() call -> first delta (request + response head)
};

RunResult RunOnce(const Plan& plan, std::atomic<const Plan*>* current, int port) {
  current->store(&plan);
  lousho::config::ProviderSettings s =
      *lousho::config::FindBuiltinProvider(plan.anthropic ? "anthropic" : "openai");
  s.base_url = "http://127.0.0.1:" + std::to_string(port) + (plan.anthropic ? "" : "/v1");
  s.max_retries = 0;
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name.ends_with("_API_KEY")) return "bench-key";
    return std::nullopt;
  };
  auto provider =
      lousho::agent::MakeHttpProvider(s, plan.anthropic ? "claude-haiku-4-5" : "gpt-4o-mini", env);
  if (!provider.ok()) {
    std::fprintf(stderr, "%s\n", provider.error().ToString().c_str());
    std::exit(1);
  }
  lousho::agent::ModelRequest req;
  req.model = plan.anthropic ? "claude-haiku-4-5" : "gpt-4o-mini";
  lousho::agent::Message u;
  u.content = {lousho::agent::ContentBlock::Text("go")};
  req.messages = {u};
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
        // The text starts with the server's write timestamp (same process, same clock).
        long long sent = std::atoll(d.text.c_str());
        if (plan.pace_us > 0) r.latency_us.push_back(static_cast<double>(now - sent) / 1000.0);
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
void OfflineDecode(bool anthropic, int chunks) {
  std::string stream = anthropic ? kAnthropicStart : "";
  for (int i = 0; i < chunks; ++i) {
    std::string text = "tok" + std::to_string(i) + " ";
    stream += anthropic ? AnthropicChunk(text) : OpenAiChunk(text);
  }
  stream += anthropic ? kAnthropicEnd : kOpenAiEnd;
  const int kRounds = 5;
  auto start = Clock::now();
  long long deltas = 0;
  for (int round = 0; round < kRounds; ++round) {
    lousho::agent::SseParser parser;
    std::unique_ptr<lousho::agent::StreamDecoder> dec;
    if (anthropic) {
      dec = std::make_unique<lousho::agent::AnthropicDecoder>();
    } else {
      dec = std::make_unique<lousho::agent::OpenAiChatDecoder>();
    }
    lousho::agent::DeltaCallback emit = [&](const StreamDelta&) {
      ++deltas;
      return true;
    };
    std::vector<lousho::agent::SseEvent> events;
    for (size_t off = 0; off < stream.size(); off += 1400) {
      events.clear();
      parser.Feed(std::string_view(stream).substr(off, 1400), &events);
      for (const auto& ev : events) (void)dec->Consume(ev, emit);
    }
    (void)dec->TakeMessage(false);
  }
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%-10s offline parse+decode: %9.0f chunks/s  %6.2f us/chunk  %6.1f MB/s\n",
              anthropic ? "anthropic" : "openai", static_cast<double>(deltas) / secs,
              secs * 1e6 / static_cast<double>(deltas),
              static_cast<double>(stream.size()) * kRounds / secs / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  lousho::log::Configure(lousho::log::Level::kError, "");
  int chunks = argc > 1 ? std::atoi(argv[1]) : 20000;
  int paced = argc > 2 ? std::atoi(argv[2]) : 2000;
  int pace_us = argc > 3 ? std::atoi(argv[3]) : 500;

  std::atomic<const Plan*> current{nullptr};
  httplib::Server svr;
  auto handler = [&](const httplib::Request&, httplib::Response& res) {
    const Plan* plan = current.load();
    auto next = std::make_shared<int>(-1);
    res.set_chunked_content_provider(
        "text/event-stream", [plan, next](size_t, httplib::DataSink& sink) {
          if (*next < 0) {
            if (plan->anthropic) sink.write(kAnthropicStart, sizeof(kAnthropicStart) - 1);
            *next = 0;
          }
          auto pace_until = Clock::now();
          while (*next < plan->chunks) {
            if (plan->pace_us > 0) {
              pace_until += std::chrono::microseconds(plan->pace_us);
              std::this_thread::sleep_until(pace_until);
            }
            // Timestamp first, then padding to a typical token-ish chunk size.
            std::string text = std::to_string(NowNs()) + " tok";
            std::string c = plan->anthropic ? AnthropicChunk(text) : OpenAiChunk(text);
            if (!sink.write(c.data(), c.size())) return false;
            ++*next;
          }
          const char* end = plan->anthropic ? kAnthropicEnd : kOpenAiEnd;
          sink.write(end, std::char_traits<char>::length(end));
          sink.done();
          return true;
        });
  };
  svr.Post(".*", handler);
  // Real providers flush each event at once; without this the test server's Nagle delay
  // (waiting for the client's delayed ACK) would dominate the latency figures.
  svr.set_tcp_nodelay(true);
  int port = svr.bind_to_any_port("127.0.0.1");
  std::thread t([&] { svr.listen_after_bind(); });
  while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::printf("lousho relay benchmark: %d burst chunks, %d paced chunks every %d us\n", chunks,
              paced, pace_us);
  for (bool anthropic : {false, true}) {
    Plan warm{anthropic, 200, 0};
    RunOnce(warm, &current, port);
    std::vector<double> ttfb;
    for (int i = 0; i < 20; ++i) {
      Plan one{anthropic, 1, 0};
      ttfb.push_back(RunOnce(one, &current, port).first_delta_us);
    }
    std::printf("%-10s request->first delta (new connection each): p50 %.0f us  max %.0f us\n",
                anthropic ? "anthropic" : "openai", Percentile(ttfb, 0.5), Percentile(ttfb, 1.0));
    Plan burst{anthropic, chunks, 0};
    RunResult b = RunOnce(burst, &current, port);
    std::printf("%-10s burst over loopback:  %9.0f chunks/s  (%lld deltas in %.3f s)\n",
                anthropic ? "anthropic" : "openai", static_cast<double>(b.deltas) / b.seconds,
                b.deltas, b.seconds);
    Plan pacedp{anthropic, paced, pace_us};
    RunResult p = RunOnce(pacedp, &current, port);
    std::printf(
        "%-10s write->callback latency: p50 %.1f us  p90 %.1f us  p99 %.1f us  max %.1f us\n",
        anthropic ? "anthropic" : "openai", Percentile(p.latency_us, 0.5),
        Percentile(p.latency_us, 0.9), Percentile(p.latency_us, 0.99),
        Percentile(p.latency_us, 1.0));
    OfflineDecode(anthropic, chunks);
  }
  svr.stop();
  t.join();
  return 0;
}
