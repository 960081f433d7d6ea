// Parse errors with "did you mean" (cli/usage_error.h).
#include "cli/usage_error.h"

#include <vector>

#include "support/suggest.h"
#include "support/text.h"

namespace lousho::cli {
namespace {

// The subcommand the line reached: the last one CLI11 parsed, else `app`.
const CLI::App* DeepestParsed(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    const auto parsed = at->get_subcommands();
    if (parsed.empty()) return at;
    at = parsed.front();
  }
}

// Every flag `at` and its parents take, in their written form ("--name" or "-n").
std::vector<std::string> FlagNames(const CLI::App* at, bool long_form) {
  std::vector<std::string> names;
  for (; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* opt : at->get_options()) {
      for (const auto& n : long_form ? opt->get_lnames() : opt->get_snames())
        names.push_back((long_form ? "--" : "-") + n);
    }
  }
  return names;
}

std::vector<std::string> CommandNames(const CLI::App* at) {
  std::vector<std::string> names;
  for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty() && !sub->get_group().empty()) names.push_back(sub->get_name());
  return names;
}

std::string UnknownFlag(const CLI::App* at, const std::string& token) {
  const std::string name = token.substr(0, token.find('='));
  const bool long_form = name.rfind("--", 0) == 0;
  std::string where = at->get_parent() == nullptr ? "" : " for '" + at->get_name() + "'";
  std::string message = "unknown flag '" + name + "'" + where;
  if (auto best = ClosestMatch(name, FlagNames(at, long_form)))
    return message + "; did you mean '" + *best + "'?";
  return message;
}

std::string UnknownCommand(const CLI::App* at, const std::string& token) {
  const std::vector<std::string> known = CommandNames(at);
  std::string message = "unknown command '" + token + "'";
  if (auto best = ClosestMatch(token, known)) return message + "; did you mean '" + *best + "'?";
  return message + " (commands: " + JoinStrings(known, ", ") + ")";
}

}  // namespace

std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* at = DeepestParsed(app);
  for (const std::string& token : app.remaining(true)) {
    if (token.size() > 1 && token[0] == '-') return UnknownFlag(at, token);
    // A word where a command was expected: the line reached no subcommand that has one.
    if (at == &app) return UnknownCommand(at, token);
  }
  return e.what();
}

}  // namespace lousho::cli
