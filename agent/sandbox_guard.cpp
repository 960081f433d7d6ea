// A session's sandbox: policies per permission mode, the notice, escalation to run outside.
#include "agent/sandbox_guard.h"

#include "config/credentials.h"
#include "support/env.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {

size_t ModeIndex(PermissionMode mode) {
  switch (mode) {
    case PermissionMode::kDefault:
      return 0;
    case PermissionMode::kAcceptEdits:
      return 1;
    case PermissionMode::kPlan:
      return 2;
    case PermissionMode::kBypass:
      return 3;
  }
  return 0;
}

// Whether a call asks to run outside: the `bash` tool's "sandbox": "off".
bool AsksOutside(const Tool& tool, const Json::Value& args) {
  return tool.name() == "bash" && StringOr(args, "sandbox") == "off";
}

}  // namespace

SandboxGuard::SandboxGuard(config::SandboxSpec spec, config::SandboxPlace place)
    : spec_(std::move(spec)), place_(std::move(place)), remembered_({}, place_.cwd) {}

std::shared_ptr<const SandboxPolicy> SandboxGuard::PolicyFor(PermissionMode mode) const {
  const size_t i = ModeIndex(mode);
  std::lock_guard<std::mutex> lock(mu_);
  if (!built_[i]) {
    built_[i] = true;
    SandboxMode m = config::SandboxModeFor(spec_, PermissionModeId(mode));
    if (m != SandboxMode::kOff)
      by_mode_[i] =
          std::make_shared<const SandboxPolicy>(config::ComposeSandboxPolicy(spec_, m, place_));
  }
  return by_mode_[i];
}

std::shared_ptr<const SandboxPolicy> SandboxGuard::HookPolicy() const {
  return PolicyFor(PermissionMode::kDefault);
}

std::string SandboxGuard::Notice() const {
  const SandboxSupport& support = ProbeSandbox();
  if (spec_.mode == SandboxMode::kOff) return "";
  if (!support.usable())
    return spec_.required ? "The kernel sandbox is required by this agent but unavailable (" +
                                support.missing + "): commands are refused."
                          : "Commands run without a kernel sandbox: " + support.missing + ".";
  if (!support.missing.empty())
    return "The kernel sandbox is only partly available: " + support.missing + ".";
  return "";
}

std::string SandboxGuard::TakeNotice() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (told_) return "";
    told_ = true;
  }
  return Notice();
}

OutsideSandbox SandboxGuard::Outside(const Tool& tool, const Json::Value& args,
                                     PermissionMode mode) const {
  OutsideSandbox o;
  if (!AsksOutside(tool, args) || !PolicyFor(mode)) return o;
  o.wanted = true;
  switch (spec_.escalation) {
    case config::SandboxEscalation::kDeny:
      o.refusal =
          "This agent's spec never runs commands outside the sandbox (sandbox.escalation: deny).";
      return o;
    case config::SandboxEscalation::kRules:
      return o;
    case config::SandboxEscalation::kAsk:
      break;
  }
  if (remembered_.Decide(tool, args, PermissionMode::kDefault) == PermissionAction::kAllow) {
    o.allowed = true;
    return o;
  }
  o.asks = true;
  o.title = "Run outside the sandbox: " + StringOr(args, "command") + "?";
  return o;
}

void SandboxGuard::RememberOutside(const Tool& tool, const Json::Value& args) {
  remembered_.RememberAnswer(tool, args, PermissionAction::kAllow);
}

config::SandboxPlace SandboxPlaceOf(const std::filesystem::path& cwd,
                                    const std::vector<std::filesystem::path>& roots) {
  config::SandboxPlace p;
  p.cwd = cwd.string();
  for (const auto& r : roots) p.roots.push_back(r.string());
  p.home = ProcessEnv("HOME").value_or("");
  p.tmp = ProcessEnv("TMPDIR").value_or("/tmp");
  if (p.tmp.empty()) p.tmp = "/tmp";
  p.credentials = config::CredentialsPath(ProcessEnv);
  return p;
}

}  // namespace lousho::agent
