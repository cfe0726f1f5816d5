"""The notebook client drives a sweep over TLS with only connect()'s
arguments, no qkov binary on PATH: submit, watch, pause, resume, retry and
cancel, each checked against the server's own state; and a task registered
outside config.proto (tests/example_task) submitted by its preset and read
back with every setting a column."""

import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

import conftest
import qkov

CONTROL = textwrap.dedent("""
    import json, shutil, sys
    import qkov
    assert shutil.which("qkov") is None, "the qkov CLI is on PATH"
    address, ca, token_file = sys.argv[1:4]
    q = qkov.connect(address, tls_ca=ca, token_file=token_file,
                     tls_server_name="localhost", deadline=20)
    out = {}
    name = q.submit({"name": "tls-control",
                     "axes": {"parameterization": ["FAFO", "CACO"],
                              "lr_ratio": [1, 20], "eta_ov": [0.1],
                              "seed": [1, 2]},
                     "training": {"max_steps": 50}},
                    set=["description=over TLS"])
    out["name"] = name
    out["paused"] = q.pause(name)["paused"]
    out["paused_queued"] = q.sweep(name)["queued"]
    out["resumed"] = q.resume(name)["paused"]
    out["retried"] = q.retry(name)
    out["cancelled"] = q.cancel(name)
    final = q.watch(name, progress=False)
    out["final"] = {k: int(final[k]) for k in ("queued", "running",
                                               "cancelled")}
    out["final_flag"] = bool(final["sweep_cancelled"])
    out["description"] = q.sweep(name)["description"]
    out["settings"] = sorted(c for c in q.trials(name).columns
                             if c.startswith("config."))
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def tls_server():
    s = conftest.Server(tls=True)
    yield s
    s.stop()


def test_a_notebook_drives_a_sweep_over_tls_without_the_cli(tls_server):
    env = dict(os.environ, PATH="/nonexistent",
               PYTHONPATH=conftest.PYTHON_DIR)
    for k in ("QKOV_SERVER", "QKOV_TOKEN_FILE", "QKOV_TLS_CA"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-c", CONTROL, tls_server.address,
                        tls_server.ca, tls_server.token_file("user")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    import json
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["name"] == "tls-control"
    assert out["paused"] is True and out["paused_queued"] == 8
    assert out["resumed"] is False
    assert out["retried"] == 0  # nothing had failed
    assert out["cancelled"] == 8
    assert out["final"] == {"queued": 0, "running": 0, "cancelled": 8}
    assert out["final_flag"] is True
    assert out["description"] == "over TLS"
    assert "config.training.max_steps" in out["settings"]
    # The server's own account of the same sweep, through the CLI.
    status = tls_server.cli("--tls_ca=" + tls_server.ca,
                            "--tls_server_name=localhost", "status",
                            "tls-control", check=False)
    assert status.returncode == 0, status.stderr
    assert "tls-control" in status.stdout


def test_leasing_is_the_admins_switch(tls_server):
    def connect(who):
        return qkov.connect(tls_server.address, tls_ca=tls_server.ca,
                            tls_server_name="localhost",
                            token_file=tls_server.token_file(who))
    with connect("user") as user, connect("admin") as admin:
        assert user.leasing()["paused"] is False
        with pytest.raises(qkov.PermissionDenied, match="admin"):
            user.leasing(paused=True)
        state = admin.leasing(paused=True, reason="moving the database")
        assert state["paused"] and state["actor"] == "root"
        assert state["reason"] == "moving the database"
        assert state["since"] <= pd.Timestamp.now(tz="UTC")
        status = tls_server.cli("--tls_ca=" + tls_server.ca,
                                "--tls_server_name=localhost", "status")
        assert status.stdout.startswith("leasing paused since ")
        assert "by root: moving the database" in status.stdout
        assert admin.leasing(paused=False)["paused"] is False
        status = tls_server.cli("--tls_ca=" + tls_server.ca,
                                "--tls_server_name=localhost", "status")
        assert "leasing paused" not in status.stdout


def test_tls_needs_the_certificates_name(tls_server):
    # 127.0.0.1 is not a name the certificate carries: refused, named.
    with qkov.connect(tls_server.address, tls_ca=tls_server.ca,
                      token_file=tls_server.token_file("user"),
                      deadline=10) as c:
        with pytest.raises(qkov.Unavailable):
            c.sweeps()


def test_a_registered_task_by_its_preset():
    s = conftest.Server(suffix="-needle")
    try:
        with qkov.connect(s.address, token_file=s.token_file("user")) as c:
            name = c.submit(preset="needle-ratio", quick=True)
            assert name == "needle-ratio-quick"
            s.train()
            frame = c.results(name)
            assert len(frame) == 4
            assert set(frame["config.training.task"]) == {"needle"}
            assert set(frame["state"]) == {"done"}
            assert list(frame["config.training.synthetic.vocab_size"]) == \
                [20] * 4
            for m in ("accuracy", "loss", "needle_attention", "steps"):
                assert frame["result." + m].notna().all(), m
            assert len(set(frame.columns)) == len(frame.columns)
            agg = c.aggregate(name, by="lr_ratio",
                              metrics="needle_attention")
            assert list(agg["result.needle_attention.n"]) == [2, 2]
    finally:
        s.stop()
