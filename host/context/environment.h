// The environment block of a session's system prompt: the date, the OS, the shell, the working
// folder and, in a git repository, the branch, a short status and the recent commits. Computed
// once when a session's context is built; git runs through support/subprocess, bounded in time
// and output.
#pragma once

#include <filesystem>
#include <string>

namespace lousho::host::context {

struct EnvironmentOptions {
  std::filesystem::path cwd;
  bool git = true;             // ask git (only when cwd is in a repository)
  long git_timeout_ms = 3000;  // each git command
  int max_status_lines = 30;
  int max_commits = 5;
  std::string date;  // empty: today's (local time, YYYY-MM-DD)
};

// What was found, for the report and the prompt.
struct Environment {
  std::string text;         // the rendered block ("# Environment\n...")
  std::string repository;   // the repository's root; empty: not a repository
  std::string git_problem;  // a git command that failed or timed out; empty: none
};

Environment DescribeEnvironment(const EnvironmentOptions& options);

}  // namespace lousho::host::context
