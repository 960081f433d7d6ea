#include "support/sandbox_seatbelt.h"

namespace lousho {
namespace {

// A string literal of the profile language (the same quoting as C: backslash and double quote).
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// macOS resolves /tmp, /var and /etc through /private: a rule names both forms.
void AddPathForms(const char* kind, const std::string& path, std::string* out) {
  *out += " (" + std::string(kind) + " " + Quoted(path) + ")";
  for (const char* top : {"/tmp", "/var", "/etc"}) {
    const std::string t = top;
    if (path == t || path.rfind(t + "/", 0) == 0)
      *out += " (" + std::string(kind) + " " + Quoted("/private" + path) + ")";
  }
}

const char* const kSeatbeltDevices[] = {"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"};

}  // namespace

std::string SeatbeltProfile(const SandboxPolicy& policy) {
  std::string p = "(version 1)\n(allow default)\n";
  // Writes only beneath the writable folders and to the shells' devices.
  p += "(deny file-write*\n  (require-not (require-any";
  for (const std::string& w : policy.writable) AddPathForms("subpath", w, &p);
  for (const char* d : kSeatbeltDevices) AddPathForms("literal", d, &p);
  p += " (regex #\"^/dev/(ttys|pty)[a-z0-9]+$\")";
  p += ")))\n";
  if (!policy.deny_read.empty()) {
    p += "(deny file-read* file-write*\n  (require-any";
    for (const std::string& d : policy.deny_read) AddPathForms("subpath", d, &p);
    p += "))\n";
  }
  p += "(deny signal (require-not (target same-sandbox)))\n";
  if (!policy.network) {
    p += "(deny network-outbound (require-not (require-any (remote unix-socket)";
    if (policy.loopback) p += " (remote ip \"localhost:*\")";
    p += ")))\n";
    p += "(deny network-bind (require-not (require-any (local unix-socket)";
    if (policy.loopback) p += " (local ip \"localhost:*\")";
    p += ")))\n";
  }
  return p;
}

std::vector<std::string> SeatbeltArgv(const SandboxPolicy& policy,
                                      const std::vector<std::string>& argv) {
  std::vector<std::string> out = {kSeatbeltLauncher, "-p", SeatbeltProfile(policy), "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace lousho
