// LeaseQueries (storage/lease_queries.h), and StoreCore's fencing step,
// CheckLease.
#include "storage/lease_queries.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/lease_limits.h"
#include "common/status_macros.h"
#include "common/text.h"

namespace qkov::storage {
namespace {

// A worker id is registered once: its key and principal never change.
constexpr char kInsertWorkerSql[] =
    "INSERT INTO workers (worker_id, name, slots, provenance_json, "
    "registered_ms, last_seen_ms, key_sha256, principal) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
constexpr char kWorkerIdentitySql[] =
    "SELECT key_sha256, principal FROM workers WHERE worker_id = ?";
// The sweep to serve next: highest priority first; among equal priorities the
// one with the fewest running trials (fair sharing), then the oldest.
constexpr char kNextSweepSql[] =
    "SELECT s.sweep_id, s.name FROM sweeps s WHERE s.cancelled = 0 AND "
    "s.paused = 0 AND EXISTS "
    "(SELECT 1 FROM trials t WHERE t.sweep_id = s.sweep_id AND t.state = "
    "'queued') "
    "ORDER BY s.priority DESC, "
    "(SELECT COUNT(*) FROM trials r WHERE r.sweep_id = s.sweep_id AND r.state "
    "= 'running'), s.sweep_id "
    "LIMIT 1";
// Its next trial: handed-back trials (queue_rank -1) first, then grid order.
constexpr char kNextQueuedSql[] =
    "SELECT t.trial_id, t.attempts, t.config_json, t.checkpoint, "
    "t.checkpoint_step, t.parameterization, t.axes_pb, g.training_pb "
    "FROM trials t LEFT JOIN trainings g ON g.training_id = t.training_id "
    "WHERE t.sweep_id = ? AND t.state = 'queued' "
    "ORDER BY t.queue_rank, t.ordinal LIMIT 1";
constexpr char kAnyRunningSql[] =
    "SELECT EXISTS (SELECT 1 FROM trials WHERE state = 'running')";
constexpr char kAnyActiveSql[] =
    "SELECT EXISTS (SELECT 1 FROM trials WHERE state IN ('queued', "
    "'preempted', 'running'))";
constexpr char kStartLeaseSql[] =
    "UPDATE trials SET state = 'running', attempts = attempts + 1, "
    "lease_worker = ?, "
    "lease_expires_ms = ?, updated_ms = ? WHERE trial_id = ?";
constexpr char kInsertAttemptSql[] =
    "INSERT INTO attempts (trial_id, attempt, worker_id, state, started_ms, "
    "start_step) "
    "VALUES (?, ?, ?, 'running', ?, ?)";
constexpr char kLeaseStateSql[] =
    "SELECT state, attempts, lease_expires_ms, lease_worker FROM trials WHERE "
    "trial_id = ?";
constexpr char kRenewSql[] =
    "UPDATE trials SET lease_expires_ms = ?, last_step = MAX(last_step, ?), "
    "updated_ms = ? "
    "WHERE trial_id = ?";

constexpr char kEndAttemptKeepProvenanceSql[] =
    "UPDATE attempts SET state = ?, ended_ms = ?, error = ? WHERE trial_id = ? "
    "AND attempt = ?";
constexpr char kFailuresSql[] =
    "SELECT t.failures, s.max_attempts FROM trials t JOIN sweeps s USING "
    "(sweep_id) "
    "WHERE t.trial_id = ?";
constexpr char kRequeueSql[] =
    "UPDATE trials SET state = ?, failures = failures + ?, queue_rank = ?, "
    "checkpoint = ?, "
    "checkpoint_step = ?, lease_worker = NULL, lease_expires_ms = NULL, "
    "updated_ms = ? WHERE trial_id = ?";
constexpr char kExpiredSql[] =
    "SELECT trial_id, attempts, lease_worker FROM trials WHERE state = "
    "'running' AND lease_expires_ms < ?";

// The lease's binary config from columns (axes_pb, training_pb) at `col`:
// their concatenation, or "" when either is NULL (stored before schema 2).
std::string BinaryConfig(const Statement& s, int col) {
  if (s.ColumnIsNull(col) || s.ColumnIsNull(col + 1)) return "";
  return s.ColumnBlob(col) + s.ColumnBlob(col + 1);
}

// A lease from a row of (trial_id, attempts, config_json, checkpoint,
// checkpoint_step, ...) with the binary config at `pb_col`; its attempt is
// the trial's attempts plus `next` (1 for a new lease, 0 for a held one).
LeaseRecord LeaseOf(const Statement& s, int next, int pb_col) {
  LeaseRecord l;
  l.trial_id = s.ColumnText(0);
  l.attempt = static_cast<int>(s.ColumnInt64(1)) + next;
  l.config_json = s.ColumnText(2);
  l.checkpoint = s.ColumnBlob(3);
  l.checkpoint_step = l.checkpoint.empty() ? 0 : s.ColumnInt64(4);
  l.config_pb = BinaryConfig(s, pb_col);
  return l;
}

}  // namespace

absl::Status LeaseQueries::RegisterWorker(const std::string& worker_id,
                                          const std::string& name, int slots,
                                          const std::string& provenance_json,
                                          const WorkerIdentity& identity,
                                          int64_t now_ms) {
  return core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kInsertWorkerSql));
    s->BindText(1, worker_id);
    s->BindText(2, name);
    s->BindInt64(3, slots);
    s->BindText(4, provenance_json);
    s->BindInt64(5, now_ms);
    s->BindInt64(6, now_ms);
    s->BindText(7, identity.key_sha256);
    s->BindText(8, identity.principal);
    return s->Run();
  });
}

