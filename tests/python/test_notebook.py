"""docs/notebooks/ratio-sweep.ipynb executed by nbconvert (Debian's
python3-nbconvert and python3-ipykernel) against a real qkov-server and a
real qkov-worker: it runs to the end without an error, draws its figure,
and the tables it saves equal the CLI's for the same sweep to 1e-12.

Budget: the notebook's own, the preset's quick run (paper-ratio --quick:
15 FAFO trials of 30,000 steps; about 25 s on 2 cores with one worker)."""

import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from conftest import PYTHON_DIR, Server
from test_client import assert_close

NOTEBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "docs", "notebooks", "ratio-sweep.ipynb")


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    server = Server()
    work = tmp_path_factory.mktemp("notebook")
    worker = None
    try:
        with open(server.dir + "/worker.log", "a") as log:
            worker = subprocess.Popen(
                [server.bin + "/qkov-worker", "--server=" + server.address,
                 "--token_file=" + server.token_file("worker")],
                stdout=log, stderr=subprocess.STDOUT)
        shutil.copy(NOTEBOOK, work / "ratio-sweep.ipynb")
        env = dict(os.environ)
        env.update({
            "QKOV_SERVER": server.address,
            "QKOV_TOKEN_FILE": server.token_file("user"),
            "PATH": server.bin + os.pathsep + env.get("PATH", ""),
            "PYTHONPATH": PYTHON_DIR,
            "MPLBACKEND": "Agg",
        })
        run = subprocess.run(
            [sys.executable, "-m", "nbconvert", "--to", "notebook",
             "--execute", "--ExecutePreprocessor.timeout=900",
             "--output", "executed.ipynb", "ratio-sweep.ipynb"],
            cwd=work, env=env, capture_output=True, text=True, timeout=1200)
        assert run.returncode == 0, run.stderr[-4000:]
        yield server, work
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(60)
        server.stop()


def csv(text):
    return pd.read_csv(pd.io.common.StringIO(text), keep_default_na=False,
                       na_values=["", "nan", "-"])


def test_the_notebook_runs_and_draws(executed):
    _, work = executed
    assert (work / "executed.ipynb").stat().st_size > 0
    assert (work / "ratio.png").stat().st_size > 10000


def test_its_aggregate_equals_the_cli(executed):
    server, work = executed
    agg = pd.read_csv(work / "ratio-aggregate.csv")
    metrics = "distinct_attention,accuracy,train_loss"
    cli = csv(server.cli("results", "paper-ratio-quick", "--by", "lr_ratio",
                         "--metrics", metrics, "--format", "csv").stdout)
    assert list(agg["config.lr_ratio"]) == [1, 2, 5, 10, 20]
    assert_close(agg["config.lr_ratio"], cli["lr_ratio"], "lr_ratio")
    assert list(agg["result.distinct_attention.n"]) == list(cli["n"]) == \
        [3] * 5
    for i, m in enumerate(metrics.split(",")):
        suffix = "" if i == 0 else ".%d" % i
        assert_close(agg["result.%s.mean" % m], cli[m + " mean"], m)
        assert_close(agg["result.%s.ci95" % m], cli["ci95" + suffix],
                     m + " ci95")


def test_its_matched_table_equals_the_cli(executed):
    server, work = executed
    matched = pd.read_csv(work / "ratio-matched.csv")
    cli = csv(server.cli("results", "paper-ratio-quick", "--matched",
                         "train_loss", "--metrics", "distinct_attention",
                         "--by", "lr_ratio", "--format", "csv").stdout)
    assert len(matched) == len(cli) == 5 * 5
    assert_close(matched["level"], cli["level"], "level")
    reached = ["%d/%d" % rt for rt in zip(matched["reached"],
                                          matched["trials"])]
    assert reached == list(cli["reached"])
    ok = matched["reached"] > 0
    assert ok.any()
    assert_close(matched["curve.distinct_attention.mean"][ok],
                 cli["distinct_attention mean"][ok], "distinct_attention")
