"""The notebook client installs as on a laptop: an sdist built with build
isolation on (stubs generated from proto/ by protoc), a wheel built from
that sdist in an isolated environment offline with no protoc on PATH, the
same wheel as one built from the checkout, and `pip install` of it into a
fresh venv that imports qkov and reads a real server.

Offline: pip reaches no index (--no-index). The isolated build
environments take setuptools and wheel from the wheels Debian's packages
give (/usr/share/python-wheels: python3-setuptools-whl, python3-wheel-whl);
the installing venv sees Debian's grpcio, protobuf and pandas
(--system-site-packages), the runtime dependencies a laptop's pip would
fetch."""

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WHEELS = "/usr/share/python-wheels"


def run(args, env, cwd=None, timeout=300):
    r = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, "%s\n%s\n%s" % (" ".join(map(str, args)),
                                              r.stdout[-3000:],
                                              r.stderr[-3000:])
    return r


def record(wheel):
    """path -> sha256 of every file a wheel holds but its RECORD."""
    with zipfile.ZipFile(wheel) as z:
        out = {}
        for name in z.namelist():
            if name.endswith(".dist-info/RECORD"):
                continue
            digest = hashlib.sha256(z.read(name)).digest()
            out[name] = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        return out


def offline_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "QKOV_", "PYTHON"))}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=WHEELS, PIP_NO_CACHE_DIR="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update(extra)
    return env


def test_sdist_and_wheel_build_isolated_offline_and_install(tmp_path, server):
    # A copy, so the checkout's client/python gets no build output.
    src = tmp_path / "python"
    shutil.copytree(os.path.join(ROOT, "client", "python"), src,
                    ignore=shutil.ignore_patterns("v1", "build", "dist",
                                                  "*.egg-info",
                                                  "__pycache__"))
    proto = os.path.abspath(os.path.join(ROOT, "proto"))
    # 1. From the checkout (protoc on PATH), isolated: sdist and wheel.
    env = offline_env(QKOV_PROTO_DIR=proto)
    run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir",
         str(tmp_path / "dist"), str(src)], env)
    sdists = list((tmp_path / "dist").glob("qkov-*.tar.gz"))
    wheels = list((tmp_path / "dist").glob("qkov-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1
    with tarfile.open(sdists[0]) as t:
        names = t.getnames()
    for stub in ("sweep_pb2.py", "sweep_pb2_grpc.py", "config_pb2.py"):
        assert any(n.endswith("qkov/v1/" + stub) for n in names), stub

    # 2. A wheel from the sdist alone: a venv with no protoc on PATH, no
    # proto/ folder, pip's own build isolation, no index.
    builder = tmp_path / "builder"
    run([sys.executable, "-m", "venv", str(builder)], None, timeout=120)
    bare = offline_env(PATH=str(builder / "bin"))
    assert shutil.which("protoc", path=bare["PATH"]) is None
    run([str(builder / "bin" / "python"), "-m", "pip", "wheel", "--no-deps",
         "-w", str(tmp_path / "from-sdist"), str(sdists[0])], bare,
        cwd=tmp_path)
    from_sdist = list((tmp_path / "from-sdist").glob("qkov-*.whl"))
    assert len(from_sdist) == 1
    assert from_sdist[0].name == wheels[0].name
    assert record(from_sdist[0]) == record(wheels[0]), \
        "the sdist builds another wheel than the checkout"

    # 3. pip install of that wheel into a fresh venv: imports, reads.
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
        None, timeout=120)
    env = offline_env(PATH=str(venv / "bin"))
    run([str(venv / "bin" / "python"), "-m", "pip", "install",
         "--find-links", str(tmp_path / "from-sdist"), "qkov"], env,
        cwd=tmp_path)
    probe = run([str(venv / "bin" / "python"), "-c",
                 "import importlib.metadata as m, sys, qkov\n"
                 "print(qkov.__file__)\n"
                 "print(qkov.__version__, m.version('qkov'))\n"
                 "c = qkov.connect(sys.argv[1], token_file=sys.argv[2])\n"
                 "print(len(c.results('nb')))\n",
                 server.address, server.token_file("reader")], env,
                cwd=tmp_path)
    lines = probe.stdout.split("\n")
    assert str(venv) in lines[0]
    version, dist_version = lines[1].split()
    assert version == dist_version
    assert lines[2] == "12"
