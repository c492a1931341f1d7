"""What the pytest files here share: Google's own client (Debian's
python3-googleapi; a test module importing this is skipped without it) and
a real cairnd per test module (webui.Cairnd, binaries from $CAIRN_BIN_DIR,
default build/bin)."""
import os

import pytest

import webui

discovery = pytest.importorskip(
    "googleapiclient.discovery",
    reason="apt-get install python3-googleapi python3-google-auth-httplib2")
errors = pytest.importorskip("googleapiclient.errors")
credentials = pytest.importorskip("google.oauth2.credentials")
pytest.importorskip("google_auth_httplib2")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN_DIR") or os.path.join(ROOT, "build", "bin")


@pytest.fixture(scope="module")
def server():
    """A cairnd with its REST port, for the test module."""
    s = webui.Cairnd(BIN)
    yield s
    s.stop()


def ml(server, token, url=None):
    """googleapiclient's ml v1 client built from cairnd's discovery doc."""
    url = url or server.base + "/discovery/v1/apis/{api}/{apiVersion}/rest"
    return discovery.build(
        "ml", "v1", discoveryServiceUrl=url, cache_discovery=False,
        credentials=credentials.Credentials(token))
