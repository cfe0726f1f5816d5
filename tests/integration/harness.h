// Test harness for integration tests: a temporary directory, child processes
// (the real binaries) and a started qkov-server on a free loopback port.
#ifndef QKOV_TESTS_INTEGRATION_HARNESS_H_
#define QKOV_TESTS_INTEGRATION_HARNESS_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace qkov::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A child process; killed (SIGKILL) in the destructor if still running.
class Process {
 public:
  // stdout and stderr go to `log_path` (appended).
  Process(const std::vector<std::string>& argv, const std::string& log_path,
          const std::vector<std::string>& extra_env = {});
  ~Process();
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Waits for exit; returns the exit code, 128+signal when killed, -1 on
  // timeout.
  int Wait(double timeout_s);
  bool Running();

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
};

struct CommandResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs a command to completion (timeout_s), capturing output.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         double timeout_s = 120);

std::string ReadFile(const std::string& path);

// True when `path` is a PNG whose every chunk's CRC checks out, from IHDR
// (non-zero size) to IEND.
bool IsValidPng(const std::string& path);

// The data lines of a `qkov plot` ratio figure's .dat file: the series
// (parameterization), the ratio as printed, the plotted mean.
struct RatioPoint {
  std::string series;
  std::string ratio;
  double mean = 0;
};
std::vector<RatioPoint> ReadRatioFigure(const std::string& dat_path);

// Polls `condition` every 20 ms until it holds or `timeout_s` passes; returns
// whether it held. For waiting on another process's progress, never as a
// substitute for a result.
bool WaitUntil(const std::function<bool()>& condition, double timeout_s);

// Read-only queries against a results database that a server may be writing.
int64_t QueryInt(const std::string& db_path, const std::string& sql);
std::vector<std::vector<std::string>> QueryRows(const std::string& db_path,
                                                const std::string& sql);
void WriteFile(const std::string& path, const std::string& text);

// Makes, with openssl, in `dir`: a CA (ca.pem, ca.key), a server
// certificate for localhost and 127.0.0.1 (server.pem, server.key) and a
// client certificate (client.pem, client.key), valid for a day.
CommandResult MakeTestCertificates(const std::string& dir);

// Starts qkov-server with its database in `dir`; waits (by polling its port
// file, up to 30 s) until it listens.
class ServerUnderTest {
 public:
  // `binary`: a qkov-server built with more tasks (tests/example_task).
  explicit ServerUnderTest(const TempDir& dir,
                           const std::vector<std::string>& extra_flags = {},
                           const std::string& binary = QKOV_SERVER_BIN);
  // Starts the server again on the same port and database (after a kill).
  void Restart();
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string db_path() const { return db_; }
  int port() const { return port_; }
  Process& process() { return *process_; }

 private:
  void Start(const std::string& listen);
  const TempDir& dir_;
  std::vector<std::string> extra_flags_;
  std::string binary_;
  std::string db_;
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

}  // namespace qkov::testing

#endif  // QKOV_TESTS_INTEGRATION_HARNESS_H_
