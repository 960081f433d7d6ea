// The `bash` tool: a contained command on this machine (nothing it starts outlives the call), or
// a command in an editor terminal.
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <optional>
#include <thread>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/jobs.h"
#include "agent/tools/live_output.h"
#include "agent/tools/sandbox_note.h"
#include "agent/tools/tool_util.h"
#include "support/posix.h"
#include "support/subprocess.h"

namespace lousho::agent::tools {
namespace {

constexpr uint64_t kMaxSavedBashBytes = SavedOutputs::Limits{}.max_file_bytes;

// "cmd &" (not "a && b", not "\\&"): removes the `&` and the blanks around it.
bool StripTrailingAmpersand(std::string* command) {
  size_t end = command->find_last_not_of(" \t\n");
  if (end == std::string::npos || (*command)[end] != '&' || end == 0) return false;
  const char before = (*command)[end - 1];
  if (before == '&' || before == '\\' || before == '>' || before == '|') return false;
  command->erase(end);
  command->erase(command->find_last_not_of(" \t\n") + 1);
  return !command->empty();
}

class BashTool : public Tool {
 public:
  explicit BashTool(BashOptions options) : options_(options) {}

  std::string name() const override { return "bash"; }
  std::string description() const override {
    return "Run a bash command in the working directory. stdout and stderr are combined; only "
           "the last " +
           std::to_string(options_.max_output_lines) + " lines / " +
           std::to_string(options_.max_output_bytes / 1024) +
           " KB are returned (its head and tail; a longer output is saved whole to a file the "
           "result names, to read or grep). Optional timeout in seconds kills the command and "
           "everything it started. Processes it leaves running (nohup, setsid) are stopped when "
           "it returns. For a server or watcher that must keep running, set background: true "
           "(or end the command with `&`): it returns a job id at once; read the job's new "
           "output with bash_output and stop it with bash_kill. Jobs end with the session.";
  }
  Json::Value parameters() const override {
    Json::Value timeout = PropSchema("number", "Timeout in seconds (optional)");
    timeout["minimum"] = 1;
    return ObjectSchema(
        {{"command", PropSchema("string", "The bash command to run")},
         {"timeout", timeout},
         {"background", PropSchema("boolean", "Run as a background job and return its id at once")},
         {"sandbox", SandboxOffSchema()}},  // [sandbox] tools/sandbox_note.h
        {"command"});
  }
  ToolKind kind() const override { return ToolKind::kExecute; }
  bool read_only() const override { return false; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::string cmd = StringOr(args, "command");
    return cmd.empty() ? "bash" : Shorten(cmd, 80);
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return StringOr(args, "command");
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto command = a.String("command", true);
    auto timeout_s = a.Number("timeout", 0);
    bool background = a.Bool("background", false);
    if (!a.ok()) return ToolOutput::Error("bash: " + a.error());
    if (command->empty()) return ToolOutput::Error("bash: command is empty");
    // A trailing `&` would die with the call: it asks for a background job.
    if (ctx.jobs && StripTrailingAmpersand(&*command)) background = true;
    if (background) return StartJob(*command, ctx);
    // Fractions round up: a 0.5 s timeout must not turn into "none".
    long timeout =
        timeout_s ? static_cast<long>(std::ceil(*timeout_s)) : options_.default_timeout_s;
    if (ctx.services.terminals) return RunInTerminal(*command, timeout, ctx);
    return RunLocal(*command, timeout, ctx);
  }

 private:
  struct Outcome {
    std::string output;
    bool local = false;
    std::string head;  // local runs: the output's first bytes
    uint64_t total_bytes = 0;
    std::unique_ptr<SavedOutputs::Writer> saved;  // local runs: all of the output
    bool truncated = false;                       // dropped by the runner before we saw it
    std::optional<int> exit_code;
    std::string signal;
    bool timed_out = false;
    bool cancelled = false;
  };

