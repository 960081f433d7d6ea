// Landlock and seccomp by their system calls (no libseccomp): the ruleset is built before fork,
// the child only calls prctl, landlock_restrict_self and seccomp.
#include "support/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#ifdef __linux__
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#endif

// What Debian 12's headers (Linux 6.1) lack.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#include "support/sandbox_seatbelt.h"
#include "support/text.h"

namespace lousho {
namespace {

#ifdef __linux__
// The attribute as ABI 6 knows it; older kernels are given the prefix they know.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

constexpr uint64_t kRead =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
// The rights a rule on a file (not a directory) may hold.
constexpr uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                 LANDLOCK_ACCESS_FS_IOCTL_DEV;

// Every file-system right the kernel's ABI knows.
uint64_t HandledFs(int abi) {
  uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1
  if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) all |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return all;
}

int LandlockAbi() {
  long v = syscall(__NR_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : static_cast<int>(v);
}
#endif

bool Beneath(const std::string& path, const std::string& dir) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The real path of an existing path, "" otherwise.
std::string Real(const std::string& path) {
  char* r = realpath(path.c_str(), nullptr);
  if (r == nullptr) return "";
  std::string s(r);
  free(r);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
  return s;
}

#ifdef __linux__
// Builds the rules: each path gets the rights of the most specific policy path above it. Landlock
// only adds rights down the tree, so a folder with a path of fewer rights beneath it is not given
// its rights itself: its entries are, one by one (and it may be listed).
class RulesetBuilder {
 public:
  RulesetBuilder(int fd, uint64_t handled) : fd_(fd), handled_(handled) {}

  void Want(const std::string& path, uint64_t rights) {
    std::string real = Real(path);
    if (real.empty()) return;
    auto [it, fresh] = wants_.emplace(real, rights);
    // A path both denied and allowed is denied.
    if (!fresh) it->second = (it->second == 0 || rights == 0) ? 0 : (it->second | rights);
  }

  // Adds the rules; false with errno when the kernel refused one.
  bool Build() {
    const auto root = wants_.find("/");
    return Emit("/", root != wants_.end() ? root->second : 0);
  }
  size_t rules() const { return rules_; }

 private:
  bool Emit(const std::string& path, uint64_t want) {
    bool split = false;
    for (auto it = wants_.upper_bound(path); it != wants_.end() && Beneath(it->first, path); ++it)
      if ((it->second & want) != want) split = true;
    if (!split) {
      if (want != 0 && !Add(path, want, false)) return false;
      return EmitBeneath(path);
    }
    if ((want & LANDLOCK_ACCESS_FS_READ_DIR) != 0 && !Add(path, LANDLOCK_ACCESS_FS_READ_DIR, false))
      return false;
    return Split(path, want);
  }

  // Each policy path right below `path` (none between), with its own rights.
  bool EmitBeneath(const std::string& path) {
    for (auto it = wants_.upper_bound(path); it != wants_.end() && Beneath(it->first, path);) {
      if (!Emit(it->first, it->second)) return false;
      const std::string top = it->first;
      ++it;
      while (it != wants_.end() && Beneath(it->first, top)) ++it;
    }
    return true;
  }

  bool Split(const std::string& path, uint64_t want) {
    DIR* d = opendir(path.c_str());
    if (d == nullptr) return true;  // nothing to give out beneath
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    closedir(d);
    for (const std::string& n : names) {
      const std::string c = Child(path, n);
      auto own = wants_.find(c);
      bool ok = true;
      if (own != wants_.end()) {
        ok = Emit(c, own->second);
      } else {
        auto next = wants_.upper_bound(c);
        bool has_beneath = next != wants_.end() && Beneath(next->first, c);
        ok = has_beneath ? Emit(c, want) : Add(c, want, true);
      }
      if (!ok) return false;
    }
    return true;
  }

  bool Add(const std::string& path, uint64_t rights, bool entry) {
    // An entry of a split folder is taken as it is: a symbolic link is not followed (it could
    // lead into a denied folder; its target is reached through its own folder's rule).
    int fd = open(path.c_str(), O_PATH | O_CLOEXEC | (entry ? O_NOFOLLOW : 0));
    if (fd < 0) return true;  // gone meanwhile, or not ours to see: nothing to allow
    struct stat st {};
    if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
      close(fd);
      return true;
    }
    uint64_t allowed = rights & handled_;
    if (!S_ISDIR(st.st_mode)) allowed &= kFileRights;
    bool ok = true;
    if (allowed != 0) {
      PathBeneathAttr attr{allowed, fd};
      ok = syscall(__NR_landlock_add_rule, fd_, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) == 0;
      if (ok) ++rules_;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return ok;
  }

  int fd_;
  uint64_t handled_;
  std::map<std::string, uint64_t> wants_;  // sorted: a folder's descendants follow it
  size_t rules_ = 0;
};

// Network off: socket() of any family but AF_UNIX and AF_NETLINK fails with EACCES, io_uring
// (which could open sockets itself) with EPERM; another architecture's calls (32-bit, x32) fail.
std::vector<sock_filter> NetworkFilter() {
#if defined(__x86_64__)
  constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  constexpr uint32_t kArch = 0;
#endif
  constexpr uint32_t kErrno = SECCOMP_RET_ERRNO;
  std::vector<sock_filter> f = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kErrno | EPERM),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      // x32 calls carry bit 30; nothing here wants them.
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrno | EPERM),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrno | EPERM),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kErrno | EACCES),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return f;
}
#endif

