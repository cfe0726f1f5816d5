#!/usr/bin/env python3
"""What the key of attempts/results/artifacts costs the store's writer.

Runs the rows one completed synthetic trial writes (an attempt inserted and
ended, 17 results, one heatmap artifact) for 8,000 trials in batches of 8,
one commit per batch, after 30,000 trials already stored, on a WAL database
with synchronous=NORMAL (the server's settings), with Python's sqlite3 (the
same SQLite library the server links). Prints microseconds per trial and the
WAL size, for the key layouts:

  hash     trial_id TEXT, a 16-hex-digit hash (the schema today)
  seqtext  trial_id TEXT that sorts in grid order
  int      an integer that follows grid order (a trial rowid)
  rowid    the hash key, but rowid tables with a UNIQUE (trial_id, ...) index

Usage: bench/sqlite_key_locality.py [layout ...]   (default: all four)
"""
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

PRIOR, MEASURED, BATCH = 30000, 8000, 8


def run(layout):
    tmp = tempfile.mkdtemp(prefix="qkov-locality-")
    path = os.path.join(tmp, "b.db")
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = NORMAL")
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
    n = PRIOR + MEASURED
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
                      [(t, "m%02d" % k) for k in range(17)])
        c.execute("UPDATE attempts SET state = 'done', ended_ms = 2, "
                  "provenance_json = ? WHERE trial_id = ? AND attempt = 1",
                  ("p" * 217, t))
        c.execute("INSERT INTO artifacts VALUES (?, 'dtap', ?)", (t, "a" * 231))

    c.execute("BEGIN")
    for t in ids[:PRIOR]:
        complete(t)
    c.execute("COMMIT")
    t0 = time.perf_counter()
    for b in range(PRIOR, n, BATCH):
        c.execute("BEGIN IMMEDIATE")
        for t in ids[b:b + BATCH]:
            complete(t)
        c.execute("COMMIT")
    us = (time.perf_counter() - t0) / MEASURED * 1e6
    wal = os.path.getsize(path + "-wal") / 1e6
    print(f"{layout:8s} {us:6.1f} us per trial, WAL {wal:.0f} MB")
    c.close()
    shutil.rmtree(tmp)


for layout in sys.argv[1:] or ["hash", "seqtext", "int", "rowid"]:
    run(layout)