  ToolOutput StartJob(const std::string& command, ToolContext& ctx) {
    if (!ctx.jobs) return ToolOutput::Error("bash: background jobs are not available here");
    auto job = ctx.jobs->Start(command, ctx.cwd, ctx.sandbox);
    if (!job.ok()) return ToolOutput::Error("bash: cannot start the job: " + job.error().message);
    ToolOutput out =
        ToolOutput::Text("Started background job " + job->id + " (pid " + std::to_string(job->pid) +
                         "). Read its output with bash_output {\"id\": \"" + job->id +
                         "\"}; stop it with bash_kill. It ends with the session at the latest.");
    out.details["jobId"] = job->id;
    out.details["pid"] = job->pid;
    out.details["background"] = true;
    return out;
  }

  ToolOutput RunLocal(const std::string& command, long timeout_s, ToolContext& ctx) {
    SubprocessOptions so;
    so.argv = {"/bin/bash", "-c", command};
    so.cwd = ctx.cwd.string();
    so.max_output_bytes = options_.max_output_bytes;
    so.timeout_ms = timeout_s * 1000;
    so.kill_grace_ms = options_.kill_grace_ms;
    so.cancel = ctx.cancel;
    so.sandbox = ctx.sandbox;  // [sandbox]
    // The output so far goes to the editor while the command runs, throttled and cut to the
    // tail the model would see; the result is read from the runner's own copy.
    std::optional<LiveOutput> live;
    if (ctx.on_output) {
      live.emplace(Cap(), kLiveOutputInterval, ctx.on_output);
      so.tick_ms = static_cast<long>(kLiveOutputInterval.count());
      so.on_tick = [&live] { live->Tick(LiveOutput::Clock::now()); };
    }
    // The head of the output and all of it (in a file) are kept as it comes: the runner keeps
    // only the tail.
    std::unique_ptr<SavedOutputs::Writer> saved =
        ctx.saved_outputs ? ctx.saved_outputs->Begin("bash") : nullptr;
    Outcome o;
    so.on_output = [&](std::string_view chunk) {
      if (live) live->Append(chunk, LiveOutput::Clock::now());
      if (saved) saved->Append(chunk);
      if (o.head.size() < options_.max_output_bytes)
        o.head.append(chunk.substr(0, options_.max_output_bytes - o.head.size()));
    };
    auto r = RunSubprocess(so);
    if (live) live->Flush();  // every update comes before the result
    if (!r.ok()) return ToolOutput::Error("bash: " + r.error().message);
    o.local = true;
    o.saved = std::move(saved);
    o.total_bytes = r->total_bytes;
    o.output = std::move(r->output);
    o.truncated = r->truncated;
    o.exit_code = r->exit_code;
    if (r->signal) o.signal = SignalName(*r->signal);
    o.timed_out = r->timed_out;
    o.cancelled = r->cancelled;
    const std::string denial = SandboxDenialNote(ctx, o.output, o.exit_code);  // [sandbox]
    return WithSandboxNote(Finish(std::move(o), timeout_s, ""), denial);
  }

