#include "client/gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace qkov::client {
namespace {

// Runs gnuplot on the script with an argument vector (no shell), its
// standard error into OUT.gnuplot.log.
absl::Status Gnuplot(const std::string& script_path, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::string program = "gnuplot";
  std::vector<char*> argv = {program.data(),
                             const_cast<char*>(script_path.c_str()), nullptr};
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run gnuplot (", std::strerror(rc),
                     "); install gnuplot-nox (deploy/install-deps.sh)"));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return absl::InternalError(absl::StrCat("gnuplot failed; see ", log));
  return absl::OkStatus();
}

}  // namespace

std::string GnuplotQuoted(absl::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out + "'";
}

absl::Status RunGnuplot(const std::string& out_base, const std::string& body,
                        int width, int height) {
  const std::string script_path = out_base + ".gp";
  {
    std::ofstream gp(script_path);
    if (!gp)
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", script_path));
    gp << "datafile = " << GnuplotQuoted(out_base + ".dat") << "\n";
    for (const std::string& term :
         {absl::StrFormat("pngcairo size %d,%d noenhanced font ',11'", width,
                          height),
          absl::StrFormat("svg size %d,%d noenhanced", width, height)}) {
      const bool png = term.rfind("png", 0) == 0;
      gp << "set terminal " << term << "\n";
      gp << "set output " << GnuplotQuoted(out_base + (png ? ".png" : ".svg"))
         << "\n";
      gp << body << "\n";
      gp << "unset output\nreset\n";
    }
  }
  const std::string log = out_base + ".gnuplot.log";
  RETURN_IF_ERROR(Gnuplot(script_path, log));
  std::ifstream in(log);
  if (in.peek() == std::ifstream::traits_type::eof()) std::remove(log.c_str());
  return absl::OkStatus();
}

std::string MetricLabel(const std::string& metric) {
  if (metric == "distinct_attention") return "distinct-token attention";
  if (metric == "ac") return "AC (attention confidence)";
  if (metric == "acmc") return "ACMC";
  return metric;
}

}  // namespace qkov::client
