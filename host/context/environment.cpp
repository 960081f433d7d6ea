// The environment block: uname, the date, and git through the one subprocess runner.
#include "host/context/environment.h"

#include <sys/utsname.h>

#include <ctime>

#include "support/files.h"
#include "support/subprocess.h"

namespace lousho::host::context {
namespace fs = std::filesystem;

namespace {

// Git's output is read whole; more than this is not a short status.
constexpr size_t kMaxGitOutputBytes = size_t{64} * 1024;

std::string Today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d (%A)", &tm);
  return buf;
}

std::string SystemName() {
  struct utsname u {};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " (" + u.machine + ")";
}

// Runs git in `cwd`; the output, or nullopt with `problem` set.
std::optional<std::string> Git(const EnvironmentOptions& o, std::vector<std::string> args,
                               std::string* problem) {
  SubprocessOptions so;
  so.argv = {"git", "-C", o.cwd.string()};
  so.argv.insert(so.argv.end(), args.begin(), args.end());
  // Never take the index lock (a status refresh would), never page, never prompt.
  so.env = {{"GIT_OPTIONAL_LOCKS", "0"},
            {"GIT_PAGER", "cat"},
            {"GIT_TERMINAL_PROMPT", "0"},
            {"LC_ALL", "C"}};
  so.timeout_ms = o.git_timeout_ms;
  so.kill_grace_ms = 500;
  so.max_output_bytes = kMaxGitOutputBytes;
  so.drain_after_exit_ms = 50;
  auto run = RunSubprocess(so);
  const std::string what = "git " + args.front();
  if (!run.ok()) {
    *problem = what + ": " + run.error().message;
    return std::nullopt;
  }
  if (run->timed_out) {
    *problem = what + ": no answer within " + std::to_string(o.git_timeout_ms) + " ms";
    return std::nullopt;
  }
  if (run->exit_code.value_or(-1) != 0) return std::nullopt;  // no commits yet, say
  return run->output;
}

// The first `max` lines of `text`, and a line counting the rest.
std::string FirstLines(const std::string& text, int max) {
  std::string out;
  int lines = 0, more = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) {
      if (lines < max) {
        out.append(text, start, end - start).push_back('\n');
        ++lines;
      } else {
        ++more;
      }
    }
    start = end + 1;
  }
  if (more > 0) out += "… and " + std::to_string(more) + " more\n";
  return out;
}

// The git part: branch and short status from one `git status`, then the recent commits.
void DescribeGit(const EnvironmentOptions& o, Environment* env) {
  std::string& s = env->text;
  // --porcelain: the short format with paths from the repository's root, whatever folder of
  // it the session is in, and stable across git versions.
  auto status =
      Git(o, {"status", "--porcelain", "--branch", "--untracked-files=normal"}, &env->git_problem);
  if (!status) {
    if (!env->git_problem.empty()) s += "Git status: unknown (" + env->git_problem + ")\n";
    return;
  }
  std::string body = *status;
  if (body.rfind("## ", 0) == 0) {
    const size_t nl = body.find('\n');
    s += "Branch: " + body.substr(3, nl == std::string::npos ? std::string::npos : nl - 3) + "\n";
    body = nl == std::string::npos ? "" : body.substr(nl + 1);
  }
  const std::string lines = FirstLines(body, o.max_status_lines);
  s += lines.empty() ? "Status: clean\n" : "Status (git status --short):\n" + lines;
  std::string ignored;
  auto log =
      Git(o, {"log", "--oneline", "--no-decorate", "-n", std::to_string(o.max_commits)}, &ignored);
  if (log && !log->empty()) s += "Recent commits:\n" + FirstLines(*log, o.max_commits);
}

}  // namespace

Environment DescribeEnvironment(const EnvironmentOptions& o) {
  Environment env;
  std::string& s = env.text;
  s = "# Environment\n\n";
  s += "Date: " + (o.date.empty() ? Today() : o.date) + "\n";
  s += "OS: " + SystemName() + "\n";
  s += "Shell: /bin/bash (the bash tool runs commands with it)\n";
  s += "Working folder: " + o.cwd.string() + "\n";
  const fs::path root = RepositoryRoot(o.cwd);
  if (root.empty()) {
    s += "Git repository: no\n";
    return env;
  }
  env.repository = root.string();
  s += "Git repository: yes (root " + root.string() + ")\n";
  if (o.git) {
    s += "The git state below is from the start of the session; it is not updated.\n";
    DescribeGit(o, &env);
  }
  return env;
}

}  // namespace lousho::host::context
