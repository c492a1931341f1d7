#!/usr/bin/python3
"""A tiny training program for the job-runner tests.

Takes --x=<float> --job-dir=DIR (plus anything else as --name=value),
"trains" for TOY_STEPS steps with loss(step) = x + 1/step, checkpoints the
step into DIR/ckpt.json after every step (atomically), resumes from it, and
reports through the cloudml-hypertune file protocol ($CLOUD_ML_HP_METRIC_FILE,
the whole file rewritten on each report). Behaviour switches (environment):
  TOY_STEPS (10), TOY_SLEEP (seconds per step, 0.05), TOY_RECORD (append
  "start/end <trial> <CUDA_VISIBLE_DEVICES> <time>" lines), TOY_FAIL (exit 3
  at once), TOY_HANG (sleep forever), TOY_EXIT_AFTER_STEP (exit 5 after that
  step on the first attempt).
"""
import json
import os
import signal
import sys
import time

args = {}
for a in sys.argv[1:]:
    if a.startswith("--") and "=" in a:
        k, v = a[2:].split("=", 1)
        args[k] = v
job_dir = args["job-dir"]
x = float(args.get("x", "0"))
steps = int(os.environ.get("TOY_STEPS", "10"))
sleep = float(os.environ.get("TOY_SLEEP", "0.05"))
trial = os.environ.get("CAIRN_TRIAL_ID", "?")
record = os.environ.get("TOY_RECORD")


def note(event):
    if record:
        with open(record, "a") as f:
            f.write("%s %s %s %.6f\n" % (event, trial, os.environ.get("CUDA_VISIBLE_DEVICES", ""), time.time()))
            f.flush()


stopping = False


def on_term(signum, frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)
note("start")
if os.environ.get("TOY_FAIL"):
    print("failing on purpose", flush=True)
    sys.exit(3)
if os.environ.get("TOY_HANG"):
    while True:
        time.sleep(1)

ckpt = os.path.join(job_dir, "ckpt.json")
start = 1
if os.path.exists(ckpt):
    with open(ckpt) as f:
        start = json.load(f)["step"] + 1
    with open(os.path.join(job_dir, "resume.log"), "a") as f:
        f.write("resume %d %s\n" % (start - 1, os.environ.get("CAIRN_RESUME", "")))
print("trial %s: x=%g, starting at step %d" % (trial, x, start), flush=True)

metric_file = os.environ["CLOUD_ML_HP_METRIC_FILE"]
reports = []
exit_after = int(os.environ.get("TOY_EXIT_AFTER_STEP", "0"))
for step in range(start, steps + 1):
    time.sleep(sleep)
    loss = x + 1.0 / step
    reports.append({"global_step": str(step), "loss": str(loss),
                    "timestamp": time.time(), "trial": trial})
    reports = reports[-100:]
    tmp = metric_file + ".tmp"
    with open(tmp, "w") as f:
        for r in reports:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(tmp, metric_file)
    with open(ckpt + ".tmp", "w") as f:
        json.dump({"step": step}, f)
    os.replace(ckpt + ".tmp", ckpt)
    if stopping:
        print("SIGTERM: checkpointed at step %d, exiting" % step, flush=True)
        note("end")
        sys.exit(143)
    if exit_after and step == exit_after and not os.environ.get("CAIRN_RESUME"):
        print("exiting with 5 after step %d" % step, flush=True)
        sys.exit(5)
note("end")
print("done", flush=True)
