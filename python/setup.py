"""Builds the `cairn` Python package: the SDK in cairn/ plus the gRPC stubs,
generated from the repository's proto/ at build time (never checked in).

Install offline from a checkout with Debian's pip, setuptools, grpcio and
protobuf:

    python3 -m pip install --no-build-isolation --no-deps --no-index ./python

Stubs come from Debian's protoc (3.21) and /usr/bin/grpc_python_plugin
(`protoc` and `grpc_python_plugin` on PATH, or $CAIRN_PROTOC and
$CAIRN_GRPC_PYTHON_PLUGIN). The generated modules import each other by proto
path (cairn/v1/study_pb2.py imports `cairn.v1.study_pb2`), so they are written
into the package's own cairn/v1/ folder of the build.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# The one proto every other imports, to find proto/; the stubs cover every
# proto in cairn/v1 (study.proto imports the others' messages).
ROOT_PROTO = "cairn/v1/study.proto"


def proto_root():
    """proto/ of the checkout (python/../proto), or a copy in an sdist."""
    for candidate in (os.path.join(HERE, "..", "proto"),
                      os.path.join(HERE, "proto")):
        if os.path.isfile(os.path.join(candidate, ROOT_PROTO)):
            return os.path.normpath(candidate)
    raise SystemExit("cairn: cannot find proto/cairn/v1/study.proto next to "
                     + HERE + " (build from a Cairn checkout)")


def all_protos():
    """cairn/v1/*.proto, relative to proto_root()."""
    v1 = os.path.join(proto_root(), "cairn", "v1")
    return sorted("cairn/v1/" + f for f in os.listdir(v1)
                  if f.endswith(".proto"))


def find_tool(env, name):
    tool = os.environ.get(env) or shutil.which(name)
    if not tool:
        raise SystemExit("cairn: %s not found (install Debian's "
                         "protobuf-compiler and protobuf-compiler-grpc, or "
                         "set $%s)" % (name, env))
    return tool


def generate_stubs(out_dir):
    """Writes *_pb2.py, *_pb2.pyi and *_pb2_grpc.py under out_dir/cairn/v1."""
    protoc = find_tool("CAIRN_PROTOC", "protoc")
    plugin = find_tool("CAIRN_GRPC_PYTHON_PLUGIN", "grpc_python_plugin")
    os.makedirs(os.path.join(out_dir, "cairn", "v1"), exist_ok=True)
    subprocess.run([protoc, "-I", proto_root(), "--python_out=" + out_dir,
                    "--pyi_out=" + out_dir, "--grpc_out=" + out_dir,
                    "--plugin=protoc-gen-grpc=" + plugin] + all_protos(),
                   check=True)
    init = os.path.join(out_dir, "cairn", "v1", "__init__.py")
    with open(init, "w") as f:
        f.write('"""Generated from proto/cairn/v1 at build time."""\n')


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        if not self.dry_run:
            generate_stubs(self.build_lib)


setup(
    name="cairn",
    version="0.1.0",
    description="Python SDK of Cairn, the hyperparameter-tuning service",
    # cairn.v1 (the stubs) is generated into the build by BuildWithStubs.
    packages=["cairn"],
    python_requires=">=3.9",
    cmdclass={"build_py": BuildWithStubs},
)