// Writable beyond the policy's folders: the devices every shell writes to.
const char* const kWritableDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty",
                                        "/dev/ptmx", "/dev/pts",  "/dev/shm"};

}  // namespace

const char* SandboxModeName(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kOff:
      return "off";
    case SandboxMode::kReadOnly:
      return "read-only";
    case SandboxMode::kWorkspaceWrite:
      return "workspace-write";
  }
  return "off";
}

std::optional<SandboxMode> ParseSandboxMode(std::string_view name) {
  for (SandboxMode m : {SandboxMode::kOff, SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite})
    if (name == SandboxModeName(m)) return m;
  return std::nullopt;
}

std::string SandboxMissing(int landlock_abi, bool seccomp) {
  std::string missing;
  if (landlock_abi <= 0)
    missing =
        "this kernel offers no Landlock (too old, or disabled), so commands are not "
        "confined";
  else if (landlock_abi < 3)
    missing = "Landlock ABI " + std::to_string(landlock_abi) +
              " cannot refuse truncating a file outside the writable folders";
  else if (landlock_abi < 6)
    missing = "Landlock ABI " + std::to_string(landlock_abi) +
              " cannot keep commands from signalling processes outside the sandbox";
  if (!seccomp) missing += (missing.empty() ? "" : "; ") + std::string("no seccomp");
  return missing;
}

const SandboxSupport& ProbeSandbox() {
  static const SandboxSupport support = [] {
    SandboxSupport s;
#ifdef __linux__
    s.landlock_abi = LandlockAbi();
    s.seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
    s.missing = SandboxMissing(s.landlock_abi, s.seccomp);
#elif defined(__APPLE__)
    s.seatbelt = access(kSeatbeltLauncher, X_OK) == 0;
    if (!s.seatbelt)
      s.missing = std::string(kSeatbeltLauncher) + " is missing, so commands are not confined";
#else
    s.missing = "the sandbox is built for Linux and macOS only; commands are not confined";
#endif
    return s;
  }();
  return support;
}

Result<std::unique_ptr<SandboxPlan>> SandboxPlan::Prepare(const SandboxPolicy& policy) {
  std::unique_ptr<SandboxPlan> plan(new SandboxPlan());
#ifdef __linux__
  const SandboxSupport& support = ProbeSandbox();
  if (!support.usable()) return MakeError(ErrorCode::kSubprocess, support.missing);
  if (!policy.active()) return plan;
  const int abi = support.landlock_abi;
  RulesetAttr attr{HandledFs(abi), 0, 0};
  size_t attr_size = sizeof(uint64_t);
  if (abi >= 6) {
    // (Abstract Unix sockets belong to a network namespace: with loopback, its own.)
    attr.scoped =
        LANDLOCK_SCOPE_SIGNAL | (policy.network || policy.loopback
                                     ? 0
                                     : static_cast<uint64_t>(LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET));
    attr_size = sizeof attr;
  }
  long fd = syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
  if (fd < 0)
    return MakeError(ErrorCode::kSubprocess,
                     std::string("landlock_create_ruleset: ") + std::strerror(errno));
  plan->ruleset_fd_ = static_cast<int>(fd);
  RulesetBuilder rules(plan->ruleset_fd_, attr.handled_access_fs);
  const uint64_t all = attr.handled_access_fs;
  rules.Want("/", kRead);
  rules.Want("/dev", kRead | LANDLOCK_ACCESS_FS_IOCTL_DEV);
  for (const char* dev : kWritableDevices) rules.Want(dev, all);
  for (const std::string& w : policy.writable) rules.Want(w, all);
  for (const std::string& d : policy.deny_read) rules.Want(d, 0);
  if (!rules.Build())
    return MakeError(ErrorCode::kSubprocess,
                     std::string("landlock_add_rule: ") + std::strerror(errno));
  plan->rules_ = rules.rules();
  if (!policy.network && policy.loopback) {
    plan->private_network_ = true;
    plan->network_ = sandbox_net::PreparePrivateNetwork();
  } else if (!policy.network) {
    std::vector<sock_filter> f = NetworkFilter();
    const auto* bytes = reinterpret_cast<const unsigned char*>(f.data());
    plan->filter_.assign(bytes, bytes + f.size() * sizeof(sock_filter));
  }
  return plan;
#elif defined(__APPLE__)
  // The profile is given to sandbox-exec in the command's argv (SandboxedArgv): nothing to apply
  // in the child.
  (void)policy;
  if (!ProbeSandbox().usable()) return MakeError(ErrorCode::kSubprocess, ProbeSandbox().missing);
  return plan;
#else
  (void)policy;
  return MakeError(ErrorCode::kSubprocess, ProbeSandbox().missing);
#endif
}

