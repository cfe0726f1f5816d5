"""Builds the qkov package with its gRPC stubs (qkov/v1/*_pb2*.py).

The stubs are never committed. From a checkout (../../proto beside this
folder, or QKOV_PROTO_DIR naming a proto/ folder) they are generated on
every build, with protoc and grpc_python_plugin (Debian: protobuf-compiler,
protobuf-compiler-grpc) or grpcio-tools where that is installed instead. An
sdist carries the generated stubs, so a wheel built from it needs only
setuptools and wheel: no protoc, no network (docs/notebook.md, "Install").
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
V1 = os.path.join(HERE, "qkov", "v1")
STUBS = ("config_pb2.py", "sweep_pb2.py", "sweep_pb2_grpc.py",
         "worker_pb2.py", "__init__.py")


def generate(proto_dir, out_dir):
    protos = sorted(glob.glob(os.path.join(proto_dir, "qkov", "v1",
                                           "*.proto")))
    if not protos:
        raise SystemExit("qkov: no .proto files under %s" % proto_dir)
    os.makedirs(os.path.join(out_dir, "qkov", "v1"), exist_ok=True)
    plugin = shutil.which("grpc_python_plugin")
    if shutil.which("protoc") and plugin:
        cmd = ["protoc", "--plugin=protoc-gen-grpc_python=" + plugin,
               "--grpc_python_out=" + out_dir]
    else:
        try:
            import grpc_tools  # noqa: F401
        except ImportError:
            raise SystemExit("qkov: generating the stubs from %s needs protoc "
                             "and grpc_python_plugin (apt install "
                             "protobuf-compiler protobuf-compiler-grpc) or "
                             "grpcio-tools; an sdist needs neither" %
                             proto_dir)
        cmd = [sys.executable, "-m", "grpc_tools.protoc",
               "--grpc_python_out=" + out_dir]
    subprocess.check_call(cmd + ["--proto_path=" + proto_dir,
                                 "--python_out=" + out_dir] + protos)
    open(os.path.join(out_dir, "qkov", "v1", "__init__.py"), "a").close()


def stubs():
    proto_dir = os.environ.get("QKOV_PROTO_DIR",
                               os.path.join(HERE, "..", "..", "proto"))
    if os.path.isdir(os.path.join(proto_dir, "qkov", "v1")):
        generate(proto_dir, HERE)
    elif not all(os.path.exists(os.path.join(V1, f)) for f in STUBS):
        raise SystemExit("qkov: no stubs in qkov/v1 and no proto/ folder to "
                         "generate them from (set QKOV_PROTO_DIR)")


# Before setup(): setuptools looks for the qkov.v1 package's folder as soon
# as it reads the metadata. The stubs land in qkov/v1/ (git ignores them).
stubs()
setup()
