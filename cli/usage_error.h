// What a mistyped command line is told: CLI11's parse errors, with "did you mean" for an
// unknown command or flag (support/suggest.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace lousho::cli {

// The message for `e`, raised by `app.parse`: for the first argument CLI11 could not place, an
// unknown command ("unknown command 'acpp'; did you mean 'acp'?") or flag ("unknown flag
// '--verison'; did you mean '--version'?"), with the closest known name when one is close;
// else CLI11's own message.
std::string UsageErrorMessage(const CLI::App& app, const CLI::ParseError& e);

}  // namespace lousho::cli
