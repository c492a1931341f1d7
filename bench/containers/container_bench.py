#!/usr/bin/python3
"""Container vs process job benchmark driver (run it through run.sh).

One cairnd (tests/python/cairn_testenv.py) runs, for each kind, a study of
--sequential trials one at a time (seconds per trial: dispatch, start, the
trainer's own run, exit) and a study of --trials trials 2 at a time (trials
per minute). Time runs from CreateStudy to the study's end. The container
overhead per trial is the difference of the two kinds' seconds per trial.
"""
import argparse
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from cairn_testenv import Server, install_sdk  # noqa: E402

IMAGE = "localhost/cairn-test-trainer:1"
TRAINER = os.path.join(ROOT, "tests", "containers", "trainer.py")

ap = argparse.ArgumentParser()
ap.add_argument("--trials", type=int, default=50)
ap.add_argument("--sequential", type=int, default=10)
a = ap.parse_args()


def template(kind):
    if kind == "process":
        return {"command": ["/usr/bin/python3", TRAINER, "--metric-path=env"]}
    return {"container": {"image": IMAGE, "args": ["--metric-path=env"]}}


def run_study(client, name, kind, trials, parallel):
    t0 = time.monotonic()
    study = client.create_study(name, {
        "parameters": [{"parameter_id": "x", "type": "DOUBLE",
                        "min_value": 1, "max_value": 3}],
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "algorithm": "RANDOM_SEARCH", "max_trials": trials,
        "max_parallel_trials": parallel, "job_template": template(kind)})
    study.wait(timeout=1800, interval=0.05)
    wall = time.monotonic() - t0
    bad = [t for t in study.trials() if t.state != "SUCCEEDED"]
    if bad:
        sys.exit("%s: trial %s %s: %s" % (name, bad[0].name, bad[0].state,
                                         bad[0].proto.job.message))
    return wall


sys.path.insert(0, install_sdk())
import cairn  # noqa: E402

server = Server(["--max-running-jobs", "2"])
try:
    client = cairn.Client(server.address, token=server.token)
    results = {}
    for kind in ("process", "container"):
        print(kind + "...", file=sys.stderr, flush=True)
        seq = run_study(client, kind + "-seq", kind, a.sequential, 1)
        par = run_study(client, kind + "-par", kind, a.trials, 2)
        results[kind] = (seq / a.sequential, a.trials / par * 60.0)
finally:
    server.stop()

p, c = results["process"], results["container"]
print(f"{'':40} {'process':>9} {'container':>10} {'container/process':>18}")
print(f"{'seconds per trial, one at a time':40} {p[0]:9.3f} {c[0]:10.3f} "
      f"{c[0] / p[0]:18.2f}")
print(f"{'trials per minute, %d trials, 2 at a time' % a.trials:40} "
      f"{p[1]:9.1f} {c[1]:10.1f} {c[1] / p[1]:18.2f}")
print(f"container start overhead per trial: {c[0] - p[0]:.3f} s "
      f"(target < 0.5 s)")
