"""Fixtures of the Python SDK tests: the `cairn` package installed the way
users install it (pip, offline, from the checkout) into a temp dir, and a
real cairnd on loopback with a temp data dir (binaries from $CAIRN_BIN_DIR,
default build/bin)."""
import shutil
import sys

import pytest

from cairn_testenv import Server, install_sdk


@pytest.fixture(scope="session")
def cairn_lib():
    """Installs ./python (cairn_testenv.install_sdk) and puts it first on
    sys.path."""
    target = install_sdk()
    sys.path.insert(0, target)
    yield target
    shutil.rmtree(target, ignore_errors=True)


@pytest.fixture(scope="session")
def server(cairn_lib):
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def client(server):
    import cairn
    c = cairn.Client(server.address, token=server.token)
    yield c
    c.close()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """Tests choose their own server and token."""
    for name in ("CAIRN_SERVER", "CAIRN_TOKEN", "CAIRN_TOKEN_FILE",
                 "CAIRN_TLS_CA", "CAIRN_TLS_CERT", "CAIRN_TLS_KEY",
                 "CAIRN_STUDY", "CAIRN_TRIAL_ID"):
        monkeypatch.delenv(name, raising=False)