absl::StatusOr<WorkerIdentity> LeaseQueries::GetWorkerIdentity(
    const std::string& worker_id) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->worker_readers->Acquire());
  ASSIGN_OR_RETURN(Statement * s, reader.db()->Cached(kWorkerIdentitySql));
  s->BindText(1, worker_id);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) {
    return absl::NotFoundError(
        absl::StrCat("worker_id: no worker '", worker_id, "' is registered"));
  }
  WorkerIdentity w{s->ColumnText(0), s->ColumnText(1)};
  s->Reset();
  return w;
}

absl::StatusOr<LeaseAvailability> LeaseQueries::LeaseNext(
    const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
    LeaseRecord* lease) {
  std::vector<LeaseRecord> leases;
  ASSIGN_OR_RETURN(LeaseAvailability a,
                   LeaseBatch(worker_id, now_ms, lease_ms, 1, &leases));
  if (a == LeaseAvailability::kLeased) *lease = std::move(leases[0]);
  return a;
}

absl::StatusOr<LeaseAvailability> LeaseQueries::LeaseBatch(
    const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
    int max_trials, std::vector<LeaseRecord>* leases, const LeaseSizer& sizer,
    bool resend_held) {
  LeaseAvailability a = LeaseAvailability::kNoWork;
  RETURN_IF_ERROR(core_->WriteWithEvents([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(
        a, LeaseBatchLocked(worker_id, now_ms, lease_ms, max_trials, leases,
                            sizer, resend_held));
    return absl::OkStatus();
  }));
  return a;
}

absl::Status LeaseQueries::SetLeasing(bool paused, const std::string& reason,
                                      int64_t now_ms, const Actor& actor) {
  if (!actor.admin)
    return absl::PermissionDeniedError(absl::StrCat(
        actor.name.empty() ? "this token" : actor.name, " may not ",
        paused ? "pause" : "resume", " leasing: an admin's alone"));
  if (reason.size() > 200 || !IsValidUtf8(reason))
    return absl::InvalidArgumentError(
        "reason: must be UTF-8, at most 200 bytes");
  return core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    constexpr char kLeasingSql[] =
        "UPDATE leasing SET paused = ?, reason = ?, actor = ?, since_ms = ? "
        "WHERE id = 1";
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kLeasingSql));
    s->BindInt64(1, paused ? 1 : 0);
    s->BindText(2, reason);
    s->BindText(3, actor.name);
    s->BindInt64(4, now_ms);
    RETURN_IF_ERROR(s->Run());
    core_->leasing_paused = paused;
    return absl::OkStatus();
  });
}

