#include "tests/integration/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "storage/database.h"

extern char** environ;

namespace qkov::testing {

TempDir::TempDir() {
  char tmpl[] = "/tmp/qkov-it-XXXXXX";
  const char* p = mkdtemp(tmpl);
  if (p == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  if (std::getenv("QKOV_KEEP_TEST_DIRS") == nullptr) {
    std::string cmd = "rm -rf '" + path_ + "'";
    (void)std::system(cmd.c_str());
  }
}

Process::Process(const std::vector<std::string>& argv,
                 const std::string& log_path,
                 const std::vector<std::string>& extra_env) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) env_storage.push_back(*e);
  for (const auto& e : extra_env) env_storage.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_storage) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  // Children start with default signal dispositions and an empty mask.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  if (posix_spawn(&pid_, args[0], &actions, &attr, args.data(), env.data()) !=
      0)
    pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (pid_ < 0) throw std::runtime_error("posix_spawn failed: " + argv[0]);
}

Process::~Process() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

void Process::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

bool Process::Running() {
  if (reaped_) return false;
  const pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

int Process::Wait(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  while (!reaped_) {
    const pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

CommandResult MakeTestCertificates(const std::string& dir) {
  const std::string script = absl::StrCat(
      "set -e; cd '", dir, "'\n",
      "ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
      "openssl req -x509 $ec -keyout ca.key -out ca.pem -days 1 -subj "
      "/CN=qkov-test-ca 2>/dev/null\n"
      "openssl req $ec -keyout server.key -out server.csr -subj "
      "/CN=localhost 2>/dev/null\n"
      "echo 'subjectAltName=DNS:localhost,IP:127.0.0.1' > server.ext\n"
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out server.pem "
      "-days 1 -extfile server.ext 2>/dev/null\n"
      "openssl req $ec -keyout client.key -out client.csr -subj "
      "/CN=qkov-worker 2>/dev/null\n"
      "echo 'extendedKeyUsage=clientAuth' > client.ext\n"
      "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out client.pem "
      "-days 1 -extfile client.ext 2>/dev/null\n");
  return RunCommand({"/bin/bash", "-c", script});
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         double timeout_s) {
  TempDir dir;
  const std::string out = dir.File("out"), err = dir.File("err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) !=
      0) {
    posix_spawn_file_actions_destroy(&actions);
    return {-1, "", "spawn failed"};
  }
  posix_spawn_file_actions_destroy(&actions);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {-1, ReadFile(out), ReadFile(err) + "\n(timed out)"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
          ReadFile(out), ReadFile(err)};
}

ServerUnderTest::ServerUnderTest(const TempDir& dir,
                                 const std::vector<std::string>& extra_flags,
                                 const std::string& binary)
    : dir_(dir), extra_flags_(extra_flags), binary_(binary) {
  db_ = dir.File("results.db");
  Start("127.0.0.1:0");
}

void ServerUnderTest::Restart() {
  process_.reset();  // SIGKILL if still running
  Start("127.0.0.1:" + std::to_string(port_));
}

void ServerUnderTest::Start(const std::string& listen) {
  const TempDir& dir = dir_;
  const std::string port_file = dir.File("server.port");
  std::remove(port_file.c_str());
  std::vector<std::string> argv = {binary_, "--db=" + db_, "--listen=" + listen,
                                   "--port_file=" + port_file};
  argv.insert(argv.end(), extra_flags_.begin(), extra_flags_.end());
  process_ = std::make_unique<Process>(argv, dir.File("server.log"));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = ReadFile(port_file);
    if (!text.empty()) {
      port_ = std::stoi(text);
      return;
    }
    if (!process_->Running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("qkov-server did not start: " +
                           ReadFile(dir.File("server.log")));
}

}  // namespace qkov::testing

namespace qkov::testing {

bool WaitUntil(const std::function<bool()>& condition, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

std::vector<std::vector<std::string>> QueryRows(const std::string& db_path,
                                                const std::string& sql) {
  storage::Database::Options ro;
  ro.read_only = true;
  auto db = storage::Database::Open(db_path, ro);
  if (!db.ok()) throw std::runtime_error(db.status().ToString());
  auto st = (*db)->Prepare(sql);
  if (!st.ok()) throw std::runtime_error(st.status().ToString());
  std::vector<std::vector<std::string>> rows;
  while (true) {
    auto row = (*st)->Step();
    if (!row.ok()) throw std::runtime_error(row.status().ToString());
    if (!*row) break;
    std::vector<std::string> r;
    for (int i = 0;; ++i) {
      if (i >= (*st)->ColumnCount()) break;
      r.push_back((*st)->ColumnText(i));
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  auto rows = QueryRows(db_path, sql);
  if (rows.empty() || rows[0].empty())
    throw std::runtime_error("no row: " + sql);
  return std::stoll(rows[0][0]);
}

}  // namespace qkov::testing

namespace qkov::testing {

std::vector<RatioPoint> ReadRatioFigure(const std::string& dat_path) {
  std::vector<RatioPoint> points;
  std::istringstream dat(ReadFile(dat_path));
  std::string line;
  while (std::getline(dat, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (f.size() < 3) continue;
    points.push_back({f[0], f[1], std::stod(f[2])});
  }
  return points;
}

bool IsValidPng(const std::string& path) {
  const std::string data = ReadFile(path);
  static const std::string kSignature = "\x89PNG\r\n\x1a\n";
  if (data.compare(0, 8, kSignature) != 0) return false;
  size_t pos = 8;
  bool seen_ihdr = false;
  auto be32 = [&](size_t at) {
    return (static_cast<uint32_t>(static_cast<unsigned char>(data[at])) << 24) |
           (static_cast<uint32_t>(static_cast<unsigned char>(data[at + 1]))
            << 16) |
           (static_cast<uint32_t>(static_cast<unsigned char>(data[at + 2]))
            << 8) |
           static_cast<uint32_t>(static_cast<unsigned char>(data[at + 3]));
  };
  while (pos + 12 <= data.size()) {
    const uint32_t len = be32(pos);
    if (pos + 12 + len > data.size()) return false;
    const std::string type = data.substr(pos + 4, 4);
    const uLong crc = crc32(
        0, reinterpret_cast<const Bytef*>(data.data() + pos + 4), len + 4);
    if (crc != be32(pos + 8 + len)) return false;
    if (type == "IHDR") {
      if (len != 13 || be32(pos + 8) == 0 || be32(pos + 12) == 0) return false;
      seen_ihdr = true;
    }
    if (type == "IEND") return seen_ihdr;
    pos += 12 + len;
  }
  return false;
}

}  // namespace qkov::testing
