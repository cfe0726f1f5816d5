"""The notebook client (client/python) against a real qkov-server and
qkov-worker on loopback: every frame equals the CLI's output for the same
sweep (results, aggregate, matched to 1e-12; curves point for point against
`qkov export --per point`), and each failure is its named exception."""

import io
import os
import signal

import numpy as np
import pandas as pd
import pytest

import qkov
from conftest import freeze

SWEEP = "nb"
METRICS = ["train_loss", "distinct_attention", "accuracy"]


def cli_csv(server, *args):
    return pd.read_csv(io.StringIO(server.cli(*args).stdout),
                       keep_default_na=False, na_values=["", "nan", "-"])


def assert_close(a, b, what):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, what
    assert np.array_equal(np.isnan(a), np.isnan(b)), what + ": NaN differ"
    ok = ~np.isnan(b)
    diff = np.abs(a[ok] - b[ok])
    assert np.all(diff <= 1e-12 * np.fmax(1.0, np.abs(b[ok]))), \
        "%s: largest difference %g" % (what, diff.max())


def test_results_equal_the_cli_export(server, client):
    frame = client.results(SWEEP)
    cli = cli_csv(server, "export", SWEEP, "--format", "csv")
    assert len(frame) == 12 and len(cli) == 12
    assert list(frame["trial_id"]) == list(cli["trial_id"])
    assert list(frame["config.parameterization"]) == \
        list(cli["parameterization"])
    assert list(frame["state"]) == list(cli["state"])
    assert_close(frame["config.lr_ratio"], cli["lr_ratio"], "lr_ratio")
    assert list(frame["config.seed"]) == list(cli["seed"])
    metrics = [c for c in cli.columns if c not in (
        "trial_id", "parameterization", "lr_ratio", "eta_ov", "seed",
        "state")]
    assert set(METRICS) <= set(metrics)
    for m in metrics:
        assert_close(frame["result." + m], cli[m], m)


def test_aggregate_equals_the_cli_by(server, client):
    by = ["parameterization", "lr_ratio"]
    # Keys and metrics by column name or by the server's key: the same.
    frame = client.aggregate(SWEEP, by=["config." + b for b in by],
                             metrics=["result." + m for m in METRICS])
    assert frame.equals(client.aggregate(SWEEP, by=by, metrics=METRICS))
    cli = cli_csv(server, "results", SWEEP, "--by", ",".join(by),
                  "--metrics", ",".join(METRICS), "--format", "csv")
    assert len(frame) == 4 == len(cli)
    assert set(frame["sweep"]) == {SWEEP}
    assert list(frame["config.parameterization"]) == \
        list(cli["parameterization"])
    assert_close(frame["config.lr_ratio"], cli["lr_ratio"], "lr_ratio")
    assert list(frame["result.%s.n" % METRICS[0]]) == [3] * 4 == \
        list(cli["n"])
    # The CLI's columns: n, then per metric "M mean", std, ci95.
    for i, m in enumerate(METRICS):
        std = "std" if i == 0 else "std.%d" % i
        ci = "ci95" if i == 0 else "ci95.%d" % i
        assert_close(frame["result.%s.mean" % m], cli[m + " mean"],
                     m + " mean")
        assert_close(frame["result.%s.std" % m], cli[std], m + " std")
        assert_close(frame["result.%s.ci95" % m], cli[ci], m + " ci95")


def test_matched_equals_the_cli_matched(server, client):
    # The levels the server chooses (five every trial reaches), then two
    # given ones.
    frame = client.matched(SWEEP, "train_loss",
                           metrics=["distinct_attention", "separability"])
    cli = cli_csv(server, "results", SWEEP, "--matched", "train_loss",
                  "--metrics",
                  "distinct_attention,separability", "--format", "csv")
    assert frame.attrs["reference"] == "train_loss"
    levels = frame.attrs["levels"]
    assert len(levels) == 5
    keys = [k for k in frame.columns if k.startswith("config.")]
    assert keys == ["config.parameterization", "config.lr_ratio"]
    assert len(frame) == len(cli) == 4 * 5
    assert list(frame["config.parameterization"]) == \
        list(cli["parameterization"])
    assert_close(frame["level"], cli["level"], "level")
    reached = ["%d/%d" % rt for rt in zip(frame["reached"], frame["trials"])]
    assert reached == list(cli["reached"])
    ok = frame["reached"] > 0
    assert ok.any()
    assert_close(frame["step.mean"][ok], cli["step"][ok], "step")
    assert_close(frame["curve.distinct_attention.mean"][ok],
                 cli["distinct_attention mean"][ok], "distinct_attention")
    assert_close(frame["curve.separability.ci95"][ok], cli["ci95.1"][ok],
                 "separability ci95")
    given = client.matched(SWEEP, "train_loss", levels=levels[1:3],
                           metrics=["distinct_attention"], by=["lr_ratio"])
    cli = cli_csv(server, "results", SWEEP, "--matched", "train_loss=" +
                  ",".join(repr(x) for x in levels[1:3]), "--metrics",
                  "distinct_attention", "--by", "lr_ratio", "--format", "csv")
    assert len(given) == len(cli) == 2 * 2
    assert_close(given["curve.distinct_attention.mean"],
                 cli["distinct_attention mean"], "given levels")


