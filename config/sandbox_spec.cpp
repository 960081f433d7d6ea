// `sandbox:` of an agent spec, `--sandbox`, and the policy of one command.
#include "config/sandbox_spec.h"

#include <algorithm>

#include "support/json_util.h"
#include "support/text.h"

namespace lousho::config {
namespace {

const char* const kSandboxKeys[] = {"mode",  "network",  "writable",   "caches", "deny_read",
                                    "modes", "required", "escalation", "mcp"};

Error SpecErr(const std::string& what) { return MakeError(ErrorCode::kConfigInvalid, what); }

Result<SandboxMode> ModeOf(const Json::Value& v, const std::string& where) {
  std::optional<std::string> s = AsString(v);
  std::optional<SandboxMode> m = s ? ParseSandboxMode(*s) : std::nullopt;
  if (!m) return SpecErr(where + ": expected workspace-write, read-only or off");
  return *m;
}

// on/off, true/false.
Result<bool> OnOff(const Json::Value& v, const std::string& where) {
  if (std::optional<bool> b = AsBool(v)) return *b;
  std::optional<std::string> s = AsString(v);
  if (s == "on") return true;
  if (s == "off") return false;
  return SpecErr(where + ": expected on or off");
}

Result<std::vector<std::string>> Paths(const Json::Value& v, const std::string& where) {
  std::vector<std::string> out;
  if (!v.isArray()) return SpecErr(where + ": expected a list of paths");
  for (Json::ArrayIndex i = 0; i < v.size(); ++i) {
    std::optional<std::string> s = AsString(ElementOrNull(v, i));
    if (!s || s->empty())
      return SpecErr(where + "[" + std::to_string(i) + "]: expected a non-empty path");
    out.push_back(*s);
  }
  return out;
}

Status ParseModes(const Json::Value& v, SandboxSpec* spec) {
  if (!v.isObject()) return SpecErr("sandbox.modes: expected a map of mode: sandbox mode");
  for (const std::string& name : MemberNames(v)) {
    auto m = ModeOf(MemberOrNull(v, name), "sandbox.modes." + name);
    if (!m.ok()) return m.error();
    spec->modes[name] = *m;
  }
  return Status::Ok();
}

Status ParseEscalation(const Json::Value& v, SandboxSpec* spec) {
  std::optional<std::string> s = AsString(v);
  if (s == "ask") {
    spec->escalation = SandboxEscalation::kAsk;
  } else if (s == "rules") {
    spec->escalation = SandboxEscalation::kRules;
  } else if (s == "deny") {
    spec->escalation = SandboxEscalation::kDeny;
  } else {
    return SpecErr("sandbox.escalation: expected ask, rules or deny");
  }
  return Status::Ok();
}

Status ParseMember(const std::string& key, const Json::Value& v, SandboxSpec* spec) {
  const std::string where = "sandbox." + key;
  if (key == "modes") return ParseModes(v, spec);
  if (key == "escalation") return ParseEscalation(v, spec);
  if (key == "writable" || key == "deny_read") {
    auto p = Paths(v, where);
    if (!p.ok()) return p.error();
    (key == "writable" ? spec->writable : spec->deny_read) = std::move(*p);
    return Status::Ok();
  }
  if (key == "mode") {
    auto m = ModeOf(v, where);
    if (!m.ok()) return m.error();
    spec->mode = *m;
    return Status::Ok();
  }
  if (key == "network" && AsString(v) == "loopback") {
    spec->network = false;
    spec->loopback = true;
    return Status::Ok();
  }
  auto b = OnOff(v, where);
  if (!b.ok() && key == "network") return SpecErr(where + ": expected on, off or loopback");
  if (!b.ok()) return b.error();
  if (key == "network") {
    spec->network = *b;
    spec->loopback = false;
  }
  if (key == "caches") spec->default_caches = *b;
  if (key == "required") spec->required = *b;
  if (key == "mcp") spec->mcp = *b;
  return Status::Ok();
}

std::string Expand(const std::string& path, const SandboxPlace& place) {
  if (path == "~") return place.home;
  if (path.rfind("~/", 0) == 0) return place.home.empty() ? "" : place.home + path.substr(1);
  if (!path.empty() && path[0] == '/') return path;
  return place.cwd.empty() ? "" : place.cwd + "/" + path;
}

void AddPath(const std::string& p, std::vector<std::string>* to) {
  if (!p.empty() && std::find(to->begin(), to->end(), p) == to->end()) to->push_back(p);
}

}  // namespace

Result<SandboxSpec> ParseSandboxSpec(const Json::Value& value) {
  SandboxSpec spec;
  if (value.isString()) {
    auto m = ModeOf(value, "sandbox");
    if (!m.ok()) return m.error();
    spec.mode = *m;
    return spec;
  }
  if (std::optional<bool> on = value.isBool() ? AsBool(value) : std::nullopt) {
    spec.mode = *on ? SandboxMode::kWorkspaceWrite : SandboxMode::kOff;  // `sandbox: false`
    return spec;
  }
  if (!value.isObject()) return SpecErr("sandbox: expected a mode name or a map");
  for (const std::string& key : MemberNames(value)) {
    if (std::find(std::begin(kSandboxKeys), std::end(kSandboxKeys), key) == std::end(kSandboxKeys))
      return SpecErr("sandbox." + key + ": unknown key (known: " +
                     JoinStrings({std::begin(kSandboxKeys), std::end(kSandboxKeys)}, ", ") + ")");
    Status s = ParseMember(key, MemberOrNull(value, key), &spec);
    if (!s.ok()) return s.error();
  }
  return spec;
}

Status ApplySandboxFlag(std::string_view flag, SandboxSpec* spec) {
  std::string_view mode = flag.substr(0, flag.find(','));
  std::optional<SandboxMode> m = ParseSandboxMode(mode);
  if (!m)
    return MakeError(ErrorCode::kUsage,
                     "--sandbox: expected workspace-write, read-only or off, optionally with "
                     ",network=on|off|loopback");
  spec->mode = *m;
  if (mode.size() == flag.size()) return Status::Ok();
  std::string_view rest = flag.substr(mode.size() + 1);
  if (rest == "network=on" || rest == "network=off" || rest == "network=loopback") {
    spec->network = rest == "network=on";
    spec->loopback = rest == "network=loopback";
    return Status::Ok();
  }
  return MakeError(ErrorCode::kUsage,
                   "--sandbox: expected network=on, network=off or network=loopback after ','");
}

SandboxMode SandboxModeFor(const SandboxSpec& spec, std::string_view permission_mode) {
  SandboxMode base = spec.mode.value_or(SandboxMode::kWorkspaceWrite);
  // Nothing to confine with: off, unless the spec requires the sandbox (commands then refuse).
  if (!ProbeSandbox().usable() && !spec.required) return SandboxMode::kOff;
  if (base == SandboxMode::kOff) return base;
  auto own = spec.modes.find(std::string(permission_mode));
  if (own != spec.modes.end()) return own->second;
  if (permission_mode == "plan") return SandboxMode::kReadOnly;
  return base;
}

SandboxPolicy ComposeSandboxPolicy(const SandboxSpec& spec, SandboxMode mode,
                                   const SandboxPlace& place) {
  SandboxPolicy p;
  p.mode = mode;
  p.network = spec.network;
  p.loopback = !spec.network && spec.loopback;
  if (mode == SandboxMode::kOff) return p;
  AddPath(place.tmp.empty() ? "/tmp" : place.tmp, &p.writable);
  if (mode == SandboxMode::kWorkspaceWrite) {
    AddPath(place.cwd, &p.writable);
    for (const std::string& r : place.roots) AddPath(r, &p.writable);
    if (spec.default_caches)
      for (const std::string& c : DefaultSandboxCaches(place.home)) AddPath(c, &p.writable);
    for (const std::string& w : spec.writable) AddPath(Expand(w, place), &p.writable);
  }
  std::vector<std::string> deny = DefaultSandboxDenyRead(place.home, place.credentials);
  for (const std::string& d : spec.deny_read) AddPath(Expand(d, place), &deny);
  // A denied folder that holds a writable one (the session works in another user's home) would
  // hide the workspace: the workspace wins.
  for (const std::string& d : deny)
    if (std::none_of(p.writable.begin(), p.writable.end(), [&](const std::string& w) {
          return w == d ||
                 (w.size() > d.size() && w.compare(0, d.size(), d) == 0 && w[d.size()] == '/');
        }))
      p.deny_read.push_back(d);
  return p;
}

std::string DescribeSandbox(const SandboxSpec& spec) {
  const SandboxSupport& support = ProbeSandbox();
  SandboxMode mode = spec.mode.value_or(SandboxMode::kWorkspaceWrite);
  if (!support.usable()) {
    if (mode == SandboxMode::kOff) return "sandbox: off";
    return "sandbox: unavailable (" + support.missing + ")" +
           (spec.required ? "; sandbox required: commands are refused"
                          : "; commands run unconfined");
  }
  std::string s = std::string("sandbox: ") + SandboxModeName(mode);
  if (mode == SandboxMode::kOff) return s;
  s += std::string(", network ") +
       (spec.network    ? "on"
        : spec.loopback ? "loopback only"
                        : "off") +
       (support.seatbelt ? std::string(" (Seatbelt)")
                         : " (Landlock ABI " + std::to_string(support.landlock_abi) + ")");
  if (!support.missing.empty()) s += "; partial: " + support.missing;
  return s;
}

}  // namespace lousho::config
