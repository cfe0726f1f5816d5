#include "common/log.h"

#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/text.h"

namespace qkov::log {
namespace {

struct Settings {
  std::string program = "qkov";
  Format format = Format::kText;
  bool journal = false;
};

absl::Mutex settings_mu;
Settings& settings() {
  static Settings* s = new Settings();
  return *s;
}

// Per event name: the window's start, events in it, and those dropped.
struct Window {
  absl::Time start = absl::InfinitePast();
  int emitted = 0;
  int64_t suppressed = 0;
};
absl::Mutex limits_mu;
absl::flat_hash_map<std::string, Window>& windows() {
  static auto* w = new absl::flat_hash_map<std::string, Window>();
  return *w;
}

std::atomic<absl::Time (*)()> test_clock{nullptr};
absl::Time Now() {
  absl::Time (*now)() = test_clock.load();
  return now != nullptr ? now() : absl::Now();
}

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "INFO";
    case Severity::kWarning:
      return "WARN";
    case Severity::kError:
      return "ERROR";
  }
  return "INFO";
}

int Priority(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return LOG_INFO;
    case Severity::kWarning:
      return LOG_WARNING;
    case Severity::kError:
      return LOG_ERR;
  }
  return LOG_INFO;
}

// A logfmt value: bare when it is a plain word, else quoted as a JSON
// string (JsonQuote), so that one event is always one line whatever its
// fields hold.
std::string TextValue(absl::string_view v) {
  bool bare = !v.empty();
  for (unsigned char c : v) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) {
      bare = false;
      break;
    }
  }
  return bare ? std::string(v) : JsonQuote(v);
}

std::string Timestamp(absl::Time ts) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", ts, absl::UTCTimeZone());
}

// Whether stderr is the journal's stream: systemd sets JOURNAL_STREAM to
// "DEVICE:INODE" of the stream it connected (systemd.exec(5)).
bool StderrIsJournal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) return false;
  const char* off = std::getenv("QKOV_LOG_JOURNAL");
  if (off != nullptr && std::string(off) == "0") return false;
  std::vector<absl::string_view> parts = absl::StrSplit(env, ':');
  uint64_t dev = 0, ino = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &dev) ||
      !absl::SimpleAtoi(parts[1], &ino)) {
    return false;
  }
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<uint64_t>(st.st_dev) == dev &&
         static_cast<uint64_t>(st.st_ino) == ino;
}

void Write(Severity severity, absl::string_view event,
           const std::vector<Field>& fields) {
  Settings s;
  {
    absl::MutexLock lock(&settings_mu);
    s = settings();
  }
  const absl::Time now = Now();
  if (s.journal) {
    const std::string message =
        TextLine(now, s.program, severity, event, fields);
    const std::vector<std::string> journal =
        JournalFields(s.program, severity, event, fields, message);
    std::vector<iovec> iov(journal.size());
    for (size_t i = 0; i < journal.size(); ++i) {
      iov[i].iov_base = const_cast<char*>(journal[i].data());
      iov[i].iov_len = journal[i].size();
    }
    if (sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) >= 0) return;
    // The journal refused it: stderr is the journal's stream anyway.
  }
  std::string line = s.format == Format::kJson
                         ? JsonLine(now, s.program, severity, event, fields)
                         : TextLine(now, s.program, severity, event, fields);
  line += '\n';
  // One write per event, so that lines of concurrent events never mix.
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

Field::Field(absl::string_view k, double v) : key(k) {
  literal = std::isfinite(v);  // JSON has no NaN or infinity
  value = std::isfinite(v) ? absl::StrFormat("%.6g", v)
                           : (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
}

Field::Field(absl::string_view k, absl::Duration d)
    : key(k),
      value(absl::StrFormat("%.6f", absl::ToDoubleSeconds(d))),
      literal(d != absl::InfiniteDuration() && d != -absl::InfiniteDuration()) {
  if (!literal) value = d > absl::ZeroDuration() ? "inf" : "-inf";
}

Field::Field(absl::string_view k, const absl::Status& s)
    : key(k),
      value(s.ok() ? "OK"
                   : absl::StrCat(absl::StatusCodeToString(s.code()), ": ",
                                  s.message())) {}

void SetClockForTesting(absl::Time (*now)()) { test_clock.store(now); }

absl::Status Init(absl::string_view program, absl::string_view format) {
  Format f;
  if (format == "text") {
    f = Format::kText;
  } else if (format == "json") {
    f = Format::kJson;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_format: '", format, "' is not text or json"));
  }
  absl::MutexLock lock(&settings_mu);
  settings().program = std::string(program);
  settings().format = f;
  settings().journal = StderrIsJournal();
  return absl::OkStatus();
}

void Emit(Severity severity, absl::string_view event,
          std::initializer_list<Field> fields) {
  Write(severity, event, std::vector<Field>(fields));
}

void Emit(Severity severity, absl::string_view event,
          std::initializer_list<Field> fields, const RateLimit& limit) {
  int64_t suppressed = 0;
  {
    absl::MutexLock lock(&limits_mu);
    Window& w = windows()[event];
    const absl::Time now = Now();
    if (now - w.start >= limit.period) {
      w.start = now;
      w.emitted = 0;
    }
    if (w.emitted >= limit.burst) {
      ++w.suppressed;
      return;
    }
    ++w.emitted;
    suppressed = w.suppressed;
    w.suppressed = 0;
  }
  std::vector<Field> all(fields);
  if (suppressed > 0) all.emplace_back("suppressed", suppressed);
  Write(severity, event, all);
}

std::string TextLine(absl::Time ts, absl::string_view program,
                     Severity severity, absl::string_view event,
                     const std::vector<Field>& fields) {
  std::string out = absl::StrCat(Timestamp(ts), " ", program, " ",
                                 SeverityName(severity), " ", event);
  for (const Field& f : fields)
    absl::StrAppend(&out, " ", f.key, "=", TextValue(f.value));
  return out;
}

std::string JsonLine(absl::Time ts, absl::string_view program,
                     Severity severity, absl::string_view event,
                     const std::vector<Field>& fields) {
  std::string out = absl::StrCat(
      "{\"ts\":", JsonQuote(Timestamp(ts)), ",\"program\":", JsonQuote(program),
      ",\"severity\":", JsonQuote(SeverityName(severity)),
      ",\"event\":", JsonQuote(event));
  for (const Field& f : fields) {
    absl::StrAppend(&out, ",", JsonQuote(f.key), ":",
                    f.literal ? f.value : JsonQuote(f.value));
  }
  out += "}";
  return out;
}

std::vector<std::string> JournalFields(absl::string_view program,
                                       Severity severity,
                                       absl::string_view event,
                                       const std::vector<Field>& fields,
                                       const std::string& message) {
  std::vector<std::string> out;
  out.push_back(absl::StrCat("MESSAGE=", message));
  out.push_back(absl::StrCat("PRIORITY=", Priority(severity)));
  out.push_back(absl::StrCat("SYSLOG_IDENTIFIER=", program));
  out.push_back(absl::StrCat("QKOV_EVENT=", event));
  for (const Field& f : fields) {
    // Journal field names: upper-case letters, digits and underscores.
    std::string name = "QKOV_";
    for (char c : f.key)
      name += absl::ascii_isalnum(c) ? absl::ascii_toupper(c) : '_';
    out.push_back(absl::StrCat(name, "=", f.value));
  }
  return out;
}

}  // namespace qkov::log