  ToolOutput RunInTerminal(const std::string& command, long timeout_s, ToolContext& ctx) {
    TerminalRequest req;
    req.command = "/bin/bash";
    req.args = {"-c", command};
    ConfineTerminalRequest(ctx, &req);  // [sandbox] through `lousho sandbox-exec`
    req.cwd = ctx.cwd.string();
    req.output_byte_limit = static_cast<long long>(options_.max_output_bytes);
    auto created = ctx.services.terminals->CreateTerminal(ctx.session_id, req, ctx.cancel);
    if (!created.ok()) {
      if (ctx.cancel.cancelled()) return ToolOutput::Error("Command was cancelled");
      return ToolOutput::Error("bash: cannot create terminal: " + created.error().message);
    }
    const std::string id = *created;
    if (ctx.on_terminal) ctx.on_terminal(id);

    // The wait ends on the turn's cancellation or on our own timer, whichever comes first.
    CancelSource wait_source;
    ScopedCancelCallback forward(ctx.cancel, [&wait_source] { wait_source.Cancel(); });
    CancelSource timer_done;
    std::atomic<bool> timed_out{false};
    std::thread timer;
    if (timeout_s > 0) {
      timer = std::thread([&, done = timer_done.token()] {
        if (!done.WaitFor(timeout_s * 1000)) {
          timed_out = true;
          wait_source.Cancel();
        }
      });
    }
    auto exit =
        ctx.services.terminals->WaitForTerminalExit(ctx.session_id, id, wait_source.token());
    timer_done.Cancel();
    if (timer.joinable()) timer.join();

    Outcome o;
    o.timed_out = timed_out.load();
    o.cancelled = !o.timed_out && ctx.cancel.cancelled();
    // Best effort: a terminal that cannot be killed is still read and released below, and the
    // tool result already says why the command stopped.
    if (o.timed_out || o.cancelled || !exit.ok())
      (void)ctx.services.terminals->KillTerminal(ctx.session_id, id);
    auto output = ctx.services.terminals->GetTerminalOutput(ctx.session_id, id);
    // Every terminal we create is released, whatever happened above; a failed release leaves
    // nothing for this call to do (the editor owns the terminal), so its Status is dropped.
    (void)ctx.services.terminals->ReleaseTerminal(ctx.session_id, id);

    std::string wait_error;
    if (output.ok()) {
      o.output = output->output;
      o.truncated = output->truncated;
    }
    std::optional<TerminalExit> status;
    if (exit.ok()) status = *exit;
    if (!status && output.ok() && output->exit) status = output->exit;
    if (status) {
      o.exit_code = status->exit_code;
      o.signal = status->signal.value_or("");
    }
    if (!exit.ok() && !o.timed_out && !o.cancelled) wait_error = exit.error().message;
    const std::string denial = SandboxDenialNote(ctx, o.output, o.exit_code);  // [sandbox]
    ToolOutput out = WithSandboxNote(Finish(std::move(o), timeout_s, wait_error), denial);
    out.terminal_id = id;
    out.details["terminalId"] = id;
    return out;
  }

  // The output as the model gets it: local runs keep the head and the tail and name the file
  // that holds all of it; an editor's terminal gives its tail only.
  std::string Shown(Outcome& o, bool* cut) const {
    if (!o.local) return CappedOutput(o.output, o.truncated, Cap(), cut);
    std::string_view start = o.truncated ? std::string_view(o.head) : std::string_view(o.output);
    std::string body = CutForModel(start, o.output, o.total_bytes, Cap(), "", cut);
    if (!*cut) {
      if (!body.empty() && body.back() == '\n') body.pop_back();  // as the tail view shows it
      return body.empty() ? "(no output)" : body;
    }
    const std::string path = o.saved ? o.saved->Keep() : "";
    if (path.empty()) return body;
    std::string note = path;
    if (o.saved->truncated()) note += " (its first " + ByteSize(kMaxSavedBashBytes) + ")";
    return CutForModel(start, o.output, o.total_bytes, Cap(), note, nullptr);
  }

  ToolOutput Finish(Outcome o, long timeout_s, const std::string& wait_error) {
    bool cut = false;
    std::string body = Shown(o, &cut);
    ToolOutput out;
    if (o.timed_out) {
      body +=
          "\n\nCommand timed out after " + std::to_string(timeout_s) + " seconds and was killed";
      out.is_error = true;
    } else if (o.cancelled) {
      body += "\n\nCommand was cancelled";
      out.is_error = true;
    } else if (!wait_error.empty()) {
      body += "\n\nCould not wait for the command: " + wait_error;
      out.is_error = true;
    } else if (!o.signal.empty()) {
      body += "\n\nCommand was killed by " + o.signal;
      out.is_error = true;
    } else if (o.exit_code && *o.exit_code != 0) {
      body += "\n\nCommand exited with code " + std::to_string(*o.exit_code);
      out.is_error = true;
    }
    out.content.push_back(ContentBlock::Text(std::move(body)));
    if (o.exit_code) out.details["exitCode"] = *o.exit_code;
    if (!o.signal.empty()) out.details["signal"] = o.signal;
    out.details["truncated"] = cut;
    out.details["timedOut"] = o.timed_out;
    out.details["cancelled"] = o.cancelled;
    return out;
  }

  OutputCap Cap() const { return {options_.max_output_bytes, options_.max_output_lines}; }

  BashOptions options_;
};

}  // namespace

std::unique_ptr<Tool> MakeBashTool(BashOptions options) {
  return std::make_unique<BashTool>(options);
}

}  // namespace lousho::agent::tools