std::vector<std::string> SandboxedArgv(const std::vector<std::string>& argv,
                                       const SandboxPolicy* policy) {
#ifdef __APPLE__
  if (policy != nullptr && policy->active() && ProbeSandbox().usable())
    return SeatbeltArgv(*policy, argv);
#else
  (void)policy;
#endif
  return argv;
}

SandboxPlan::~SandboxPlan() {
  if (ruleset_fd_ >= 0) close(ruleset_fd_);
}

int SandboxPlan::Apply() const {
#ifdef __linux__
  if (ruleset_fd_ < 0) return 0;
  if (private_network_)
    if (int err = sandbox_net::EnterPrivateNetwork(network_); err != 0) return err;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (syscall(__NR_landlock_restrict_self, ruleset_fd_, 0) != 0) return errno;
  if (!filter_.empty()) {
    sock_fprog prog{static_cast<unsigned short>(filter_.size() / sizeof(sock_filter)),
                    reinterpret_cast<sock_filter*>(const_cast<unsigned char*>(filter_.data()))};
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
  }
  close(ruleset_fd_);
#endif
  return 0;
}

std::vector<std::string> DefaultSandboxCaches(const std::string& home) {
  std::vector<std::string> out;
  if (home.empty()) return out;
  for (const char* rel : {".cache", ".npm", ".cargo/registry", ".cargo/git", "go/pkg/mod",
                          ".m2/repository", ".gradle/caches", ".ccache", ".yarn/berry/cache"}) {
    std::string p = home + "/" + rel;
    if (access(p.c_str(), F_OK) == 0) out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> DefaultSandboxDenyRead(const std::string& home,
                                                const std::string& credentials) {
  std::vector<std::string> out;
  if (!credentials.empty()) out.push_back(credentials);
  if (home.empty()) return out;
  for (const char* rel : {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube",
                          ".docker/config.json", ".netrc", ".git-credentials", ".password-store"})
    out.push_back(home + "/" + rel);
  // Other users' homes: the neighbours of this one in the folder of homes (only /home and
  // /Users: a home elsewhere, such as /root or a test's temporary folder, has no neighbours
  // that are homes).
  std::string real_home = Real(home);
  auto slash = real_home.find_last_of('/');
  if (real_home.empty() || slash == std::string::npos) return out;
  std::string parent = real_home.substr(0, slash);
  if (parent != "/home" && parent != "/Users") return out;
  if (DIR* d = opendir(parent.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      std::string p = parent + "/" + n;
      if (n != "." && n != ".." && p != real_home) out.push_back(std::move(p));
    }
    closedir(d);
  }
  return out;
}

std::vector<std::string> SandboxLauncherArgs(const SandboxPolicy& policy) {
  std::vector<std::string> a = {"sandbox-exec", "--mode", SandboxModeName(policy.mode)};
  if (!policy.network) a.emplace_back(policy.loopback ? "--network-loopback" : "--network-off");
  for (const std::string& w : policy.writable) a.insert(a.end(), {"--write", w});
  for (const std::string& d : policy.deny_read) a.insert(a.end(), {"--deny", d});
  a.emplace_back("--");
  return a;
}

int RunSandboxLauncher(int argc, char** argv) {
  SandboxPolicy policy;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string opt = argv[i];
    const bool has_value = i + 1 < argc;
    if (opt == "--network-off" || opt == "--network-loopback") {
      policy.network = false;
      policy.loopback = opt == "--network-loopback";
    } else if (opt == "--mode" && has_value) {
      policy.mode = ParseSandboxMode(argv[++i]).value_or(SandboxMode::kWorkspaceWrite);
    } else if (opt == "--write" && has_value) {
      policy.writable.emplace_back(argv[++i]);
    } else if (opt == "--deny" && has_value) {
      policy.deny_read.emplace_back(argv[++i]);
    } else {
      std::fprintf(stderr, "lousho sandbox-exec: unknown option %s\n", opt.c_str());
      return 126;
    }
  }
  if (i + 1 >= argc) {
    std::fprintf(stderr, "lousho sandbox-exec: no command after --\n");
    return 126;
  }
  auto plan = SandboxPlan::Prepare(policy);
  int err = plan.ok() ? (*plan)->Apply() : 0;
  if (!plan.ok() || err != 0) {
    std::fprintf(stderr, "lousho: cannot confine the command in the sandbox: %s\n",
                 plan.ok() ? std::strerror(err) : plan.error().message.c_str());
    return 126;
  }
  // macOS: the command runs under sandbox-exec with the policy's profile.
  std::vector<std::string> run =
      SandboxedArgv(std::vector<std::string>(argv + i + 1, argv + argc), &policy);
  std::vector<char*> args;
  args.reserve(run.size() + 1);
  for (auto& a : run) args.push_back(a.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "lousho sandbox-exec: %s: %s\n", args[0], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

namespace {

// The path a line of a command's error output names, when it is one of the messages a refused
// open, create or remove gives ("x: Permission denied", "cannot create x: ...", python's
// "[Errno 13] Permission denied: 'x'"); "" otherwise.
std::string DeniedPathIn(std::string_view line) {
  static const char* const kMarks[] = {"Permission denied", "Operation not permitted",
                                       "Read-only file system"};
  bool marked = false;
  for (const char* m : kMarks) marked = marked || line.find(m) != std::string_view::npos;
  if (!marked) return "";
  // The last absolute path in the line, quotes and colons stripped ("/bin/bash: line 1: /x:
  // Permission denied" names /x).
  std::string found;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\'' || line[i] == '"' ||
                               line[i] == '`' || line[i] == ':'))
      ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\'' && line[j] != '"' && line[j] != ':')
      ++j;
    std::string_view word = line.substr(i, j - i);
    if (!word.empty() && word[0] == '/') found = std::string(word);
    i = j + 1;
  }
  return found;
}

