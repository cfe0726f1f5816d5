"""qkov's Python client: a sweep's results as pandas DataFrames over gRPC.

Every frame comes from one server computation, never recomputed here:
``results`` from QueryResults, ``aggregate`` from AggregateResults,
``matched`` from MatchSweep and ``curves`` from the StreamCurves stream (one
call for the whole sweep, every point). docs/notebook.md documents each
frame's columns.
"""

import os
import shutil
import subprocess
import tempfile

import grpc
import numpy as np
import pandas as pd

from qkov import errors
from qkov.v1 import config_pb2, sweep_pb2, sweep_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
# One answer (the rows of a 100,000-trial sweep are about 30 MB) may be at
# most this large; a larger one raises ResourceExhausted.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024

# "arm": the trial's arm in a sweep with arms (docs/sweep-files.md), ""
# in one without.
_AXES = ["arm", "parameterization", "lr_ratio", "eta_ov", "seed", "alpha",
         "task", "state"]


def _read_token(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                return line
    raise errors.InvalidArgument("token file %s holds no token" % path)


def _read(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise errors.InvalidArgument("%s: cannot read %s: %s" %
                                     (what, path, e.strerror)) from None


def connect(address=None, token=None, tls_ca=None, *, token_file=None,
            tls_cert=None, tls_key=None, tls_server_name=None, deadline=30.0):
    """A Client for qkov-server, configured as the ``qkov`` CLI is.

    address: host:port; default $QKOV_SERVER, else 127.0.0.1:50051.
    token: the bearer token itself; default the first non-comment line of
      token_file or $QKOV_TOKEN_FILE (none: no token sent).
    tls_ca: PEM file of the CA that signed the server's certificate; enables
      TLS. Default $QKOV_TLS_CA. tls_cert and tls_key ($QKOV_TLS_CERT,
      $QKOV_TLS_KEY): a client certificate, where the server asks for one.
    deadline: seconds each call may take.
    """
    address = address or os.environ.get("QKOV_SERVER") or DEFAULT_ADDRESS
    if token is None:
        token_file = token_file or os.environ.get("QKOV_TOKEN_FILE")
        if token_file:
            try:
                token = _read_token(token_file)
            except OSError as e:
                raise errors.InvalidArgument(
                    "token_file: cannot read %s: %s" %
                    (token_file, e.strerror)) from None
    tls_ca = tls_ca or os.environ.get("QKOV_TLS_CA")
    tls_cert = tls_cert or os.environ.get("QKOV_TLS_CERT")
    tls_key = tls_key or os.environ.get("QKOV_TLS_KEY")
    options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
    if tls_ca:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(tls_ca, "tls_ca"),
            private_key=_read(tls_key, "tls_key") if tls_key else None,
            certificate_chain=_read(tls_cert, "tls_cert") if tls_cert else None)
        if tls_server_name:
            options.append(("grpc.ssl_target_name_override", tls_server_name))
        channel = grpc.secure_channel(address, credentials, options)
    else:
        channel = grpc.insecure_channel(address, options)
    return Client(channel, address, token, deadline)


def _state_name(state):
    return sweep_pb2.TrialState.Name(state).lower()


def _parameterization_name(p):
    return config_pb2.Parameterization.Name(p)


def _task_name(kind):
    """config.proto's task name ("fixed_attention"), or "task_<number>" for
    a task registered outside it (docs/adding-a-task.md), whose name only
    the programs built with it know."""
    if kind in config_pb2.TaskKind.values():
        return config_pb2.TaskKind.Name(kind).lower().replace("task_", "", 1)
    return "task_%d" % kind


def _axes_of(trial_id, config, state):
    training = config.training
    return {
        "trial_id": trial_id,
        "arm": config.arm,
        "parameterization": _parameterization_name(config.parameterization),
        "lr_ratio": config.lr_ratio,
        "eta_ov": config.eta_ov,
        "seed": config.seed,
        "alpha": config.alpha,
        "task": _task_name(training.task),
        "state": _state_name(state),
    }


def _summary_columns(prefix, summary):
    return {
        prefix + "n": summary.n,
        prefix + "mean": summary.mean,
        prefix + "std": summary.std,
        prefix + "ci95": summary.ci95,
    }


class Client:
    """A connection to qkov-server. Make one with qkov.connect()."""

    def __init__(self, channel, address, token, deadline):
        self._channel = channel
        self._stub = sweep_pb2_grpc.SweepServiceStub(channel)
        self.address = address
        self._metadata = (("authorization", "Bearer " + token),) if token \
            else ()
        self._deadline = deadline

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, deadline=None):
        try:
            return getattr(self._stub, method)(
                request, timeout=deadline or self._deadline,
                metadata=self._metadata)
        except grpc.RpcError as e:
            raise errors.from_rpc_error(e, self.address) from None

    def _stream(self, method, request, deadline=None):
        try:
            for message in getattr(self._stub, method)(
                    request, timeout=deadline, metadata=self._metadata):
                yield message
        except grpc.RpcError as e:
            raise errors.from_rpc_error(e, self.address) from None

    # -- sweeps and trials ----------------------------------------------

    def sweeps(self):
        """One row per sweep: name, owner, description, created_at,
        total_trials, one count column per trial state, cancelled, paused,
        priority."""
        resp = self._call("ListSweeps", sweep_pb2.ListSweepsRequest())
        states = [s.lower() for s in sweep_pb2.TrialState.keys()
                  if s != "TRIAL_STATE_UNSPECIFIED"]
        rows = []
        for s in resp.sweeps:
            row = {"name": s.name, "owner": s.owner,
                   "description": s.description,
                   "created_at": pd.Timestamp(
                       s.created_at.ToNanoseconds(), unit="ns", tz="UTC"),
                   "total_trials": s.total_trials}
            row.update({state: 0 for state in states})
            for c in s.counts:
                row[_state_name(c.state)] = c.count
            row.update({"cancelled": s.cancelled, "paused": s.paused,
                        "priority": s.priority})
            rows.append(row)
        columns = ["name", "owner", "description", "created_at",
                   "total_trials"] + states + ["cancelled", "paused",
                                               "priority"]
        return pd.DataFrame(rows, columns=columns)

    def trials(self, sweep, where=None):
        """One row per trial of `sweep` in trial order: trial_id, ordinal,
        the axes (arm, parameterization, lr_ratio, eta_ov, seed, alpha,
        task), state, attempts, last_step, config_hash. `where`: a trial state
        ("done", "running", ...) to keep only those."""
        state = 0
        if where:
            try:
                state = sweep_pb2.TrialState.Value(where.upper())
            except ValueError:
                raise errors.InvalidArgument(
                    "where: '%s' is not a trial state (%s)" %
                    (where, ", ".join(s.lower() for s in
                                      sweep_pb2.TrialState.keys()[1:]))) \
                    from None
        rows, token = [], ""
        while True:
            resp = self._call("ListTrials", sweep_pb2.ListTrialsRequest(
                sweep_name=sweep, state=state, page_size=10000,
                page_token=token))
            for t in resp.trials:
                row = _axes_of(t.trial_id, t.config, t.state)
                row.update({"ordinal": t.ordinal, "attempts": t.attempts,
                            "last_step": t.last_step,
                            "config_hash": t.config_hash})
                rows.append(row)
            token = resp.next_page_token
            if not token:
                break
        columns = ["trial_id", "ordinal"] + _AXES + ["attempts", "last_step",
                                                     "config_hash"]
        return pd.DataFrame(rows, columns=columns)

    def trial(self, trial_id):
        """A trial as a dict: its config (a dict of the TrialConfig's
        fields), state, attempts (a list of dicts), results, and heatmaps
        (name -> dict with x_edges, y_edges and `values`, a numpy array of
        rows = y bins, columns = x bins)."""
        from google.protobuf import json_format
        t = self._call("GetTrial", sweep_pb2.GetTrialRequest(
            trial_id=trial_id))
        heatmaps = {}
        for h in t.heatmaps:
            x, y = list(h.x_edges), list(h.y_edges)
            heatmaps[h.name] = {
                "x_label": h.x_label, "y_label": h.y_label,
                "x_edges": np.array(x), "y_edges": np.array(y),
                "values": np.array(h.values).reshape(
                    max(len(y) - 1, 0), max(len(x) - 1, 0)),
            }
        return {
            "trial_id": t.trial_id,
            "sweep": t.sweep_name,
            "ordinal": t.ordinal,
            "config": json_format.MessageToDict(
                t.config, preserving_proto_field_name=True),
            "config_hash": t.config_hash,
            "state": _state_name(t.state),
            "last_step": t.last_step,
            "results": dict(t.results),
            "attempts": [json_format.MessageToDict(
                a, preserving_proto_field_name=True)
                for a in t.attempt_history],
            "heatmaps": heatmaps,
        }

    # -- results --------------------------------------------------------

    def results(self, sweep, where=None, metrics=None):
        """One row per trial: trial_id, the axes (arm, parameterization,
        lr_ratio, eta_ov, seed, alpha, task, state) and one column per final metric,
        in name order (NaN where a trial has none). `where`: KEY=VALUE
        strings (or one); `metrics`: the metric columns (default all). One
        server stream in columns (StreamResults), one snapshot."""
        req = sweep_pb2.QueryResultsRequest(
            sweep_name=sweep, where=_strings(where),
            metrics=_strings(metrics))
        parts = {}
        names = None
        for c in self._stream("StreamResults", req):
            if names is None:
                names = [m.name for m in c.metrics]
            n = len(c.trial_ids)
            part = {
                "trial_id": np.array(c.trial_ids, dtype=object),
                "arm": (np.array(c.arm, dtype=object) if len(c.arm) == n
                        else np.full(n, "", dtype=object)),
                "parameterization": np.fromiter(c.parameterization, np.int64,
                                                n),
                "lr_ratio": np.fromiter(c.lr_ratio, np.float64, n),
                "eta_ov": np.fromiter(c.eta_ov, np.float64, n),
                "seed": np.fromiter(c.seed, np.uint64, n),
                "alpha": np.fromiter(c.alpha, np.float64, n),
                "task": np.fromiter(c.task, np.int64, n),
                "state": np.fromiter(c.state, np.int64, n),
            }
            for m in c.metrics:
                part[m.name] = np.fromiter(m.values, np.float64, n)
            for k, v in part.items():
                parts.setdefault(k, []).append(v)
        names = names or []
        columns = ["trial_id"] + _AXES + names
        if not parts or not len(parts["trial_id"]):
            return pd.DataFrame(columns=columns)
        data = {k: np.concatenate(v) for k, v in parts.items()}
        data["parameterization"] = _names_of(
            data["parameterization"], config_pb2.Parameterization.Name)
        data["task"] = _names_of(data["task"], _task_name)
        data["state"] = _names_of(data["state"], _state_name)
        data["seed"] = data["seed"].astype(np.int64)
        return pd.DataFrame(data, columns=columns)

    def aggregate(self, sweep, by, metrics, where=None):
        """The server's summary over the trials that share the `by` keys
        (over seeds, typically): one row per group, a column per key, then
        METRIC_n, METRIC_mean, METRIC_std and METRIC_ci95 (Student-t 95%
        half width) per metric. NaN std and ci95 where n < 2."""
        by, metrics = _strings(by), _strings(metrics)
        resp = self._call("AggregateResults", sweep_pb2.AggregateResultsRequest(
            sweep_name=sweep, by=by, metrics=metrics, where=_strings(where)))
        rows = []
        for g in resp.groups:
            row = dict(zip(by, g.keys))
            for m in metrics:
                row.update(_summary_columns(m + "_", g.metrics[m]))
            rows.append(row)
        columns = list(by) + [m + "_" + s for m in metrics
                              for s in ("n", "mean", "std", "ci95")]
        return _numeric_keys(pd.DataFrame(rows, columns=columns), by)

    def matched(self, sweep, curve, levels=None, metrics=None, by=None,
                window=1, where=None, num_levels=5):
        """The matched comparison (docs/metrics.md, "Matched values"): for
        each arm (`by`, default the axes that vary but seed) and each level
        of `curve` (default `num_levels` levels every trial reaches), where
        each trial's curve, smoothed over `window` reports, first reaches
        the level: trials, reached, step_n/mean/std/ci95, and METRIC_n/mean/
        std/ci95 of each of `metrics` there. Computed on the server."""
        if not metrics:
            raise errors.InvalidArgument(
                "metrics: name at least one curve to compare")
        resp = self._call("MatchSweep", sweep_pb2.MatchSweepRequest(
            sweep_name=sweep, curve=curve, levels=list(levels or []),
            num_levels=num_levels, window=window, metrics=_strings(metrics),
            by=_strings(by), where=_strings(where)))
        keys = list(resp.by)
        rows = []
        for g in resp.groups:
            row = dict(zip(keys, g.keys))
            row.update({"level": g.level, "trials": g.trials,
                        "reached": g.reached})
            row.update(_summary_columns("step_", g.step))
            for m in resp.metrics:
                row.update(_summary_columns(m + "_", g.metrics[m]))
            rows.append(row)
        columns = keys + ["level", "trials", "reached", "step_n", "step_mean",
                          "step_std", "step_ci95"] + [
            m + "_" + s for m in resp.metrics
            for s in ("n", "mean", "std", "ci95")]
        frame = _numeric_keys(pd.DataFrame(rows, columns=columns), keys)
        frame.attrs.update({"reference": resp.reference,
                            "window": resp.window,
                            "downwards": resp.downwards,
                            "levels": list(resp.levels)})
        return frame

    def curves(self, sweep, metrics=None, trials=None, max_points=None):
        """Every reported point of the sweep's curves, long format: trial_id,
        step, name, value, each trial's points as `qkov export --per point`
        gives them (the latest attempt's from where it resumed). One server
        stream, never thinned. `metrics`: the curve names (default all);
        `trials`: trial ids (default all). Raises ResourceExhausted past
        max_points (server default 50,000,000) rather than return part."""
        req = sweep_pb2.StreamCurvesRequest(
            sweep_name=sweep, names=_strings(metrics),
            trial_ids=_strings(trials), max_points=max_points or 0)
        ids, names, steps, values = [], [], [], []
        for chunk in self._stream("StreamCurves", req):
            for t in chunk.trials:
                for s in t.series:
                    n = len(s.steps)
                    ids.append(np.full(n, t.trial_id, dtype=object))
                    names.append(np.full(n, s.name, dtype=object))
                    steps.append(np.fromiter(s.steps, np.int64, n))
                    values.append(np.fromiter(s.values, np.float64, n))
        if not steps:
            return pd.DataFrame({"trial_id": pd.Series(dtype=object),
                                 "step": pd.Series(dtype=np.int64),
                                 "name": pd.Series(dtype=object),
                                 "value": pd.Series(dtype=np.float64)})
        return pd.DataFrame({"trial_id": np.concatenate(ids),
                             "step": np.concatenate(steps),
                             "name": np.concatenate(names),
                             "value": np.concatenate(values)})

    # -- submit and watch -----------------------------------------------

    def submit(self, path_or_dict=None, set=None, preset=None, quick=False,
               qkov_cli="qkov"):
        """Submits a sweep: a sweep file (YAML or JSON path), a dict of the
        same keys, or a preset (`preset`, `quick`), with `set`: KEY=VALUE
        overrides (a dict or strings). The sweep file is read by the qkov
        CLI (`qkov_cli`, found on PATH), the one reader of the format, then
        submitted to this client's server. Returns the sweep's name."""
        cli = shutil.which(qkov_cli)
        if cli is None:
            raise errors.FailedPrecondition(
                "submit: the qkov CLI (%s) is not on PATH; install "
                "qkov-client" % qkov_cli)
        args = [cli, "--server", self.address, "submit"]
        temp = None
        if preset is not None:
            args += ["--preset", preset] + (["--quick"] if quick else [])
        elif isinstance(path_or_dict, dict):
            import json
            temp = tempfile.NamedTemporaryFile(
                "w", suffix=".json", delete=False, encoding="utf-8")
            json.dump(path_or_dict, temp)
            temp.close()
            args.append(temp.name)
        elif path_or_dict is not None:
            args.append(os.fspath(path_or_dict))
        else:
            raise errors.InvalidArgument("submit: give a file, a dict or a "
                                         "preset")
        if isinstance(set, dict):
            set = ["%s=%s" % kv for kv in set.items()]
        for s in _strings(set):
            args += ["--set", s]
        env = dict(os.environ)
        if self._metadata:
            token_file = tempfile.NamedTemporaryFile(
                "w", delete=False, encoding="utf-8")
            token_file.write(self._metadata[0][1][len("Bearer "):] + "\n")
            token_file.close()
            os.chmod(token_file.name, 0o600)
            env["QKOV_TOKEN_FILE"] = token_file.name
        try:
            out = subprocess.run(args, capture_output=True, text=True,
                                 env=env, timeout=max(self._deadline, 60))
        finally:
            if temp is not None:
                os.unlink(temp.name)
            if self._metadata:
                os.unlink(env["QKOV_TOKEN_FILE"])
        if out.returncode != 0:
            line = (out.stderr.strip().splitlines() or ["exit %d" %
                                                        out.returncode])[-1]
            line = line[len("qkov: "):] if line.startswith("qkov: ") else line
            raise _CLI_EXIT.get(out.returncode, errors.QkovError)(
                line, address=self.address)
        return _submitted_name(out.stdout)

    def watch(self, sweep, progress=True):
        """Follows the sweep until nothing is queued or running, with a tqdm
        progress bar of ended trials (progress=False: none). Returns the
        sweeps() row of the finished sweep as a dict."""
        bar = None
        ended_states = ("done", "failed", "diverged", "cancelled",
                        "stopped_early")
        try:
            for p in self._stream("WatchSweep",
                                  sweep_pb2.WatchSweepRequest(name=sweep)):
                counts = {_state_name(c.state): c.count
                          for c in p.sweep.counts}
                ended = sum(counts.get(s, 0) for s in ended_states)
                if progress and bar is None:
                    from tqdm.auto import tqdm
                    bar = tqdm(total=p.sweep.total_trials, desc=sweep,
                               unit="trial")
                if bar is not None:
                    bar.total = p.sweep.total_trials
                    bar.update(ended - bar.n)
                    bar.set_postfix({s: n for s, n in counts.items() if n},
                                    refresh=True)
                if p.finished:
                    break
        finally:
            if bar is not None:
                bar.close()
        frame = self.sweeps()
        rows = frame[frame["name"] == sweep]
        if rows.empty:
            raise errors.NotFound("sweep '%s' is gone" % sweep)
        return rows.iloc[0].to_dict()


_CLI_EXIT = {2: errors.InvalidArgument, 3: errors.NotFound,
             4: errors.Unavailable, 5: errors.PermissionDenied}


def _submitted_name(stdout):
    # "sweep NAME: N trials (...)" is the CLI's line.
    for line in stdout.splitlines():
        parts = line.replace(":", " ").split()
        if "sweep" in parts and parts.index("sweep") + 1 < len(parts):
            return parts[parts.index("sweep") + 1]
    raise errors.QkovError("submit: cannot read the sweep's name from: " +
                           stdout.strip()[:200])


def _names_of(codes, name):
    # Enum numbers to their names, through the few distinct values.
    values, inverse = np.unique(codes, return_inverse=True)
    return np.array([name(int(v)) for v in values], dtype=object)[inverse]


def _strings(v):
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v]


def _numeric_keys(frame, keys):
    # Keys arrive as the server's strings ("0.5", "FAFO"); numbers become
    # numbers, as in results().
    for k in keys:
        if k in ("lr_ratio", "eta_ov", "alpha"):
            frame[k] = pd.to_numeric(frame[k])
        elif k == "seed":
            frame[k] = pd.to_numeric(frame[k]).astype(np.int64)
    return frame
