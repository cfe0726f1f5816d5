"""A real qkov-server (SQLite file, tokens, gRPC on loopback) and a real
qkov-worker for the notebook client's tests. QKOV_BIN: the folder of the
built programs; QKOV_PYTHON: the folder holding the generated qkov package
(build/python), which tests import."""

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

BIN = os.environ.get("QKOV_BIN", "build/bin")
PYTHON_DIR = os.path.abspath(os.environ.get("QKOV_PYTHON", "build/python"))
sys.path.insert(0, PYTHON_DIR)

READER = "reader-token-0123456789"
USER = "user-token-0123456789ab"
WORKER = "worker-token-0123456789"
ADMIN = "admin-token-0123456789ab"

# Small but real: two parameterizations x two ratios x three seeds of the
# synthetic task, so every seed aggregate has n = 3 and the matched view
# compares two arms per parameterization.
SWEEP = """name: {name}
description: the notebook client's test sweep
axes: {{parameterization: [FAFO, CACO], lr_ratio: [1, 20], eta_ov: [0.1], seed: [1, 2, 3]}}
training: {{max_steps: 300, report_every: 25, evaluation: {{num_examples: 128}}}}
"""


TLS_SCRIPT = """set -e
ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 1 -subj /CN=qkov-test-ca 2>/dev/null
openssl req $ec -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
echo 'subjectAltName=DNS:localhost' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
  -out server.pem -days 1 -extfile server.ext 2>/dev/null
"""


def _wait_file(path, proc, timeout=30):
    deadline = time.time() + timeout
    while not (os.path.exists(path) and open(path).read().strip()):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError("%s never appeared" % path)
        time.sleep(0.05)
    return open(path).read().strip()


def freeze(pid, timeout=30):
    """SIGSTOP, then wait until every thread of `pid` is stopped: the
    kernel stops a process thread by thread as each is next scheduled, so
    a loaded machine can let a thread answer a request after kill()
    returns. Raises if the stop is not complete within `timeout` s."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while True:
        states = []
        for stat in glob.glob("/proc/%d/task/*/stat" % pid):
            try:
                with open(stat) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass  # a thread that ended meanwhile
        if states and all(s in ("T", "t") for s in states):
            return
        if time.monotonic() > deadline:
            raise AssertionError("pid %d not stopped after %g s: %s" %
                                 (pid, timeout, "".join(states)))
        time.sleep(0.01)


class Server:
    def __init__(self, http=False, suffix="", tls=False):
        # suffix "-needle": the programs built with the needle task
        # registered outside config.proto (tests/example_task).
        self.bin = os.path.abspath(BIN)
        self.suffix = suffix
        self.dir = tempfile.mkdtemp(prefix="qkov-python-")
        d = self.dir
        with open(d + "/tokens", "w") as f:
            f.write("worker %s\nuser %s alice\nread-only %s\nadmin %s root\n"
                    % (WORKER, USER, READER, ADMIN))
        for name, token in (("user", USER), ("worker", WORKER),
                            ("reader", READER), ("admin", ADMIN)):
            with open("%s/%s.token" % (d, name), "w") as f:
                f.write(token + "\n")
        self.log = open(d + "/server.log", "w")
        # tls=True: a CA and a certificate for localhost (not 127.0.0.1),
        # so a client must name the server as the certificate does.
        tls_flags = []
        if tls:
            subprocess.run(["/bin/bash", "-c", TLS_SCRIPT], cwd=d,
                           check=True, timeout=60)
            tls_flags = ["--tls_cert=%s/server.pem" % d,
                         "--tls_key=%s/server.key" % d]
        self.ca = d + "/ca.pem" if tls else None
        http_flags = ["--http_listen=127.0.0.1:0",
                      "--http_port_file=%s/http.port" % d] if http else []
        self.proc = subprocess.Popen(
            [BIN + "/qkov-server" + suffix, "--db=%s/results.db" % d,
             "--listen=127.0.0.1:0", "--port_file=%s/port" % d,
             "--token_file=%s/tokens" % d] + http_flags + tls_flags,
            stdout=self.log, stderr=subprocess.STDOUT)
        self.address = "127.0.0.1:" + _wait_file(d + "/port", self.proc)
        # The dashboard's base URL, with http=True.
        self.http = ("http://127.0.0.1:" +
                     _wait_file(d + "/http.port", self.proc)) if http else None

    def token_file(self, who):
        return "%s/%s.token" % (self.dir, who)

    def cli(self, *args, who="user", check=True):
        r = subprocess.run([BIN + "/qkov", "--server=" + self.address,
                            "--token_file=" + self.token_file(who), *args],
                           capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            raise AssertionError("qkov %s: %s" % (args, r.stderr))
        return r

    def train(self):
        with open(self.dir + "/worker.log", "a") as log:
            w = subprocess.Popen(
                [BIN + "/qkov-worker" + self.suffix,
                 "--server=" + self.address,
                 "--token_file=" + self.token_file("worker"),
                 "--exit_when_idle"], stdout=log, stderr=subprocess.STDOUT)
        assert w.wait(600) == 0, open(self.dir + "/worker.log").read()[-3000:]

    def submit(self, name):
        path = "%s/%s.yaml" % (self.dir, name)
        with open(path, "w") as f:
            f.write(SWEEP.format(name=name))
        self.cli("submit", path)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def server():
    s = Server(http=True)
    try:
        s.submit("nb")
        s.train()
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="session")
def client(server):
    import qkov
    with qkov.connect(server.address,
                      token_file=server.token_file("user")) as c:
        yield c