absl::StatusOr<LeasingRecord> LeaseQueries::Leasing() {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  ASSIGN_OR_RETURN(
      Statement * s,
      reader.db()->Cached(
          "SELECT paused, reason, actor, since_ms FROM leasing WHERE id = 1"));
  ASSIGN_OR_RETURN(bool row, s->Step());
  LeasingRecord out;
  if (row) {
    out.paused = s->ColumnInt64(0) != 0;
    out.reason = s->ColumnText(1);
    out.actor = s->ColumnText(2);
    out.since_ms = s->ColumnInt64(3);
  }
  s->Reset();
  return out;
}

absl::StatusOr<LeaseAvailability> LeaseQueries::LeaseBatchLocked(
    const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
    int max_trials, std::vector<LeaseRecord>* leases, const LeaseSizer& sizer,
    bool resend_held) {
  leases->clear();
  if (resend_held) {
    RETURN_IF_ERROR(ResendHeldLocked(worker_id, now_ms, lease_ms, leases));
    if (!leases->empty()) return LeaseAvailability::kLeased;
  }
  // Stopped for maintenance (SetLeasing): nothing new, ask again later.
  if (core_->leasing_paused) return LeaseAvailability::kNoWorkNow;
  // Expired leases are requeued by the server's reaper; when nothing is
  // queued we also reap here, so a lost trial never waits for the reaper.
  int64_t sweep_id = 0;
  std::string sweep_name, parameterization;
  for (int pass = 0; pass < 2 && leases->empty(); ++pass) {
    if (pass == 1) {
      ASSIGN_OR_RETURN(int64_t reaped, ExpireLeasesLocked(now_ms));
      if (reaped == 0) break;
    }
    ASSIGN_OR_RETURN(Statement * pick, core_->db->Cached(kNextSweepSql));
    ASSIGN_OR_RETURN(bool have_sweep, pick->Step());
    if (!have_sweep) continue;
    sweep_id = pick->ColumnInt64(0);
    sweep_name = pick->ColumnText(1);
    pick->Reset();  // done with it: no read cursor left open
    ASSIGN_OR_RETURN(Statement * next, core_->db->Cached(kNextQueuedSql));
    next->BindInt64(1, sweep_id);
    ASSIGN_OR_RETURN(bool found, next->Step());
    if (!found) continue;
    parameterization = next->ColumnText(5);
    leases->push_back(LeaseOf(*next, 1, 6));
    next->Reset();
  }
  if (leases->empty()) {
    ASSIGN_OR_RETURN(Statement * any, core_->db->Cached(kAnyRunningSql));
    ASSIGN_OR_RETURN(bool r, any->Step());
    const bool running = r && any->ColumnInt64(0) != 0;
    return running ? LeaseAvailability::kNoWorkNow : LeaseAvailability::kNoWork;
  }
  if (sizer && max_trials > 1)
    max_trials = std::clamp(sizer(leases->front()), 1, max_trials);
  if (max_trials > 1) {
    RETURN_IF_ERROR(
        AddCompanionsLocked(sweep_id, parameterization, max_trials, leases));
  }
  RETURN_IF_ERROR(
      StartLeasesLocked(worker_id, now_ms, lease_ms, sweep_name, leases));
  return LeaseAvailability::kLeased;
}

// Up to max_trials - 1 more queued trials of the sweep and
// parameterization of the first lease, in queue order: trials one worker
// trains in one stacked batch.
absl::Status LeaseQueries::AddCompanionsLocked(
    int64_t sweep_id, const std::string& parameterization, int max_trials,
    std::vector<LeaseRecord>* leases) {
  constexpr char kCompanionsSql[] =
      "SELECT t.trial_id, t.attempts, t.config_json, t.checkpoint, "
      "t.checkpoint_step, t.axes_pb, g.training_pb "
      "FROM trials t LEFT JOIN trainings g ON g.training_id = t.training_id "
      "WHERE t.sweep_id = ? AND t.state = 'queued' AND "
      "t.parameterization = ? AND t.trial_id != ? "
      "ORDER BY t.queue_rank, t.ordinal LIMIT ?";
  ASSIGN_OR_RETURN(Statement * more, core_->db->Cached(kCompanionsSql));
  more->BindInt64(1, sweep_id);
  more->BindText(2, parameterization);
  more->BindText(3, (*leases)[0].trial_id);
  more->BindInt64(4, max_trials - 1);
  while (true) {
    ASSIGN_OR_RETURN(bool row, more->Step());
    if (!row) return absl::OkStatus();
    leases->push_back(LeaseOf(*more, 1, 5));
  }
}

