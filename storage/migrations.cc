#include "storage/migrations.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::storage {
namespace {

// Migration 1: the initial schema. Times are Unix milliseconds (UTC).
constexpr char kMigration1[] = R"sql(
CREATE TABLE sweeps (
  sweep_id     INTEGER PRIMARY KEY,
  name         TEXT NOT NULL UNIQUE,
  description  TEXT NOT NULL DEFAULT '',
  spec_json    TEXT NOT NULL,
  priority     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  cancelled    INTEGER NOT NULL DEFAULT 0,
  paused       INTEGER NOT NULL DEFAULT 0,
  created_ms   INTEGER NOT NULL,
  updated_ms   INTEGER NOT NULL
);
CREATE TABLE trials (
  trial_id         TEXT PRIMARY KEY,
  sweep_id         INTEGER NOT NULL REFERENCES sweeps(sweep_id),
  ordinal          INTEGER NOT NULL,
  config_json      TEXT NOT NULL,
  config_hash      TEXT NOT NULL,
  parameterization TEXT NOT NULL,
  lr_ratio         REAL NOT NULL,
  eta_ov           REAL NOT NULL,
  seed             INTEGER NOT NULL,
  state            TEXT NOT NULL CHECK (state IN
                     ('queued','running','done','failed','diverged','preempted','cancelled')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  failures         INTEGER NOT NULL DEFAULT 0,
  queue_rank       INTEGER NOT NULL DEFAULT 0,
  lease_worker     TEXT,
  lease_expires_ms INTEGER,
  last_step        INTEGER NOT NULL DEFAULT 0,
  checkpoint       BLOB,
  checkpoint_step  INTEGER NOT NULL DEFAULT 0,
  created_ms       INTEGER NOT NULL,
  updated_ms       INTEGER NOT NULL,
  UNIQUE (sweep_id, config_hash)
);
CREATE INDEX trials_by_queue ON trials (sweep_id, state, queue_rank, ordinal);
CREATE INDEX trials_by_lease ON trials (state, lease_expires_ms);
CREATE INDEX trials_by_sweep ON trials (sweep_id, ordinal);
CREATE INDEX trials_by_update ON trials (sweep_id, updated_ms);
CREATE TABLE attempts (
  trial_id        TEXT NOT NULL REFERENCES trials(trial_id),
  attempt         INTEGER NOT NULL,
  worker_id       TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN
                    ('running','done','diverged','failed','lost','preempted','cancelled')),
  started_ms      INTEGER NOT NULL,
  start_step      INTEGER NOT NULL DEFAULT 0,
  ended_ms        INTEGER,
  error           TEXT NOT NULL DEFAULT '',
  provenance_json TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (trial_id, attempt)
) WITHOUT ROWID;
CREATE TABLE metrics (
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  attempt  INTEGER NOT NULL,
  name     TEXT NOT NULL,
  step     INTEGER NOT NULL,
  value    REAL,
  PRIMARY KEY (trial_id, attempt, name, step)
) WITHOUT ROWID;
CREATE TABLE results (
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  name     TEXT NOT NULL,
  value    REAL,
  attempt  INTEGER NOT NULL,
  PRIMARY KEY (trial_id, name)
) WITHOUT ROWID;
CREATE TABLE artifacts (
  trial_id TEXT NOT NULL REFERENCES trials(trial_id),
  name     TEXT NOT NULL,
  kind     TEXT NOT NULL,
  content  TEXT NOT NULL,
  attempt  INTEGER NOT NULL,
  PRIMARY KEY (trial_id, name)
) WITHOUT ROWID;
CREATE TABLE workers (
  worker_id       TEXT PRIMARY KEY,
  name            TEXT NOT NULL,
  slots           INTEGER NOT NULL,
  provenance_json TEXT NOT NULL,
  registered_ms   INTEGER NOT NULL,
  last_seen_ms    INTEGER NOT NULL
);
CREATE VIEW trial_results AS
  SELECT s.name AS sweep, t.trial_id, t.parameterization, t.lr_ratio, t.eta_ov, t.seed,
         t.state, r.name AS metric, r.value
  FROM results r JOIN trials t USING (trial_id) JOIN sweeps s USING (sweep_id);
)sql";

