"""Fixtures of the container tests: the SDK (tests/python/cairn_testenv.py)
and cairnd, with the images of ensure_image.sh already in podman's store
(CMakeLists runs it first and fails the whole test when podman cannot
run)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from cairn_testenv import BIN, ROOT, Server, install_sdk  # noqa: E402,F401

IMAGE = "localhost/cairn-test-trainer:1"


def containers_of(data_dir):
    """Names of the containers cairnd on `data_dir` has (running or not)."""
    out = subprocess.run(
        ["podman", "ps", "--all", "--format", "{{.Names}}",
         "--filter", "label=cairn.data_dir=" + os.path.realpath(data_dir)],
        check=True, capture_output=True, text=True).stdout
    return out.split()


@pytest.fixture(scope="session")
def cairn_lib():
    target = install_sdk()
    sys.path.insert(0, target)
    yield target


@pytest.fixture
def server(cairn_lib):
    s = Server(["--grace-seconds", "2"])
    yield s
    leftover = containers_of(s.data_dir)
    s.stop()
    subprocess.run(["podman", "rm", "--force", "--time=0"] + leftover,
                   capture_output=True)
    assert not leftover, "containers left behind: %s" % leftover


@pytest.fixture
def client(server):
    import cairn
    c = cairn.Client(server.address, token=server.token)
    yield c
    c.close()


def container_study(client, name, args, trials=1, parallel=1, **container):
    """A study whose trials run IMAGE with `args`, x in [1, 3]."""
    spec = {
        "parameters": [{"parameter_id": "x", "type": "DOUBLE",
                        "min_value": 1, "max_value": 3}],
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "algorithm": "RANDOM_SEARCH",
        "max_trials": trials,
        "max_parallel_trials": parallel,
        "job_template": {"container": dict(image=IMAGE, args=args,
                                           **container)},
    }
    return client.create_study(name, spec)


def restart(server, extra_args):
    """A new cairnd on `server`'s data dir (after a kill -9 of its own)."""
    import cairn_testenv
    os.unlink(os.path.join(server.data_dir, "cairnd.port"))
    make_dir = cairn_testenv.reachable_tempdir
    cairn_testenv.reachable_tempdir = lambda prefix: server.data_dir
    try:
        return Server(extra_args)
    finally:
        cairn_testenv.reachable_tempdir = make_dir


def job_log(trial):
    with open(trial.proto.job.log_path, errors="replace") as f:
        return f.read()[-3000:]