def test_curves_equal_the_cli_point_export(server, client):
    frame = client.curves(SWEEP)
    cli = cli_csv(server, "export", SWEEP, "--per", "point", "--format",
                  "csv")
    assert len(frame) == len(cli) > 12 * 12
    assert str(frame["trial_id"].dtype) == "category"
    assert frame["step"].dtype == np.int64
    frame = frame.astype({"trial_id": str, "curve": str})
    a = frame.sort_values(["trial_id", "curve", "step"],
                          kind="stable").reset_index(drop=True)
    b = cli.sort_values(["trial_id", "name", "step"],
                        kind="stable").reset_index(drop=True)
    assert list(a["trial_id"]) == list(b["trial_id"])
    assert list(a["curve"]) == list(b["name"])
    assert list(a["step"]) == list(b["step"])
    assert_close(a["value"], b["value"], "value")
    # A subset: the same points.
    some = client.curves(SWEEP, metrics=["train_loss"],
                         trials=list(frame["trial_id"].unique()[:2]))
    want = a[(a["curve"] == "train_loss") &
             a["trial_id"].isin(some["trial_id"].astype(str).unique())]
    assert len(some) == len(want) > 0
    # One trial at a time: the same points.
    seen = 0
    for trial_id, points in client.iter_curves(SWEEP):
        mine = a[a["trial_id"] == trial_id]
        assert len(points) == len(mine) > 0
        assert sorted(points["step"]) == sorted(mine["step"])
        seen += 1
    assert seen == 12


def test_sweeps_trials_and_one_trial(client):
    sweeps = client.sweeps()
    row = sweeps[sweeps["name"] == SWEEP].iloc[0]
    assert row["total_trials"] == 12 and row["done"] == 12
    assert row["owner"] == "alice"
    one = client.sweep(SWEEP)
    assert one["total_trials"] == 12 and one["done"] == 12
    assert "<table>" in one._repr_html_()
    trials = client.trials(SWEEP)
    assert len(trials) == 12 and set(trials["state"]) == {"done"}
    assert not [c for c in trials.columns if c.startswith("result.")]
    assert list(trials["ordinal"]) == list(range(12))
    assert len(client.trials(SWEEP, state="queued")) == 0
    t = client.trial(trials["trial_id"][0])
    assert t["state"] == "done"
    assert t["config"]["parameterization"] == "FAFO"
    # Typed as stored: integers are ints, never strings; zeros kept.
    assert t["config"]["seed"] == 1 and type(t["config"]["seed"]) is int
    assert type(t["config"]["training.max_steps"]) is int
    assert t["config"]["training.max_steps"] == 300
    assert len(t["attempts"]) == 1
    assert t["attempts"][0]["started_at"] <= t["attempts"][0]["ended_at"]
    assert t["heatmaps"], "a done synthetic trial stores its DTAP heatmap"
    for h in t["heatmaps"].values():
        assert h["values"].shape == (len(h["y_edges"]) - 1,
                                     len(h["x_edges"]) - 1)
    assert "config.training.max_steps" in t._repr_html_()


def test_submit_and_watch(server, client):
    spec = {"name": "nb-submit", "description": "submitted from Python",
            "axes": {"parameterization": ["FAFO"], "lr_ratio": [1],
                     "eta_ov": [0.1], "seed": [1]},
            "training": {"max_steps": 100, "report_every": 50,
                         "evaluation": {"num_examples": 64}}}
    name = client.submit(spec, set={"training.max_steps": 150})
    assert name == "nb-submit"
    server.train()
    row = client.watch(name, progress=False)
    assert row["done"] == 1
    assert client.trials(name)["last_step"].tolist() == [150]


