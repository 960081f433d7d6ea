// Tests for support/sandbox under support/subprocess: real confined processes on this kernel
// (Landlock, seccomp), the hostile corpus that must not write outside the roots, the deny list,
// network off, and the denial note for the model.
#include "support/sandbox.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "support/subprocess.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOUSHO_TEST_TSAN 1
#endif
#endif
#ifndef LOUSHO_TEST_TSAN
#define LOUSHO_TEST_TSAN 0
#endif

namespace lousho {
namespace {

namespace fs = std::filesystem;

std::string MakeTempDir(const std::string& tag) {
  std::string tmpl = (fs::temp_directory_path() / ("lousho-sbx-" + tag + "-XXXXXX")).string();
  char* made = mkdtemp(tmpl.data());
  return made ? std::string(made) : std::string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ProbeSandbox().usable()) GTEST_SKIP() << ProbeSandbox().missing;
    ws_ = MakeTempDir("ws");
    out_ = MakeTempDir("out");
    ASSERT_FALSE(ws_.empty());
    ASSERT_FALSE(out_.empty());
    std::ofstream(out_ + "/existing") << "original";
  }
  void TearDown() override {
    std::error_code ec;
    if (!ws_.empty()) fs::remove_all(ws_, ec);
    if (!out_.empty()) fs::remove_all(out_, ec);
  }

  std::shared_ptr<SandboxPolicy> Policy(SandboxMode mode) const {
    auto p = std::make_shared<SandboxPolicy>();
    p->mode = mode;
    p->writable = {ws_};
    return p;
  }

