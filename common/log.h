// Structured logs of qkov-server and qkov-worker (docs/operations.md,
// "Logs"). Every message is an event: a name (lower_snake_case, what
// happened: lease_expired, trial_completed, rpc_retry) and fields (sweep,
// trial, attempt, worker, peer, duration_s, error, ...), never free text
// alone, so that a log can be filtered by any of them.
//
//   log::Info("trial_completed", {{"trial", id}, {"attempt", 2},
//                                 {"duration_s", 12.5}});
//
// Where events go (Init): to stderr as one line each, either logfmt text
//   2026-12-05T04:20:00.123Z qkov-server INFO trial_completed trial=1-0003 ...
// or a JSON object per line (--log_format=json), with the keys ts, program,
// severity, event and then the fields. When stderr is the systemd journal's
// stream (systemd sets JOURNAL_STREAM to its device and inode), events go
// to the journal instead, natively: MESSAGE is the text line, PRIORITY the
// severity, and each field its own journal field, QKOV_EVENT and QKOV_ plus
// the key in upper case (QKOV_TRIAL, QKOV_WORKER...), so that
// `journalctl -u qkov-server QKOV_TRIAL=1-0003` shows one trial.
//
// Events that can repeat without bound (a reconnect loop, a failing reaper)
// pass a RateLimit: past its burst within its period, an event of that name
// is dropped and counted, and the next one emitted carries `suppressed=N`.
//
// Thread safety: Init once, first thing in main; the rest is thread-safe.
// Before Init, events go to stderr as text under the name "qkov".
#ifndef QKOV_COMMON_LOG_H_
#define QKOV_COMMON_LOG_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace qkov::log {

enum class Severity { kInfo, kWarning, kError };
enum class Format { kText, kJson };

// One field: a key (lower_snake_case) and its value as text.
struct Field {
  Field(absl::string_view k, absl::string_view v) : key(k), value(v) {}
  Field(absl::string_view k, const std::string& v) : key(k), value(v) {}
  Field(absl::string_view k, const char* v) : key(k), value(v) {}
  template <typename Int,
            typename = std::enable_if_t<std::is_integral_v<Int> &&
                                        !std::is_same_v<Int, bool>>>
  Field(absl::string_view k, Int v)
      : key(k), value(std::to_string(v)), literal(true) {}
  Field(absl::string_view k, bool v)
      : key(k), value(v ? "true" : "false"), literal(true) {}
  Field(absl::string_view k, double v);
  // Seconds, to the microsecond.
  Field(absl::string_view k, absl::Duration d);
  // "CODE: message" ("OK" for OK).
  Field(absl::string_view k, const absl::Status& s);

  std::string key;
  std::string value;
  // A number or boolean: bare in JSON (every other value is a string).
  bool literal = false;
};

// At most `burst` events of one name per `period`.
struct RateLimit {
  int burst = 5;
  absl::Duration period = absl::Minutes(1);
};

// Sets the program's name and the format ("text" or "json";
// INVALID_ARGUMENT naming the flag otherwise). Events go to the journal
// when stderr is its stream, unless QKOV_LOG_JOURNAL=0.
absl::Status Init(absl::string_view program, absl::string_view format);

void Emit(Severity severity, absl::string_view event,
          std::initializer_list<Field> fields);
void Emit(Severity severity, absl::string_view event,
          std::initializer_list<Field> fields, const RateLimit& limit);

inline void Info(absl::string_view event,
                 std::initializer_list<Field> fields = {}) {
  Emit(Severity::kInfo, event, fields);
}
inline void Warning(absl::string_view event,
                    std::initializer_list<Field> fields = {}) {
  Emit(Severity::kWarning, event, fields);
}
inline void Error(absl::string_view event,
                  std::initializer_list<Field> fields = {}) {
  Emit(Severity::kError, event, fields);
}

// Tests: the clock events are stamped and rate-limited by (null: the
// real one).
void SetClockForTesting(absl::Time (*now)());

// The renderings, for tests: the text line and the JSON line (without the
// newline), and the journal's fields ("KEY=value").
std::string TextLine(absl::Time ts, absl::string_view program,
                     Severity severity, absl::string_view event,
                     const std::vector<Field>& fields);
std::string JsonLine(absl::Time ts, absl::string_view program,
                     Severity severity, absl::string_view event,
                     const std::vector<Field>& fields);
std::vector<std::string> JournalFields(absl::string_view program,
                                       Severity severity,
                                       absl::string_view event,
                                       const std::vector<Field>& fields,
                                       const std::string& message);

}  // namespace qkov::log

#endif  // QKOV_COMMON_LOG_H_