// Migration 2: each trial's config also in binary, so that a lease does not
// parse JSON: the axes per trial (a few dozen bytes), the training part once
// per distinct value. NULL for trials stored by schema 1; config_json stays
// the record researchers query.
constexpr char kMigration2[] = R"sql(
CREATE TABLE trainings (
  training_id INTEGER PRIMARY KEY,
  training_pb BLOB NOT NULL UNIQUE
);
ALTER TABLE trials ADD COLUMN axes_pb BLOB;
ALTER TABLE trials ADD COLUMN training_id INTEGER REFERENCES trainings(training_id);
)sql";

// Migration 3: who did what. A sweep's owner (the name of the token that
// submitted it; '' when the server ran without tokens, and for sweeps stored
// by schema 1 or 2), and each worker's identity: the SHA-256 of the key the
// server gave it at registration, and its token's name. Workers registered
// under schema 1 or 2 have no key and must register again.
constexpr char kMigration3[] = R"sql(
ALTER TABLE sweeps ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN key_sha256 TEXT;
ALTER TABLE workers ADD COLUMN principal TEXT NOT NULL DEFAULT '';
)sql";

// Migration 4: attempts by end time, so a sweep's throughput (trials ended
// in the last 10 minutes) reads those attempts only, not the whole sweep.
constexpr char kMigration4[] = R"sql(
CREATE INDEX attempts_by_end ON attempts (ended_ms);
)sql";

// Migration 5: each sweep's trial counts by state, and its trials ended in
// 10-second buckets, kept by triggers in the same transaction as every
// change to trials, so that a sweep's progress (GetSweep, read on every
// dashboard event and `qkov watch` tick) reads a handful of rows, not an
// index scan of the whole sweep. Every sweep has a row for each state from
// its creation, so a trial's change is two UPDATEs by primary key, the
// cheapest form for the writer (docs/PERFORMANCE.md has their cost). New
// trials are counted by SubmitSweep, the one statement that inserts them,
// with one UPDATE per submission rather than a trigger per inserted row.
// ExpireLeases drops buckets older than an hour; throughput reads the last
// 10 minutes. The index of migration 4 served the count these buckets
// replace; no query uses it any more.
constexpr char kMigration5[] = R"sql(
DROP INDEX attempts_by_end;
CREATE TABLE sweep_counts (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(sweep_id),
  state    TEXT NOT NULL,
  n        INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, state)
) WITHOUT ROWID;
CREATE TABLE trial_states (state TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO trial_states VALUES ('queued'), ('running'), ('done'), ('failed'),
  ('diverged'), ('preempted'), ('cancelled');
INSERT INTO sweep_counts (sweep_id, state, n)
  SELECT s.sweep_id, k.state,
         (SELECT COUNT(*) FROM trials t
          WHERE t.sweep_id = s.sweep_id AND t.state = k.state)
  FROM sweeps s, trial_states k;
CREATE TRIGGER sweeps_counted AFTER INSERT ON sweeps BEGIN
  INSERT INTO sweep_counts (sweep_id, state, n)
    SELECT NEW.sweep_id, state, 0 FROM trial_states;
END;
CREATE TRIGGER trials_counted_update AFTER UPDATE OF state ON trials
  WHEN OLD.state <> NEW.state BEGIN
  UPDATE sweep_counts SET n = n - 1
    WHERE sweep_id = OLD.sweep_id AND state = OLD.state;
  UPDATE sweep_counts SET n = n + 1
    WHERE sweep_id = NEW.sweep_id AND state = NEW.state;
END;
CREATE TRIGGER trials_counted_delete AFTER DELETE ON trials BEGIN
  UPDATE sweep_counts SET n = n - 1
    WHERE sweep_id = OLD.sweep_id AND state = OLD.state;
END;
CREATE TABLE sweep_ended (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(sweep_id),
  bucket   INTEGER NOT NULL,  -- updated_ms / 10000 of the trial's end
  n        INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, bucket)
) WITHOUT ROWID;
INSERT INTO sweep_ended (sweep_id, bucket, n)
  SELECT sweep_id, updated_ms / 10000, COUNT(*) FROM trials
  WHERE state IN ('done', 'diverged', 'failed')
    AND updated_ms >= (SELECT COALESCE(MAX(updated_ms), 0) FROM trials) - 3600000
  GROUP BY 1, 2;