def test_errors_are_named_exceptions(server, client):
    with pytest.raises(qkov.NotFound, match="nope"):
        client.results("nope")
    with pytest.raises(qkov.NotFound):
        client.curves(SWEEP, trials=["no-such-trial"])
    with pytest.raises(qkov.NotFound, match="no_such_curve"):
        client.curves(SWEEP, metrics=["no_such_curve"])
    with pytest.raises(qkov.InvalidArgument):
        client.results(SWEEP, where="no equals sign")
    with pytest.raises(qkov.InvalidArgument, match="state"):
        client.trials(SWEEP, state="sleeping")
    with pytest.raises(qkov.InvalidArgument, match="sort_by"):
        client.results(SWEEP, sort_by="a b")
    with pytest.raises(qkov.InvalidArgument, match="limit"):
        client.results(SWEEP, limit=0)
    with pytest.raises(qkov.InvalidArgument, match="mine.yaml"):
        bad_file = os.path.join(server.dir, "mine.yaml")
        with open(bad_file, "w") as f:
            f.write("name: x\naxes: {parameterization: [NOPE]}\n")
        client.submit(bad_file)
    with pytest.raises(qkov.NotFound, match="no preset named"):
        client.submit(preset="no-such-preset")
    with pytest.raises(qkov.InvalidArgument, match="cannot read"):
        client.submit("/nonexistent/sweep.yaml")
    with pytest.raises(qkov.InvalidArgument, match="not a sweep file"):
        client.submit({"name": "nan", "axes": {"lr_ratio": [float("nan")]}})
    with pytest.raises(qkov.ResourceExhausted, match="max_points"):
        client.curves(SWEEP, max_points=10)
    with qkov.connect(server.address, token="not-a-token") as bad:
        with pytest.raises(qkov.Unauthenticated):
            bad.sweeps()
    with qkov.connect(server.address,
                      token_file=server.token_file("reader")) as reader:
        assert len(reader.results(SWEEP)) == 12
        with pytest.raises(qkov.PermissionDenied):
            reader.submit({"name": "denied", "axes": {
                "parameterization": ["FAFO"], "lr_ratio": [1],
                "eta_ov": [0.1], "seed": [1]}})
        with pytest.raises(qkov.PermissionDenied):
            reader.cancel(SWEEP)
    # A port nothing listens on: refused at once, never a hang.
    with qkov.connect("127.0.0.1:1", deadline=10) as gone:
        with pytest.raises(qkov.Unavailable, match="127.0.0.1:1"):
            gone.sweeps()


def test_task_names_of_proto_and_registered_tasks():
    # config.proto's tasks by name; a task registered outside it
    # (docs/adding-a-task.md) by its number, which only programs built with
    # it can name.
    from qkov.client import _task_name
    from qkov.v1 import config_pb2
    assert _task_name(config_pb2.TASK_FIXED_ATTENTION) == "fixed_attention"
    assert _task_name(config_pb2.TASK_SQUAD) == "squad"
    assert _task_name(1000) == "task_1000"


# Two arms that differ in weight decay and momentum, crossed with two seeds
# (docs/sweep-files.md, "Arms"); a short run, enough to end with results.
ARMS = """name: nb-arms
axes:
  parameterization: [FAFO]
  eta_ov: [0.1]
  seed: [1, 2]
  arm:
    - {name: baseline, lr_ratio: 1, training: {optimizer: {weight_decay: 1.0e-4}}}
    - name: faster
      lr_ratio: 20
      training: {optimizer: {weight_decay: 1.0e-3, momentum: 0.5}}
training: {max_steps: 100, report_every: 25, evaluation: {num_examples: 64}}
"""


def test_results_and_aggregate_by_arm(server, client, tmp_path):
    path = tmp_path / "arms.yaml"
    path.write_text(ARMS)
    server.cli("submit", str(path))
    server.train()
    frame = client.results("nb-arms")
    assert list(frame["config.arm"]) == ["baseline", "baseline", "faster",
                                         "faster"]
    assert list(frame["config.lr_ratio"]) == [1, 1, 20, 20]
    trials = client.trials("nb-arms")
    assert list(trials["config.arm"]) == list(frame["config.arm"])
    # Every setting a column, each equal to the trial's stored config.
    decay = frame["config.training.optimizer.weight_decay"]
    assert list(decay) == [1e-4, 1e-4, 1e-3, 1e-3]
    momentum = frame["config.training.optimizer.momentum"]
    for trial_id, wd, mo in zip(frame["trial_id"], decay, momentum):
        config = client.trial(trial_id)["config"]
        assert config["training.optimizer.weight_decay"] == wd
        assert config.get("training.optimizer.momentum", 0) == mo
    assert list(momentum) == [0, 0, 0.5, 0.5]
    assert frame.groupby("config.training.optimizer.weight_decay")[
        "result.accuracy"].count().tolist() == [2, 2]
    by_arm = client.aggregate("nb-arms", by="arm", metrics=["accuracy"])
    assert list(by_arm["config.arm"]) == ["baseline", "faster"]
    assert list(by_arm["result.accuracy.n"]) == [2, 2]
    cli = cli_csv(server, "results", "nb-arms", "--by", "arm", "--metrics",
                  "accuracy", "--format", "csv")
    assert list(cli["arm"]) == ["baseline", "faster"]
    assert_close(by_arm["result.accuracy.mean"], cli["accuracy mean"],
                 "by arm")
    # A sweep without arms has no arm setting.
    assert "config.arm" not in client.results(SWEEP).columns
    # Two sweeps' frames concatenate and stay apart by their sweep column.
    both = pd.concat([client.results(SWEEP), frame], ignore_index=True)
    assert both.groupby("sweep", observed=True).size().to_dict() == {
        SWEEP: 12, "nb-arms": 4}