// Marks each lease's trial running under `worker_id` until now + lease_ms,
// records its attempt, and queues its leased event.
absl::Status LeaseQueries::StartLeasesLocked(const std::string& worker_id,
                                             int64_t now_ms, int64_t lease_ms,
                                             const std::string& sweep_name,
                                             std::vector<LeaseRecord>* leases) {
  for (LeaseRecord& l : *leases) {
    l.sweep_name = sweep_name;
    l.expires_ms = now_ms + lease_ms;
    ASSIGN_OR_RETURN(Statement * start, core_->db->Cached(kStartLeaseSql));
    start->BindText(1, worker_id);
    start->BindInt64(2, l.expires_ms);
    start->BindInt64(3, now_ms);
    start->BindText(4, l.trial_id);
    RETURN_IF_ERROR(start->Run());
    ASSIGN_OR_RETURN(Statement * att, core_->db->Cached(kInsertAttemptSql));
    att->BindText(1, l.trial_id);
    att->BindInt64(2, l.attempt);
    att->BindText(3, worker_id);
    att->BindInt64(4, now_ms);
    att->BindInt64(5, l.checkpoint_step);
    RETURN_IF_ERROR(att->Run());
    if (core_->event_sink) {
      TrialEvent e;
      e.kind = TrialEvent::Kind::kLeased;
      e.trial_id = l.trial_id;
      e.sweep_name = l.sweep_name;
      e.attempt = l.attempt;
      e.worker_id = worker_id;
      e.state = kRunning;
      core_->events.push_back(std::move(e));
    }
  }
  return absl::OkStatus();
}

absl::Status LeaseQueries::ResendHeldLocked(const std::string& worker_id,
                                            int64_t now_ms, int64_t lease_ms,
                                            std::vector<LeaseRecord>* leases) {
  constexpr char kHeldSql[] =
      "SELECT t.trial_id, t.attempts, t.config_json, t.checkpoint, "
      "t.checkpoint_step, t.axes_pb, g.training_pb, s.name "
      "FROM trials t JOIN sweeps s USING (sweep_id) "
      "LEFT JOIN trainings g ON g.training_id = t.training_id "
      "WHERE t.state = 'running' AND t.lease_expires_ms >= ? AND "
      "t.lease_worker = ? ORDER BY t.queue_rank, t.ordinal LIMIT ?";
  ASSIGN_OR_RETURN(Statement * held, core_->db->Cached(kHeldSql));
  held->BindInt64(1, now_ms);
  held->BindText(2, worker_id);
  held->BindInt64(3, limits::kMaxLeaseTrials);
  while (true) {
    ASSIGN_OR_RETURN(bool row, held->Step());
    if (!row) break;
    LeaseRecord l = LeaseOf(*held, 0, 5);
    l.sweep_name = held->ColumnText(7);
    l.expires_ms = now_ms + lease_ms;
    leases->push_back(std::move(l));
  }
  for (const LeaseRecord& l : *leases) {
    ASSIGN_OR_RETURN(Statement * renew, core_->db->Cached(kRenewSql));
    renew->BindInt64(1, l.expires_ms);
    renew->BindInt64(2, 0);
    renew->BindInt64(3, now_ms);
    renew->BindText(4, l.trial_id);
    RETURN_IF_ERROR(renew->Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> LeaseQueries::ExtendRunningLeases(int64_t until_ms) {
  int64_t n = 0;
  RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    constexpr char kExtendSql[] =
        "UPDATE trials SET lease_expires_ms = ? "
        "WHERE state = 'running' AND lease_expires_ms < ?";
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kExtendSql));
    s->BindInt64(1, until_ms);
    s->BindInt64(2, until_ms);
    RETURN_IF_ERROR(s->Run());
    n = core_->db->Changes();
    return absl::OkStatus();
  }));
  return n;
}

