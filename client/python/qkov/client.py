"""qkov's Python client: a sweep's results as pandas DataFrames, and the
whole SweepService API, over gRPC.

Every frame comes from one server computation, never recomputed here:
``results`` and ``trials`` from StreamResults, ``aggregate`` from
AggregateResults, ``matched`` from MatchSweep and ``curves`` from the
StreamCurves stream. One naming rule holds in every frame (docs/notebook.md):

- ``sweep``: the sweep's name, in every frame, so that frames of several
  sweeps concatenate and stay apart;
- ``config.<key>``: a setting of the trial's stored config, under the key a
  sweep file and ``--set`` take (``config.lr_ratio``,
  ``config.training.optimizer.weight_decay``), as the server names it;
- ``result.<name>``: a final result (``result.accuracy``); in aggregate and
  matched frames ``result.<name>.<stat>`` and ``curve.<name>.<stat>``;
- bookkeeping without a prefix: ``trial_id``, ``state``, ``ordinal``,
  ``attempts``, ``last_step``, ``config_hash``, ``started_at``,
  ``ended_at``, ``duration``.
"""

from __future__ import annotations

import html
import json
import os
import sys
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, \
    Tuple, Union

import grpc
import numpy as np
import pandas as pd

from qkov import errors
from qkov.v1 import config_pb2, sweep_pb2, sweep_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
# One answer (the rows of a 100,000-trial sweep are about 30 MB) may be at
# most this large; a larger one raises ResourceExhausted.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024

# The server's row keys (where, sort_by, by) that are settings: the axes.
_AXIS_KEYS = ("parameterization", "lr_ratio", "eta_ov", "seed", "alpha",
              "arm")
_ENDED_STATES = ("done", "failed", "diverged", "cancelled", "stopped_early")

Strings = Union[None, str, Iterable[str]]


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


def _in_notebook():
    # tqdm bars by default only where a notebook kernel runs this.
    return "ipykernel" in sys.modules