CREATE TRIGGER trials_ended AFTER UPDATE OF state ON trials
  WHEN NEW.state IN ('done', 'diverged', 'failed') AND OLD.state <> NEW.state
  BEGIN
  INSERT OR IGNORE INTO sweep_ended (sweep_id, bucket, n)
    VALUES (NEW.sweep_id, NEW.updated_ms / 10000, 0);
  UPDATE sweep_ended SET n = n + 1
    WHERE sweep_id = NEW.sweep_id AND bucket = NEW.updated_ms / 10000;
END;
)sql";

// Migration 6: adaptive sweeps. `adaptive` marks a sweep that adds trials
// from its own results (SearchQueries::SetFollowUp); `searches` holds, per
// sweep and combination of its other axes (grp), a ratio search's state and
// outcome (qkov.v1.SearchOutcome as JSON), rewritten in the transaction that
// ends each of the sweep's trials.
constexpr char kMigration6[] = R"sql(
ALTER TABLE sweeps ADD COLUMN adaptive INTEGER NOT NULL DEFAULT 0;
CREATE TABLE searches (
  sweep_id     INTEGER NOT NULL REFERENCES sweeps(sweep_id),
  grp          TEXT NOT NULL,
  state        TEXT NOT NULL,
  outcome_json TEXT NOT NULL,
  updated_ms   INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, grp)
) WITHOUT ROWID;
)sql";

// Migration 7: the trial state stopped_early (ended by a sweep's
// early-stopping rule), in trials and attempts. Their CHECK lists of states
// are widened in place by WidenStateChecks below (SQLite's documented
// procedure for loosening a CHECK constraint, lang_altertable.html section
// 7: edit the table's SQL in sqlite_schema under writable_schema and bump
// schema_version; every stored row satisfies the wider list); this part
// adds the state to the counts of migration 5.
constexpr char kMigration7[] = R"sql(
INSERT INTO trial_states VALUES ('stopped_early');
INSERT INTO sweep_counts (sweep_id, state, n)
  SELECT sweep_id, 'stopped_early', 0 FROM sweeps;
)sql";

// Migration 7's CHECK lists: `'cancelled')` closes the list of states in
// both tables' CREATE statements, once each.
absl::Status WidenStateChecks(Database* db) {
  ASSIGN_OR_RETURN(auto version, db->Prepare("PRAGMA schema_version"));
  ASSIGN_OR_RETURN(bool row, version->Step());
  if (!row) return absl::InternalError("PRAGMA schema_version returned no row");
  const int64_t schema_version = version->ColumnInt64(0);
  version.reset();
  RETURN_IF_ERROR(db->Execute("PRAGMA writable_schema = ON"));
  for (const char* table : {"trials", "attempts"}) {
    RETURN_IF_ERROR(db->Execute(absl::StrCat(
        "UPDATE sqlite_schema SET sql = replace(sql, '''cancelled'')', "
        "'''cancelled'',''stopped_early'')') WHERE type = 'table' AND name = '",
        table, "' AND instr(sql, '''stopped_early''') = 0")));
    if (db->Changes() != 1) {
      db->Execute("PRAGMA writable_schema = OFF").IgnoreError();
      return absl::InternalError(
          absl::StrCat("migration 7: the states of table ", table,
                       " are not the list this migration widens"));
    }
  }
  RETURN_IF_ERROR(db->Execute(
      absl::StrCat("PRAGMA schema_version = ", schema_version + 1)));
  return db->Execute("PRAGMA writable_schema = OFF");
}

// Migration 8: each curve's latest point and its running extremes, per
// trial, attempt and name, kept by InsertMetrics in the transaction of every
// report (result_queries.cc), so that a trial's latest values (read by each
// `qkov watch` round and the dashboard) and early stopping's best so far
// read a row per curve instead of searching the history. `value` is the
// point at the highest `step` reported; min_value and max_value the extremes
// of every value reported for the attempt (NaN, stored as NULL, is not a
// value). Filled here from the metrics already stored.
constexpr char kMigration8[] = R"sql(
CREATE TABLE metrics_latest (
  trial_id  TEXT NOT NULL REFERENCES trials(trial_id),
  attempt   INTEGER NOT NULL,
  name      TEXT NOT NULL,
  step      INTEGER NOT NULL,
  value     REAL,
  min_value REAL,
  max_value REAL,
  PRIMARY KEY (trial_id, attempt, name)
) WITHOUT ROWID;
INSERT INTO metrics_latest (trial_id, attempt, name, step, min_value, max_value)
  SELECT trial_id, attempt, name, MAX(step), MIN(value), MAX(value)
  FROM metrics GROUP BY trial_id, attempt, name;