absl::Status StoreCore::CheckLease(const std::string& worker_id,
                                   const std::string& trial_id, int attempt,
                                   int64_t now_ms) {
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kLeaseStateSql));
  s->BindText(1, trial_id);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
  const std::string state = s->ColumnText(0);
  const int current = static_cast<int>(s->ColumnInt64(1));
  const int64_t expires = s->ColumnIsNull(2) ? 0 : s->ColumnInt64(2);
  const std::string holder = s->ColumnText(3);
  s->Reset();
  if (state == kRunning && attempt == current && holder != worker_id) {
    return absl::PermissionDeniedError(
        absl::StrCat("trial ", trial_id, ": attempt ", attempt,
                     " is leased to another worker, not to ", worker_id));
  }
  if (attempt != current) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", trial_id, ": attempt ", attempt,
                     " is superseded by attempt ", current));
  }
  if (state != kRunning) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", trial_id, ": attempt ", attempt,
                     " holds no lease (trial is ", state, ")"));
  }
  if (expires < now_ms) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", trial_id, ": lease of attempt ", attempt,
                     " expired ", now_ms - expires, " ms ago"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> LeaseQueries::Heartbeat(const std::string& worker_id,
                                             const std::string& trial_id,
                                             int attempt, int64_t step,
                                             int64_t now_ms, int64_t lease_ms,
                                             int64_t* expires_ms) {
  bool renewed = false;
  RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    renewed = false;
    absl::Status lease =
        core_->CheckLease(worker_id, trial_id, attempt, now_ms);
    if (absl::IsFailedPrecondition(lease) || absl::IsNotFound(lease))
      return absl::OkStatus();
    RETURN_IF_ERROR(lease);
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kRenewSql));
    *expires_ms = now_ms + lease_ms;
    s->BindInt64(1, *expires_ms);
    s->BindInt64(2, step);
    s->BindInt64(3, now_ms);
    s->BindText(4, trial_id);
    RETURN_IF_ERROR(s->Run());
    renewed = true;
    return absl::OkStatus();
  }));
  return renewed;
}

