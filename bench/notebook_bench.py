#!/usr/bin/python3
"""The notebook client's two bulk reads against the CSV route, interleaved,
with each read's peak memory against the size of the frame it returns.

    bench/notebook_bench.py [--bin build/bin] [--python build/python]
        [--trials 100000] [--curve_trials 25000] [--points 100] [--rounds 3]
        [--no_csv]

The defaults are the issue's scale: 100,000 trials of results, and 25,000
trials x 4 curves x 100 points = 10 million curve points.

Starts a real qkov-server (a fresh SQLite file in a temporary folder, gRPC on
loopback), submits two synthetic grids and completes every trial over the
worker API as qkov-worker would (in batches of 64, with a synthetic trial's
17 results):
  - "rows": --trials trials;
  - "curves": --curve_trials trials, each with 4 curves of --points points.
Then, --rounds times in turn, it times
  - results():  qkov.Client.results("rows") against `qkov export rows
    --format csv` piped into pandas.read_csv;
  - curves():   qkov.Client.curves("curves") against `qkov export curves
    --per point --format csv` piped into pandas.read_csv;
and prints each round and the medians. Each call runs in a fresh Python
process (`--child`), which reports its time, the frame's size
(DataFrame.memory_usage(deep=True)) and its peak memory: the process's
high-water resident set (VmHWM) less its resident set after the imports and
the connection, i.e. what the read itself held at its peak. It checks that
both routes give the same number of rows; it prints times and never fails
on them (docs/PERFORMANCE.md).
"""

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RESULTS = ["accuracy", "loss", "gold_probability", "separability", "ac",
           "acmc", "comprehensiveness", "sufficiency", "top_k", "steps",
           "converged", "train_loss", "qk_norm", "ov_norm", "qk_balancedness",
           "ov_balancedness", "distinct_attention"]
CURVES = ["train_loss", "distinct_attention", "qk_norm", "ov_norm"]


def wait_file(path, proc, timeout=60):
    deadline = time.time() + timeout
    while not (os.path.exists(path) and open(path).read().strip()):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError("%s never appeared" % path)
        time.sleep(0.05)
    return open(path).read().strip()


