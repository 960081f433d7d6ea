// One prompt run to its end for `lousho run`.
#include "local/run_prompt.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <mutex>
#include <utility>
#include <variant>
#include <vector>

#include "agent/mcp/servers.h"
#include "local/json_events.h"
#include "local/progress_printer.h"
#include "support/posix.h"
#include "support/worker_pool.h"

namespace lousho::local {
namespace {

// What the run saw, filled from the session's worker and read once it has ended.
struct RunState {
  std::mutex mu;
  bool done = false;
  std::optional<Result<agent::TurnResult>> result;
  std::string answer;       // the last assistant message's text
  std::string model_error;  // its error, when its stream failed
};

// The run's outputs: JSON lines on stdout, or progress on stderr; either way under one lock.
class RunOutput {
 public:
  RunOutput(bool json, bool spinner, FILE* out, FILE* err)
      : json_(json),
        out_(out),
        err_(err),
        writer_([out](const std::string& line) {
          std::fwrite(line.data(), 1, line.size(), out);
          std::fputc('\n', out);
          std::fflush(out);
        }),
        printer_(err, spinner && !json) {}

  void Start(const RunStart& start) {
    std::lock_guard<std::mutex> lock(mu_);
    if (json_) writer_.Start(start);
  }
  void Event(const agent::Event& e) {
    if (!json_) return printer_.Event(e);
    std::lock_guard<std::mutex> lock(mu_);
    writer_.Event(e);
  }
  void Refused(const Refusal& r) {
    printer_.Refused(r);  // on stderr in both forms: a refusal is never silent
    if (!json_) return;
    std::lock_guard<std::mutex> lock(mu_);
    writer_.Refused(r);
  }
  void Note(const std::string& text) { printer_.Note(text); }
  void Tick() { printer_.Tick(); }
  void Finish(const RunOutcome& outcome) {
    printer_.Finish();
    if (!outcome.error.empty()) std::fprintf(err_, "error: %s\n", outcome.error.c_str());
    std::lock_guard<std::mutex> lock(mu_);
    if (json_) return writer_.Result(outcome);
    if (outcome.answer.empty()) return;
    std::fputs(outcome.answer.c_str(), out_);
    if (outcome.answer.back() != '\n') std::fputc('\n', out_);
    std::fflush(out_);
  }