bool InsideAny(const std::string& path, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(),
                     [&](const std::string& d) { return path == d || Beneath(path, d); });
}

// Whether the sandbox, not the file's own permissions, refused `path`: lousho itself (outside
// the sandbox) may write it (or create it), or may read it and it is on the deny list.
bool RefusedBySandbox(const SandboxPolicy& policy, const std::string& path) {
  if (path[0] != '/') return false;
  if (InsideAny(path, policy.deny_read)) return access(path.c_str(), R_OK) == 0;
  if (InsideAny(path, policy.writable)) return false;
  if (access(path.c_str(), W_OK) == 0) return true;
  if (access(path.c_str(), F_OK) == 0) return false;
  std::string parent = path.substr(0, std::max<size_t>(1, path.find_last_of('/')));
  return access(parent.c_str(), W_OK) == 0;
}

}  // namespace

std::string DescribeSandboxDenial(const SandboxPolicy& policy, std::string_view output,
                                  std::optional<int> exit_code) {
  if (!policy.active() || exit_code == 0) return "";
  std::vector<std::string> paths;
  bool network = false;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    start = end + 1;
    std::string p = DeniedPathIn(line);
    if (!p.empty() && RefusedBySandbox(policy, p) &&
        std::find(paths.begin(), paths.end(), p) == paths.end() && paths.size() < 5)
      paths.push_back(p);
    if (!policy.network &&
        (line.find("Could not resolve host") != std::string_view::npos ||
         line.find("Couldn't connect") != std::string_view::npos ||
         line.find("Network is unreachable") != std::string_view::npos ||
         line.find("Temporary failure in name resolution") != std::string_view::npos ||
         (line.find("socket") != std::string_view::npos &&
          line.find("Permission denied") != std::string_view::npos)))
      network = true;
  }
  if (paths.empty() && !network) return "";
  std::string note = "[sandbox] This command ran in the " +
                     std::string(SandboxModeName(policy.mode)) + " sandbox, which refused ";
  if (!paths.empty())
    note +=
        "access to " + JoinStrings(paths, ", ") + " (writes are allowed only under " +
        (policy.writable.empty() ? std::string("no folder") : JoinStrings(policy.writable, ", ")) +
        "; secrets such as ~/.ssh are never readable)";
  if (network)
    note += std::string(paths.empty() ? "" : "; it also refused ") +
            (policy.loopback ? "network access beyond the command's own loopback (servers it "
                               "starts itself answer on 127.0.0.1; nothing else does)"
                             : "network access");
  note +=
      ". If the command truly needs this, call bash again with \"sandbox\": \"off\": the user "
      "will be asked to run it outside the sandbox.";
  return note;
}

}  // namespace lousho
