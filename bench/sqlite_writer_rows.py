#!/usr/bin/env python3
"""What the rows of one trial cost the store's writer, in plain SQLite.

Uses Python's sqlite3 (the same SQLite library the server links) on a WAL
database with synchronous=NORMAL, the server's settings. Two parts:

  statements  each statement the store runs per trial, timed over 3,000
              trials of a 100,000-trial table shaped like `trials` (1.1 KB
              rows, the same four indexes), inside one transaction:
              microseconds per statement (Python's call overhead included,
              ~1 us each).
  locality    the rows of one completed trial (an attempt inserted and
              ended, 17 results, a heatmap artifact) for 8,000 trials in
              batches of 8, one commit per batch, after 30,000 stored, for
              four key layouts of attempts/results/artifacts:
                hash     trial_id TEXT, a 16-hex-digit hash (the older id form)
                seqtext  trial_id TEXT that sorts in grid order (ids today)
                int      an integer that follows grid order
                rowid    the hash key in rowid tables with a UNIQUE index

  constraints the 17-result INSERT of one trial (one statement, ids in grid
              order, commits of 64 trials, 20,000 trials), with and
              without the foreign key to trials and the ON CONFLICT clause:
              microseconds per trial, best of 2

Usage: bench/sqlite_writer_rows.py [statements] [locality] [constraints]
       (default: all three)
"""
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

TRIALS_SCHEMA = """
CREATE TABLE trials (
  trial_id TEXT PRIMARY KEY, sweep_id INTEGER NOT NULL, ordinal INTEGER NOT NULL,
  config_json TEXT NOT NULL, config_hash TEXT NOT NULL,
  parameterization TEXT NOT NULL, lr_ratio REAL NOT NULL, eta_ov REAL NOT NULL,
  seed INTEGER NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0, queue_rank INTEGER NOT NULL DEFAULT 0,
  lease_worker TEXT, lease_expires_ms INTEGER, last_step INTEGER NOT NULL DEFAULT 0,
  checkpoint BLOB, checkpoint_step INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL, axes_pb BLOB,
  training_id INTEGER, UNIQUE (sweep_id, config_hash));
CREATE INDEX trials_by_queue ON trials (sweep_id, state, queue_rank, ordinal);
CREATE INDEX trials_by_lease ON trials (state, lease_expires_ms);
CREATE INDEX trials_by_sweep ON trials (sweep_id, ordinal);
CREATE INDEX trials_by_update ON trials (sweep_id, updated_ms);
CREATE TABLE attempts (trial_id TEXT NOT NULL, attempt INTEGER NOT NULL,
  worker_id TEXT NOT NULL, state TEXT NOT NULL, started_ms INTEGER NOT NULL,
  start_step INTEGER NOT NULL DEFAULT 0, ended_ms INTEGER,
  error TEXT NOT NULL DEFAULT '', provenance_json TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (trial_id, attempt)) WITHOUT ROWID;
CREATE TABLE results (trial_id TEXT NOT NULL, name TEXT NOT NULL, value REAL,
  attempt INTEGER NOT NULL, PRIMARY KEY (trial_id, name)) WITHOUT ROWID;
CREATE TABLE artifacts (trial_id TEXT NOT NULL, name TEXT NOT NULL,
  kind TEXT NOT NULL, content TEXT NOT NULL, attempt INTEGER NOT NULL,
  PRIMARY KEY (trial_id, name)) WITHOUT ROWID;
"""
NAMES = ["m%02d" % k for k in range(17)]


