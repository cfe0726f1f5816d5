// HttpAttackTest: a real qkov-server whose dashboard the tests attack over
// raw sockets on loopback, with a raw HTTP/1.1 client (Dial, SendAll,
// ReadAll, Parse, Get), the server's RSS, and probes (GET /login and a gRPC
// ListSweeps within 1 s) for the attack files: http_attack_test.cc
// (requests: ranges, sizes, slow clients, hosts and origins, paths, CSV)
// and http_session_attack_test.cc (logins, sessions, event streams).
#ifndef TESTS_INTEGRATION_HTTP_ATTACK_FIXTURE_H_
#define TESTS_INTEGRATION_HTTP_ATTACK_FIXTURE_H_

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "tests/integration/harness.h"

namespace qkov::testing {

namespace v1 = ::qkov::v1;

inline constexpr char kReader[] = "reader-token-0123456789";
inline constexpr char kAdmin[] = "admin-token-01234567890";
inline constexpr char kWorker[] = "worker-token-0123456789";
inline constexpr int64_t kRssBudget = 64 << 20;

// --- a raw HTTP/1.1 client ---

// A TCP connection from `from` (a loopback address) to 127.0.0.1:port, with
// send and receive timeouts; -1 when it cannot connect.
inline int Dial(int port, const std::string& from, double timeout_s = 1.0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout_s),
             static_cast<suseconds_t>(
                 (timeout_s - static_cast<int>(timeout_s)) * 1e6)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, from.c_str(), &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof(remote)) !=
          0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n =
        ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the peer closes, a timeout, an error or `max` bytes.
inline std::string ReadAll(int fd, size_t max = 32 << 20) {
  std::string out;
  char buf[65536];
  while (out.size() < max) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

struct Reply {
  int status = 0;  // 0: no reply
  std::string head;
  std::string body;
  std::string Header(const std::string& name) const {
    const std::string key = "\r\n" + name + ": ";
    const size_t at = head.find(key);
    if (at == std::string::npos) return "";
    const size_t from = at + key.size();
    return head.substr(from, head.find("\r\n", from) - from);
  }
};

inline Reply Parse(const std::string& raw) {
  Reply r;
  const size_t end = raw.find("\r\n\r\n");
  if (!absl::StartsWith(raw, "HTTP/1.") || end == std::string::npos) return r;
  r.head = raw.substr(0, end + 2);
  r.body = raw.substr(end + 4);
  absl::SimpleAtoi(raw.substr(9, 3), &r.status);
  return r;
}

// One request (with "Connection: close") and its whole reply.
inline Reply Exchange(int port, const std::string& request,
                      const std::string& from = "127.0.0.1",
                      double timeout_s = 1.0) {
  const int fd = Dial(port, from, timeout_s);
  if (fd < 0) return Reply();
  Reply r;
  if (SendAll(fd, request)) r = Parse(ReadAll(fd));
  ::close(fd);
  return r;
}

inline std::string Get(const std::string& path, const std::string& extra = "") {
  return absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n", extra,
                      "Connection: close\r\n\r\n");
}

inline std::string PostLogin(int port, const std::string& token,
                             const std::string& extra = "") {
  const std::string body = absl::StrCat("token=", token);
  return absl::StrCat("POST /login HTTP/1.1\r\nHost: 127.0.0.1:", port,
                      "\r\nOrigin: http://127.0.0.1:", port, "\r\n", extra,
                      "Content-Type: application/x-www-form-urlencoded\r\n"
                      "Content-Length: ",
                      body.size(), "\r\nConnection: close\r\n\r\n", body);
}

inline int64_t RssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    int64_t kb;
    if (absl::StartsWith(line, "VmRSS:") &&
        absl::SimpleAtoi(line.substr(6, line.size() - 9), &kb))
      return kb << 10;
  }
  return 0;
}

