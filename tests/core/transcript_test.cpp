// Transcript tests: each tests/transcripts/*.jsonl is played against the built binary. Lines
// "> {json}" are sent, "< {json}" are expected (compared as JSON after normalization), "#" lines
// are directives: "# args: acp <spec>" (relative to the transcript folder), "# close" (close
// stdin), "# exit: N", "# env: NAME=VALUE" (set for the binary; $DIR expands). $CWD stands for a
// fresh workspace holding notes.txt; $DIR for the transcript folder (in output too: a spec's path
// in a message). UPDATE_GOLDENS=1 rewrites the "<" lines from what the binary writes.
// tests/transcripts/rpc/ holds the RPC door's transcripts
// (`# args: --mode rpc ...`); there every "timestamp" member is compared as 0, since RPC messages
// carry their wall-clock time, a "firstKeptEntryId" as ENTRY (entry ids are random), and a
// "sessionFile" name's time prefix reads TIME. Session files go to a fresh LOUSHO_HOME, which $HOME
// stands for (in args, env, sent and expected lines). Values the binary makes up are named in the
// order they first appear, and a sent line (or restart argument) may use the name to mean the
// value: an "entryId" reads ENTRY-1, ENTRY-2, ...; a masked "sessionFile" name stands for the file
// it masked. "# restart: <args>" kills the binary (SIGKILL, as a crash would) and starts it again
// with those arguments, in the same workspace and LOUSHO_HOME.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "support/json_util.h"