 private:
  const bool json_;
  FILE* out_;
  FILE* err_;
  std::mutex mu_;
  JsonEventWriter writer_;
  ProgressPrinter printer_;
};

// Keeps the last assistant message's text (and error) of the prompt.
void NoteAnswer(const agent::Event& e, RunState& state) {
  const auto* end = std::get_if<agent::event::AgentEnd>(&e);
  if (end == nullptr || end->messages == nullptr) return;
  for (auto it = end->messages->rbegin(); it != end->messages->rend(); ++it) {
    if (it->role != agent::Role::kAssistant) continue;
    std::lock_guard<std::mutex> lock(state.mu);
    state.answer = it->TextContent();
    state.model_error =
        it->stop_reason == agent::StopReason::kError ? it->error_message() : std::string();
    return;
  }
}

// The outcome of a finished prompt (its exit code, stop reason and error).
RunOutcome OutcomeOf(RunState& state, int refused) {
  std::lock_guard<std::mutex> lock(state.mu);
  RunOutcome o;
  o.answer = state.answer;
  o.refused = refused;
  if (!state.result || !state.result->ok()) {
    o.exit_code = kExitError;
    o.stop_reason = "error";
    o.error = state.result ? state.result->error().message : "the prompt did not end";
    return o;
  }
  const agent::TurnResult& r = **state.result;
  o.usage = r.usage;
  o.stop_reason = agent::TurnStopName(r.stop);
  if (r.stop == agent::TurnStop::kCancelled) {
    o.exit_code = kExitCancelled;
  } else if (!state.model_error.empty()) {
    o.exit_code = kExitError;
    o.stop_reason = "error";
    o.error = state.model_error;
  } else if (r.stop == agent::TurnStop::kRefusal) {
    o.exit_code = kExitError;
    o.error = "the model refused to answer";
  } else if (refused > 0) {
    o.exit_code = kExitRefused;
  } else if (r.stop == agent::TurnStop::kMaxTokens || r.stop == agent::TurnStop::kMaxTurnRequests) {
    o.exit_code = kExitLimit;
  }
  return o;
}

// The spec's MCP servers, started before the prompt so that its first request sees their tools.
void StartMcpServers(agent::Session& session, const agent::AgentConfig& agent,
                     const std::filesystem::path& cwd, RunOutput& output) {
  const agent::AgentView view = agent::ViewOf(agent);
  if (view.mcp_servers.empty()) return;
  agent::mcp::StartOptions mo;
  mo.cwd = cwd;
  mo.roots = {cwd};
  mo.client_version = LOUSHO_VERSION;
  mo.settings = view.mcp;
  mo.login.on_login = [&output](const std::string& server, bool waiting, const std::string& msg) {
    if (waiting) output.Note("MCP server " + server + ": " + msg);
  };
  for (const auto& status : host::AttachMcpServers(session, view.mcp_servers, mo)) {
    const std::string msg = agent::mcp::FailureMessage(status);
    if (!msg.empty()) output.Note("warning: " + msg);
  }
}

// Waits for the prompt to end (`done_fd` readable). The first stop signal cancels the turn
// through the engine; the handlers are one-shot, so a second one ends lousho.
void WaitForEnd(int done_fd, int stop_fd, agent::Session& session, RunOutput& output,
                bool spinner) {
  bool cancelling = false;
  for (;;) {
    pollfd fds[2] = {{done_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    const int n = poll(fds, stop_fd >= 0 ? 2 : 1, spinner ? 100 : -1);
    if (n < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    if (n == 0) {
      output.Tick();
      continue;
    }
    if (stop_fd >= 0 && fds[1].revents != 0) {
      char buf[16];
      (void)read(stop_fd, buf, sizeof buf);
      if (!cancelling) output.Note("cancelling the turn (Ctrl-C again to exit)");
      cancelling = true;
      session.Cancel(CancelCause::kUser);
    }
  }
}

// A failure before the prompt ran.
int FailEarly(RunOutput& output, const std::string& error) {
  RunOutcome o;
  o.exit_code = kExitError;
  o.stop_reason = "error";
  o.error = error;
  output.Finish(o);
  return o.exit_code;
}

// Runs the prompt on the opened session and reports how it ended.
int RunOnSession(const std::shared_ptr<agent::Session>& session, const host::SessionHost& host,
                 const RunRequest& request, PermissionGate& gate, RunState& state,
                 RunOutput& output) {
  std::weak_ptr<agent::Session> weak = session;
  gate.SetToolLookup([weak](const std::string& name) -> std::shared_ptr<agent::Tool> {
    auto s = weak.lock();
    return s ? s->tools().Find(name) : nullptr;
  });
  if (request.mode)
    if (Status st = session->selection().SetMode(*request.mode); !st.ok())
      return FailEarly(output, st.error().message);
  const agent::SessionInfo& info = session->info();
  const agent::ModelChoice model = session->selection().model();
  output.Start({info.id, info.session_file, request.cwd.string(), host.agent()->name,
                model.provider_name + "/" + model.model_id,
                agent::PermissionModeId(session->selection().mode())});
  StartMcpServers(*session, *host.agent(), request.cwd, output);

  int done_pipe[2];
  if (PipeCloexec(done_pipe, false) != 0) return FailEarly(output, "cannot create a pipe");
  const int done_write = done_pipe[1];
  Status st = session->Prompt({agent::ContentBlock::Text(request.prompt)},
                              [&state, done_write](Result<agent::TurnResult> r) {
                                {
                                  std::lock_guard<std::mutex> lock(state.mu);
                                  state.result = std::move(r);
                                }
                                char c = 1;
                                (void)write(done_write, &c, 1);
                              });
  if (st.ok()) WaitForEnd(done_pipe[0], request.stop_fd, *session, output, request.spinner);
  session->WaitIdle();  // the file has every entry of the prompt
  close(done_pipe[0]);
  close(done_pipe[1]);
  if (!st.ok()) return FailEarly(output, st.error().message);
  RunOutcome outcome = OutcomeOf(state, gate.refusals());
  outcome.session_id = info.id;
  outcome.session_file = info.session_file;
  output.Finish(outcome);
  return outcome.exit_code;
}

}  // namespace

int RunPrompt(host::SessionHost& host, const RunRequest& request, FILE* out, FILE* err) {
  RunOutput output(request.json, request.spinner, out, err);
  std::shared_ptr<const agent::AgentConfig> agent = host.agent();
  if (agent->provider_error) return FailEarly(output, agent->provider_error->ToString());
  PermissionGate gate(request.gate, [&output](const Refusal& r) { output.Refused(r); });
  RunState state;
  WorkerPool pool;  // before the session: destroyed after it
  agent::SessionOptions so;
  so.id = host.NewSessionId();
  so.cwd = request.cwd;
  so.services.permissions = &gate;
  so.pool = &pool;
  so.sink = [&output, &state](const agent::Event& e) {
    NoteAnswer(e, state);
    output.Event(e);
  };
  auto opened = host::OpenChosenSession(host, std::move(so), request.cwd, request.choice);
  if (!opened.ok()) return FailEarly(output, opened.error().message);
  const int code = RunOnSession(*opened, host, request, gate, state, output);
  // Its tools' threads and servers end with it, before the pool and the gate they use.
  (*opened)->Close([] {});
  (*opened)->WaitIdle();
  opened->reset();
  pool.Drain();
  return code;
}

}  // namespace lousho::local