def connect():
    tmp = tempfile.mkdtemp(prefix="qkov-writer-rows-")
    c = sqlite3.connect(os.path.join(tmp, "b.db"), isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = NORMAL")
    return tmp, c


def statements():
    tmp, c = connect()
    c.executescript(TRIALS_SCHEMA)
    rng = random.Random(1)
    ids = ["%016x" % rng.getrandbits(64) for _ in range(100000)]
    c.execute("BEGIN")
    c.executemany(
        "INSERT INTO trials (trial_id, sweep_id, ordinal, config_json, "
        "config_hash, parameterization, lr_ratio, eta_ov, seed, state, "
        "created_ms, updated_ms, axes_pb) VALUES (?, 1, ?, ?, ?, 'FAFO', 1, "
        "0.1, ?, 'queued', 1, 1, ?)",
        [(t, i, "x" * 717, t, i, b"y" * 30) for i, t in enumerate(ids)])
    c.execute("COMMIT")
    n = 3000
    many = ("INSERT INTO results (trial_id, name, value, attempt) VALUES " +
            ", ".join(["(?1, ?%d, ?%d, ?2)" % (2 * i + 3, 2 * i + 4)
                       for i in range(17)]) +
            " ON CONFLICT (trial_id, name) DO UPDATE SET value = "
            "excluded.value, attempt = excluded.attempt")
    steps = [
        ("fencing check (SELECT by trial_id)",
         lambda t: c.execute("SELECT state, attempts, lease_expires_ms FROM "
                             "trials WHERE trial_id = ?", (t,)).fetchone()),
        ("UPDATE trials: start the lease",
         lambda t: c.execute("UPDATE trials SET state = 'running', attempts = "
                             "attempts + 1, lease_worker = 'w', "
                             "lease_expires_ms = 5, updated_ms = 5 WHERE "
                             "trial_id = ?", (t,))),
        ("INSERT attempts",
         lambda t: c.execute("INSERT INTO attempts (trial_id, attempt, "
                             "worker_id, state, started_ms) VALUES (?, 1, "
                             "'w', 'running', 5)", (t,))),
        ("17 results, one statement",
         lambda t: c.execute(many, [t, 1] + [v for nm in NAMES
                                             for v in (nm, 0.5)])),
        ("INSERT artifacts (heatmap JSON)",
         lambda t: c.execute("INSERT INTO artifacts VALUES (?, 'dtap', "
                             "'heatmap', ?, 1)", (t, "a" * 231))),
        ("UPDATE attempts: end, provenance",
         lambda t: c.execute("UPDATE attempts SET state = 'done', ended_ms = "
                             "6, provenance_json = ? WHERE trial_id = ? AND "
                             "attempt = 1", ("p" * 217, t))),
        ("UPDATE trials: end the lease",
         lambda t: c.execute("UPDATE trials SET state = 'done', lease_worker "
                             "= NULL, lease_expires_ms = NULL, updated_ms = 7 "
                             "WHERE trial_id = ?", (t,))),
    ]
    total = 0
    for name, fn in steps:
        c.execute("BEGIN IMMEDIATE")
        t0 = time.perf_counter()
        for t in ids[:n]:
            fn(t)
        us = (time.perf_counter() - t0) / n * 1e6
        c.execute("COMMIT")
        total += us
        print(f"  {name:36s} {us:6.1f} us")
    print(f"  {'per trial':36s} {total:6.1f} us")
    c.close()
    shutil.rmtree(tmp)


def locality(layout):
    tmp, c = connect()
    key = "trial_id INTEGER" if layout == "int" else "trial_id TEXT"
    if layout == "rowid":
        tail = ["UNIQUE (trial_id, name))", "UNIQUE (trial_id, attempt))",
                "UNIQUE (trial_id, name))"]
    else:
        tail = ["PRIMARY KEY (trial_id, name)) WITHOUT ROWID",
                "PRIMARY KEY (trial_id, attempt)) WITHOUT ROWID",
                "PRIMARY KEY (trial_id, name)) WITHOUT ROWID"]
    c.execute(f"CREATE TABLE results ({key} NOT NULL, name TEXT NOT NULL, "
              f"value REAL, attempt INTEGER NOT NULL, {tail[0]}")
    c.execute(f"CREATE TABLE attempts ({key} NOT NULL, attempt INTEGER NOT "
              "NULL, worker_id TEXT, state TEXT, started_ms INTEGER, "
              f"ended_ms INTEGER, provenance_json TEXT, {tail[1]}")
    c.execute(f"CREATE TABLE artifacts ({key} NOT NULL, name TEXT NOT NULL, "
              f"content TEXT, {tail[2]}")
    prior, measured, batch = 30000, 8000, 8
    n = prior + measured
    if layout in ("hash", "rowid"):
        rng = random.Random(1)
        ids = ["%016x" % rng.getrandbits(64) for _ in range(n)]
    elif layout == "seqtext":
        ids = ["%016d" % i for i in range(n)]
    else:
        ids = list(range(n))

    def complete(t):
        c.execute("INSERT INTO attempts VALUES (?, 1, 'w', 'running', 1, "
                  "NULL, '{}')", (t,))
        c.executemany("INSERT INTO results VALUES (?, ?, 0.5, 1)",
                      [(t, nm) for nm in NAMES])
        c.execute("UPDATE attempts SET state = 'done', ended_ms = 2, "
                  "provenance_json = ? WHERE trial_id = ? AND attempt = 1",
                  ("p" * 217, t))
        c.execute("INSERT INTO artifacts VALUES (?, 'dtap', ?)", (t, "a" * 231))

    c.execute("BEGIN")
    for t in ids[:prior]:
        complete(t)
    c.execute("COMMIT")
    t0 = time.perf_counter()
    for b in range(prior, n, batch):
        c.execute("BEGIN IMMEDIATE")
        for t in ids[b:b + batch]:
            complete(t)
        c.execute("COMMIT")
    us = (time.perf_counter() - t0) / measured * 1e6
    wal = os.path.getsize(os.path.join(tmp, "b.db-wal")) / 1e6
    print(f"  {layout:8s} {us:6.1f} us per trial, WAL {wal:.0f} MB")
    c.close()
    shutil.rmtree(tmp)


def constraints(fk, upsert, n=20000):
    tmp, c = connect()
    c.execute(f"PRAGMA foreign_keys = {'ON' if fk else 'OFF'}")
    c.execute("CREATE TABLE trials (trial_id TEXT PRIMARY KEY, x TEXT)")
    c.execute("CREATE TABLE results (trial_id TEXT NOT NULL REFERENCES "
              "trials(trial_id), name TEXT NOT NULL, value REAL, attempt "
              "INTEGER NOT NULL, PRIMARY KEY (trial_id, name)) WITHOUT ROWID")
    ids = ["1-%08d" % i for i in range(n)]
    c.execute("BEGIN")
    c.executemany("INSERT INTO trials VALUES (?, ?)",
                  [(t, "x" * 700) for t in ids])
    c.execute("COMMIT")
    sql = ("INSERT INTO results (trial_id, attempt, name, value) VALUES " +
           ", ".join("(?1, ?2, ?%d, ?%d)" % (2 * i + 3, 2 * i + 4)
                     for i in range(17)))
    if upsert:
        sql += (" ON CONFLICT (trial_id, name) DO UPDATE SET value = "
                "excluded.value, attempt = excluded.attempt")
    t0 = time.perf_counter()
    for b in range(0, n, 64):
        c.execute("BEGIN IMMEDIATE")
        for t in ids[b:b + 64]:
            c.execute(sql, [t, 1] + [v for nm in NAMES for v in (nm, 0.5)])
        c.execute("COMMIT")
    us = (time.perf_counter() - t0) / n * 1e6
    c.close()
    shutil.rmtree(tmp)
    return us


parts = sys.argv[1:] or ["statements", "locality", "constraints"]
if "statements" in parts:
    print("statements (per trial, 100,000-trial table):")
    statements()
if "locality" in parts:
    print("locality (attempt + 17 results + artifact, batches of 8):")
    for layout in ["hash", "seqtext", "int", "rowid"]:
        locality(layout)
if "constraints" in parts:
    print("constraints (17 results of one trial, one INSERT):")
    for fk in (True, False):
        for upsert in (True, False):
            best = min(constraints(fk, upsert) for _ in range(2))
            print(f"  foreign key {'on ' if fk else 'off'}  ON CONFLICT "
                  f"{'yes' if upsert else 'no '}  {best:5.1f} us per trial")