namespace lousho {
namespace {
namespace fs = std::filesystem;

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

// A child process with piped stdin/stdout.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& cwd, const std::string& home,
        const std::vector<std::pair<std::string, std::string>>& env = {}) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]);
      close(in[1]);
      close(out[0]);
      close(out[1]);
      if (chdir(cwd.c_str()) != 0) _exit(127);
      setenv("LOUSHO_TEST_MODE", "1", 1);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      setenv("LOUSHO_HOME", home.c_str(), 1);  // session files go here, never to ~/.lousho
      std::vector<char*> argv;
      argv.reserve(args.size() + 1);
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  ~Child() {
    CloseInput();
    if (out_ >= 0) close(out_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void Send(const std::string& line) {
    std::string s = line + "\n";
    ASSERT_EQ(write(in_, s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void CloseInput() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }
  // The next stdout line, or nullopt after timeout_ms of silence or at EOF.
  std::optional<std::string> ReadLine(int timeout_ms) {
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
      char tmp[65536];
      ssize_t n = read(out_, tmp, sizeof tmp);
      if (n <= 0) return std::nullopt;
      buf_.append(tmp, n);
    }
  }
  // Ends the process at once, as a crash would: nothing is flushed or closed by it.
  void Kill() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      reaped_ = true;
    }
  }
  int Wait(int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(10000);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  std::string buf_;
};

// Replaces every "timestamp" member's number by 0 and every "firstKeptEntryId" by ENTRY, at any
// depth.
void ZeroTimestamps(Json::Value* v) {
  if (v->isArray()) {
    for (auto& e : *v) ZeroTimestamps(&e);
  } else if (v->isObject()) {
    for (const auto& name : v->getMemberNames()) {
      Json::Value& member = (*v)[name];
      if (name == "timestamp" && member.isNumeric())
        member = 0;
      else if (name == "firstKeptEntryId" && member.isString())  // entry ids are random
        member = "ENTRY";
      else
        ZeroTimestamps(&member);
    }
  }
}

// "# mask-usage": every usage_update's "used" reads 0 (a transcript whose prompts hold the
// checkout's path, such as a stream rule's path, counts a different number of tokens elsewhere).
// An RPC message's usage: its input count is an estimate of the conversation's size, which
// holds paths of the checkout (a rule's file), so it is masked with the total it is part of.
void MaskMessageUsage(Json::Value* v) {
  if (v->isArray()) {
    for (auto& e : *v) MaskMessageUsage(&e);
    return;
  }
  if (!v->isObject()) return;
  for (const auto& name : v->getMemberNames()) {
    Json::Value& member = (*v)[name];
    if (name == "usage" && member.isObject() && member.isMember("input")) {
      member["input"] = 0;
      member["totalTokens"] = 0;
    } else if (name == "usage" && member.isObject() && member.isMember("inputTokens")) {
      member["inputTokens"] = 0;  // an ACP prompt's usage (PromptResponse.usage): the same
      member["totalTokens"] = 0;
    } else {
      MaskMessageUsage(&member);
    }
  }
}

void MaskUsed(Json::Value* v) {
  if (!v->isObject()) return;
  if (!v->isMember("params")) {
    MaskMessageUsage(v);
    return;
  }
  Json::Value* update = (*v)["params"].isObject() ? &(*v)["params"]["update"] : nullptr;
  if (update && update->isObject() && (*update)["sessionUpdate"] == "usage_update")
    (*update)["used"] = 0;
}

// The values a transcript names (masked form -> what the binary wrote, after $CWD/$HOME).
struct Names {
  std::map<std::string, std::string> real;    // masked -> real
  std::map<std::string, std::string> masked;  // real -> masked (entry ids)
  int entries = 0;
};

// Entry ids are random: each "entryId" (RPC) and "messageId" (ACP: a message's entry id) reads
// ENTRY-<n>, n counting distinct ids as they appear.
void MaskEntryIds(Json::Value* v, Names* names) {
  if (v->isArray()) {
    for (auto& e : *v) MaskEntryIds(&e, names);
  } else if (v->isObject()) {
    for (const auto& name : v->getMemberNames()) {
      Json::Value& member = (*v)[name];
      if ((name == "entryId" || name == "messageId") && member.isString()) {
        const std::string real = member.asString();
        auto it = names->masked.find(real);
        if (it == names->masked.end()) {
          const std::string m = "ENTRY-" + std::to_string(++names->entries);
          it = names->masked.emplace(real, m).first;
          names->real[m] = real;
        }
        member = it->second;
      } else {
        MaskEntryIds(&member, names);
      }
    }
  }
}

// A sent line or argument with the names put back (quoted in JSON lines: ENTRY-1 is a prefix of
// ENTRY-10).
std::string Unmask(std::string s, const Names& names, bool quoted) {
  for (const auto& [m, real] : names.real)
    s = quoted ? ReplaceAll(s, "\"" + m + "\"", "\"" + real + "\"") : (s == m ? real : s);
  return s;
}

// Session file names start with their creation time ("<time>_<id>.jsonl"): that part reads TIME;
// their folder, the encoded working directory ("--tmp-...--"), reads CWDDIR. Empty for a name
// without a time.
std::string MaskedSessionFile(std::string f) {
  const size_t slash = f.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t us = f.find('_', base);
  if (us == std::string::npos || base >= f.size() || !std::isdigit(f[base])) return "";
  f = f.substr(0, base) + "TIME" + f.substr(us);
  const size_t dir =
      slash == std::string::npos || slash == 0 ? std::string::npos : f.rfind('/', slash - 1);
  if (dir != std::string::npos && f.compare(dir + 1, 2, "--") == 0)
    f = f.substr(0, dir + 1) + "CWDDIR" + f.substr(slash);
  return f;
}

// Every "sessionFile" string member, masked (MaskedSessionFile); the names keep the real ones.
void MaskSessionFileTimes(Json::Value* v, Names* names) {
  if (v->isArray()) {
    for (auto& e : *v) MaskSessionFileTimes(&e, names);
    return;
  }
  if (!v->isObject()) return;
  for (const auto& name : v->getMemberNames()) {
    Json::Value& member = (*v)[name];
    if (name != "sessionFile" || !member.isString()) {
      MaskSessionFileTimes(&member, names);
      continue;
    }
    const std::string masked = MaskedSessionFile(member.asString());
    if (masked.empty()) continue;
    names->real[masked] = member.asString();
    member = masked;
  }
}

std::vector<fs::path> Transcripts(const std::string& sub = "") {
  std::vector<fs::path> out;
  fs::path dir = fs::path(LOUSHO_SOURCE_DIR) / "tests" / "transcripts" / sub;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The "# " lines that set up a transcript's run: arguments, environment, exit code, masking.
struct TranscriptSetup {
  std::vector<std::string> args = {LOUSHO_BINARY};
  int expected_exit = 0;
  bool mask_usage = false;
  std::vector<std::pair<std::string, std::string>> env;
};

TranscriptSetup ReadSetup(const std::vector<std::string>& lines, const fs::path& dir,
                          const fs::path& home) {
  TranscriptSetup setup;
  auto expand = [&](const std::string& s) {
    return ReplaceAll(ReplaceAll(s, "$DIR", dir.string()), "$HOME", home.string());
  };
  for (const auto& l : lines) {
    if (l == "# mask-usage") setup.mask_usage = true;
    if (l.rfind("# env: ", 0) == 0) {
      const std::string kv = l.substr(7);
      const size_t eq = kv.find('=');
      if (eq != std::string::npos)
        setup.env.emplace_back(kv.substr(0, eq), expand(kv.substr(eq + 1)));
    }
    if (l.rfind("# args:", 0) == 0) {
      std::istringstream ss(l.substr(7));
      for (std::string a; ss >> a;) setup.args.push_back(expand(a));
    } else if (l.rfind("# exit:", 0) == 0) {
      setup.expected_exit = std::stoi(l.substr(7));
    }
  }
  return setup;
}

// Plays one transcript against the binary: sends the "> " lines, compares the "< " lines (or,
// updating the goldens, records what the binary writes instead), follows "# close" and
// "# restart:", and keeps the lines to write back.
class TranscriptPlayer {
 public:
  TranscriptPlayer(fs::path file, const fs::path& cwd, fs::path home, TranscriptSetup setup,
                   bool update)
      : file_(std::move(file)),
        dir_(file_.parent_path()),
        cwd_(cwd.string()),
        home_(std::move(home)),
        setup_(std::move(setup)),
        update_(update),
        rpc_(dir_.filename() == "rpc"),
        child_(std::make_unique<Child>(setup_.args, cwd_, home_.string(), setup_.env)) {}

  // False when a line failed the test in a way that ends it (reported already).
  bool Play(const std::vector<std::string>& lines) {
    size_t i = 0;
    while (i < lines.size()) {
      const std::string& l = lines[i];
      if (l.rfind("< ", 0) != 0) {
        Other(l);
        ++i;
      } else if (update_) {
        // Take whatever the binary writes until it goes quiet.
        while (i < lines.size() && lines[i].rfind("< ", 0) == 0) ++i;
        while (auto got = child_->ReadLine(700)) rewritten_.push_back("< " + Normalize(*got));
      } else {
        const Outcome o = Expect(l, i);
        if (o != Outcome::kSame) return o == Outcome::kDifferent;
        ++i;
      }
    }
    return true;
  }

  // Closes the binary's input: no further output (or, updating, the rest is recorded and the
  // transcript rewritten), then the exit code.
  void Finish() {
    child_->CloseInput();
    if (update_) {
      while (auto got = child_->ReadLine(700)) rewritten_.push_back("< " + Normalize(*got));
      std::ofstream out(file_);
      for (const auto& l : rewritten_) out << l << "\n";
    } else {
      auto extra = child_->ReadLine(1500);
      EXPECT_FALSE(extra.has_value()) << file_.filename() << ": unexpected output: " << *extra;
    }
    EXPECT_EQ(child_->Wait(5000), setup_.expected_exit) << file_.filename();
  }

 private:
  enum class Outcome { kSame, kDifferent, kFatal };

  std::string Expand(const std::string& s) const {
    return ReplaceAll(ReplaceAll(ReplaceAll(s, "$CWD", cwd_), "$DIR", dir_.string()), "$HOME",
                      home_.string());
  }

  std::string Normalize(const std::string& s) {
    std::string out = ReplaceAll(ReplaceAll(ReplaceAll(s, cwd_, "$CWD"), home_.string(), "$HOME"),
                                 dir_.string(), "$DIR");
    if (!rpc_ && !setup_.mask_usage && out.find("\"messageId\"") == std::string::npos) return out;
    auto j = ParseJson(out);
    if (!j.ok()) return out;
    if (setup_.mask_usage) MaskUsed(&*j);
    if (!rpc_) {
      MaskEntryIds(&*j, &names_);
      return WriteJson(*j);
    }
    ZeroTimestamps(&*j);
    MaskSessionFileTimes(&*j, &names_);
    MaskEntryIds(&*j, &names_);
    return WriteJson(*j);
  }

  // A "> " line is sent; "# close" and "# restart:" act; every such line is kept.
  void Other(const std::string& l) {
    if (l.rfind("> ", 0) == 0)
      child_->Send(
          ReplaceAll(ReplaceAll(Unmask(l.substr(2), names_, /*quoted=*/true), "$CWD", cwd_),
                     "$HOME", home_.string()));
    if (l == "# close") child_->CloseInput();
    if (l.rfind("# restart:", 0) == 0) {
      child_->Kill();
      std::vector<std::string> again = {LOUSHO_BINARY};
      std::istringstream ss(l.substr(10));
      for (std::string a; ss >> a;) again.push_back(Expand(Unmask(a, names_, /*quoted=*/false)));
      child_ = std::make_unique<Child>(again, cwd_, home_.string(), setup_.env);
    }
    rewritten_.push_back(l);
  }

  // The "< " line `l` (line i of the file) against the binary's next line.
  Outcome Expect(const std::string& l, size_t i) {
    auto got = child_->ReadLine(10000);
    if (!got) {
      ADD_FAILURE() << file_.filename() << ":" << i + 1 << ": no output, expected " << l.substr(2);
      return Outcome::kFatal;
    }
    auto want_json = ParseJson(l.substr(2));
    if (!want_json.ok()) {
      ADD_FAILURE() << file_.filename() << ":" << i + 1 << ": bad expected JSON";
      return Outcome::kFatal;
    }
    auto got_json = ParseJson(Normalize(*got));
    if (!got_json.ok()) {
      ADD_FAILURE() << "stdout line is not JSON: " << *got;
      return Outcome::kFatal;
    }
    EXPECT_EQ(*got_json, *want_json)
        << file_.filename() << ":" << i + 1 << "\n  want: " << l.substr(2)
        << "\n  got:  " << Normalize(*got);
    return *got_json == *want_json ? Outcome::kSame : Outcome::kDifferent;
  }

  const fs::path file_;
  const fs::path dir_;
  const std::string cwd_;
  const fs::path home_;
  const TranscriptSetup setup_;
  const bool update_;
  const bool rpc_;
  std::unique_ptr<Child> child_;
  Names names_;
  std::vector<std::string> rewritten_;
};

// A fresh folder under the system's temporary folder, of a fixed-length name (so paths inside
// tool output have the same length on every run).
fs::path FreshTempDir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) return {};
  return tmpl;
}

class TranscriptTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(TranscriptTest, Replays) {
  const fs::path file = GetParam();
  const bool update =
      std::getenv("UPDATE_GOLDENS") && std::string(std::getenv("UPDATE_GOLDENS")) == "1";
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  const fs::path cwd = FreshTempDir("lousho-tx-" + file.stem().string());
  ASSERT_FALSE(cwd.empty());
  std::ofstream(cwd / "notes.txt") << "alpha\nbeta\ngamma\n";
  const fs::path home = FreshTempDir("lousho-txh-" + file.stem().string());
  ASSERT_FALSE(home.empty());
  TranscriptSetup setup = ReadSetup(lines, file.parent_path(), home);
  ASSERT_GT(setup.args.size(), 1u) << file << ": needs a '# args:' line";
  TranscriptPlayer player(file, cwd, home, std::move(setup), update);
  if (player.Play(lines)) player.Finish();
  fs::remove_all(cwd);
  fs::remove_all(home);
}

std::string TestName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Transcripts, TranscriptTest, ::testing::ValuesIn(Transcripts()), TestName);
// The RPC door's flavour: the same player, with timestamps zeroed.
INSTANTIATE_TEST_SUITE_P(RpcTranscripts, TranscriptTest, ::testing::ValuesIn(Transcripts("rpc")),
                         TestName);

}  // namespace
}  // namespace lousho