namespace {

// Shared by FailTrial and ExpireLeases: ends `attempt` with attempt_state and
// puts the trial back in the queue or fails it.
absl::StatusOr<std::string> EndAttemptAndRequeue(
    Database* db, const std::string& trial_id, int attempt,
    const char* attempt_state, const std::string& reason, bool preempted,
    const std::string& checkpoint, int64_t checkpoint_step, int64_t now_ms,
    bool permanent = false) {
  ASSIGN_OR_RETURN(Statement * f, db->Cached(kFailuresSql));
  f->BindText(1, trial_id);
  ASSIGN_OR_RETURN(bool row, f->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
  const int failures = static_cast<int>(f->ColumnInt64(0));
  const int max_attempts = static_cast<int>(f->ColumnInt64(1));
  f->Reset();
  std::string new_state;
  int add_failure = 0;
  int rank = 0;
  if (preempted) {
    new_state = kQueued;
    rank = -1;  // front of the queue
  } else {
    add_failure = 1;
    new_state = permanent || failures + 1 >= max_attempts ? kFailed : kQueued;
  }
  ASSIGN_OR_RETURN(Statement * q, db->Cached(kRequeueSql));
  q->BindText(1, new_state);
  q->BindInt64(2, add_failure);
  q->BindInt64(3, rank);
  if (checkpoint.empty()) {
    q->BindNull(4);
  } else {
    q->BindBlob(4, checkpoint);
  }
  q->BindInt64(5, checkpoint.empty() ? 0 : checkpoint_step);
  q->BindInt64(6, now_ms);
  q->BindText(7, trial_id);
  RETURN_IF_ERROR(q->Run());
  ASSIGN_OR_RETURN(Statement * a, db->Cached(kEndAttemptKeepProvenanceSql));
  a->BindText(1, attempt_state);
  a->BindInt64(2, now_ms);
  a->BindText(3, reason);
  a->BindText(4, trial_id);
  a->BindInt64(5, attempt);
  RETURN_IF_ERROR(a->Run());
  return new_state;
}

}  // namespace

absl::StatusOr<std::string> LeaseQueries::FailTrial(
    const std::string& worker_id, const std::string& trial_id, int attempt,
    const std::string& reason, bool preempted, const std::string& checkpoint,
    int64_t checkpoint_step, int64_t now_ms, bool permanent) {
  std::string state;
  RETURN_IF_ERROR(core_->WriteWithEvents([&]() -> absl::Status {
    core_->mu.AssertHeld();
    if (absl::Status lease =
            core_->CheckLease(worker_id, trial_id, attempt, now_ms);
        !lease.ok()) {
      // A repeated call (its first reply lost) is answered as before.
      if (!absl::IsFailedPrecondition(lease)) return lease;
      ASSIGN_OR_RETURN(const bool repeated,
                       core_->EndedByLocked(worker_id, trial_id, attempt,
                                            preempted ? kPreempted : kFailed));
      if (!repeated) return lease;
      ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kLeaseStateSql));
      s->BindText(1, trial_id);
      ASSIGN_OR_RETURN(bool row, s->Step());
      state = row ? s->ColumnText(0) : "";
      s->Reset();
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        state, EndAttemptAndRequeue(core_->db.get(), trial_id, attempt,
                                    preempted ? kPreempted : kFailed, reason,
                                    preempted, checkpoint, checkpoint_step,
                                    now_ms, permanent));
    RETURN_IF_ERROR(core_->RecordEndLocked(
        preempted ? TrialEvent::Kind::kPreempted : TrialEvent::Kind::kFailed,
        trial_id, attempt, worker_id, state, reason, now_ms));
    if (state == kFailed)
      RETURN_IF_ERROR(core_->AfterTrialsEndedLocked({trial_id}, now_ms));
    return absl::OkStatus();
  }));
  return state;
}

absl::StatusOr<int64_t> LeaseQueries::ExpireLeases(int64_t now_ms) {
  int64_t n = 0;
  RETURN_IF_ERROR(core_->WriteWithEvents([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(n, ExpireLeasesLocked(now_ms));
    // Throughput buckets older than an hour (docs/schema.md, sweep_ended).
    constexpr char kPruneEndedSql[] =
        "DELETE FROM sweep_ended WHERE bucket < ?";
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kPruneEndedSql));
    s->BindInt64(1, now_ms / 10000 - 360);
    return s->Run();
  }));
  return n;
}

absl::StatusOr<int64_t> LeaseQueries::ExpireLeasesLocked(int64_t now_ms) {
  struct Expired {
    std::string trial_id;
    int attempt;
    std::string worker_id;
  };
  std::vector<Expired> expired;
  {
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kExpiredSql));
    s->BindInt64(1, now_ms);
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      expired.push_back({s->ColumnText(0), static_cast<int>(s->ColumnInt64(1)),
                         s->ColumnText(2)});
    }
  }
  std::vector<std::string> failed;  // budget spent: their sweeps may grow
  constexpr char kReason[] = "lease expired without heartbeat";
  for (const Expired& e : expired) {
    ASSIGN_OR_RETURN(
        const std::string state,
        EndAttemptAndRequeue(core_->db.get(), e.trial_id, e.attempt, "lost",
                             kReason, false, "", 0, now_ms));
    RETURN_IF_ERROR(core_->RecordEndLocked(TrialEvent::Kind::kExpired,
                                           e.trial_id, e.attempt, e.worker_id,
                                           state, kReason, now_ms));
    if (state == kFailed) failed.push_back(e.trial_id);
  }
  RETURN_IF_ERROR(core_->AfterTrialsEndedLocked(failed, now_ms));
  return static_cast<int64_t>(expired.size());
}

absl::StatusOr<bool> LeaseQueries::AllIdle() {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  ASSIGN_OR_RETURN(Statement * s, reader.db()->Cached(kAnyActiveSql));
  ASSIGN_OR_RETURN(bool row, s->Step());
  return !(row && s->ColumnInt64(0) != 0);
}

}  // namespace qkov::storage
