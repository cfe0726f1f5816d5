"""`pip install ./client/python` in a virtual environment, as on a laptop:
the stubs are generated from proto/ at install time (protoc and
grpc_python_plugin), and the installed module imports and describes the
API. The environment sees Debian's grpcio, protobuf and pandas
(--system-site-packages) and installs with --no-index: the test machine
reaches no package index."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_pip_installs_the_client_with_generated_stubs(tmp_path):
    # A copy, so the checkout's client/python gets no build output.
    src = tmp_path / "python"
    shutil.copytree(os.path.join(ROOT, "client", "python"), src,
                    ignore=shutil.ignore_patterns("v1", "build", "*.egg-info",
                                                  "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(venv)], check=True, timeout=120)
    env = dict(os.environ, QKOV_PROTO_DIR=os.path.join(ROOT, "proto"),
               PIP_NO_CACHE_DIR="1")
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index",
         "--no-build-isolation", str(src)],
        env=env, capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-2000:]
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import qkov, qkov.v1.sweep_pb2 as s\n"
         "print(qkov.__file__)\n"
         "print(sorted(s.DESCRIPTOR.services_by_name['SweepService']"
         ".methods_by_name))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    assert str(venv) in probe.stdout
    for method in ("StreamResults", "StreamCurves", "MatchSweep"):
        assert method in probe.stdout
