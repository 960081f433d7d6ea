// The kernel sandbox of the commands lousho starts for the model: Landlock rules over the file
// system, no_new_privs, and a small seccomp filter for the network, applied in the forked child
// before exec so they hold for every descendant and cannot be undone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/sandbox_net.h"
#include "support/status.h"

namespace lousho {

enum class SandboxMode {
  kOff,             // nothing is confined
  kReadOnly,        // reads everywhere but the deny list; writes only to `writable` (tmp)
  kWorkspaceWrite,  // reads the same; writes under `writable` (roots, tmp, tool caches)
};

// "off" | "read-only" | "workspace-write".
const char* SandboxModeName(SandboxMode mode);
std::optional<SandboxMode> ParseSandboxMode(std::string_view name);

// What one confined command may do. Paths are absolute; those that do not exist are skipped.
struct SandboxPolicy {
  SandboxMode mode = SandboxMode::kOff;
  // false: no new TCP/UDP (or other non-local) sockets: socket() of any family but AF_UNIX and
  // AF_NETLINK fails with EACCES, even for loopback, and io_uring is refused.
  bool network = true;
  // With network off: instead of refusing sockets, a network of the command's own with only a
  // loopback interface (support/sandbox_net.h): servers the command starts answer it, nothing
  // else is reached, the host's loopback included.
  bool loopback = false;
  std::vector<std::string> writable;   // read, write, create, remove, execute beneath
  std::vector<std::string> deny_read;  // nothing beneath may be read, listed below, or written
  bool active() const { return mode != SandboxMode::kOff; }
};

// What this kernel offers, found once per process.
struct SandboxSupport {
  int landlock_abi = 0;  // 0: no Landlock (old kernel, disabled, or a container without it)
  bool seccomp = false;
  bool seatbelt = false;  // macOS: sandbox-exec is there (support/sandbox_seatbelt.h)
  // Empty when everything the policies use is there; else what is missing, in a sentence.
  std::string missing;
  bool usable() const { return landlock_abi > 0 || seatbelt; }
};
const SandboxSupport& ProbeSandbox();
// SandboxSupport::missing for a kernel with Landlock ABI `landlock_abi` (0: none) and seccomp or
// not: what the sandbox cannot do there ("" when nothing is missing). What there is is used: the
// rights a ruleset handles follow the ABI.
std::string SandboxMissing(int landlock_abi, bool seccomp);

// A policy made ready before fork (only async-signal-safe calls may follow a fork in a threaded
// process): the Landlock ruleset as a descriptor and the seccomp program. Build one per command:
// the deny list's neighbours are listed when it is built.
class SandboxPlan {
 public:
  // Fails when the kernel has no Landlock or the ruleset cannot be made; the message says why.
  static Result<std::unique_ptr<SandboxPlan>> Prepare(const SandboxPolicy& policy);
  ~SandboxPlan();
  SandboxPlan(const SandboxPlan&) = delete;
  SandboxPlan& operator=(const SandboxPlan&) = delete;

  // The descriptor the child must keep open until Apply (close-on-exec).
  int ruleset_fd() const { return ruleset_fd_; }
  // In the child after fork: no_new_privs, the Landlock domain, the seccomp filter. Returns 0,
  // or the errno of the step that failed (the child must then not exec). Async-signal-safe.
  int Apply() const;
  // How many Landlock rules the plan holds (tests and benches).
  size_t rule_count() const { return rules_; }

 private:
  SandboxPlan() = default;
  int ruleset_fd_ = -1;
  size_t rules_ = 0;
  bool private_network_ = false;  // network: loopback
  sandbox_net::PrivateNetwork network_;
  std::vector<unsigned char> filter_;  // struct sock_filter[], empty: no filter
};

// The argv that runs `argv` under `policy` (may be null): on macOS with an active policy, through
// sandbox-exec and the policy's Seatbelt profile; elsewhere `argv` itself (Linux confines the
// child in SandboxPlan::Apply).
std::vector<std::string> SandboxedArgv(const std::vector<std::string>& argv,
                                       const SandboxPolicy* policy);

// The writable folders of tools' caches below `home` that exist (documented in
// docs/agent-spec.md): package managers' and compilers' caches.
std::vector<std::string> DefaultSandboxCaches(const std::string& home);
// The documented deny-read list: secrets below `home`, lousho's `credentials` file (may be
// empty), and every other home folder beside `home` when it lives in /home or /Users.
std::vector<std::string> DefaultSandboxDenyRead(const std::string& home,
                                                const std::string& credentials);

// `lousho sandbox-exec`: a launcher for commands lousho does not start itself (an editor's
// terminal). The arguments that confine a command under `policy` (the command's argv follows
// them), and the launcher's main: it confines itself and execs the command; on failure it says
// why on stderr and returns 126 (127: the command was not found).
std::vector<std::string> SandboxLauncherArgs(const SandboxPolicy& policy);
int RunSandboxLauncher(int argc, char** argv);  // argv[0] == "sandbox-exec"

// What a failed confined command's output says the sandbox refused, as a note for the model
// ("" when nothing points to the sandbox): the paths it was not allowed to write or read, or
// the network. `exit_code` is the command's (a command that succeeded is never reported).
std::string DescribeSandboxDenial(const SandboxPolicy& policy, std::string_view output,
                                  std::optional<int> exit_code);

}  // namespace lousho