def test_frames_types_times_and_order(client):
    frame = client.results(SWEEP)
    assert str(frame["sweep"].dtype) == "category"
    assert str(frame["state"].dtype) == "category"
    assert str(frame["config.parameterization"].dtype) == "category"
    assert frame["config.seed"].dtype == np.int64
    assert frame["config.training.max_steps"].dtype == np.int64
    assert frame["config.lr_ratio"].dtype == np.float64
    assert str(frame["started_at"].dtype) == "datetime64[ns, UTC]"
    assert (frame["ended_at"] >= frame["started_at"]).all()
    assert (frame["duration"] == frame["ended_at"] - frame["started_at"]).all()
    assert (frame["duration"] > pd.Timedelta(0)).all()
    assert (frame["config_hash"].str.len() == 64).all()
    # The server's sort and page.
    top = client.results(SWEEP, sort_by="result.accuracy", descending=True,
                         limit=3)
    assert len(top) == 3
    want = frame.sort_values("result.accuracy", ascending=False,
                             kind="stable")["result.accuracy"].head(3)
    assert list(top["result.accuracy"]) == list(want)
    page = client.results(SWEEP, offset=10)
    assert list(page["trial_id"]) == list(frame["trial_id"][10:])
    # where by column name or server key: the same rows.
    a = client.results(SWEEP, where="config.lr_ratio=20")
    b = client.results(SWEEP, where="lr_ratio=20")
    assert len(a) == 6 and list(a["trial_id"]) == list(b["trial_id"])
    # SQL in the server's sandbox.
    n = client.sql("SELECT COUNT(*) AS n FROM trials")
    assert list(n.columns) == ["n"] and n["n"][0] >= 12
    assert n.attrs["truncated_by"] == ""


FIXED = """name: nb-fixed
axes: {parameterization: [FAFO], lr_ratio: [1], eta_ov: [0.1], seed: [1],
       alpha: [0.25, 0.75]}
training: {task: fixed_attention, max_steps: 60, report_every: 20,
           evaluation: {num_examples: 64}}
"""


def test_a_result_named_like_a_setting_overwrites_nothing(server, client,
                                                         tmp_path):
    # The fixed-attention task's axis alpha and its final result alpha
    # (docs/metrics.md) are two columns.
    path = tmp_path / "fixed.yaml"
    path.write_text(FIXED)
    client.submit(str(path))
    server.train()
    frame = client.results("nb-fixed")
    assert list(frame["config.alpha"]) == [0.25, 0.75]
    assert "result.alpha" in frame.columns
    assert frame["result.alpha"].notna().all()
    assert list(frame["config.training.task"]) == ["fixed_attention"] * 2
    assert len(set(frame.columns)) == len(frame.columns), "no name twice"
    collisions = sorted(
        c[len("result."):] for c in frame.columns
        if c.startswith("result.") and "config." + c[len("result."):]
        in frame.columns)
    assert collisions == ["alpha"]


def test_a_stalled_stream_raises_deadline_exceeded(server):
    # The server stopped (SIGSTOP) mid-session: a call waits at most the
    # client's deadline, then raises, named; the server resumes unharmed.
    with qkov.connect(server.address, token_file=server.token_file("user"),
                      deadline=2) as c:
        assert len(c.results(SWEEP)) == 12  # the channel is up
        freeze(server.proc.pid)  # every thread stopped
        try:
            with pytest.raises(qkov.DeadlineExceeded, match="StreamResults"):
                c.results(SWEEP)
            with pytest.raises(qkov.DeadlineExceeded):
                c.sweeps()
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        assert len(c.results(SWEEP)) == 12


def test_results_names_a_task_registered_outside_the_proto():
    # _task_name names a task numbered from 1000 (docs/adding-a-task.md)
    # "task_<number>" instead of raising; frames name tasks as the server
    # does (config.training.task), which knows every registered task.
    from qkov.client import _task_name
    assert _task_name(1000) == "task_1000"
