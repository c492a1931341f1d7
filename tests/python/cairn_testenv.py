"""What the Python tests need around them, outside pytest's fixtures (so
Optuna's sampler suite in optuna_suite/ uses it too): the `cairn` package
installed the way users install it (pip, offline, from the checkout) into a
temp dir, and a real cairnd on loopback with a temp data dir (binaries from
$CAIRN_BIN_DIR, default build/bin)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CAIRN_BIN_DIR") or os.path.join(ROOT, "build", "bin")


def reachable_tempdir(prefix):
    """A temp dir the job user (nobody, when the tests run as root) can
    read: jobs import the package from it."""
    path = tempfile.mkdtemp(prefix=prefix)
    os.chmod(path, 0o755)
    return path


def install_sdk():
    """Installs ./python with pip (offline, Debian's pip and setuptools) into
    a new temp dir, readable by all; returns the dir."""
    target = reachable_tempdir("cairn-sdk-")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "--no-build-isolation", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--root-user-action=ignore",
                    "--target", target, os.path.join(ROOT, "python")],
                   check=True, cwd=target)
    for dirpath, dirnames, filenames in os.walk(target):
        for name in dirnames + filenames:
            os.chmod(os.path.join(dirpath, name), 0o755)
    return target


class Server:
    """A cairnd child process."""

    def __init__(self, extra_args=(), http_listen=""):
        self.data_dir = reachable_tempdir("cairn-pytest-")
        port_file = os.path.join(self.data_dir, "cairnd.port")
        args = [os.path.join(BIN, "cairnd"), "--data-dir", self.data_dir,
                "--listen", "127.0.0.1:0", "--port-file", port_file,
                "--metrics-listen", "", "--http-listen", http_listen]
        self.log_path = os.path.join(self.data_dir, "cairnd.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(args + list(extra_args),
                                            stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("cairnd did not start: " + self.log())
            time.sleep(0.02)
        self.address = "127.0.0.1:" + open(port_file).read().strip()
        # With http_listen: the REST API's base URL, from cairnd's log.
        match = re.search(r"REST API on \S+ \(port (\d+)\)", self.log())
        self.http_base = match and "http://127.0.0.1:" + match.group(1)
        token_path = os.path.join(self.data_dir, "admin.token")
        self.token = open(token_path).read().strip()

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-4000:]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)
