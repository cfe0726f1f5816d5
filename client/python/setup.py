"""Builds the qkov package with its gRPC stubs generated from ../../proto.

The stubs (qkov/v1/*_pb2.py) are never committed: `pip install
./client/python` generates them with protoc and grpc_python_plugin (Debian:
protobuf-compiler, protobuf-compiler-grpc), or with grpcio-tools where that
is installed instead. QKOV_PROTO_DIR names another proto/ folder.
"""

import glob
import os
import shutil
import subprocess

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(out_dir):
    proto_dir = os.environ.get("QKOV_PROTO_DIR",
                               os.path.join(HERE, "..", "..", "proto"))
    protos = sorted(glob.glob(os.path.join(proto_dir, "qkov", "v1",
                                           "*.proto")))
    if not protos:
        raise SystemExit("qkov: no .proto files under %s (set QKOV_PROTO_DIR)"
                         % proto_dir)
    os.makedirs(os.path.join(out_dir, "qkov", "v1"), exist_ok=True)
    plugin = shutil.which("grpc_python_plugin")
    if shutil.which("protoc") and plugin:
        cmd = ["protoc", "--plugin=protoc-gen-grpc_python=" + plugin,
               "--grpc_python_out=" + out_dir]
    else:
        try:
            import grpc_tools  # noqa: F401
        except ImportError:
            raise SystemExit("qkov: needs protoc and grpc_python_plugin "
                             "(apt install protobuf-compiler "
                             "protobuf-compiler-grpc) or grpcio-tools")
        cmd = ["python3", "-m", "grpc_tools.protoc",
               "--grpc_python_out=" + out_dir]
    subprocess.check_call(cmd + ["--proto_path=" + proto_dir,
                                 "--python_out=" + out_dir] + protos)
    open(os.path.join(out_dir, "qkov", "v1", "__init__.py"), "a").close()


# Before setup(): setuptools looks for the qkov.v1 package's folder as soon
# as it reads the metadata. The stubs land in qkov/v1/ (git ignores them).
generate(HERE)
setup()