def spec(sweep_pb2, name, trials, max_steps):
    s = sweep_pb2.SweepSpec(name=name)
    s.axes.parameterizations.extend([1, 2, 3, 4])
    s.axes.lr_ratios.extend(range(1, 26))
    s.axes.eta_ovs.append(0.01)
    s.axes.seeds.extend(range(max(trials // 100, 1)))
    s.training.max_steps = max_steps
    return s


def populate(address, with_curves, points):
    """Leases and completes every queued trial; returns how many."""
    import grpc
    from qkov.v1 import worker_pb2, worker_pb2_grpc
    stub = worker_pb2_grpc.WorkerServiceStub(grpc.insecure_channel(
        address, [("grpc.max_send_message_length", 256 << 20)]))
    reg = stub.RegisterWorker(worker_pb2.RegisterWorkerRequest(name="bench"))
    nxt = stub.LeaseTrial(worker_pb2.LeaseTrialRequest(
        worker_id=reg.worker_id, worker_key=reg.worker_key, max_trials=64))
    done = 0
    while nxt.outcome == worker_pb2.LeaseTrialResponse.LEASED:
        req = worker_pb2.CompleteTrialsRequest(
            worker_id=reg.worker_id, worker_key=reg.worker_key, lease_next=64)
        for lease in [nxt.lease] + list(nxt.more):
            c = req.trials.add(trial_id=lease.trial_id, attempt=lease.attempt,
                               steps=points * 10)
            for i, m in enumerate(RESULTS):
                c.results[m] = 0.5 + 1e-6 * ((done * 17 + i) % 9973)
            c.provenance.code_version = "bench"
            if with_curves:
                for m in CURVES:
                    for k in range(1, points + 1):
                        c.final_points.add(step=10 * k, name=m,
                                           value=1.0 / k + 1e-7 * done)
            done += 1
        nxt = stub.CompleteTrials(req, timeout=600).next
    return done


def rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child(a):
    """One call in this process: prints a JSON line with seconds, rows,
    frame_bytes and peak_bytes (VmHWM less the resident set before)."""
    sys.path.insert(0, os.path.abspath(a.python))
    import pandas as pd
    import qkov
    client = qkov.connect(a.address, deadline=600, progress=False)
    client.sweeps()  # the channel up before the baseline
    cli = [a.bin + "/qkov", "--server=" + a.address, "--deadline=600"]

    def csv_route(*args):
        out = subprocess.run(cli + list(args), capture_output=True,
                             check=True).stdout
        return pd.read_csv(io.BytesIO(out))

    calls = {
        "results()": lambda: client.results("rows"),
        "results csv": lambda: csv_route("export", "rows", "--format", "csv"),
        "curves()": lambda: client.curves("curves"),
        "curves csv": lambda: csv_route("export", "curves", "--per", "point",
                                        "--format", "csv"),
    }
    base = rss_kib("VmRSS")
    t = time.perf_counter()
    frame = calls[a.child]()
    seconds = time.perf_counter() - t
    peak = (rss_kib("VmHWM") - base) * 1024
    print(json.dumps({"seconds": seconds, "rows": len(frame),
                      "frame_bytes": int(frame.memory_usage(deep=True).sum()),
                      "peak_bytes": peak}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--python", default="build/python")
    ap.add_argument("--trials", type=int, default=100000)
    ap.add_argument("--curve_trials", type=int, default=25000)
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no_csv", action="store_true",
                    help="time the client's reads only")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--address", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a)
    sys.path.insert(0, os.path.abspath(a.python))
    from qkov.v1 import sweep_pb2, sweep_pb2_grpc
    import grpc

    d = tempfile.mkdtemp(prefix="qkov-notebook-bench-")
    log = open(d + "/server.log", "w")
    server = subprocess.Popen(
        [a.bin + "/qkov-server", "--db=%s/bench.db" % d,
         "--listen=127.0.0.1:0", "--port_file=%s/port" % d,
         "--max_trials=%d" % max(a.trials, 200000)],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        address = "127.0.0.1:" + wait_file(d + "/port", server)
        print("notebook_bench: %d result rows; %d trials x %d curves x %d "
              "points; %d rounds; %d cores" % (
                  a.trials, a.curve_trials, len(CURVES), a.points, a.rounds,
                  os.cpu_count()), flush=True)
        stub = sweep_pb2_grpc.SweepServiceStub(grpc.insecure_channel(address))
        t = time.time()
        stub.SubmitSweep(sweep_pb2.SubmitSweepRequest(
            spec=spec(sweep_pb2, "rows", a.trials, 1000)), timeout=600)
        n = populate(address, False, a.points)
        stub.SubmitSweep(sweep_pb2.SubmitSweepRequest(
            spec=spec(sweep_pb2, "curves", a.curve_trials, 10 * a.points)),
            timeout=600)
        m = populate(address, True, a.points)
        print("populate    %d + %d trials completed over gRPC in %.1f s" %
              (n, m, time.time() - t), flush=True)

        names = ["results()", "results csv", "curves()", "curves csv"]
        if a.no_csv:
            names = [n for n in names if not n.endswith("csv")]
        runs = {k: [] for k in names}
        for r in range(a.rounds):
            line = []
            for name in names:
                out = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--child",
                     name, "--address", address, "--bin", a.bin, "--python",
                     a.python], capture_output=True, text=True, check=True)
                runs[name].append(json.loads(out.stdout.strip()
                                             .splitlines()[-1]))
                run = runs[name][-1]
                line.append("%s %.2f s, peak %.0f MB (frame %.0f MB)" % (
                    name, run["seconds"], run["peak_bytes"] / 1e6,
                    run["frame_bytes"] / 1e6))
            print("round %d     %s" % (r + 1, "; ".join(line)), flush=True)
        rows = {k: v[0]["rows"] for k, v in runs.items()}
        if not a.no_csv and (rows["results()"] != rows["results csv"] or
                             rows["curves()"] != rows["curves csv"]):
            print("MISMATCH: rows %s" % rows)
            return 1
        for name in names:
            peak = statistics.median(x["peak_bytes"] for x in runs[name])
            size = runs[name][0]["frame_bytes"]
            print("median      %-12s %.2f s  (%d rows); peak %.0f MB = %.2f x "
                  "the frame's %.0f MB" % (
                      name, statistics.median(x["seconds"] for x in runs[name]),
                      rows[name], peak / 1e6, peak / max(size, 1),
                      size / 1e6))
        return 0
    finally:
        server.terminate()
        server.wait(60)
        log.close()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
