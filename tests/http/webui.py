"""Shared helpers of the web UI's browser test and bench: a real cairnd
with --http-listen on a free port, REST calls, and headless chromium."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77  # ctest's SKIP_RETURN_CODE for this test.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The number of pixels of a canvas that are not transparent.
NONBLANK_JS = """
const c = arguments[0];
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
let n = 0;
for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
return n;"""

# The number of pixels of canvas arguments[0] below CSS pixel arguments[1]
# whose colour is within 40 of rgb arguments[2..4].
COLOR_PIXELS_JS = """
const [c, top, r, g, b] = arguments;
const ratio = c.width / c.clientWidth;
const y0 = Math.round(top * ratio);
const d = c.getContext('2d').getImageData(0, y0, c.width, c.height - y0).data;
let n = 0;
for (let i = 0; i < d.length; i += 4) {
  if (d[i + 3] > 128 && Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 40) n++;
}
return n;"""


def wait(driver, what, predicate, timeout=15):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = predicate(driver)
            if last:
                return last
        except Exception as e:  # element not there yet
            last = e
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print("ok:", message)



class Cairnd:
    """cairnd on free loopback ports in a temp data dir."""

    def __init__(self, bin_dir, extra_args=(), reuse_dir=None):
        """reuse_dir: the dir of a cairnd that ended, to restart on it."""
        self.bin_dir = bin_dir
        self.dir = reuse_dir or tempfile.mkdtemp(prefix="cairn-webui-")
        os.chmod(self.dir, 0o755)  # The job user reaches the jobs root.
        self.log_path = os.path.join(self.dir, "cairnd.log")
        port_file = os.path.join(self.dir, "port")
        if os.path.exists(port_file):
            os.remove(port_file)  # The last cairnd's.
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [os.path.join(bin_dir, "cairnd"), "--data-dir",
                 os.path.join(self.dir, "data"), "--listen", "127.0.0.1:0",
                 "--metrics-listen", "", "--http-listen", "127.0.0.1:0",
                 "--gpus", "0", "--port-file", port_file, *extra_args],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("cairnd exited: " + self.log())
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("cairnd did not start: " + self.log())
        self.grpc_port = int(open(port_file).read())
        match = re.search(r"web UI and REST API on \S+ \(port (\d+)\)", self.log())
        if not match:
            raise RuntimeError("cairnd logged no HTTP port: " + self.log())
        self.base = "http://127.0.0.1:%s" % match.group(1)
        with open(os.path.join(self.dir, "data", "admin.token")) as f:
            self.token = f.read().strip()

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def rest(self, method, path, body=None, token=None):
        """(HTTP status, parsed JSON) of a REST call, token default admin's."""
        token = self.token if token is None else token
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + "/v1/" + path, data=data,
                                     method=method)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                raw = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            raw = e.read()
            status = e.code
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode()

    def ok(self, method, path, body=None):
        status, out = self.rest(method, path, body)
        if status != 200:
            raise RuntimeError("%s %s: %s %s" % (method, path, status, out))
        return out

    def cli(self, *args):
        env = dict(os.environ, CAIRN_TOKEN=self.token)
        return subprocess.run(
            [os.path.join(self.bin_dir, "cairn"), "--server",
             "127.0.0.1:%d" % self.grpc_port] + list(args),
            env=env, check=True, capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def study_spec(name, max_trials=0):
    """Two objectives (loss down, acc up) over x, y and a categorical."""
    return {"study": {"displayName": name, "spec": {
        "parameters": [
            {"parameterId": "x", "type": "DOUBLE", "minValue": -5, "maxValue": 10},
            {"parameterId": "y", "type": "DOUBLE", "minValue": 0, "maxValue": 15},
            {"parameterId": "opt", "type": "CATEGORICAL",
             "categoricalValues": ["sgd", "adam"]}],
        "metrics": [{"metricId": "loss", "goal": "MINIMIZE"},
                    {"metricId": "acc", "goal": "MAXIMIZE"}],
        "algorithm": "RANDOM_SEARCH", "seed": "7", "maxTrials": max_trials}}}


def values(trial):
    p = {q["parameterId"]: q["value"] for q in trial["parameters"]}
    loss = (p["x"] - 2) ** 2 + (p["y"] - 7) ** 2 / 10 + (p["opt"] == "sgd")
    return loss, 1.0 / (1.0 + abs(p["x"]))


def complete(server, trial):
    loss, acc = values(trial)
    server.ok("POST", trial["name"] + ":complete", {"finalMeasurement": {
        "metrics": [{"metricId": "loss", "value": loss},
                    {"metricId": "acc", "value": acc}]}})


def browser_missing():
    """Why headless chromium cannot run here, or None."""
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        return "chromium and chromium-driver are not installed"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "python3-selenium is not installed"
    return None


def new_browser(width=1280, height=1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--window-size=%d,%d" % (width, height)]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")),
                            options=options)
