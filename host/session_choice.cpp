// The start-up flags' session: --session FILE|ID, --continue, or a new one.
#include "host/session_choice.h"

#include <utility>
#include <vector>

namespace lousho::host {

Status CheckSessionChoice(const SessionChoice& choice, bool no_session) {
  if (no_session && (!choice.session.empty() || choice.continue_newest))
    return MakeError(ErrorCode::kUsage,
                     "--no-session cannot be combined with --session or --continue");
  return Status::Ok();
}

Result<std::shared_ptr<agent::Session>> OpenChosenSession(const SessionHost& host,
                                                          agent::SessionOptions options,
                                                          const std::filesystem::path& cwd,
                                                          const SessionChoice& choice) {
  if (!choice.session.empty()) {
    const std::filesystem::path file = cwd / choice.session;
    std::error_code ec;
    // Not a file (yet): the id of a saved session, when one has it.
    if (!std::filesystem::exists(file, ec))
      if (auto found = host.Find(choice.session, cwd.string()); found.ok())
        return host.Open(std::move(options), *found);
    return host.Open(std::move(options), file, /*create=*/true);
  }
  const auto listed =
      choice.continue_newest ? host.List(cwd.string()) : std::vector<agent::SessionSummary>();
  if (!listed.empty()) return host.Open(std::move(options), listed.front().path);
  return host.New(std::move(options));
}

}  // namespace lousho::host