class HttpAttackTest : public ::testing::Test {
 protected:
  void StartServer(const std::vector<std::string>& flags = {}) {
    WriteFile(dir_.File("tokens"),
              absl::StrCat("worker ", kWorker, " farm\nread-only ", kReader,
                           " reader\nadmin ", kAdmin, " root\n"));
    std::vector<std::string> all = {
        "--token_file=" + dir_.File("tokens"), "--http_listen=127.0.0.1:0",
        "--http_port_file=" + dir_.File("http.port")};
    all.insert(all.end(), flags.begin(), flags.end());
    server_ = std::make_unique<ServerUnderTest>(dir_, all);
    ASSERT_TRUE(WaitUntil(
        [&] { return !ReadFile(dir_.File("http.port")).empty(); }, 30));
    port_ = std::stoi(ReadFile(dir_.File("http.port")));
    stub_ = v1::SweepService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  // GET /login on a fresh connection answers 200 within 1 s.
  bool LoginPageAnswers() {
    return Exchange(port_, Get("/login"), "127.0.0.1", 1.0).status == 200;
  }
  // ListSweeps (qkov status's call) answers within a 1 s deadline.
  bool GrpcAnswers() {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kReader));
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(1));
    v1::ListSweepsResponse resp;
    return stub_->ListSweeps(&ctx, v1::ListSweepsRequest(), &resp).ok();
  }

  // Runs `attack(thread_index, stop)` on `threads` threads for `seconds`,
  // probing every 250 ms; then `before_sigterm` (checks of what the attack
  // must not have changed), then SIGTERM with the attack still going.
  void UnderAttack(
      int threads, double seconds,
      const std::function<void(int, const std::atomic<bool>&)>& attack,
      const std::function<void()>& before_sigterm = nullptr) {
    ASSERT_TRUE(LoginPageAnswers());
    const pid_t pid = server_->process().pid();
    const int64_t idle = RssBytes(pid);
    ASSERT_GT(idle, 0);
    std::atomic<bool> stop{false};
    std::vector<std::thread> attackers;
    for (int i = 0; i < threads; ++i)
      attackers.emplace_back([&, i] { attack(i, stop); });
    int64_t peak = idle;
    int probes = 0, login_misses = 0, grpc_misses = 0;
    const absl::Time end = absl::Now() + absl::Seconds(seconds);
    while (absl::Now() < end) {
      if (!LoginPageAnswers()) ++login_misses;
      if (!GrpcAnswers()) ++grpc_misses;
      peak = std::max(peak, RssBytes(pid));
      ++probes;
      absl::SleepFor(absl::Milliseconds(250));
    }
    EXPECT_GT(probes, 3);
    EXPECT_EQ(login_misses, 0) << "of " << probes << " GET /login probes";
    EXPECT_EQ(grpc_misses, 0) << "of " << probes << " gRPC probes";
    EXPECT_LT(peak - idle, kRssBudget)
        << "idle " << (idle >> 20) << " MB, peak " << (peak >> 20) << " MB";
    std::printf("[attack] %d probes answered; RSS idle %.1f MB, peak %.1f MB\n",
                probes, idle / 1048576.0, peak / 1048576.0);
    if (before_sigterm) before_sigterm();
    const absl::Time term = absl::Now();
    server_->process().Signal(SIGTERM);
    EXPECT_EQ(server_->process().Wait(10), 0) << "SIGTERM during the attack";
    std::printf("[attack] SIGTERM -> exit in %.2f s\n",
                absl::ToDoubleSeconds(absl::Now() - term));
    stop = true;
    for (std::thread& t : attackers) t.join();
  }

  std::string From(int base, int i) {
    return absl::StrCat("127.0.0.", base + i);
  }

  TempDir dir_;
  std::unique_ptr<ServerUnderTest> server_;
  std::unique_ptr<v1::SweepService::Stub> stub_;
  int port_ = 0;
};

}  // namespace qkov::testing

#endif  // TESTS_INTEGRATION_HTTP_ATTACK_FIXTURE_H_
