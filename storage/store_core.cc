#include "storage/store_core.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/task_info.h"

namespace qkov::storage {
namespace {

// The task of a config's `training.task` as its JSON holds it: config.proto's
// name ("TASK_FIXED_ATTENTION" -> fixed_attention) or a registered task's
// number ("1000" -> its name); "unknown" for anything else.
std::string TaskNameInConfig(const std::string& value) {
  if (absl::StartsWith(value, "TASK_"))
    return absl::AsciiStrToLower(value.substr(5));
  int kind = 0;
  if (absl::SimpleAtoi(value, &kind)) {
    for (const TaskInfo& t : Tasks())
      if (t.kind != 0 && t.kind == kind) return t.name;
  }
  return "unknown";
}

}  // namespace

std::string TrialIdOf(int64_t sweep_id, int64_t ordinal) {
  return absl::StrCat(sweep_id, "-", absl::Dec(ordinal, absl::kZeroPad8));
}

StoreCore::~StoreCore() {
  writes.reset();  // runs what is queued
  checkpointer.reset();
}

absl::Status StoreCore::Write(absl::FunctionRef<absl::Status()> op,
                              bool alone) {
  return writes->Write(op, alone);
}

const char* TrialEventName(TrialEvent::Kind kind) {
  switch (kind) {
    case TrialEvent::Kind::kLeased:
      return "leased";
    case TrialEvent::Kind::kExpired:
      return "expired";
    case TrialEvent::Kind::kCompleted:
      return "completed";
    case TrialEvent::Kind::kFailed:
      return "failed";
    case TrialEvent::Kind::kPreempted:
      return "preempted";
    case TrialEvent::Kind::kStoppedEarly:
      return "stopped_early";
  }
  return "unknown";
}

absl::Status StoreCore::WriteWithEvents(absl::FunctionRef<absl::Status()> op) {
  std::vector<TrialEvent> committed;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu.AssertHeld();
    // A write may run twice (WriteQueue): each run starts afresh.
    events.clear();
    absl::Status s = op();
    committed.swap(events);
    events.clear();
    return s;
  }));
  if (event_sink && !committed.empty()) event_sink(committed);
  return absl::OkStatus();
}

absl::Status StoreCore::RecordEndLocked(
    TrialEvent::Kind kind, const std::string& trial_id, int attempt,
    const std::string& worker_id, const std::string& state,
    const std::string& reason, int64_t now_ms) {
  if (!event_sink) return absl::OkStatus();
  TrialEvent e;
  e.kind = kind;
  e.trial_id = trial_id;
  e.attempt = attempt;
  e.worker_id = worker_id;
  e.state = state;
  e.reason = reason;
  // The task from the trial's JSON config: "TASK_SYNTHETIC" -> synthetic,
  // a registered task's number -> its name (common/task_info.h); two
  // primary-key lookups.
  constexpr char kAttemptFactsSql[] =
      "SELECT a.started_ms, json_extract(t.config_json, '$.training.task') "
      "FROM attempts a JOIN trials t USING (trial_id) "
      "WHERE a.trial_id = ? AND a.attempt = ?";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kAttemptFactsSql));
  s->BindText(1, trial_id);
  s->BindInt64(2, attempt);
  ASSIGN_OR_RETURN(bool row, s->Step());
  e.task = "unknown";
  if (row) {
    e.duration_ms = std::max<int64_t>(0, now_ms - s->ColumnInt64(0));
    if (!s->ColumnIsNull(1)) e.task = TaskNameInConfig(s->ColumnText(1));
  }
  s->Reset();
  events.push_back(std::move(e));
  return absl::OkStatus();
}

void StoreCore::SetBeforeGroupHookForTesting(std::function<void()> hook) {
  writes->SetBeforeGroupHookForTesting(std::move(hook));
}

size_t StoreCore::QueuedWritesForTesting() {
  return writes->QueuedForTesting();
}

absl::Status StoreCore::WriteForTesting(
    std::function<absl::Status(Database*)> op) {
  return Write([&]() -> absl::Status {
    mu.AssertHeld();
    return op(db.get());
  });
}

}  // namespace qkov::storage
