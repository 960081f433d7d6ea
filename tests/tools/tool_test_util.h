// Test helpers for the built-in tools: a temporary workspace and a recording fake editor.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/client_services.h"
#include "core/tool.h"
#include "support/json_util.h"

namespace lousho::agent::testing {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed afterwards. `root` is the workspace;
// `outside` is a sibling directory that tools must not reach.
class TempWorkspace {
 public:
  TempWorkspace() {
    std::string tmpl = (fs::temp_directory_path() / "lousho-tools-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    base_ = fs::canonical(made);
    root_ = base_ / "ws";
    outside_ = base_ / "outside";
    fs::create_directories(root_);
    fs::create_directories(outside_);
  }
  ~TempWorkspace() {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  const fs::path& root() const { return root_; }
  const fs::path& outside() const { return outside_; }

  fs::path Write(const std::string& rel, const std::string& content) const {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(root_ / rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  ToolContext Context() const {
    ToolContext ctx;
    ctx.session_id = "s1";
    ctx.cwd = root_;
    ctx.roots = {root_};
    return ctx;
  }

 private:
  fs::path base_, root_, outside_;
};

inline Json::Value J(const std::string& text) {
  auto r = ParseJson(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? *r : Json::Value();
}

// True when `pid` is gone: no such process, or a zombie waiting for its parent.
inline bool ProcessGone(int pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Waits (polling, at most 10 s: a bound, not a timing assertion) until `pid` is gone.
inline bool EventuallyGone(int pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    if (ProcessGone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ProcessGone(pid);
}

inline std::string TextOf(const ToolOutput& out) {
  std::string s;
  for (const auto& b : out.content)
    if (b.type == BlockType::kText) s += b.text;
  return s;
}

// A fake editor that records every call. Files live in a map (its "buffers"); terminals run
// nothing: the test decides their output and exit through the fields below, set before the tool
// runs. What the tool's calls record may be written from another thread than the test's, so it
// is read through the locked accessors (Calls, LastRequest) or is atomic.
class FakeClient : public PermissionPrompter, public FileAccess, public Terminals {
 public:
  bool can_read = false;
  bool can_write = false;
  bool has_terminal = false;
  std::map<std::string, std::string> files;  // absolute path -> content
  std::string terminal_output = "hello from terminal\n";
  std::optional<int> terminal_exit_code = 0;
  bool terminal_hangs = false;  // WaitForTerminalExit blocks until cancelled

  std::atomic<int> created{0};
  std::atomic<int> released{0};
  std::atomic<int> killed{0};
  std::atomic<bool> waiting{false};

  PermissionDecision RequestPermission(const std::string&, const PermissionRequest&,
                                       const CancelToken&) override {
    Record("permission");
    return PermissionDecision::kAllowOnce;
  }
  bool CanReadTextFile() const override { return can_read; }
  bool CanWriteTextFile() const override { return can_write; }
  Result<std::string> ReadTextFile(const std::string&, const std::string& path, int, int,
                                   const CancelToken&) override {
    Record("read " + path);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files.find(path);
    if (it == files.end()) return MakeError(ErrorCode::kClientError, "no such buffer");
    return it->second;
  }
  Status WriteTextFile(const std::string&, const std::string& path, const std::string& content,
                       const CancelToken&) override {
    Record("write " + path);
    std::lock_guard<std::mutex> lock(mu_);
    files[path] = content;
    return Status::Ok();
  }
  // The capabilities as a door would offer them: files and terminal only when enabled.
  ClientServices Services() {
    ClientServices s;
    s.permissions = this;
    if (can_read || can_write) s.files = this;
    if (has_terminal) s.terminals = this;
    return s;
  }
  Result<std::string> CreateTerminal(const std::string&, const TerminalRequest& request,
                                     const CancelToken&) override {
    std::string id = "term-" + std::to_string(++created);
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_request_ = request;
    }
    Record("create " + id);
    return id;
  }
  Result<TerminalOutput> GetTerminalOutput(const std::string&, const std::string& id) override {
    Record("output " + id);
    TerminalOutput o;
    o.output = terminal_output;
    if (!terminal_hangs) o.exit = TerminalExit{terminal_exit_code, std::nullopt};
    return o;
  }
  Result<TerminalExit> WaitForTerminalExit(const std::string&, const std::string& id,
                                           const CancelToken& cancel) override {
    Record("wait " + id);
    if (terminal_hangs) {
      waiting = true;
      // Blocks like a real editor would, until the caller's token fires (bounded for safety).
      if (!cancel.WaitFor(60000))
        return MakeError(ErrorCode::kTimeout, "fake terminal never exited");
      return MakeError(ErrorCode::kCancelled, "cancelled");
    }
    return TerminalExit{terminal_exit_code, std::nullopt};
  }
  Status KillTerminal(const std::string&, const std::string& id) override {
    ++killed;
    Record("kill " + id);
    return Status::Ok();
  }
  Status ReleaseTerminal(const std::string&, const std::string& id) override {
    ++released;
    Record("release " + id);
    return Status::Ok();
  }

  // "read <path>", "create <id>", "release <id>", ... in call order.
  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  TerminalRequest LastRequest() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_request_;
  }

 private:
  void Record(std::string s) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(s));
  }
  std::mutex mu_;
  std::vector<std::string> calls_;
  TerminalRequest last_request_;
};

}  // namespace lousho::agent::testing