UPDATE metrics_latest SET value =
  (SELECT m.value FROM metrics m WHERE m.trial_id = metrics_latest.trial_id
     AND m.attempt = metrics_latest.attempt AND m.name = metrics_latest.name
     AND m.step = metrics_latest.step);
)sql";

// The server-wide leasing switch (docs/cluster.md, "Stop leasing"): one row;
// while `paused` is 1 no trial of any sweep is leased (held leases go on).
// `reason` and `actor` say why and who; since_ms when it last changed.
constexpr char kMigration9[] = R"sql(
CREATE TABLE leasing (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  paused   INTEGER NOT NULL CHECK (paused IN (0, 1)),
  reason   TEXT NOT NULL DEFAULT '',
  actor    TEXT NOT NULL DEFAULT '',
  since_ms INTEGER NOT NULL
);
INSERT INTO leasing (id, paused, since_ms) VALUES (1, 0, 0);
)sql";

// Deleted sweeps (SweepQueries::DeleteSweep, `qkov delete`): who deleted
// which sweep when, with its trial count. ended_ms is NULL while its rows are
// being deleted (the sweep row stays, cancelled, until the last); a sweep in
// that state refuses every change but the deletion. A sweep id is never
// reused: new sweeps are numbered above every id here (trial ids carry it).
constexpr char kMigration10[] = R"sql(
CREATE TABLE deleted_sweeps (
  sweep_id      INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  owner         TEXT NOT NULL,
  actor         TEXT NOT NULL,
  trials        INTEGER NOT NULL,
  metric_points INTEGER NOT NULL DEFAULT 0,
  started_ms    INTEGER NOT NULL,
  ended_ms      INTEGER
);
)sql";

// A migration: its SQL, and for a change SQL alone cannot make, a step run
// first in the same transaction.
struct Migration {
  const char* sql;
  absl::Status (*before)(Database*) = nullptr;
};

const std::vector<Migration>& Migrations() {
  static const auto* m =
      new std::vector<Migration>{{kMigration1},
                                 {kMigration2},
                                 {kMigration3},
                                 {kMigration4},
                                 {kMigration5},
                                 {kMigration6},
                                 {kMigration7, &WidenStateChecks},
                                 {kMigration8},
                                 {kMigration9},
                                 {kMigration10}};
  return *m;
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

absl::StatusOr<int> SchemaVersion(Database* db) {
  ASSIGN_OR_RETURN(auto stmt, db->Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return absl::InternalError("PRAGMA user_version returned no row");
  return static_cast<int>(stmt->ColumnInt64(0));
}

absl::Status Migrate(Database* db) {
  return MigrateTo(db, LatestSchemaVersion());
}

absl::Status MigrateTo(Database* db, int target) {
  ASSIGN_OR_RETURN(int version, SchemaVersion(db));
  const int latest = LatestSchemaVersion();
  if (target < 0 || target > latest) {
    return absl::InvalidArgumentError(
        absl::StrCat("no schema version ", target, " (latest ", latest, ")"));
  }
  if (version > latest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", version, " is newer than this binary's ",
        latest, "; upgrade qkov-sweep before opening it"));
  }
  for (int v = version + 1; v <= target; ++v) {
    Transaction txn(db);
    RETURN_IF_ERROR(txn.Begin());
    const Migration& m = Migrations()[v - 1];
    if (m.before != nullptr) RETURN_IF_ERROR(m.before(db));
    RETURN_IF_ERROR(db->Execute(m.sql));
    RETURN_IF_ERROR(db->Execute(absl::StrCat("PRAGMA user_version = ", v)));
    RETURN_IF_ERROR(txn.Commit());
  }
  return absl::OkStatus();
}

}  // namespace qkov::storage
