// The `history` run of bench/coordinator_bench.cc: what watching a sweep
// and reading it cost as its stored history grows. For each history size
// (metric rows in the database) it measures, interleaved in rounds, the
// simulated workers' ReportMetrics latency (p50, p99) and rate under each
// setting of watchers (by default none, one `qkov watch` stream, and eight
// of them beside four dashboard event streams); then each read path's time
// on the same database. With delete_points, last: a cancelled sweep of that
// many curve points deleted (DeleteSweep) while the workers report, against
// an interval without: the deletion's time and the reports' p50, p99 and
// maximum latency of each.
#ifndef QKOV_BENCH_HISTORY_RUN_H_
#define QKOV_BENCH_HISTORY_RUN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace qkov::bench {

struct HistoryOptions {
  std::string address;  // the server's gRPC address
  int http_port = 0;    // its dashboard (for event streams and API reads)
  int workers = 64;     // simulated workers, one running trial each
  std::vector<int64_t> levels = {1000, 10000, 100000, 1000000};
  double seconds = 3;  // each measured interval
  int rounds = 2;      // of the three watcher settings, interleaved
  // 0: each worker reports again as soon as its report returns; else every
  // this many milliseconds (a trial reporting every 100 steps).
  int report_every_ms = 0;
  // (watch streams, dashboard event streams) settings, interleaved.
  std::vector<std::pair<int, int>> settings = {{0, 0}, {1, 0}, {8, 4}};
  int64_t delete_points = 0;  // 0: no deletion
};

// Prints one line per (history size, round, watcher setting) and per read
// path. Returns false when the server refused a call the run needs.
bool HistoryRun(const HistoryOptions& options);

}  // namespace qkov::bench

#endif  // QKOV_BENCH_HISTORY_RUN_H_
