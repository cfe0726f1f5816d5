#include "common/signals.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace qkov {
namespace {

int g_pipe[2] = {-1, -1};

void Handler(int sig) {
  const int saved = errno;
  const char c = static_cast<char>(sig);
  (void)!write(g_pipe[1], &c, 1);
  errno = saved;
}

}  // namespace

void WatchSignals(std::initializer_list<int> signals,
                  std::function<void(int)> on_signal) {
  if (pipe(g_pipe) != 0) return;
  struct sigaction sa = {};
  sa.sa_handler = Handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : signals) sigaction(s, &sa, nullptr);
  std::thread([on_signal = std::move(on_signal)]() {
    char c;
    while (true) {
      const ssize_t n = read(g_pipe[0], &c, 1);
      if (n == 1) {
        on_signal(static_cast<unsigned char>(c));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return;
      }
    }
  }).detach();
}

}  // namespace qkov