def connect(address: Optional[str] = None, token: Optional[str] = None,
            tls_ca: Optional[str] = None, *, token_file: Optional[str] = None,
            tls_cert: Optional[str] = None, tls_key: Optional[str] = None,
            tls_server_name: Optional[str] = None, deadline: float = 30.0,
            progress: Optional[bool] = None) -> "Client":
    """A Client for qkov-server, configured as the ``qkov`` CLI is.

    address: host:port; default $QKOV_SERVER, else 127.0.0.1:50051.
    token: the bearer token itself; default the first non-comment line of
      token_file or $QKOV_TOKEN_FILE (none: no token sent).
    tls_ca: PEM file of the CA that signed the server's certificate; enables
      TLS. Default $QKOV_TLS_CA. tls_cert and tls_key ($QKOV_TLS_CERT,
      $QKOV_TLS_KEY): a client certificate, where the server asks for one.
      tls_server_name ($QKOV_TLS_SERVER_NAME): the name the certificate
      carries, where it is not the address's host.
    deadline: seconds a call may take; for a stream, seconds it may go
      without a message (a stalled stream raises DeadlineExceeded).
    progress: tqdm bars on long reads and watch(); default on in a notebook
      kernel, off in scripts.
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
    if not deadline or deadline <= 0 or deadline != deadline:
        raise errors.InvalidArgument("deadline: must be a number of seconds "
                                     "> 0, not %r" % (deadline,))
    tls_ca = tls_ca or os.environ.get("QKOV_TLS_CA")
    tls_cert = tls_cert or os.environ.get("QKOV_TLS_CERT")
    tls_key = tls_key or os.environ.get("QKOV_TLS_KEY")
    tls_server_name = tls_server_name or os.environ.get(
        "QKOV_TLS_SERVER_NAME")
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
    return Client(channel, address, token, deadline,
                  _in_notebook() if progress is None else progress)


def _state_name(state):
    return sweep_pb2.TrialState.Name(state).lower()


def _state_number(name, what):
    try:
        return sweep_pb2.TrialState.Value(name.upper())
    except ValueError:
        raise errors.InvalidArgument(
            "%s: '%s' is not a trial state (%s)" %
            (what, name, ", ".join(s.lower() for s in
                                   sweep_pb2.TrialState.keys()[1:]))) \
            from None


def _task_name(kind):
    """config.proto's task name ("fixed_attention"), or "task_<number>" for
    a task registered outside it (docs/adding-a-task.md). Frames name tasks
    as the server does (config.training.task); this serves the few places
    that hold a TaskKind number."""
    if kind in config_pb2.TaskKind.values():
        return config_pb2.TaskKind.Name(kind).lower().replace("task_", "", 1)
    return "task_%d" % kind


def _server_key(key):
    """A frame's column name as the server's row key: config.lr_ratio ->
    lr_ratio, result.accuracy -> accuracy, trial_id -> trial; other names
    as given."""
    if key.startswith("config."):
        return key[len("config."):]
    if key.startswith("result."):
        return key[len("result."):]
    if key == "trial_id":
        return "trial"
    return key


def _column_of(key):
    """The server's row key (an aggregate's or matched view's key) as a
    frame's column: an axis -> config.<axis>, state and trial stay, a
    metric -> result.<metric>."""
    if key in _AXIS_KEYS:
        return "config." + key
    if key == "trial":
        return "trial_id"
    if key == "state":
        return "state"
    return "result." + key


def _where(where):
    # KEY=VALUE filters with the frame's names mapped to the server's.
    out = []
    for w in _strings(where):
        key, eq, value = w.partition("=")
        out.append(_server_key(key.strip()) + eq + value if eq else w)
    return out


def _timestamps(ms):
    # Unix milliseconds (0: none) to UTC datetimes (NaT: none).
    ms = pd.Series(np.asarray(ms, dtype=np.int64))
    return pd.to_datetime(ms.where(ms > 0), unit="ms", utc=True)


class Sweep(dict):
    """A sweep as sweeps() gives its row, a dict; shown as a table in a
    notebook."""

    def _repr_html_(self):
        return _html_table("sweep " + str(self.get("name", "")), self)


class Trial(dict):
    """One trial (Client.trial()), a dict; shown as a table in a notebook."""

    def _repr_html_(self):
        shown = {k: v for k, v in self.items()
                 if k not in ("config", "results", "attempts", "heatmaps")}
        shown.update({"config." + k: v for k, v in self["config"].items()})
        shown.update({"result." + k: v for k, v in self["results"].items()})
        shown["attempts"] = len(self["attempts"])
        shown["heatmaps"] = ", ".join(self["heatmaps"]) or "-"
        return _html_table("trial " + str(self.get("trial_id", "")), shown)


def _html_table(title, items):
    rows = "".join("<tr><th style='text-align:left'>%s</th><td>%s</td></tr>"
                   % (html.escape(str(k)), html.escape(str(v)))
                   for k, v in items.items())
    return "<table><caption>%s</caption>%s</table>" % (html.escape(title),
                                                        rows)


class Client:
    """A connection to qkov-server. Make one with qkov.connect()."""

    def __init__(self, channel, address, token, deadline, progress=False):
        self._channel = channel
        self._stub = sweep_pb2_grpc.SweepServiceStub(channel)
        self.address = address
        self._metadata = (("authorization", "Bearer " + token),) if token \
            else ()
        self._deadline = deadline
        self._progress = progress

    def close(self) -> None:
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

    def _stream(self, method, request, idle=None):
        """The stream's messages; raises DeadlineExceeded once `idle`
        seconds (default the client's deadline) pass without one while the
        caller waits for the next, cancelling the call."""
        idle = idle or self._deadline
        call = getattr(self._stub, method)(request, metadata=self._metadata)
        waiting = {"since": time.monotonic(), "stalled": False}
        done = threading.Event()

        def watchdog():
            # Wakes at most every second, so at most `idle` + 1 s late.
            while not done.wait(min(1.0, idle)):
                since = waiting["since"]
                if since is not None and time.monotonic() - since > idle:
                    waiting["stalled"] = True
                    call.cancel()
                    return

        guard = threading.Thread(target=watchdog, daemon=True,
                                 name="qkov-stream-deadline")
        guard.start()
        try:
            while True:
                waiting["since"] = time.monotonic()
                try:
                    message = next(call)
                except StopIteration:
                    return
                waiting["since"] = None
                yield message
        except grpc.RpcError as e:
            if waiting["stalled"]:
                raise errors.DeadlineExceeded(
                    "%s: no message from %s for %g s (the stream stalled; "
                    "connect(deadline=...) sets the wait)" %
                    (method, self.address, idle),
                    code=grpc.StatusCode.DEADLINE_EXCEEDED,
                    address=self.address) from None
            raise errors.from_rpc_error(e, self.address) from None
        finally:
            done.set()
            call.cancel()

    def _bar(self, progress, **kwargs):
        if not (self._progress if progress is None else progress):
            return None
        from tqdm.auto import tqdm
        return tqdm(**kwargs)

    # -- sweeps ----------------------------------------------------------

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep: name, owner, description, created_at,
        total_trials, one count column per trial state (queued ...
        stopped_early), sweep_cancelled, paused, priority."""
        resp = self._call("ListSweeps", sweep_pb2.ListSweepsRequest())
        rows = [_sweep_row(s) for s in resp.sweeps]
        return pd.DataFrame(rows, columns=_SWEEP_COLUMNS)

    def sweep(self, name: str) -> Sweep:
        """One sweep's row of sweeps() (GetSweep), with the sweep's first
        start and the trials ended in the last 10 minutes."""
        s = self._call("GetSweep", sweep_pb2.GetSweepRequest(name=name))
        row = Sweep(_sweep_row(s))
        row["first_started_at"] = (pd.Timestamp(
            s.first_started_at.ToNanoseconds(), unit="ns", tz="UTC")
            if s.HasField("first_started_at") else pd.NaT)
        row["ended_last_10min"] = s.ended_last_10min
        return row

    def submit(self, path_or_dict: Union[None, str, os.PathLike, dict] = None,
               set: Union[None, dict, Sequence[str]] = None,
               preset: Optional[str] = None, quick: bool = False) -> str:
        """Submits a sweep over gRPC: a sweep file (YAML or JSON path), a
        dict of the same keys, or a preset (`preset`, `quick`), with `set`:
        KEY=VALUE overrides (a dict or strings). The server reads it as
        `qkov submit` reads a file (docs/sweep-files.md), so no qkov CLI is
        needed. Returns the sweep's name; re-submitting a name extends the
        sweep."""
        req = sweep_pb2.SubmitSweepRequest()
        if preset is not None:
            if path_or_dict is not None:
                raise errors.InvalidArgument(
                    "submit: give a file, a dict or a preset, not two")
            req.preset, req.quick = preset, quick
        elif quick:
            raise errors.InvalidArgument("submit: quick goes with a preset")
        elif isinstance(path_or_dict, dict):
            try:
                req.sweep_file = json.dumps(path_or_dict, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise errors.InvalidArgument(
                    "submit: the dict is not a sweep file: %s" % e) from None
            req.sweep_file_name = "dict"
        elif path_or_dict is not None:
            path = os.fspath(path_or_dict)
            try:
                with open(path, encoding="utf-8") as f:
                    req.sweep_file = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise errors.InvalidArgument(
                    "submit: cannot read %s: %s" %
                    (path, getattr(e, "strerror", None) or e)) from None
            req.sweep_file_name = path
            if not req.sweep_file:
                raise errors.InvalidArgument("submit: %s is empty" % path)
        else:
            raise errors.InvalidArgument("submit: give a file, a dict or a "
                                         "preset")
        if isinstance(set, dict):
            set = ["%s=%s" % (k, json.dumps(v) if not isinstance(v, str)
                              else v) for k, v in set.items()]
        req.overrides.extend(_strings(set))
        resp = self._call("SubmitSweep", req)
        return resp.sweep.name

    def cancel(self, sweep: str) -> int:
        """Cancels the sweep: queued trials are cancelled, running ones
        stop at their next report. Returns the trials cancelled."""
        return self._call("CancelSweep", sweep_pb2.CancelSweepRequest(
            name=sweep)).trials_cancelled

    def delete(self, sweep: str) -> Dict[str, int]:
        """Deletes an ended sweep with its trials, curves and results
        (FailedPrecondition while a trial is queued or running: cancel it
        first). Waits at least 10 minutes for a large sweep. Returns
        trials_deleted, metric_points_deleted and bytes_freed (space in the
        database file that new rows reuse)."""
        r = self._call("DeleteSweep", sweep_pb2.DeleteSweepRequest(name=sweep),
                       deadline=max(self._deadline, 600.0))
        return {"trials_deleted": r.trials_deleted,
                "metric_points_deleted": r.metric_points_deleted,
                "bytes_freed": r.bytes_freed}

    def pause(self, sweep: str) -> Sweep:
        """No new leases for the sweep; running trials finish. Returns the
        sweep's row."""
        return Sweep(_sweep_row(self._call("PauseSweep", sweep_pb2.
                                           PauseSweepRequest(name=sweep,
                                                             paused=True))))

    def resume(self, sweep: str) -> Sweep:
        """Leases the paused sweep's trials again. Returns its row."""
        return Sweep(_sweep_row(self._call("PauseSweep", sweep_pb2.
                                           PauseSweepRequest(name=sweep,
                                                             paused=False))))

    def retry(self, sweep: str) -> int:
        """Queues the sweep's failed trials again with a fresh retry budget.
        Returns the trials queued."""
        return self._call("RetrySweep", sweep_pb2.RetrySweepRequest(
            name=sweep)).trials_requeued

    def leasing(self, paused: Optional[bool] = None,
                reason: str = "") -> Dict[str, Any]:
        """The server-wide leasing switch (docs/cluster.md, "Stop leasing"):
        paused=True stops every lease (running trials finish), False resumes
        (an admin token's alone); None reads it. Returns paused, reason,
        actor and since (UTC; NaT: never set)."""
        req = sweep_pb2.LeasingRequest(reason=reason)
        if paused is not None:
            req.paused = paused
        s = self._call("Leasing", req)
        return {"paused": s.paused, "reason": s.reason, "actor": s.actor,
                "since": _proto_time(s, "since")}

    def watch(self, sweep: str, progress: Optional[bool] = None) -> Sweep:
        """Follows the sweep until nothing is queued or running, with a tqdm
        bar of ended trials (progress: default the client's). Returns the
        finished sweep's row."""
        bar = self._bar(progress, desc=sweep, unit="trial")
        try:
            for p in self._stream("WatchSweep",
                                  sweep_pb2.WatchSweepRequest(name=sweep)):
                counts = {_state_name(c.state): c.count
                          for c in p.sweep.counts}
                if bar is not None:
                    bar.total = p.sweep.total_trials
                    bar.update(sum(counts.get(s, 0) for s in _ENDED_STATES)
                               - bar.n)
                    bar.set_postfix({s: n for s, n in counts.items() if n},
                                    refresh=True)
                if p.finished:
                    return Sweep(_sweep_row(p.sweep))
        finally:
            if bar is not None:
                bar.close()
        raise errors.Unavailable("watch: the stream of %s ended before it "
                                 "finished" % sweep, address=self.address)

    # -- trials and results ---------------------------------------------

    def results(self, sweep: str, where: Strings = None,
                metrics: Strings = None, sort_by: Optional[str] = None,
                descending: bool = False, offset: int = 0,
                limit: Optional[int] = None,
                progress: Optional[bool] = None) -> pd.DataFrame:
        """One row per trial: sweep, trial_id, every setting (config.*),
        state, ordinal, attempts, last_step, config_hash, started_at,
        ended_at, duration, then each final result (result.*, NaN where a
        trial has none). `where`: KEY=VALUE equality filters on an axis,
        the state, the trial or a result (config.lr_ratio=20, state=done);
        `metrics`: the results to return (default all); `sort_by` (a
        column), `descending`, `offset`, `limit`: the server's order and
        page. One server stream in columns, one snapshot."""
        return self._rows(sweep, where, metrics, sort_by, descending, offset,
                          limit, progress, with_results=True)

    def trials(self, sweep: str, state: Optional[str] = None,
               where: Strings = None,
               progress: Optional[bool] = None) -> pd.DataFrame:
        """results() without the result columns: every trial's settings,
        state and bookkeeping, in trial order. `state`: keep only trials in
        that state ("done", "running", ...)."""
        filters = _where(where)
        if state is not None:
            _state_number(state, "state")
            filters.append("state=" + state.lower())
        return self._rows(sweep, filters, None, None, False, 0, None,
                          progress, with_results=False)

    def _rows(self, sweep, where, metrics, sort_by, descending, offset,
              limit, progress, with_results):
        if limit is not None and limit <= 0:
            raise errors.InvalidArgument("limit: must be > 0, not %r" %
                                         (limit,))
        req = sweep_pb2.QueryResultsRequest(
            sweep_name=sweep, where=_where(where),
            metrics=[_server_key(m) for m in _strings(metrics)],
            sort_by=_server_key(sort_by) if sort_by else "",
            descending=descending, offset=offset, limit=limit or 0)
        rows = None
        bar = None
        try:
            for c in self._stream("StreamResults", req):
                if rows is None:
                    # Every column allocated once, at the size the first
                    # message announces: no concatenation, no second copy.
                    page = max(0, c.total_rows - offset)
                    rows = _Rows(min(page, limit) if limit else page, c,
                                 with_results, self.address)
                    bar = self._bar(progress, total=rows.n, unit="row",
                                    desc=sweep)
                rows.add(c)
                if bar is not None:
                    bar.update(len(c.trial_ids))
        finally:
            if bar is not None:
                bar.close()
        if rows is None:
            rows = _Rows(0, sweep_pb2.ResultColumns(), with_results,
                         self.address)
        return rows.frame(sweep)

    def trial(self, trial_id: str) -> Trial:
        """One trial: sweep, ordinal, state, config (a dict of every setting
        under its sweep-file key, typed: ints, floats, strings, bools),
        config_hash, last_step, results, attempts (a list of dicts with UTC
        datetimes), heatmaps (name -> x_edges, y_edges and `values`, a numpy
        array of rows = y bins, columns = x bins)."""
        t = self._call("GetTrial", sweep_pb2.GetTrialRequest(
            trial_id=trial_id))
        # The settings as the server names them: the trial's own row.
        config = {}
        for c in self._stream("StreamResults", sweep_pb2.QueryResultsRequest(
                sweep_name=t.sweep_name, where=["trial=" + trial_id])):
            for s in c.settings:
                if len(c.trial_ids) != 1 or 0 in s.missing:
                    continue
                if len(s.codes):
                    config[s.name] = s.categories[s.codes[0]]
                elif len(s.integers):
                    config[s.name] = int(s.integers[0])
                elif len(s.flags):
                    config[s.name] = bool(s.flags[0])
                else:
                    config[s.name] = float(s.numbers[0])
        heatmaps = {}
        for h in t.heatmaps:
            x, y = list(h.x_edges), list(h.y_edges)
            heatmaps[h.name] = {
                "x_label": h.x_label, "y_label": h.y_label,
                "x_edges": np.array(x), "y_edges": np.array(y),
                "values": np.array(h.values).reshape(
                    max(len(y) - 1, 0), max(len(x) - 1, 0)),
            }
        return Trial({
            "trial_id": t.trial_id,
            "sweep": t.sweep_name,
            "ordinal": t.ordinal,
            "config": config,
            "config_hash": t.config_hash,
            "state": _state_name(t.state),
            "last_step": t.last_step,
            "results": dict(t.results),
            "attempts": [{
                "attempt": a.attempt, "worker_id": a.worker_id,
                "state": a.state,
                "started_at": _proto_time(a, "started_at"),
                "ended_at": _proto_time(a, "ended_at"),
                "error": a.error,
                "provenance": json.loads(a.provenance_json or "{}"),
            } for a in t.attempt_history],
            "heatmaps": heatmaps,
        })

    def aggregate(self, sweep: str, by: Strings, metrics: Strings,
                  where: Strings = None) -> pd.DataFrame:
        """The server's summary over the trials that share the `by` keys
        (over seeds, typically): one row per group: sweep, a column per key
        (config.<axis>, state), then result.M.n, result.M.mean, result.M.std
        and result.M.ci95 (Student-t 95% half width; NaN where n < 2) per
        metric M. Keys and metrics by column name or server key."""
        by = [_server_key(b) for b in _strings(by)]
        metrics = [_server_key(m) for m in _strings(metrics)]
        resp = self._call("AggregateResults", sweep_pb2.AggregateResultsRequest(
            sweep_name=sweep, by=by, metrics=metrics, where=_where(where)))
        keys = [_column_of(b) for b in by]
        rows = []
        for g in resp.groups:
            row = dict(zip(keys, g.keys))
            for m in metrics:
                row.update(_summary_columns("result.%s." % m, g.metrics[m]))
            rows.append(row)
        columns = keys + ["result.%s.%s" % (m, s) for m in metrics
                          for s in _STATS]
        frame = _typed_keys(pd.DataFrame(rows, columns=columns), keys)
        frame.insert(0, "sweep", pd.Categorical([sweep] * len(frame)))
        return frame

    def matched(self, sweep: str, curve: str,
                levels: Optional[Sequence[float]] = None,
                metrics: Strings = None, by: Strings = None, window: int = 1,
                where: Strings = None, num_levels: int = 5) -> pd.DataFrame:
        """The matched comparison (docs/metrics.md, "Matched values"): for
        each arm (`by`, default the axes that vary but seed) and each level
        of `curve` (default `num_levels` levels every trial reaches), where
        each trial's curve, smoothed over `window` reports, first reaches
        the level: sweep, the arm's keys (config.*), level, trials, reached,
        step.n/mean/std/ci95, and curve.M.n/mean/std/ci95 of each of
        `metrics` there. Computed on the server."""
        if not metrics:
            raise errors.InvalidArgument(
                "metrics: name at least one curve to compare")
        resp = self._call("MatchSweep", sweep_pb2.MatchSweepRequest(
            sweep_name=sweep, curve=curve, levels=list(levels or []),
            num_levels=num_levels, window=window, metrics=_strings(metrics),
            by=[_server_key(b) for b in _strings(by)], where=_where(where)))
        keys = [_column_of(k) for k in resp.by]
        rows = []
        for g in resp.groups:
            row = dict(zip(keys, g.keys))
            row.update({"level": g.level, "trials": g.trials,
                        "reached": g.reached})
            row.update(_summary_columns("step.", g.step))
            for m in resp.metrics:
                row.update(_summary_columns("curve.%s." % m, g.metrics[m]))
            rows.append(row)
        columns = keys + ["level", "trials", "reached"] + [
            "step." + s for s in _STATS] + [
            "curve.%s.%s" % (m, s) for m in resp.metrics for s in _STATS]
        frame = _typed_keys(pd.DataFrame(rows, columns=columns), keys)
        frame.insert(0, "sweep", pd.Categorical([sweep] * len(frame)))
        frame.attrs.update({"reference": resp.reference,
                            "window": resp.window,
                            "downwards": resp.downwards,
                            "levels": list(resp.levels)})
        return frame

    def curves(self, sweep: str, metrics: Strings = None,
               trials: Strings = None, max_points: Optional[int] = None,
               progress: Optional[bool] = None) -> pd.DataFrame:
        """Every reported point of the sweep's curves, long format: sweep,
        trial_id, curve, step, value (trial_id and curve Categorical), each
        trial's points as `qkov export --per point` gives them (the latest
        attempt's from where it resumed). One server stream, never thinned,
        built column by column (peak memory under twice the frame's).
        `metrics`: the curve names (default all); `trials`: trial ids
        (default all). Raises ResourceExhausted past max_points (server
        default 50,000,000) rather than return part; iter_curves() reads a
        sweep too large for memory one trial at a time."""
        trial_names, curve_names = [], []
        trial_code, curve_code = {}, {}
        # Per message (about 1 MB: many trials): its points' steps and
        # values, and per series its trial's and curve's code and length.
        # The pieces hold the frame's numbers once; joined a column at a
        # time, the codes repeated per point only at the end, in the
        # smallest dtype that holds them.
        parts = {"tcode": [], "ccode": [], "length": [], "step": [],
                 "value": []}
        bar = self._bar(progress, unit="trial", desc=sweep)
        try:
            for chunk in self._curve_chunks(sweep, metrics, trials,
                                            max_points):
                series = [(t.trial_id, s) for t in chunk.trials
                          for s in t.series]
                lengths = np.fromiter((len(s.steps) for _, s in series),
                                      np.int64, len(series))
                n = int(lengths.sum())
                tcodes = np.empty(len(series), np.int32)
                ccodes = np.empty(len(series), np.int8)
                for i, (trial_id, s) in enumerate(series):
                    tcodes[i] = trial_code.setdefault(trial_id,
                                                      len(trial_names))
                    if tcodes[i] == len(trial_names):
                        trial_names.append(trial_id)
                    c = curve_code.get(s.name)
                    if c is None:
                        if len(curve_names) == 127:
                            raise errors.ResourceExhausted(
                                "curves: more than 127 curve names; ask "
                                "for some with metrics=",
                                address=self.address)
                        c = curve_code[s.name] = len(curve_names)
                        curve_names.append(s.name)
                    ccodes[i] = c
                parts["tcode"].append(tcodes)
                parts["ccode"].append(ccodes)
                parts["length"].append(lengths)
                parts["step"].append(np.fromiter(
                    (x for _, s in series for x in s.steps), np.int64, n))
                parts["value"].append(np.fromiter(
                    (x for _, s in series for x in s.values), np.float64, n))
                del series
                if bar is not None:
                    bar.update(len(chunk.trials))
        finally:
            if bar is not None:
                bar.close()
        columns = {}
        # One column at a time, each column's pieces freed once joined.
        for name, dtype in (("step", np.int64), ("value", np.float64),
                            ("length", np.int64), ("tcode", np.int32),
                            ("ccode", np.int8)):
            pieces = parts.pop(name)
            columns[name] = (np.concatenate(pieces) if pieces
                             else np.empty(0, dtype=dtype))
            del pieces
        lengths = columns.pop("length")
        columns["trial"] = np.repeat(
            columns.pop("tcode").astype(_code_dtype(len(trial_names))),
            lengths)
        columns["curve"] = np.repeat(columns.pop("ccode"), lengths)
        n = len(columns["step"])
        return pd.DataFrame({
            "sweep": pd.Categorical.from_codes(np.zeros(n, dtype=np.int8),
                                               [sweep]),
            "trial_id": pd.Categorical.from_codes(columns.pop("trial"),
                                                  trial_names),
            "curve": pd.Categorical.from_codes(columns.pop("curve"),
                                               curve_names),
            "step": columns.pop("step"),
            "value": columns.pop("value"),
        }, copy=False)

    def iter_curves(self, sweep: str, metrics: Strings = None,
                    trials: Strings = None, max_points: Optional[int] = None
                    ) -> Iterator[Tuple[str, pd.DataFrame]]:
        """(trial_id, frame) per trial, in trial order, each frame curve,
        step, value: the same points as curves(), one trial in memory at a
        time. The stream stays open while the caller works on a trial."""
        for t in self._chunks_of(sweep, metrics, trials, max_points):
            curve = np.concatenate([np.full(len(s.steps), s.name, dtype=object)
                                    for s in t.series]) if t.series else \
                np.empty(0, dtype=object)
            yield t.trial_id, pd.DataFrame({
                "curve": pd.Categorical(curve),
                "step": np.concatenate([np.array(s.steps, dtype=np.int64)
                                        for s in t.series])
                if t.series else np.empty(0, dtype=np.int64),
                "value": np.concatenate([np.array(s.values, dtype=np.float64)
                                         for s in t.series])
                if t.series else np.empty(0, dtype=np.float64)})

    def _curve_chunks(self, sweep, metrics, trials, max_points):
        req = sweep_pb2.StreamCurvesRequest(
            sweep_name=sweep, names=_strings(metrics),
            trial_ids=_strings(trials), max_points=max_points or 0)
        return self._stream("StreamCurves", req)

    def _chunks_of(self, sweep, metrics, trials, max_points):
        for chunk in self._curve_chunks(sweep, metrics, trials, max_points):
            for t in chunk.trials:
                yield t

    def sql(self, query: str, max_rows: int = 0) -> pd.DataFrame:
        """A read-only SQL statement against the results database
        (docs/schema.md), in the server's sandbox: its columns and rows.
        `frame.attrs["truncated_by"]` names what cut a truncated answer
        ("100000 rows"; "" when whole). BLOBs come back as bytes."""
        resp = self._call("QuerySql", sweep_pb2.QuerySqlRequest(
            sql=query, max_rows=max_rows))
        rows = [[_sql_value(v) for v in r.values] for r in resp.rows]
        frame = pd.DataFrame(rows, columns=list(resp.columns))
        frame.attrs["truncated_by"] = resp.truncated_by if resp.truncated \
            else ""
        return frame


_STATS = ("n", "mean", "std", "ci95")
_STATE_NAMES = [s.lower() for s in sweep_pb2.TrialState.keys()
                if s != "TRIAL_STATE_UNSPECIFIED"]
_SWEEP_COLUMNS = ["name", "owner", "description", "created_at",
                  "total_trials"] + _STATE_NAMES + ["sweep_cancelled",
                                                    "paused", "priority"]


def _sweep_row(s):
    row = {"name": s.name, "owner": s.owner, "description": s.description,
           "created_at": pd.Timestamp(s.created_at.ToNanoseconds(), unit="ns",
                                      tz="UTC"),
           "total_trials": s.total_trials}
    row.update({state: 0 for state in _STATE_NAMES})
    for c in s.counts:
        row[_state_name(c.state)] = c.count
    # The flag is sweep_cancelled: "cancelled" counts cancelled trials.
    row.update({"sweep_cancelled": s.cancelled, "paused": s.paused,
                "priority": s.priority})
    return row


def _proto_time(message, field):
    if not message.HasField(field):
        return pd.NaT
    return pd.Timestamp(getattr(message, field).ToNanoseconds(), unit="ns",
                        tz="UTC")


def _sql_value(v):
    kind = v.WhichOneof("kind")
    if kind is None or kind == "is_null":
        return None
    return getattr(v, kind)


def _summary_columns(prefix, summary):
    return {prefix + "n": summary.n, prefix + "mean": summary.mean,
            prefix + "std": summary.std, prefix + "ci95": summary.ci95}


class _Rows:
    """The columns of results() and trials(), allocated once for `n` rows
    and filled message by message (ResultColumns): text settings as
    Categorical codes against one list of categories, so no row holds a
    string of its own but its trial id and config hash."""

    def __init__(self, n, first, with_results, address):
        self.n, self.at, self.address = n, 0, address
        self.trial_id = np.empty(n, dtype=object)
        self.config_hash = np.empty(n, dtype=object)
        self.ints = {"state": np.zeros(n, np.int32),
                     "ordinal": np.zeros(n, np.int64),
                     "attempts": np.zeros(n, np.int32),
                     "last_step": np.zeros(n, np.int64),
                     "started_ms": np.zeros(n, np.int64),
                     "ended_ms": np.zeros(n, np.int64)}
        # name -> [kind, values, missing, categories, index of a category]
        self.settings = {}
        for c in first.settings:
            if len(c.codes) or len(c.categories):
                kind, values = "text", np.full(n, -1, np.int32)
            elif len(c.integers):
                kind, values = "int", np.zeros(n, np.int64)
            elif len(c.flags):
                kind, values = "flag", np.zeros(n, bool)
            else:
                kind, values = "num", np.zeros(n, np.float64)
            self.settings[c.name] = [kind, values, np.zeros(n, bool), [], {}]
        self.metrics = {m.name: np.full(n, np.nan) for m in first.metrics} \
            if with_results else {}

    def add(self, c):
        k = len(c.trial_ids)
        a, b = self.at, self.at + k
        if b > self.n:
            raise errors.Internal("StreamResults sent more rows than the %d "
                                  "it announced" % self.n,
                                  address=self.address)
        self.trial_id[a:b] = list(c.trial_ids)
        self.config_hash[a:b] = list(c.config_hash)
        for name, column in self.ints.items():
            column[a:b] = getattr(c, name)
        for s in c.settings:
            kind, values, missing, categories, index = self.settings[s.name]
            if kind == "text":
                codes = np.array(s.codes, np.int32)
                if len(s.categories):
                    for cat in s.categories:
                        if cat not in index:
                            index[cat] = len(categories)
                            categories.append(cat)
                    remap = np.array([index[cat] for cat in s.categories],
                                     np.int32)
                    codes = np.where(codes >= 0, remap[np.maximum(codes, 0)],
                                     -1)
                values[a:b] = codes
            elif kind == "int":
                values[a:b] = s.integers
            elif kind == "flag":
                values[a:b] = s.flags
            else:
                values[a:b] = s.numbers
            if len(s.missing):
                missing[a + np.array(s.missing, np.int64)] = True
        for m in c.metrics:
            if m.name in self.metrics:
                self.metrics[m.name][a:b] = m.values
        self.at = b

    def frame(self, sweep):
        n = self.at  # what came (a sweep that shrank between reads: fewer)
        data = {"sweep": pd.Categorical.from_codes(np.zeros(n, np.int8),
                                                   [sweep]),
                "trial_id": self.trial_id[:n]}
        for name, (kind, values, missing, categories, _) in \
                self.settings.items():
            values, missing = values[:n], missing[:n]
            if kind == "text":
                column = pd.Categorical.from_codes(values, categories)
            elif kind == "int":
                column = pd.arrays.IntegerArray(values, missing) \
                    if missing.any() else values
            elif kind == "flag":
                column = pd.arrays.BooleanArray(values, missing) \
                    if missing.any() else values
            else:
                column = np.where(missing, np.nan, values) \
                    if missing.any() else values
            data["config." + name] = column
        states = self.ints["state"][:n]
        data["state"] = pd.Categorical.from_codes(
            np.maximum(states - 1, 0).astype(np.int8), _STATE_NAMES)
        for name in ("ordinal", "attempts", "last_step"):
            data[name] = self.ints[name][:n]
        data["config_hash"] = self.config_hash[:n]
        started = _timestamps(self.ints["started_ms"][:n])
        ended = _timestamps(self.ints["ended_ms"][:n])
        data["started_at"] = started.array
        data["ended_at"] = ended.array
        data["duration"] = (ended - started).array
        for name, values in self.metrics.items():
            data["result." + name] = values[:n]
        frame = pd.DataFrame(data, copy=False)
        frame.attrs["sweep"] = sweep
        return frame


def _code_dtype(categories):
    # The smallest signed integer type of Categorical codes for that many.
    for dtype in (np.int8, np.int16, np.int32):
        if categories < np.iinfo(dtype).max:
            return dtype
    return np.int64


def _strings(v):
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v]


def _typed_keys(frame, keys):
    # Keys arrive as the server's strings ("0.5", "FAFO"); numbers become
    # numbers, repeated text Categorical, as in results().
    for k in keys:
        if k in ("config.lr_ratio", "config.eta_ov", "config.alpha"):
            frame[k] = pd.to_numeric(frame[k])
        elif k == "config.seed":
            frame[k] = pd.to_numeric(frame[k]).astype(np.int64)
        else:
            frame[k] = pd.Categorical(frame[k])
    return frame
