// A scripted SSE model server on 127.0.0.1 for provider tests (httplib::Server in a thread).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lousho::agent::testing {

// One step of a scripted streamed response.
struct Step {
  enum Kind { kWrite, kSleepMs, kStall, kDrop, kEnd } kind = kWrite;
  std::string bytes;  // kWrite
  int ms = 0;         // kSleepMs
  static Step Write(std::string b) { return Step{kWrite, std::move(b), 0}; }
  static Step Sleep(int ms) { return Step{kSleepMs, {}, ms}; }
  static Step Stall() { return Step{kStall, {}, 0}; }  // write nothing until the test ends
  static Step Drop() { return Step{kDrop, {}, 0}; }    // close without the chunked terminator
};

struct Recorded {
  std::string path;
  std::string body;
  httplib::Headers headers;
  std::string Header(const char* name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Serves POST requests; `script(n, req, res)` answers the n-th request (0-based). Use Stream()
// in a script to send SSE steps. Thread-safe recording; stops and joins on destruction.
class LoopbackServer {
 public:
  using Script = std::function<void(int n, const httplib::Request&, httplib::Response&)>;

  explicit LoopbackServer(Script script) : script_(std::move(script)) {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      int n;
      {
        std::lock_guard<std::mutex> lock(mu_);
        n = static_cast<int>(requests_.size());
        requests_.push_back(Recorded{req.path, req.body, req.headers});
      }
      script_(n, req, res);
    };
    svr_.Post(".*", handler);
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackServer() {
    stopping_ = true;
    svr_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int request_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(requests_.size());
  }
  Recorded request(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.at(n);
  }

  // Streams `steps` as text/event-stream (exactly that type: httplib would compress anything
  // else it deems text).
  void Stream(httplib::Response& res, std::vector<Step> steps) {
    auto i = std::make_shared<size_t>(0);
    // Shared, not copied: some tests stream many megabytes, and copies are slow under TSan.
    auto shared = std::make_shared<const std::vector<Step>>(std::move(steps));
    res.set_chunked_content_provider(
        "text/event-stream", [this, shared, i](size_t, httplib::DataSink& sink) {
          const std::vector<Step>& steps = *shared;
          while (*i < steps.size()) {
            const Step& s = steps[(*i)++];
            switch (s.kind) {
              case Step::kWrite:
                if (!sink.write(s.bytes.data(), s.bytes.size())) return false;
                break;
              case Step::kSleepMs:
                std::this_thread::sleep_for(std::chrono::milliseconds(s.ms));
                break;
              case Step::kStall:
                // Poll so the server can shut down; a client that gave up is noticed never.
                while (!stopping_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                return false;
              case Step::kDrop:
                return false;
              case Step::kEnd:
                break;
            }
          }
          sink.done();
          return true;
        });
  }

  static void Json(httplib::Response& res, int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "application/json");
  }

 private:
  Script script_;
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<Recorded> requests_;
};

}  // namespace lousho::agent::testing
