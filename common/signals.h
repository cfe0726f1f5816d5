// Turns process signals into a callback on an ordinary thread. A handler
// only writes the signal number to a pipe (async-signal-safe); a watcher
// thread reads it and calls `on_signal`. Unlike sigwait, this works when
// libraries (LibTorch, OpenBLAS) started threads before main could block
// signals.
#ifndef QKOV_COMMON_SIGNALS_H_
#define QKOV_COMMON_SIGNALS_H_

#include <functional>
#include <initializer_list>

namespace qkov {

// Installs handlers for `signals` and starts the watcher thread (detached).
// Call once per process. `on_signal` runs on the watcher thread.
void WatchSignals(std::initializer_list<int> signals,
                  std::function<void(int)> on_signal);

}  // namespace qkov

#endif  // QKOV_COMMON_SIGNALS_H_
