"""The notebook client (client/python) against a real qkov-server and
qkov-worker on loopback: every frame equals the CLI's output for the same
sweep (results, aggregate, matched to 1e-12; curves point for point against
`qkov export --per point`), and each failure is its named exception."""

import io

import numpy as np
import pandas as pd
import pytest

import qkov

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
    assert list(frame["parameterization"]) == list(cli["parameterization"])
    assert list(frame["state"]) == list(cli["state"])
    assert_close(frame["lr_ratio"], cli["lr_ratio"], "lr_ratio")
    assert list(frame["seed"]) == list(cli["seed"])
    metrics = [c for c in cli.columns if c not in (
        "trial_id", "parameterization", "lr_ratio", "eta_ov", "seed",
        "state")]
    assert set(METRICS) <= set(metrics)
    for m in metrics:
        assert_close(frame[m], cli[m], m)


def test_aggregate_equals_the_cli_by(server, client):
    by = ["parameterization", "lr_ratio"]
    frame = client.aggregate(SWEEP, by=by, metrics=METRICS)
    cli = cli_csv(server, "results", SWEEP, "--by", ",".join(by),
                  "--metrics", ",".join(METRICS), "--format", "csv")
    assert len(frame) == 4 == len(cli)
    assert list(frame["parameterization"]) == list(cli["parameterization"])
    assert_close(frame["lr_ratio"], cli["lr_ratio"], "lr_ratio")
    assert list(frame[METRICS[0] + "_n"]) == [3] * 4 == list(cli["n"])
    # The CLI's columns: n, then per metric "M mean", std, ci95.
    for i, m in enumerate(METRICS):
        std = "std" if i == 0 else "std.%d" % i
        ci = "ci95" if i == 0 else "ci95.%d" % i
        assert_close(frame[m + "_mean"], cli[m + " mean"], m + " mean")
        assert_close(frame[m + "_std"], cli[std], m + " std")
        assert_close(frame[m + "_ci95"], cli[ci], m + " ci95")


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
    keys = [k for k in frame.columns if k in ("parameterization", "lr_ratio")]
    assert keys == ["parameterization", "lr_ratio"]
    assert len(frame) == len(cli) == 4 * 5
    assert list(frame["parameterization"]) == list(cli["parameterization"])
    assert_close(frame["level"], cli["level"], "level")
    reached = ["%d/%d" % rt for rt in zip(frame["reached"], frame["trials"])]
    assert reached == list(cli["reached"])
    ok = frame["reached"] > 0
    assert ok.any()
    assert_close(frame["step_mean"][ok], cli["step"][ok], "step")
    assert_close(frame["distinct_attention_mean"][ok],
                 cli["distinct_attention mean"][ok], "distinct_attention")
    assert_close(frame["separability_ci95"][ok], cli["ci95.1"][ok],
                 "separability ci95")
    given = client.matched(SWEEP, "train_loss", levels=levels[1:3],
                           metrics=["distinct_attention"], by=["lr_ratio"])
    cli = cli_csv(server, "results", SWEEP, "--matched", "train_loss=" +
                  ",".join(repr(x) for x in levels[1:3]), "--metrics",
                  "distinct_attention", "--by", "lr_ratio", "--format", "csv")
    assert len(given) == len(cli) == 2 * 2
    assert_close(given["distinct_attention_mean"],
                 cli["distinct_attention mean"], "given levels")


def test_curves_equal_the_cli_point_export(server, client):
    frame = client.curves(SWEEP)
    cli = cli_csv(server, "export", SWEEP, "--per", "point", "--format",
                  "csv")
    assert len(frame) == len(cli) > 12 * 12
    key = ["trial_id", "name", "step"]
    a = frame.sort_values(key, kind="stable").reset_index(drop=True)
    b = cli.sort_values(key, kind="stable").reset_index(drop=True)
    assert list(a["trial_id"]) == list(b["trial_id"])
    assert list(a["name"]) == list(b["name"])
    assert list(a["step"]) == list(b["step"])
    assert_close(a["value"], b["value"], "value")
    # A subset: the same points.
    some = client.curves(SWEEP, metrics=["train_loss"],
                         trials=list(frame["trial_id"].unique()[:2]))
    want = a[(a["name"] == "train_loss") &
             a["trial_id"].isin(some["trial_id"].unique())]
    assert len(some) == len(want) > 0


def test_sweeps_trials_and_one_trial(client):
    sweeps = client.sweeps()
    row = sweeps[sweeps["name"] == SWEEP].iloc[0]
    assert row["total_trials"] == 12 and row["done"] == 12
    assert row["owner"] == "alice"
    trials = client.trials(SWEEP)
    assert len(trials) == 12 and set(trials["state"]) == {"done"}
    assert len(client.trials(SWEEP, where="queued")) == 0
    t = client.trial(trials["trial_id"][0])
    assert t["state"] == "done"
    assert t["config"]["parameterization"] == "FAFO"
    assert len(t["attempts"]) == 1
    assert t["heatmaps"], "a done synthetic trial stores its DTAP heatmap"
    for h in t["heatmaps"].values():
        assert h["values"].shape == (len(h["y_edges"]) - 1,
                                     len(h["x_edges"]) - 1)


def test_submit_and_watch(server, client):
    spec = {"name": "nb-submit", "description": "submitted from Python",
            "axes": {"parameterization": ["FAFO"], "lr_ratio": [1],
                     "eta_ov": [0.1], "seed": [1]},
            "training": {"max_steps": 100, "report_every": 50,
                         "evaluation": {"num_examples": 64}}}
    name = client.submit(spec, set={"training.max_steps": 150},
                         qkov_cli=server.bin + "/qkov")
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
    with pytest.raises(qkov.InvalidArgument, match="where"):
        client.trials(SWEEP, where="sleeping")
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
                "eta_ov": [0.1], "seed": [1]}}, qkov_cli=server.bin + "/qkov")
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
    assert list(frame["arm"]) == ["baseline", "baseline", "faster", "faster"]
    assert list(frame["lr_ratio"]) == [1, 1, 20, 20]
    trials = client.trials("nb-arms")
    assert list(trials["arm"]) == list(frame["arm"])
    # Each trial's stored config carries its arm's settings.
    for trial_id, arm in zip(frame["trial_id"], frame["arm"]):
        config = client.trial(trial_id)["config"]
        assert config["arm"] == arm
        optimizer = config["training"]["optimizer"]
        assert optimizer["weight_decay"] == (1e-4 if arm == "baseline"
                                             else 1e-3)
        assert optimizer.get("momentum", 0) == (0 if arm == "baseline"
                                                else 0.5)
    by_arm = client.aggregate("nb-arms", by="arm", metrics=["accuracy"])
    assert list(by_arm["arm"]) == ["baseline", "faster"]
    assert list(by_arm["accuracy_n"]) == [2, 2]
    cli = cli_csv(server, "results", "nb-arms", "--by", "arm", "--metrics",
                  "accuracy", "--format", "csv")
    assert list(cli["arm"]) == ["baseline", "faster"]
    assert_close(by_arm["accuracy_mean"], cli["accuracy mean"], "by arm")
    # A sweep without arms has an empty arm column.
    assert set(client.results(SWEEP)["arm"]) == {""}


def test_results_names_a_task_registered_outside_the_proto():
    # results() decodes its task column through _task_name, which names a
    # task numbered from 1000 (docs/adding-a-task.md) "task_<number>"
    # instead of raising.
    from qkov import client as c
    names = c._names_of(np.array([1, 1000, 1], dtype=np.int64), c._task_name)
    assert list(names) == ["synthetic", "task_1000", "synthetic"]