  Result<SubprocessResult> Run(const std::string& cmd, std::shared_ptr<const SandboxPolicy> p) {
    SubprocessOptions o;
    o.argv = {"/bin/bash", "-c", cmd};
    o.cwd = ws_;
    // The system's python3 first: a version manager's shim is a slow script.
    o.env = {{"OUT", out_}, {"WS", ws_}, {"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    o.timeout_ms = 60000;
    o.sandbox = std::move(p);
    return RunSubprocess(o);
  }

  // What the outside folder holds, one name per line, with `existing`'s content.
  std::string OutsideState() const {
    std::string s;
    for (const auto& e : fs::directory_iterator(out_)) s += e.path().filename().string() + "\n";
    return s + ReadAll(out_ + "/existing");
  }

  std::string ws_;
  std::string out_;
};

TEST_F(SandboxTest, ModeNamesRoundTrip) {
  for (SandboxMode m : {SandboxMode::kOff, SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite})
    EXPECT_EQ(ParseSandboxMode(SandboxModeName(m)), m);
  EXPECT_FALSE(ParseSandboxMode("workspace").has_value());
}

TEST_F(SandboxTest, HostileCorpusWritesNothingOutsideTheRoots) {
  // Each line tries, its own way, to create or change something in $OUT; each also proves it
  // ran by writing its number into the workspace.
  const std::vector<std::string> corpus = {
      "echo pwned > \"$OUT/redirect\"",
      "printf -v cmd 'touch %s/printf_v' \"$OUT\"; eval \"$cmd\"",
      "python3 -c \"open('$OUT/python','w').write('x')\"",
      "awk 'BEGIN{system(\"touch \" ENVIRON[\"OUT\"] \"/awk\")}'",
      "printf '#!/bin/sh\\ntouch \"$OUT/script\"\\n' > s.sh; chmod +x s.sh; ./s.sh",
      "touch \"$OUT/background\" & wait",
      // A double-forked daemon in its own session; the line waits for the daemon's word (in the
      // workspace) that it has tried.
      std::string(
          "( setsid sh -c 'touch \"$OUT/daemon\"; echo tried > \"$WS/daemon.done\"' & ); ") +
          "while [ ! -e \"$WS/daemon.done\" ]; do sleep 0.01; done",
      "echo more >> \"$OUT/existing\"",
      ": > \"$OUT/existing\"",
      "echo x > inside && mv inside \"$OUT/moved\"",
      "ln -s /etc/passwd \"$OUT/link\"",
      "rm -f \"$OUT/existing\"",
      "mkdir \"$OUT/dir\"",
      "cp /etc/hostname \"$OUT/copy\"",
      "perl -e 'open(F, \">\", \"$ENV{OUT}/perl\")' 2>/dev/null; true",
  };
  auto policy = Policy(SandboxMode::kWorkspaceWrite);
  for (size_t i = 0; i < corpus.size(); ++i) {
    auto r =
        Run(corpus[i] + "; echo " + std::to_string(i) + " > \"$WS/ran." + std::to_string(i) + "\"",
            policy);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_TRUE(fs::exists(ws_ + "/ran." + std::to_string(i))) << corpus[i] << "\n" << r->output;
  }
  EXPECT_EQ(OutsideState(), "existing\noriginal") << "the sandbox let a write through";
}

TEST_F(SandboxTest, WithoutTheSandboxTheCorpusDoesWrite) {
  // The corpus is able to write: without the sandbox the same line changes the outside folder.
  auto r = Run("echo pwned > \"$OUT/redirect\"", nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(fs::exists(out_ + "/redirect"));
}

TEST_F(SandboxTest, WorkspaceWritesAndDevicesWork) {
  auto r =
      Run("mkdir -p a/b && echo hi > a/b/c && mv a/b/c a/d && rm a/d && echo fine > /dev/null && "
          "echo err >&2 && echo out > /dev/stdout && cat /etc/hostname > /dev/null && echo ok",
          Policy(SandboxMode::kWorkspaceWrite));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->output;
  EXPECT_NE(r->output.find("ok"), std::string::npos);
}

TEST_F(SandboxTest, ReadOnlyRefusesTheWorkspaceToo) {
  auto p = Policy(SandboxMode::kReadOnly);
  p->writable = {out_};  // only the "temporary" folder
  auto r = Run("echo x > \"$WS/file\"; echo x > \"$OUT/tmpfile\"", p);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(fs::exists(ws_ + "/file"));
  EXPECT_TRUE(fs::exists(out_ + "/tmpfile"));
}

TEST_F(SandboxTest, DenyReadHidesAFolderButNotItsNeighbours) {
  fs::create_directories(out_ + "/secret");
  std::ofstream(out_ + "/secret/key") << "KEY";
  std::ofstream(out_ + "/public") << "PUBLIC";
  auto p = Policy(SandboxMode::kWorkspaceWrite);
  p->deny_read = {out_ + "/secret"};
  auto r = Run("cat \"$OUT/secret/key\"; cat \"$OUT/public\"; cat \"$OUT/existing\"", p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output.find("KEY"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("PUBLIC"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("original"), std::string::npos) << r->output;
}

TEST_F(SandboxTest, DenyReadInsideAWritableRootStaysDenied) {
  fs::create_directories(ws_ + "/.ssh");
  fs::create_directories(ws_ + "/sub");
  std::ofstream(ws_ + "/.ssh/id") << "KEY";
  auto p = Policy(SandboxMode::kWorkspaceWrite);
  p->deny_read = {ws_ + "/.ssh"};
  auto r = Run("cat .ssh/id; echo new > .ssh/authorized_keys; echo x > sub/ok; echo y > top", p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output.find("KEY"), std::string::npos) << r->output;
  EXPECT_FALSE(fs::exists(ws_ + "/.ssh/authorized_keys"));
  // The folder's existing entries keep its rights; the folder itself, which holds the denied
  // one, only lists (a new entry there would also be one in the denied folder's parent).
  EXPECT_TRUE(fs::exists(ws_ + "/sub/ok"));
  EXPECT_FALSE(fs::exists(ws_ + "/top"));
}

// A loopback listener in this process; the confined command tries to connect to it.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0 && listen(fd_, 8) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~Listener() { close(fd_); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(SandboxTest, NetworkOffRefusesLoopbackSocketsButKeepsUnixOnes) {
  Listener l;
  ASSERT_GT(l.port(), 0);
  const std::string cmd =
      "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1'," +
      std::to_string(l.port()) +
      ")); print('connected')\" 2>&1; python3 -c \"import socket; a,b=socket.socketpair(); "
      "print('unix ok')\"";
  auto off = Policy(SandboxMode::kWorkspaceWrite);
  off->network = false;
  auto r = Run(cmd, off);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output.find("connected"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("Permission denied"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("unix ok"), std::string::npos) << r->output;
  auto on = Run(cmd, Policy(SandboxMode::kWorkspaceWrite));
  ASSERT_TRUE(on.ok());
  EXPECT_NE(on->output.find("connected"), std::string::npos) << on->output;
}

TEST_F(SandboxTest, LoopbackNetworkReachesItsOwnServersOnly) {
#if defined(__SANITIZE_THREAD__) || LOUSHO_TEST_TSAN
  // ThreadSanitizer's runtime keeps a thread of its own in every forked child, and the kernel
  // refuses a new user namespace to a process with more than one thread (EINVAL).
  GTEST_SKIP() << "no user namespace under ThreadSanitizer";
#endif
  Listener host;  // a server of the host's, on its loopback
  ASSERT_GT(host.port(), 0);
  const std::string cmd =
      "python3 -c \"\nimport socket\nsrv = socket.socket(); srv.bind(('127.0.0.1', 0)); "
      "srv.listen(1)\nsocket.create_connection(srv.getsockname(), timeout=5); print('own "
      "server reached')\ntry:\n  socket.create_connection(('127.0.0.1', " +
      std::to_string(host.port()) +
      "), timeout=5); print('host reached')\nexcept OSError as e: print('host refused:', e)\n\" "
      "2>&1";
  auto lo = Policy(SandboxMode::kWorkspaceWrite);
  lo->network = false;
  lo->loopback = true;
  auto r = Run(cmd, lo);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_NE(r->output.find("own server reached"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("host refused"), std::string::npos) << r->output;
  EXPECT_EQ(r->output.find("host reached"), std::string::npos) << r->output;
  // Unconfined network: the host's server answers.
  auto on = Run(cmd, Policy(SandboxMode::kWorkspaceWrite));
  ASSERT_TRUE(on.ok());
  EXPECT_NE(on->output.find("host reached"), std::string::npos) << on->output;
  // The model is told what the loopback allows.
  auto curl =
      Run("curl -sS --max-time 5 http://127.0.0.1:" + std::to_string(host.port()) + "/", lo);
  ASSERT_TRUE(curl.ok());
  EXPECT_NE(DescribeSandboxDenial(*lo, curl->output, curl->exit_code).find("own loopback"),
            std::string::npos)
      << curl->output;
}

TEST_F(SandboxTest, ConfinedCommandCannotSignalOutside) {
  if (ProbeSandbox().landlock_abi < 6) GTEST_SKIP() << "no signal scoping before ABI 6";
  auto r = Run("kill -0 " + std::to_string(getpid()) + " && echo reached",
               Policy(SandboxMode::kWorkspaceWrite));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output.find("reached"), std::string::npos) << r->output;
}

TEST_F(SandboxTest, ChildProcessIsConfinedToo) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", "touch \"" + out_ + "/server\"; echo done"};
  o.sandbox = Policy(SandboxMode::kWorkspaceWrite);
  auto p = ChildProcess::Start(o);
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  std::string got;
  char buf[256];
  ssize_t n = 0;
  while ((n = read((*p)->stdout_fd(), buf, sizeof buf)) > 0) got.append(buf, n);
  (*p)->Stop();
  EXPECT_EQ(got, "done\n");
  EXPECT_FALSE(fs::exists(out_ + "/server"));
}

TEST_F(SandboxTest, DenialNoteNamesTheRefusedPath) {
  auto p = Policy(SandboxMode::kWorkspaceWrite);
  auto r = Run("touch \"$OUT/new\"", p);
  ASSERT_TRUE(r.ok());
  std::string note = DescribeSandboxDenial(*p, r->output, r->exit_code);
  EXPECT_NE(note.find(out_ + "/new"), std::string::npos) << note;
  EXPECT_NE(note.find("sandbox"), std::string::npos);
  // A success, or a refusal the file's own permissions make, is no sandbox denial.
  EXPECT_EQ(DescribeSandboxDenial(*p, r->output, 0), "");
  EXPECT_EQ(DescribeSandboxDenial(*p, "touch: /no-such-dir/x: Permission denied\n", 1), "");
  SandboxPolicy off;
  EXPECT_EQ(DescribeSandboxDenial(off, r->output, r->exit_code), "");
}

TEST_F(SandboxTest, DenialNoteNamesTheNetwork) {
  auto p = Policy(SandboxMode::kWorkspaceWrite);
  p->network = false;
  std::string note =
      DescribeSandboxDenial(*p, "curl: (6) Could not resolve host: example.com\n", 6);
  EXPECT_NE(note.find("network"), std::string::npos) << note;
  p->network = true;
  EXPECT_EQ(DescribeSandboxDenial(*p, "curl: (6) Could not resolve host: example.com\n", 6), "");
}

TEST(SandboxDefaultsTest, DenyListHoldsSecretsButNoNeighboursOutsideHome) {
  std::string base = MakeTempDir("homes");
  ASSERT_FALSE(base.empty());
  fs::create_directories(base + "/me");
  fs::create_directories(base + "/other");
  auto list = DefaultSandboxDenyRead(base + "/me", "/x/credentials.json");
  auto has = [&](const std::string& p) {
    return std::find(list.begin(), list.end(), p) != list.end();
  };
  EXPECT_TRUE(has(base + "/me/.ssh"));
  EXPECT_TRUE(has(base + "/me/.aws"));
  EXPECT_TRUE(has("/x/credentials.json"));
  EXPECT_FALSE(has(base + "/me"));
  // Only /home and /Users hold other users' homes: a home in a temporary folder denies none of
  // its neighbours (they may be the workspace).
  EXPECT_FALSE(has(base + "/other"));
  fs::create_directories(base + "/me/.npm");
  auto caches = DefaultSandboxCaches(base + "/me");
  EXPECT_EQ(caches, std::vector<std::string>{base + "/me/.npm"});
  fs::remove_all(base);
}

}  // namespace
}  // namespace lousho
