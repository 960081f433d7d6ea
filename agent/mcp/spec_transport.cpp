// The transports of a server's spec: stdio (a child process's stdin and stdout) and HTTP
// (streamable HTTP or legacy SSE), as the lines the MCP client reads and writes.
#include "agent/mcp/spec_transport.h"

#include <atomic>

#include "agent/mcp/http_transport.h"
#include "support/files.h"
#include "support/log.h"
#include "support/subprocess.h"

namespace lousho::agent::mcp {
namespace {

// A single message may carry images or files; past this a line is refused.
constexpr size_t kMaxLineBytes = size_t{64} << 20;
// A server's stdin and stdout, under a ChildProcess that owns its process tree. Writes are
// queued (ChildProcess::WriteStdin), so neither the reader thread answering the server nor a
// caller ever waits on a server that does not read; one that lets the queue fill is stopped.
class StdioTransport : public McpLineTransport {
 public:
  StdioTransport(std::unique_ptr<ChildProcess> proc, std::string name)
      : proc_(std::move(proc)),
        reader_(proc_->stdout_fd(), -1, kMaxLineBytes),
        name_(std::move(name)) {}
  ReadStatus ReadLine(std::string* line, size_t* line_size) override {
    return reader_.ReadLine(line, line_size);
  }
  void WriteLine(std::string line) override {
    line.push_back('\n');
    if (proc_->WriteStdin(std::move(line)) || !proc_->stdin_full()) return;
    // Its output ends once it is gone: the calls waiting on it fail then.
    if (!stopping_.exchange(true)) {
      log::Warn("MCP server '" + name_ + "' has stopped reading its input (" +
                ByteSize(ProcessOptions().stdin_queue_bytes) + " waiting); stopping it");
      proc_->Terminate();
    }
  }
  void Close() override { proc_->Stop(); }
  std::string StderrTail() const override { return proc_->StderrTail(); }
  size_t max_line_bytes() const override { return kMaxLineBytes; }

 private:
  std::unique_ptr<ChildProcess> proc_;
  FdTransport reader_;
  std::string name_;
  std::atomic<bool> stopping_{false};
};

class HttpTransport : public McpLineTransport {
 public:
  explicit HttpTransport(std::unique_ptr<HttpLineTransport> t) : t_(std::move(t)) {}
  ReadStatus ReadLine(std::string* line, size_t* line_size) override {
    return t_->ReadLine(line, line_size);
  }
  void WriteLine(std::string line) override { t_->WriteLine(std::move(line)); }
  void Close() override { t_->Close(); }
  bool alive() const override { return !t_->ended(); }
  void Connected(const std::string& version) override {
    t_->SetProtocolVersion(version, IsStateless(version));
    // A stateless server keeps no stream of its own: nothing to listen to.
    if (!IsStateless(version)) t_->Listen();
  }
  void Offer(const std::string& version) override {
    t_->SetProtocolVersion(version, IsStateless(version));
  }

 private:
  std::unique_ptr<HttpLineTransport> t_;
};

}  // namespace

Result<std::unique_ptr<McpLineTransport>> OpenSpecTransport(const config::McpServerSpec& spec,
                                                            const ClientOptions& options,
                                                            const CancelToken& cancel,
                                                            long timeout_ms) {
  switch (spec.transport) {
    case config::McpTransport::kStdio: {
      ProcessOptions po;
      po.argv.push_back(spec.command);
      po.argv.insert(po.argv.end(), spec.args.begin(), spec.args.end());
      po.env = spec.env;
      po.cwd = spec.cwd.empty() ? options.cwd : spec.cwd;
      po.sandbox = spec.sandbox;  // [sandbox] set by the host when the spec says so
      auto proc = ChildProcess::Start(po);
      if (!proc.ok()) return MakeError(ErrorCode::kMcpServer, proc.error().message);
      return std::unique_ptr<McpLineTransport>(new StdioTransport(std::move(*proc), spec.name));
    }
    case config::McpTransport::kHttp:
    case config::McpTransport::kSse: {
      HttpTransportOptions ho;
      ho.kind = spec.transport;
      ho.url = spec.url;
      ho.headers = spec.headers;
      ho.connect_timeout_ms = timeout_ms;
      ho.read_timeout_ms = options.call_timeout_ms;
      ho.ca_cert_path = options.ca_cert_path;
      ho.proxy = options.proxy;
      ho.auth = options.auth;
      auto t = HttpLineTransport::Open(std::move(ho), cancel);
      if (!t.ok()) return t.error();
      return std::unique_ptr<McpLineTransport>(new HttpTransport(std::move(*t)));
    }
  }
  return MakeError(ErrorCode::kMcpServer, "unknown transport");
}

}  // namespace lousho::agent::mcp
