"""Deleting a sweep through the real server: `qkov delete` asks for --yes,
a read-only token and another researcher are refused, live trials refuse
it until the sweep is cancelled, and the notebook client's delete() frees
the name, after which a new sweep of that name shows its own trials only
(nothing of the deleted one is left in the server's caches)."""

import pytest

import conftest
import qkov


@pytest.fixture(scope="module")
def fresh():
    s = conftest.Server()
    yield s
    s.stop()


def test_delete_from_the_cli_and_the_notebook(fresh):
    fresh.submit("old")  # 12 trials, queued: nobody trains them
    with qkov.connect(fresh.address,
                      token_file=fresh.token_file("user")) as c:
        before = c.results("old")
        assert len(before) == 12

        r = fresh.cli("delete", "old", check=False)
        assert r.returncode == 2, r.stderr
        assert "12 trials" in r.stderr and "--yes" in r.stderr
        r = fresh.cli("delete", "old", "--yes", who="reader", check=False)
        assert r.returncode == 5, r.stderr  # read-only: denied
        r = fresh.cli("delete", "old", "--yes", check=False)
        assert r.returncode == 1, r.stderr  # queued trials: cancel first
        assert "cancel it first" in r.stderr and "qkov cancel old" in r.stderr
        assert len(c.results("old")) == 12  # nothing gone

        assert c.cancel("old") == 12
        out = c.delete("old")
        assert out["trials_deleted"] == 12
        assert out["metric_points_deleted"] == 0
        with pytest.raises(qkov.NotFound):
            c.results("old")
        assert "old" not in set(c.sweeps()["name"])

        # The name again, a smaller grid: its own trials, new ids.
        name = c.submit({"name": "old",
                         "axes": {"parameterization": ["FAFO"],
                                  "lr_ratio": [1, 20], "eta_ov": [0.1],
                                  "seed": [1]},
                         "training": {"max_steps": 50}})
        after = c.results(name)
        assert len(after) == 2
        assert set(after["trial_id"]).isdisjoint(set(before["trial_id"]))
        assert list(after["state"]) == ["queued", "queued"]

        # The CLI's own line for a deletion.
        fresh.cli("cancel", "old")
        r = fresh.cli("delete", "old", "--yes")
        assert "sweep old deleted: 2 trials, 0 curve points" in r.stdout
